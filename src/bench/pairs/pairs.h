/* Measurements between two ranks on one channel at a time, for `matrix` and `doctor`: write
 * bandwidth (S-byte writes, each acknowledged once every chunk landed) and 8-byte write
 * latency (write + acknowledgement), every byte of the last write checked at the target.
 * Pairs are scheduled as a round-robin tournament: with N ranks, N - 1 rounds (N rounds when
 * N is odd, one rank sitting out each), every rank in at most one pair per round, so a matrix
 * of every ordered pair takes time proportional to N, not N^2. */
#ifndef EB_BENCH_PAIRS_H
#define EB_BENCH_PAIRS_H

#include "harness/cmd.h"
#include "efabench/engine.h"
#include "efabench/mem.h"
#include "pairs_cell.h"

#include <stdint.h>

/* Rounds of the tournament for n ranks, and rank's partner in a round (-1: it sits out). */
int eb_pairs_rounds(int n);
int eb_pairs_partner(int n, int round, int rank);

/* A schedule: the first `rounds` rounds of the tournament (eb_pairs_rounds for every pair),
 * each channel, both directions; per cell `warm` + `iters` writes and `lat_iters` 8-byte
 * round trips, each wait given timeout_s per write. */
struct eb_pairs_plan {
	int rounds;
	long warm, iters, lat_iters;
	double timeout_s;
	const char *name;   /* the progress line's subcommand; NULL: no progress line */
	const int *members; /* the ranks that measure, in order (NULL: every rank); the others
			     * sit out every round but join its barriers */
	int nmembers;
};

/* Run the schedule (collective, a barrier before each phase). *mine (malloc'd) gets the
 * [round][chan][direction] cells this rank took part in, status 1 where it sat out. */
int eb_pairs_run(struct eb_pairs *p, const struct eb_pairs_plan *plan, struct eb_cell **mine,
		 double *elapsed_s);

/* Every rank's cells on every rank (collective): *grid (malloc'd) is indexed
 * [(chan * n + src) * n + dst] with the initiator's figures and the target's wrong count;
 * its status counts the measurements (0: not measured) or is the failure's status. phases_s:
 * the slowest cell of each phase, summed (what the schedule would take without overhead). */
int eb_pairs_gather(struct eb_pairs *p, const struct eb_pairs_plan *plan,
		    const struct eb_cell *mine, struct eb_cell **grid, double *phases_s);

/* A channel's typical write rate in a gathered grid: the median over ranks of each rank's
 * fastest measured cell on it (as source or target). Unlike the median of all cells it stays
 * at the healthy rate when one rank's NIC is slow, although that NIC is in 2/N of the cells
 * (half of them with 4 ranks). 0 when nothing was measured. */
double eb_pairs_typical(const struct eb_cell *grid, int n, int chan);

#endif
