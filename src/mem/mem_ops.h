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

#endif
