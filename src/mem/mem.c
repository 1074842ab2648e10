/* Memory kinds: each kind is a small table of operations; host memory's live here, pinned and
 * device memory's in mem_cuda.c. */
#include "mem_ops.h"
#include "efabench/buf.h"
#include "efabench/status.h"
#include "core/log.h"
#include "core/proc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eb_mem_mps_running(void)
{
	const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	char path[PATH_MAX];
	long pid = 0;
	FILE *f;

	/* The daemon leaves its control socket behind when it quits, not its pid file. */
	snprintf(path, sizeof(path), "%s/nvidia-cuda-mps-control.pid",
		 dir != NULL && dir[0] ? dir : "/tmp/nvidia-mps");
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return eb_proc_alive((pid_t)pid);
}

static int host_alloc(struct eb_mem *m, size_t len, const char *what)
{
	m->alloc = m->ptr = eb_buf_alloc_host(len, what);
	return m->ptr != NULL ? EB_OK : EB_ENOMEM;
}

static void host_free(struct eb_mem *m)
{
	eb_buf_free_host(m->alloc);
}

int eb_mem_host_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		     uint64_t base)
{
	eb_pattern_fill(p, (char *)m->ptr + off, len, base);
	return EB_OK;
}

int eb_mem_host_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		      uint64_t base, uint64_t *wrong, uint64_t *first_bad)
{
	*wrong = eb_pattern_check(p, (const char *)m->ptr + off, len, base, first_bad);
	return EB_OK;
}

int eb_mem_host_flip(const struct eb_mem *m, size_t off)
{
	((unsigned char *)m->ptr)[off] ^= 0x5a;
	return EB_OK;
}

const struct eb_mem_ops eb_mem_host_ops = {
    .alloc = host_alloc,
    .free = host_free,
    .fill = eb_mem_host_fill,
    .check = eb_mem_host_check,
    .flip = eb_mem_host_flip,
};

static const struct eb_mem_ops *ops_of(enum eb_mem_kind k)
{
	return k == EB_MEM_HOST	    ? &eb_mem_host_ops
	       : k == EB_MEM_PINNED ? &eb_mem_pinned_ops
				    : &eb_mem_device_ops;
}

const char *eb_mem_kind_name(enum eb_mem_kind k)
{
	return k == EB_MEM_HOST ? "host" : k == EB_MEM_PINNED ? "pinned" : "device";
}

int eb_mem_alloc(struct eb_mem *m, enum eb_mem_kind kind, size_t len, const char *what)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->len = len;
	m->gpu = -1;
	m->dmabuf_fd = -1;
	return ops_of(kind)->alloc(m, len > 0 ? len : 1, what);
}

void eb_mem_free(struct eb_mem *m)
{
	if (m->alloc != NULL && !eb_mem_share_free(m))
		ops_of(m->kind)->free(m);
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
}

int eb_mem_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		uint64_t base)
{
	return ops_of(m->kind)->fill(m, off, len, p, base);
}

uint64_t eb_mem_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		      uint64_t base, uint64_t *first_bad)
{
	uint64_t wrong = 0;

	if (ops_of(m->kind)->check(m, off, len, p, base, &wrong, first_bad) != EB_OK) {
		eb_err("could not check %zu bytes of %s memory: counting them all as wrong", len,
		       eb_mem_kind_name(m->kind));
		return (len + 7) / 8;
	}
	return wrong;
}

int eb_mem_flip(const struct eb_mem *m, size_t off)
{
	return ops_of(m->kind)->flip(m, off);
}
