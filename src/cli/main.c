/* efabench: one binary, one subcommand per benchmark. */
#include "opts.h"
#include "efabench/boot.h"
#include "efabench/fabric.h"
#include "efabench/status.h"
#include "../core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int eb_info_main(void);

static const struct eb_bench *const benches[] = {&eb_bench_write, &eb_bench_sendrecv,
						 &eb_bench_alltoall};

struct rank_args {
	const struct eb_bench *b; /* NULL: efabench ipc */
	const struct eb_opts *o;
};

static int rank_main(struct eb_boot *boot, void *arg)
{
	struct rank_args *a = arg;

	if (a->b == NULL)
		return eb_ipc_rank(boot, (void *)a->o);
	return eb_exit_code(eb_harness_run(a->b, a->o, boot));
}

/* An output file we cannot create is bad input: find out before any rank starts. */
static int check_writable(const char *path)
{
	FILE *f;

	if (path == NULL)
		return EB_OK;
	f = fopen(path, "a");
	if (f == NULL) {
		eb_err("cannot write %s: %s", path, strerror(errno));
		return EB_EINVAL;
	}
	fclose(f);
	return EB_OK;
}

/* Probe the provider in a child so this process never initialises libfabric before it
 * forks the ranks. Returns the child's exit status. */
static int probe_fabric(const struct eb_opts *o, int np)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		eb_err("fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(eb_exit_code(eb_fabric_validate(&o->fab, np, 1)));
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* A rank started by an outside launcher: run it, then leave the bootstrap with its code. */
static int run_started(struct eb_boot *boot, struct rank_args *a)
{
	int code = rank_main(boot, a);

	eb_boot_finalize(boot, code);
	return code;
}

static int run_mpi(const struct eb_opts *o, struct rank_args *a)
{
	struct eb_boot boot;
	int rc;

	if (o->np != 0) {
		eb_err("--np is for the embedded launcher; under mpirun/srun the launcher sets "
		       "the rank count");
		return 2;
	}
	rc = eb_boot_mpi_init(&boot);
	if (rc != EB_OK)
		return eb_exit_code(rc == EB_ENOTSUP ? EB_EINVAL : rc);
	return run_started(&boot, a);
}

static int run_rendezvous(struct eb_opts *o, struct rank_args *a)
{
	struct eb_boot boot;
	int rc;

	if (o->np != 0) {
		eb_err("--np is for the embedded launcher; with a rendezvous each rank is started "
		       "on its own (--rank, --ranks)");
		return 2;
	}
	o->rdv.timeout_s = o->fab.timeout_s;
	if (eb_rdv_opts_resolve(&o->rdv) != EB_OK)
		return 2;
	rc = eb_boot_rdv_init(&boot, &o->rdv);
	if (rc != EB_OK)
		return eb_exit_code(rc == EB_EINVAL ? EB_EPEER : rc);
	return run_started(&boot, a);
}

int main(int argc, char **argv)
{
	const struct eb_variant *a_vars[EB_MAX_VARIANTS];
	const struct eb_bench *b = NULL;
	struct rank_args a;
	struct eb_opts o;
	size_t i;
	int help, np;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		eb_opts_usage(argc < 2 ? stderr : stdout, NULL);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i]->name) == 0)
			b = benches[i];
	if (b == NULL && strcmp(argv[1], "info") != 0 && strcmp(argv[1], "queue") != 0 &&
	    strcmp(argv[1], "ipc") != 0) {
		eb_err("unknown subcommand '%s' (want write, sendrecv, alltoall, queue, ipc or "
		       "info)",
		       argv[1]);
		return 2;
	}
	if (eb_opts_parse(argc, argv, &o, &help) != EB_OK)
		return 2;
	if (help) {
		eb_opts_usage(stdout, argv[1]);
		return 0;
	}
	eb_log_set_verbose(o.verbose);
	if (b == NULL && strcmp(argv[1], "queue") == 0) {
		if (check_writable(o.json) != EB_OK)
			return 2;
		o.q.timeout_s = o.fab.timeout_s;
		o.q.json = o.json;
		return eb_exit_code(eb_queue_run(&o.q));
	}
	if (b == NULL && strcmp(argv[1], "info") == 0)
		return eb_info_main();
	if (b != NULL && eb_harness_select(b, o.layouts, a_vars) == 0) {
		eb_err("%s has no variant with the layouts asked for (--layout)", b->name);
		return 2;
	}
	if (check_writable(o.csv) != EB_OK || check_writable(o.json) != EB_OK)
		return 2;
	a.b = b;
	a.o = &o;
	if (b == NULL) { /* ipc: one rank per GPU of this host */
		if (o.rdv.root != NULL || eb_boot_detect() == EB_LAUNCH_TCP) {
			eb_err("efabench ipc runs on one host: start it with --np or mpirun, not "
			       "a rendezvous");
			return 2;
		}
		if (eb_boot_detect() == EB_LAUNCH_MPI)
			return run_mpi(&o, &a);
		np = eb_ipc_probe(&o);
		return np < 0 ? -np : eb_launch_local(np, rank_main, &a, o.fab.timeout_s + 5.0);
	}
	if (o.rdv.root != NULL || eb_boot_detect() == EB_LAUNCH_TCP)
		return run_rendezvous(&o, &a);
	if (eb_boot_detect() == EB_LAUNCH_MPI)
		return run_mpi(&o, &a);
	np = o.np ? o.np : 2;
	if (np < 2) {
		eb_err("%s pairs rank 0 with every other rank: it needs --np 2 or more (got %d)",
		       b->name, np);
		return 2;
	}
	i = (size_t)probe_fabric(&o, np);
	if (i != 0)
		return (int)i;
	return eb_launch_local(np, rank_main, &a, o.fab.timeout_s + 5.0);
}
