/* efabench moe's copy engines (moe_ce.c): whether some host has ranks storing into each
 * other's GPU memory (alike on every rank); then a header point per op that times the copy
 * engines for its same-host bytes (pts gets 2; else 0), each running moe_ce.c's own hooks. */
#ifndef EB_BENCH_MOE_CE_H
#define EB_BENCH_MOE_CE_H

#include "moe_state.h"

int eb_moe_ce_wanted(const struct eb_ctx *c, const struct mstate *st);
int eb_moe_ce_points(const struct eb_ctx *c, const struct mstate *st, struct eb_pt *pts);

#endif
