/* efabench ipc's ranks: the context every file of it shares, and how a phase's links map onto
 * buffers and launches (ipc_links.c): which slots, which ops, filling and checking them. */
#ifndef EB_BENCH_IPC_LINKS_H
#define EB_BENCH_IPC_LINKS_H

#include "ipc_opts.h"
#include "efabench/boot.h"

#ifdef EB_HAVE_CUDA
#include "gpu/ipc_kernels.h"

#define MAX_BATCH 100

struct ipc_ctx {
	const struct eb_opts *o;
	const struct ipc_opts *io;
	struct eb_boot *boot;
	int rank, n;
	struct eb_ik_gpu gpu;
	int *ordinal;		  /* CUDA ordinal of each rank's GPU */
	unsigned char *exp;	  /* exported: written by peers (write) or read by them (read) */
	unsigned char *loc;	  /* private: the source of writes, the target of reads */
	unsigned char **peer;	  /* each rank's exp mapped here (NULL for this rank) */
	size_t stride, flags_off; /* bytes per slot; where the flags start in exp */
	int nslots;		  /* one per peer when all GPUs run at once, else 1 */
	struct eb_ik_timer *timer;
	double *samples; /* the timed launches' (a warm-up's too, then thrown away) */
	uint64_t epoch;
	struct ipc_shape shapes[2 * EB_OPT_LIST_MAX * EB_OPT_LIST_MAX + 1];
	int nshapes;
	struct ipc_report rep; /* filled on rank 0 */
};

uint64_t ipc_deadline(const struct ipc_ctx *c);
/* Every rank of the run (arg: the ipc_ctx). */
int ipc_barrier(void *arg);
/* Phases of a measurement: one, or one per ordered pair (--pairs each). */
int ipc_nphases(const struct ipc_ctx *c);
/* Link k of phase p: initiator a, peer b. */
void ipc_link_of(const struct ipc_ctx *c, int p, int k, int *a, int *b);
/* Source holders fill (fill_sources), destination holders poison (and clear the flag). */
int ipc_prepare(struct ipc_ctx *c, int dir, int p, uint64_t size, int fill_sources);
/* Destination holders check every byte (and, for kernel writes, the completion flag). */
int ipc_verify(struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
	       uint64_t *wrong);
/* This rank's ops in phase p (as initiator); returns how many. */
int ipc_my_ops(const struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
	       struct eb_ik_op *ops);

#endif
#endif
