/* GPU side of `efabench ipc`, callable from C: one GPU per process, buffers shared through
 * CUDA IPC handles, the copy kernels (16-byte stores, bulk asynchronous copies) and the copy
 * engine, timed with CUDA events between back-to-back launches held behind a gate. Every
 * function prints what failed once and returns 0 or a negative status. */
#ifndef EB_BENCH_IPC_KERNELS_H
#define EB_BENCH_IPC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EB_IK_HANDLE_BYTES 64 /* sizeof(cudaIpcMemHandle_t) */

/* For a probe process: how many GPUs this process sees, and the first pair among the first
 * `want` that cannot reach each other (*bad_a = -1 when all can). Returns 0, or a negative
 * status when CUDA cannot count its devices (the reason is printed). */
int eb_ik_probe(int want, int *ngpus, int *bad_a, int *bad_b);

struct eb_ik_gpu {
	int ordinal, sms;
	size_t smem_optin; /* shared memory a block may opt into */
	char name[96], pci[32];
};

/* Make `ordinal` this process's device and describe it. */
int eb_ik_use(int ordinal, struct eb_ik_gpu *g);

/* Device memory; NULL after printing why. */
void *eb_ik_alloc(size_t bytes);
void eb_ik_free(void *p);

/* Export device memory (from eb_ik_alloc) to other processes, and map a peer's export. */
int eb_ik_export(void *p, unsigned char handle[EB_IK_HANDLE_BYTES]);
int eb_ik_import(const unsigned char handle[EB_IK_HANDLE_BYTES], void **p);
void eb_ik_unimport(void *p);

/* Testing aid: invert byte off of buf. */
int eb_ik_flip(void *buf, size_t off);
int eb_ik_put_u64(void *dst, uint64_t v);
int eb_ik_get_u64(const void *src, uint64_t *v);

enum eb_ik_method {
	EB_IK_CE,    /* the copy engine: cudaMemcpyPeerAsync */
	EB_IK_ST,    /* a kernel: grid-stride 16-byte loads and stores */
	EB_IK_TMA,   /* a kernel: bulk asynchronous copies through shared memory */
	EB_IK_EMPTY, /* an empty kernel: the launch floor */
};

struct eb_ik_op {
	enum eb_ik_method method;
	int grid, block;
	void *dst;
	const void *src;
	size_t len;
	int dst_dev, src_dev; /* CE: the devices cudaMemcpyPeerAsync names */
	size_t tma_chunk;     /* TMA: bytes per bulk copy (multiple of 16) */
	int tma_stages;	      /* TMA: shared-memory buffers per block */
	int copies;	      /* copies of the buffer per launch (0 or 1: one) */
	/* Kernels: after a system-scope fence, the last block to finish stores flag_val here
	 * (release, system scope), the completion signal a target can observe; NULL for none. */
	uint64_t *flag;
	uint64_t flag_val;
};

struct eb_ik_timer;

/* Streams (one per concurrent op), events and the gate; batches of at most max_batch. gate 0:
 * no gate kernel, so launches run as they are queued (their host cost is then in the figures)
 * for tools that serialize launches (compute-sanitizer), where a gate waits for its timeout. */
int eb_ik_timer_create(struct eb_ik_timer **t, int nstreams, int max_batch, int gate);
void eb_ik_timer_destroy(struct eb_ik_timer *t);

/* Run n launches of ops[s] on stream s, all streams at once. Launches are enqueued in batches
 * behind a gate kernel that holds each stream until the whole batch is queued, so the host's
 * launch cost stays out of the figures; `sync` (may be NULL) runs before each gate opens.
 * samples receives seconds per launch: one per launch with one stream, else one per batch
 * (the batch's span over all streams / its launches). *nsamples says how many. */
int eb_ik_run(struct eb_ik_timer *t, const struct eb_ik_op *ops, int nops, long n, double *samples,
	      long *nsamples, double timeout_s, int (*sync)(void *), void *arg);

/* The API the copy-engine op ended up using ("cudaMemcpyPeerAsync" unless it refused the
 * IPC mapping and cudaMemcpyAsync stood in). */
const char *eb_ik_ce_api(void);

#ifdef __cplusplus
}
#endif

#endif
