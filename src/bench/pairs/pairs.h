/* Pair cells, for `matrix` and `doctor`: rank a writes to rank b on one channel, S-byte writes
 * each acknowledged once every chunk landed (bandwidth) and 8-byte writes each acknowledged
 * (latency); the target checks every byte of what landed. Pairs are scheduled as a round-robin
 * tournament: with N ranks, N - 1 rounds (N when N is odd, one rank sitting out each), every
 * rank in at most one pair per round, so every ordered pair takes time proportional to N, not
 * N^2. On the harness: a point for bandwidth and one for latency, a turn per (round, channel,
 * direction) in which every pair of the round measures at once. */
#ifndef EB_BENCH_PAIRS_H
#define EB_BENCH_PAIRS_H

#include "harness/bench.h"
#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/region.h"
#include "efabench/xfer.h"

#include <stddef.h>
#include <stdint.h>

/* One cell: src wrote to dst on channel chan. */
struct eb_cell {
	int32_t src, dst, chan;
	int32_t measured;	    /* 1 when measured, 0 not */
	double gbps;		    /* 8 * size / mean seconds per acknowledged write */
	double lat_us;		    /* mean microseconds of an 8-byte write + acknowledgement */
	uint64_t wrong;		    /* wrong 8-byte words at the target */
	struct eb_steal_meas steal; /* of the point that measured its bandwidth */
};

enum { DATA, SMALL, TX, RX, NX };

struct eb_pairs {
	struct eb_engine *e;
	struct eb_region src, dst; /* size + 64: the last 64 bytes carry the latency writes */
	size_t size, chunk;
	int window;
	void *block;		  /* ctl and grid */
	uint64_t *ctl;		  /* [chan][2]: a message out, a message in */
	struct eb_region ctl_reg; /* ctl on every channel */
	struct eb_xfer x[4];	  /* DATA, SMALL (8-byte writes), TX and RX (acknowledgements) */
	/* The schedule: the ranks that measure (the others sit out every round) and the rounds */
	const int *members;
	int nmembers, me, rounds, n;
	/* This rank in the current turn */
	int chan;
	struct eb_imm_wait w; /* the target's count of arrived chunks */
	uint64_t chunks;
	long seq;
	/* Rank 0: every cell, [(chan * n + src) * n + dst], and the slowest turn of each summed */
	struct eb_cell *grid;
	double cells_s;
};

/* Buffers of size bytes of kind mem on every channel, keys exchanged (collective); members
 * (NULL: every rank) measure in `rounds` rounds (eb_pairs_rounds for every pair). */
int eb_pairs_open(struct eb_pairs **p, struct eb_engine *e, size_t size, enum eb_mem_kind mem,
		  size_t chunk, int window, const int *members, int nmembers, int rounds);
void eb_pairs_close(struct eb_pairs *p);

/* Rounds of the tournament for n ranks, and rank's partner in a round (-1: it sits out). */
int eb_pairs_rounds(int n);
int eb_pairs_partner(int n, int round, int rank);

/* Row 0: the bandwidth point (warm + iters writes of size per cell) and the latency point
 * (lat_iters 8-byte writes); 0 after. */
int eb_pairs_plan(const struct eb_pairs *p, int row, struct eb_pt *pts, long warm, long iters,
		  long lat_iters);
/* The hooks over one cell, either side, for a benchmark whose state (c->priv) starts with its
 * struct eb_pairs pointer. */
void eb_pairs_turn(struct eb_ctx *c);
int eb_pairs_prepare(struct eb_ctx *c);
int eb_pairs_iter(struct eb_ctx *c, long i);
int eb_pairs_verify(struct eb_ctx *c, uint64_t *wrong);
/* Rank 0: a measured point's cells into the grid. */
int eb_pairs_collect(struct eb_pairs *p, const struct eb_meas *m);

/* A channel's typical write rate in the grid: the median over ranks of each rank's fastest
 * measured cell on it (as source or target). Unlike the median of all cells it stays at the
 * healthy rate when one rank's NIC is slow, although that NIC is in 2/N of the cells (half of
 * them with 4 ranks). 0 when nothing was measured. */
double eb_pairs_typical(const struct eb_cell *grid, int n, int chan);

#endif
