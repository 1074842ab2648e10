/* What `efabench ipc` measured, as the report layer prints and records it: launch shapes, the
 * measurements of every (direction, shape, size) and the run's settings, as plain data. */
#ifndef EB_REPORT_IPC_VIEW_H
#define EB_REPORT_IPC_VIEW_H

#include "efabench/stats.h"
#include "table.h"

#include <stdint.h>

enum ipc_pairs {
	IPC_FIRST, /* GPU 0 -> GPU 1 */
	IPC_EACH,  /* every ordered pair, one at a time */
	IPC_ALL,   /* every GPU to every other, all at once */
};

enum { IPC_WRITE, IPC_READ, IPC_NDIRS };

/* Copy methods, in the order of enum eb_ik_method and of --methods' words. */
enum { IPC_CE, IPC_ST, IPC_TMA };

/* One launch shape: the copy engine, or a kernel method with its grid and block. */
struct ipc_shape {
	int method; /* IPC_CE, IPC_ST, IPC_TMA */
	int grid, block;
	char name[24];
};

/* One timed group: an initiating GPU and its peer (-1: all its peers at once). */
struct ipc_group {
	int initiator, peer;
	struct eb_stats st; /* seconds per launch */
};

/* One (direction, shape, size) measurement, every pair or group of it. */
struct ipc_meas {
	int valid;
	double t;     /* mean seconds per launch, the mean over groups */
	double bytes; /* bytes an initiating GPU moves per launch */
	double gbs;   /* bytes / t / 1e9 */
	uint64_t wrong;
	int ngroups;
	struct ipc_group *groups;
};

/* The summary of one (direction, size): a fresh CE and best-kernel measurement, taken back
 * to back after the sweep chose the best shape. */
struct ipc_sum {
	struct ipc_meas ce, best;
	int best_shape; /* index into shapes, -1 when no kernel ran */
};

/* What rank 0 keeps to print and record. */
struct ipc_report {
	const uint64_t *sizes;
	int nsizes;
	long warmup, iters;
	int check;
	const char *csv, *json; /* files asked for (NULL: not) */
	int pairs;		/* enum ipc_pairs */
	unsigned dirs;		/* bit per IPC_WRITE, IPC_READ */
	int no_gate;
	uint64_t tma_chunk;
	int tma_stages;
	const char *launcher;
	int nranks;
	char gpu_name[96];
	int sms;
	int links;	 /* NVLinks NVML reports active on rank 0's GPU; 0 if unknown */
	double link_gbs; /* their speed, GB/s per direction */
	double peak_gbs; /* per GPU per direction; 0 if unknown */
	const char *peak_from;
	double floor_us; /* empty-kernel launch floor */
	const char *ce_api;
	const struct ipc_shape *shapes;
	int nshapes;
	struct ipc_meas *sweep; /* [dir][size][shape] */
	struct ipc_sum *sum;	/* [dir][size] */
	struct eb_table table;
};

static inline struct ipc_meas *ipc_sweep_at(const struct ipc_report *r, int dir, int size,
					    int shape)
{
	return &r->sweep[((size_t)dir * r->nsizes + size) * r->nshapes + shape];
}

static inline struct ipc_sum *ipc_sum_at(const struct ipc_report *r, int dir, int size)
{
	return &r->sum[(size_t)dir * r->nsizes + size];
}

const char *ipc_dir_name(int dir);

/* The header, the summary table of a direction (its head, then a row per size),
 * the sweep tables, the footer and the files. */
void ipc_print_header(const struct ipc_report *r);
void ipc_print_dir(struct ipc_report *r, int dir);
void ipc_print_row(struct ipc_report *r, int dir, int size);
/* Sweep tables, footer, CSV and JSON; EB_OK, EB_ESYS or EB_EVERIFY. */
int ipc_finish(struct ipc_report *r);

#endif
