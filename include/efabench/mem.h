/* Memory kinds behind one interface: host (page-aligned, huge pages when large), pinned (host
 * memory registered with CUDA, mapped for the GPU) and device (cudaMalloc on one GPU). Each
 * buffer says where the NIC reads it; fill, poison and check use the payload pattern, on the
 * GPU for device memory so a 1 GiB buffer is checked in milliseconds. */
#ifndef EFABENCH_MEM_H
#define EFABENCH_MEM_H

#include "efabench/pattern.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum eb_mem_kind {
	EB_MEM_HOST,   /* malloc'd, page-aligned */
	EB_MEM_PINNED, /* host memory, cudaHostRegister'd (mapped, portable) */
	EB_MEM_DEVICE, /* cudaMalloc on the buffer's GPU */
};

struct eb_mem {
	enum eb_mem_kind kind;
	void *ptr;     /* what the NIC reads and writes: a host or a device address */
	void *dev_ptr; /* the GPU's address of it (pinned: the mapped alias), else NULL */
	size_t len;
	int gpu;	     /* CUDA ordinal (device, pinned), -1 for host */
	int dmabuf_fd;	     /* device memory exported as a DMA-BUF, -1 when none (eb_mem_dmabuf) */
	uint64_t dmabuf_off; /* ptr's offset into that DMA-BUF */
	void *alloc;	     /* what eb_mem_free releases */
	int shared;	     /* EB_SHARE_*: memory other processes map, or a peer's mapped here */
	char seg[48];	     /* EB_SHARE_SEG: the segment's name until eb_mem_unshare */
};

enum {
	EB_SHARE_NONE,
	EB_SHARE_SEG, /* host or pinned memory in a POSIX shared-memory segment of this process */
	EB_SHARE_MAP, /* a peer's segment, mapped here */
	EB_SHARE_IPC, /* a peer's device memory, mapped here through CUDA IPC */
};

/* What a process hands its peers on this host so that they can map a shared buffer. */
struct eb_mem_handle {
	int32_t kind; /* enum eb_mem_kind */
	uint32_t pad;
	uint64_t len;
	uint64_t off;	      /* device memory: the buffer's offset in the exported allocation */
	unsigned char id[64]; /* the segment's name, or the CUDA IPC handle */
};

const char *eb_mem_kind_name(enum eb_mem_kind k); /* "host", "pinned", "device" */

/* 1 when the build has CUDA; the GPU count CUDA sees (0 without CUDA or a driver). */
int eb_mem_have_cuda(void);
int eb_mem_gpu_count(void);
/* Why CUDA sees no GPU, for a one-line refusal ("no CUDA driver: ...", "a build without
 * CUDA"); NULL when it sees one. Initialises CUDA in the calling process. */
const char *eb_mem_gpu_absent(void);
/* 1 when an MPS control daemon runs for CUDA to connect to: its pid file in
 * $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) names a live process. Ranks sharing a
 * GPU then share it through MPS. */
int eb_mem_mps_running(void);

/* The GPU's PCI address as sysfs spells it ("0000:53:00.0"); EB_ENOTSUP without CUDA. */
int eb_mem_gpu_pci(int gpu, char *bdf, size_t len);
/* The GPU's name and multiprocessor count; EB_ENOTSUP without CUDA. */
int eb_mem_gpu_name(int gpu, char *name, size_t len, int *sms);
/* The GPU's free and total memory as the driver counts them (other processes' use taken
 * off); makes `gpu` current. EB_ENOTSUP without CUDA. */
int eb_mem_gpu_room(int gpu, uint64_t *free_bytes, uint64_t *total);

/* Make `gpu` this process's CUDA device (before any device or pinned allocation). */
int eb_mem_use_gpu(int gpu);

/* Allocate len bytes (at least one page) of kind on the current GPU; zeroed. 0, or a negative
 * status after one line naming `what`. */
int eb_mem_alloc(struct eb_mem *m, enum eb_mem_kind kind, size_t len, const char *what);
void eb_mem_free(struct eb_mem *m);

/* ---- memory shared with the processes of this host (stores into a peer's buffer) */
/* Like eb_mem_alloc, in memory peers can map: host and pinned memory in a POSIX
 * shared-memory segment (pinned: registered with CUDA here), device memory as cudaMalloc
 * makes it (CUDA IPC exports it). eb_mem_free releases it. */
int eb_mem_alloc_shared(struct eb_mem *m, enum eb_mem_kind kind, size_t len, const char *what);
void eb_mem_export(const struct eb_mem *m, struct eb_mem_handle *h);
/* Map a peer's export into this process: m->ptr is where this process's CPU reaches it (NULL
 * for device memory), m->dev_ptr where its GPU does (pinned: registered here; host: NULL).
 * eb_mem_free unmaps it. 0, or a negative status after one line naming `what`. */
int eb_mem_import(struct eb_mem *m, const struct eb_mem_handle *h, const char *what);
/* Once every peer has mapped it: remove the segment's name, so that nothing is left behind
 * whatever happens to the processes (their mappings stay). */
void eb_mem_unshare(struct eb_mem *m);

/* Fill bytes [off, off + len) with the pattern p, the first byte being payload offset base (a
 * multiple of 8); synchronous. Poison = the same with epoch EB_EPOCH_POISON. */
int eb_mem_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		uint64_t base);
/* Wrong 8-byte words of [off, off + len) against the pattern (the last word may be partial);
 * *first_bad (may be NULL) gets the payload offset of the first one. A failure to check counts
 * every word as wrong after printing why. */
uint64_t eb_mem_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		      uint64_t base, uint64_t *first_bad);
/* Testing aid: invert the byte at off. */
int eb_mem_flip(const struct eb_mem *m, size_t off);
/* The GPU's copy engines: n copies from one device buffer to others (a peer GPU's memory
 * mapped through CUDA IPC included), side by side on a stream each; eb_mem_ce_copy returns
 * once all have finished. Without CUDA, open fails with one line. */
struct eb_mem_ce;
int eb_mem_ce_open(struct eb_mem_ce **ce, int n);
int eb_mem_ce_copy(struct eb_mem_ce *ce, char *const *to, const char *from, const uint64_t *len);
void eb_mem_ce_close(struct eb_mem_ce *ce);
/* Copy between any two buffers' ranges (synchronous). */
int eb_mem_copy(const struct eb_mem *dst, size_t doff, const struct eb_mem *src, size_t soff,
		size_t len);

/* Export device memory as a DMA-BUF (the driver's cuMemGetHandleForAddressRange), once;
 * EB_ENOTSUP (quietly) where the GPU, driver or build cannot. */
int eb_mem_dmabuf(struct eb_mem *m);

/* What the GPU and driver report: DMA-BUF export and GPUDirect RDMA support (1, 0, or -1 when
 * unknown). */
void eb_mem_gpu_caps(int gpu, int *dmabuf, int *gdr);

#ifdef __cplusplus
}
#endif

#endif
