/* Where a moe op's time goes (--stages): in every timed iteration each rank stamps, per op,
 * its start and, per leg, when its producers had pushed every put of the items that cross the
 * fabric and when they had made everything (the latest of them each time; the a2av and MPI: no
 * stamp), when its own side was done (its producers finished, their writes complete here; the
 * a2av: its writes posted; MPI: no stamp) and when the last source's items had arrived after
 * that. Before the pushed stamp goes a "packed" one: the leg's start plus the time the producer
 * that pushed last spent making what it pushed (packing and sums come between its puts, so that
 * part is their sum, laid at the front). The schedule turns them into stages (harness/stages.h):
 * per leg send (its parts pack, push, store and complete) and wait. */
#ifndef EB_BENCH_MOE_STAGES_H
#define EB_BENCH_MOE_STAGES_H

#include "moe_state.h"

enum { MOE_NEVENTS = 22, MOE_NSTAGES = 24 };
/* What a stamp marks. */
enum { MOE_AT_START, MOE_AT_PACKED, MOE_AT_PUSHED, MOE_AT_MADE, MOE_AT_SENT, MOE_AT_IN };

extern const char *const eb_moe_events[MOE_NEVENTS];
extern const struct eb_op_stage eb_moe_stages[MOE_NSTAGES];

/* A new sample: this rank's current iteration. */
void eb_moe_stamp_next(const struct eb_ctx *c, struct mstate *st);
/* Op `which` (0 dispatch, 1 combine) passed `at` (MOE_AT_*) in leg `leg`, now. */
void eb_moe_stamp(struct eb_ctx *c, struct mstate *st, int which, int at, int leg);
/* Leg `leg` of op `which`: the moments the last producer had packed (above), had pushed its
 * fabric puts and had made everything (st->made, read once they are done). CPU producers' on the
 * spot; GPU producers' kept on the GPU's clock until the phase ends (eb_moe_stamps_close). 0 or
 * EB_ENOMEM. */
int eb_moe_stamp_made(struct eb_ctx *c, struct mstate *st, int which, int leg);
/* Around a phase (prepare, verify): GPU producers' clock measured before and after it, and
 * their made stamps handed to the schedule on the host's clock, the offset on the line
 * between the two. 0 or a negative status after one line. */
int eb_moe_stamps_open(struct eb_ctx *c, struct mstate *st);
int eb_moe_stamps_close(struct eb_ctx *c, struct mstate *st);
/* The same at a time taken elsewhere (ns on the harness's clock). */
void eb_moe_stamp_at(struct eb_ctx *c, struct mstate *st, int which, int at, int leg, uint64_t ns);

#endif
