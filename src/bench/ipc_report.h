/* Results of `efabench ipc` as rank 0 keeps them, and their table, CSV and JSON. */
#ifndef EB_BENCH_IPC_REPORT_H
#define EB_BENCH_IPC_REPORT_H

#include "ipc.h"
#include "harness.h"
#include "efabench/stats.h"

#include <stdint.h>

enum { EB_IPC_WRITE, EB_IPC_READ, EB_IPC_NDIRS };

/* One launch shape: the copy engine, or a kernel method with its grid and block. */
struct eb_ishape {
	int method; /* enum eb_ik_method */
	int grid, block;
	char name[24];
};

/* One timed group: an initiating GPU and its peer (-1: all its peers at once). */
struct eb_igroup {
	int initiator, peer;
	struct eb_stats st; /* seconds per launch */
};

/* One (direction, shape, size) measurement, every pair or group of it. */
struct eb_imeas {
	int valid;
	double t;     /* mean seconds per launch, the mean over groups */
	double bytes; /* bytes an initiating GPU moves per launch */
	double gbs;   /* bytes / t / 1e9 */
	uint64_t wrong;
	int ngroups;
	struct eb_igroup *groups;
};

/* The summary of one (direction, size): a fresh CE and best-kernel measurement, taken back
 * to back after the sweep chose the best shape. */
struct eb_isum {
	struct eb_imeas ce, best;
	int best_shape; /* index into shapes, -1 when no kernel ran */
};

struct eb_ireport {
	const struct eb_opts *o;
	const struct eb_iopts *io;
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
	const struct eb_ishape *shapes;
	int nshapes;
	struct eb_imeas *sweep; /* [dir][size][shape] */
	struct eb_isum *sum;	/* [dir][size] */
};

static inline struct eb_imeas *eb_ireport_sweep(const struct eb_ireport *r, int dir, int size,
						int shape)
{
	return &r->sweep[((size_t)dir * r->o->nsizes + size) * r->nshapes + shape];
}

static inline struct eb_isum *eb_ireport_sum(const struct eb_ireport *r, int dir, int size)
{
	return &r->sum[(size_t)dir * r->o->nsizes + size];
}

const char *eb_ipc_dir_name(int dir);

void eb_ipc_print_header(const struct eb_ireport *r);
void eb_ipc_print_dir(const struct eb_ireport *r, int dir);
void eb_ipc_print_row(const struct eb_ireport *r, int dir, int size);
void eb_ipc_print_sweep(const struct eb_ireport *r, int dir);
void eb_ipc_print_footer(uint64_t wrong);
int eb_ipc_csv(const struct eb_ireport *r, const char *path);
int eb_ipc_json(const struct eb_ireport *r, const char *path);

#endif
