/* efabench matrix's parts: its options and per-rank state, shared by matrix.c (the
 * benchmark: who measures, its points over the pair cells) and matrix_tables.c (rank 0's
 * grids, summary and records). */
#ifndef EB_BENCH_MATRIX_H
#define EB_BENCH_MATRIX_H

#include "bench/pairs/pairs.h"

struct matrix_opts {
	uint64_t size;
	long iters, warm, lat_iters;
	double flag, expect;
	int dry_run;
	int per; /* enum per */
};

/* Who measures: every rank when they share a host, else one per host; or every rank with its
 * GPU's nearest NICs. */
enum per { PER_AUTO, PER_HOST, PER_GPU };

struct host {
	char name[64];
};

struct matrix_state {
	struct eb_pairs *pairs; /* first: the pair cells' hooks find it here */
	const struct matrix_opts *mo;
	int n, nch, rounds;
	int *mem, nm; /* the ranks that measure (all, or the first of each host) */
	struct host *hosts;
	uint64_t t0;	  /* when the schedule started */
	double elapsed_s; /* rank 0: the whole schedule */
};

/* After the last point (rank 0): a record per cell, a grid per channel of write Gbps and of
 * 8-byte latency, the min and median per host and per NIC, and the flagged cells. */
int eb_matrix_close(const struct eb_ctx *c, struct eb_sheet *s);

#endif
