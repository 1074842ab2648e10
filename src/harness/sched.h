/* The schedule: a row of points run through the one loop (loop.h) on every rank. Each point
 * runs in turns; a turn's warm-up comes first, then its timed phases, every phase prepared,
 * aligned by a barrier and verified, its wrong words summed over every rank. The points of a
 * row take turns --rounds times, each round running a share of their timed phases. After a
 * point's last round every rank's report reaches every rank, and rank 0 has the point. */
#ifndef EB_HARNESS_SCHED_H
#define EB_HARNESS_SCHED_H

#include "bench.h"
#include "point.h"
#include "report/progress.h"

/* Run the n points of a row; m[i] gets point i (figures on rank 0; wrong on every rank).
 * prog (may be NULL) shows each visit. Returns a status; on failure every m is freed. */
int eb_sched_row(struct eb_ctx *c, const struct eb_pt *pts, int n, struct eb_meas *m,
		 struct eb_progress *prog);

/* Timed phases of a point (those timed by the phase get --phases, at least --rounds; the
 * others one per round), and samples per turn: iterations, or phases when phase-timed. */
long eb_sched_phases(const struct eb_ctx *c, const struct eb_pt *pt);
long eb_sched_per(const struct eb_ctx *c, const struct eb_pt *pt);

/* What the progress line weighs a visit of a point by: its bytes moved, plus a fixed cost per
 * iteration (about what a 64 KiB write takes), so that small sizes count too. */
double eb_sched_work(const struct eb_ctx *c, const struct eb_pt *pt);

/* Roles in a point's turn by its flow (the default turn hook). */
void eb_sched_flow_turn(struct eb_ctx *c);

#endif
