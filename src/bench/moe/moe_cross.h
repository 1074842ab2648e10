/* efabench moe's leg between hosts (moe_cross.c): the leg of each op whose bytes cross
 * between hosts (st->cross_leg, from the plan); whether an op has one (pair: both do; its
 * time is span MOE_SPAN_CROSS); the bytes rank r sends across in it. */
#ifndef EB_BENCH_MOE_CROSS_H
#define EB_BENCH_MOE_CROSS_H

#include "moe_state.h"

void eb_moe_cross_legs(const struct eb_ctx *c, struct mstate *st);
int eb_moe_cross_timed(const struct mstate *st, int op);
double eb_moe_cross_bytes(const struct mstate *st, int op, int r);

#endif
