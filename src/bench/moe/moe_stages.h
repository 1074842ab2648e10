/* Where a moe op's time goes (--stages): in every timed iteration each rank stamps, per op,
 * its start and, per leg, when its own side was done (its producers finished, their writes
 * complete here; the a2av: its writes posted; MPI: no stamp) and when the last source's items
 * had arrived after that. The schedule turns them into stages (harness/stages.h). */
#ifndef EB_BENCH_MOE_STAGES_H
#define EB_BENCH_MOE_STAGES_H

#include "moe_state.h"

enum { MOE_NEVENTS = 10, MOE_NSTAGES = 8 };
enum { MOE_AT_START, MOE_AT_SENT, MOE_AT_IN }; /* what a stamp marks */

extern const char *const eb_moe_events[MOE_NEVENTS];
extern const struct eb_stage eb_moe_stages[MOE_NSTAGES];

/* A new sample: this rank's current iteration. */
void eb_moe_stamp_next(const struct eb_ctx *c, struct mstate *st);
/* Op `which` (0 dispatch, 1 combine) passed `at` (MOE_AT_*) in leg `leg`, now. */
void eb_moe_stamp(struct eb_ctx *c, const struct mstate *st, int which, int at, int leg);

#endif
