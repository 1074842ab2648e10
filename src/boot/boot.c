#define _GNU_SOURCE /* cpu_set_t, sched_getaffinity */
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/shmseg.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int eb_boot_idle_add(struct eb_boot *b, void (*fn)(void *arg), void *arg)
{
	if (b->nidle == b->idle_cap) {
		int cap = b->idle_cap ? 2 * b->idle_cap : 8;
		struct eb_boot_idle *grown = realloc(b->idle, sizeof(*grown) * (size_t)cap);

		if (grown == NULL) {
			eb_err("out of memory for the bootstrap's idle work");
			return EB_ENOMEM;
		}
		b->idle = grown;
		b->idle_cap = cap;
	}
	b->idle[b->nidle++] = (struct eb_boot_idle){fn, arg};
	return EB_OK;
}

void eb_boot_idle_remove(struct eb_boot *b, void *arg)
{
	int i;

	for (i = 0; i < b->nidle; i++)
		if (b->idle[i].arg == arg) {
			b->idle[i] = b->idle[--b->nidle];
			break;
		}
	if (b->nidle == 0) {
		free(b->idle);
		b->idle = NULL;
		b->idle_cap = 0;
	}
}

void eb_boot_idle(struct eb_boot *b)
{
	int i;

	for (i = 0; i < b->nidle; i++)
		b->idle[i].fn(b->idle[i].arg);
}

int eb_boot_allgather(struct eb_boot *b, const void *in, void *out, size_t len, uint64_t deadline)
{
	eb_boot_idle(b);
	return b->ops->allgather(b, in, out, len, deadline);
}

int eb_boot_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline)
{
	eb_boot_idle(b);
	return b->ops->alltoall(b, in, out, blk, deadline);
}

int eb_boot_alltoallv(struct eb_boot *b, const void *send, const int *scount, const int *sdispl,
		      void *recv, const int *rcount, const int *rdispl, uint64_t deadline)
{
	if (b->ops->alltoallv == NULL)
		return EB_ENOTSUP;
	return b->ops->alltoallv(b, send, scount, sdispl, recv, rcount, rdispl, deadline);
}

int eb_boot_has_alltoallv(const struct eb_boot *b)
{
	return b->ops->alltoallv != NULL;
}

int eb_boot_barrier(struct eb_boot *b, uint64_t deadline)
{
	char in = 0, *out = malloc((size_t)b->size);
	int rc;

	if (out == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(b, &in, out, 1, deadline);
	free(out);
	return rc;
}

int eb_boot_allreduce(struct eb_boot *b, int64_t v, enum eb_reduce op, int64_t *out,
		      uint64_t deadline)
{
	int64_t *all = malloc(sizeof(*all) * (size_t)b->size), acc = v;
	int r, rc;

	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(b, &v, all, sizeof(v), deadline);
	for (r = 0; rc == EB_OK && r < b->size; r++) {
		if (r == 0)
			acc = all[0];
		else if (op == EB_SUM)
			acc += all[r];
		else if (op == EB_MIN ? all[r] < acc : all[r] > acc)
			acc = all[r];
	}
	free(all);
	if (rc == EB_OK)
		*out = acc;
	return rc;
}

int eb_boot_check(struct eb_boot *b)
{
	return b->ops->check(b);
}

void eb_boot_finalize(struct eb_boot *b, int exit_code)
{
	b->ops->finalize(b, exit_code);
}

uint64_t eb_boot_deadline(double seconds)
{
	return eb_deadline(seconds);
}

void eb_host_name(char *name, size_t len)
{
	const char *env = getenv("EFABENCH_HOST");

	memset(name, 0, len);
	if (env != NULL && env[0] != '\0')
		snprintf(name, len, "%s", env);
	else
		gethostname(name, len - 1);
}

struct host_rec {
	char name[64];
	char kernel[64]; /* the boot id, else the host name */
	cpu_set_t mask;
	int64_t pid;
};

/* What identifies the running kernel: containers and network namespaces share its boot id. */
static void kernel_id(char *out, size_t n, const char *fallback)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	snprintf(out, n, "%s", fallback);
	if (f == NULL)
		return;
	if (fgets(out, (int)n, f) == NULL || out[0] == '\0')
		snprintf(out, n, "%s", fallback);
	fclose(f);
}

int eb_boot_host_share(struct eb_boot *b, uint64_t deadline, struct eb_host_share *out)
{
	struct host_rec mine, *all = malloc(sizeof(*all) * (size_t)b->size);
	cpu_set_t here, machine;
	int i, rc;

	if (all == NULL)
		return EB_ENOMEM;
	memset(&mine, 0, sizeof(mine));
	eb_host_name(mine.name, sizeof(mine.name));
	kernel_id(mine.kernel, sizeof(mine.kernel), mine.name);
	mine.pid = (int64_t)getpid();
	/* An unreadable mask counts as no CPU: the policy then yields, the safe side. */
	if (sched_getaffinity(0, sizeof(mine.mask), &mine.mask) != 0)
		CPU_ZERO(&mine.mask);
	rc = eb_boot_allgather(b, &mine, all, sizeof(mine), deadline);
	CPU_ZERO(&here);
	CPU_ZERO(&machine);
	*out = (struct eb_host_share){.single = 1};
	for (i = 0; rc == EB_OK && i < b->size; i++) {
		if (strncmp(all[i].kernel, mine.kernel, sizeof(mine.kernel)) == 0) {
			out->machine_ranks++;
			CPU_OR(&machine, &machine, &all[i].mask);
		}
		if (memcmp(all[i].name, mine.name, sizeof(mine.name)) != 0) {
			out->single = 0;
			continue;
		}
		out->ranks++;
		CPU_OR(&here, &here, &all[i].mask);
		/* a peer here killed later leaves its shm segments: its survivors remove them */
		eb_shmseg_watch((pid_t)all[i].pid);
	}
	out->cpus = CPU_COUNT(&here);
	out->machine_cpus = CPU_COUNT(&machine);
	free(all);
	return rc;
}

int eb_boot_single_host(struct eb_boot *b, uint64_t deadline)
{
	struct eb_host_share h;
	int rc = eb_boot_host_share(b, deadline, &h);

	return rc == EB_OK ? h.single : rc;
}

enum eb_launcher eb_boot_detect(void)
{
	static const char *const vars[] = {
	    "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
	    "MV2_COMM_WORLD_SIZE",  "PMI_FD"};
	size_t i;

	if (getenv("EFABENCH_ROOT") != NULL)
		return EB_LAUNCH_TCP;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL)
			return EB_LAUNCH_MPI;
	return EB_LAUNCH_LOCAL;
}
