/* efabench ipc's ranks: the context every file of it shares, and how a phase's links map onto
 * buffers and launches (ipc_links.c): which slots, which ops, filling and checking them. */
#ifndef EB_BENCH_IPC_LINKS_H
#define EB_BENCH_IPC_LINKS_H

#include "ipc_opts.h"
#include "efabench/boot.h"

#ifdef EB_HAVE_CUDA
#include "ipc_kernels.h"
#include "harness/bench.h"

#define MAX_BATCH 100

/* Kinds of point: the launch floor, the sweep of shapes, and the summary's copy engine and
 * best kernel measured again (a point's step is its direction + 2 x its kind). */
enum { IPC_FLOOR, IPC_SWEEP, IPC_CE_AGAIN, IPC_BEST };

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
	double *scratch; /* a warm-up's samples, thrown away */
	uint64_t epoch;
	struct ipc_shape shapes[2 * EB_OPT_LIST_MAX * EB_OPT_LIST_MAX + 1];
	int nshapes;
	char names[2 * EB_OPT_LIST_MAX * EB_OPT_LIST_MAX + 2][48]; /* the points' */
	/* Rank 0, as points are recorded: the figures the summary and sweep tables need. */
	double floor_us, peak_gbs, link_gbs;
	int links;
	const char *peak_from;
	int best;		 /* the sweep's fastest kernel shape of this (dir, size), or -1 */
	double best_gbs, ce_gbs; /* the sweep's, for the summary's choice and %CE */
	uint64_t wrong;		 /* of this (dir, size), sweep and summary */
	int summary_left;	 /* summary points still to record in this row */
	struct eb_rec row;	 /* the summary row being built */
	int table_dir;		 /* the direction whose summary table is open, or -1 */
};

const char *ipc_dir_name(int dir);
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

/* The benchmark's hooks (ipc_points.c: what is measured; ipc_record.c: its figures). */
int ipc_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max);
void ipc_turn(struct eb_ctx *c);
int ipc_prepare_hook(struct eb_ctx *c);
int ipc_run(struct eb_ctx *c, long n, double *samples, long *got);
int ipc_verify_hook(struct eb_ctx *c, uint64_t *wrong);
void ipc_peak(struct ipc_ctx *ic);
void ipc_facts(const struct eb_ctx *c, struct eb_sheet *s);
void ipc_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		struct eb_rec *x);
int ipc_close(const struct eb_ctx *c, struct eb_sheet *s);

#endif
#endif
