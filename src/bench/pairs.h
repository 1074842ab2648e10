/* Measurements between two ranks on one channel at a time, for `matrix` and `doctor`: write
 * bandwidth (S-byte writes, each acknowledged once every chunk landed) and 8-byte write
 * latency (write + acknowledgement), every byte of the last write checked at the target.
 * Pairs are scheduled as a round-robin tournament: with N ranks, N - 1 rounds (N rounds when
 * N is odd, one rank sitting out each), every rank in at most one pair per round, so a matrix
 * of every ordered pair takes time proportional to N, not N^2. */
#ifndef EB_BENCH_PAIRS_H
#define EB_BENCH_PAIRS_H

#include "cmd.h"
#include "efabench/engine.h"
#include "efabench/mem.h"

#include <stdint.h>

/* Rounds of the tournament for n ranks, and rank's partner in a round (-1: it sits out). */
int eb_pairs_rounds(int n);
int eb_pairs_partner(int n, int round, int rank);

/* One measured cell: src wrote to dst on channel chan. */
struct eb_cell {
	int32_t src, dst, chan, status; /* status: 0, or a negative status of the measurement */
	double gbps;			/* 8 * size / mean seconds per acknowledged write */
	double lat_us;			/* mean microseconds of an 8-byte write + acknowledgement */
	uint64_t wrong;			/* wrong 8-byte words at the target */
	double secs;			/* the cell's wall time on this rank */
};

struct eb_pairs;

/* Buffers of size bytes of kind mem on every channel, keys exchanged (collective). */
int eb_pairs_open(struct eb_pairs **p, struct eb_engine *e, size_t size, enum eb_mem_kind mem,
		  size_t chunk, int window);
void eb_pairs_close(struct eb_pairs *p);

/* Measure me <-> peer on chan: me writes when initiator, else it is the target. Both sides
 * call it with the same arguments but `initiator`; the initiator fills out (the target fills
 * out->wrong). iters writes of size (after warm writes), lat_iters 8-byte round trips. */
int eb_pairs_cell(struct eb_pairs *p, int peer, int initiator, int chan, long warm, long iters,
		  long lat_iters, double timeout_s, struct eb_cell *out);

#endif
