/* One table of operations per memory kind (perftest's memory_ctx idea). */
#ifndef EB_MEM_OPS_H
#define EB_MEM_OPS_H

#include "efabench/mem.h"

struct eb_mem_ops {
	int (*alloc)(struct eb_mem *m, size_t len, const char *what);
	void (*free)(struct eb_mem *m);
	int (*fill)(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		    uint64_t base);
	int (*check)(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		     uint64_t base, uint64_t *wrong, uint64_t *first_bad);
	int (*flip)(const struct eb_mem *m, size_t off);
};

/* Host memory's fill, check and flip, which pinned memory shares. */
int eb_mem_host_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		     uint64_t base);
int eb_mem_host_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		      uint64_t base, uint64_t *wrong, uint64_t *first_bad);
int eb_mem_host_flip(const struct eb_mem *m, size_t off);

extern const struct eb_mem_ops eb_mem_host_ops, eb_mem_pinned_ops, eb_mem_device_ops;

/* CUDA's part of shared memory (mem_cuda.c; EB_ENOTSUP after one line without CUDA):
 * register host memory mapped for the GPU, export device memory, map and unmap a peer's. */
int eb_mem_cuda_register(void *ptr, size_t len, void **dev_ptr, const char *what);
void eb_mem_cuda_unregister(void *ptr);
void eb_mem_ipc_export(const struct eb_mem *m, unsigned char id[64], uint64_t *off);
int eb_mem_ipc_import(const unsigned char id[64], void **base, const char *what);
void eb_mem_ipc_close(void *base);
/* Release shared memory (share.c); 1 when m was shared, else 0 and nothing done. */
int eb_mem_share_free(struct eb_mem *m);

#endif
