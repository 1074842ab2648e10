/* The plan builder's own helpers (moe_flow.c), shared with moe_plan.c. */
#ifndef EB_BENCH_MOE_PLAN_INT_H
#define EB_BENCH_MOE_PLAN_INT_H

#include "moe_plan.h"

/* normal mode across hosts: tokens cross the fabric to a forwarding rank */
int eb_moe_two_level(const struct eb_moe_plan *p);
/* s's tokens reach d in dispatch's first leg (not through a forwarding rank) */
int eb_moe_direct(const struct eb_moe_plan *p, int s, int d);
/* f forwards s's tokens on f's host (and sums that host's rows for s's tokens) */
int eb_moe_forwards(const struct eb_moe_plan *p, int f, int s);
/* Where writer's block lands at d in a leg: the leg's area after the lower writers'. */
uint64_t eb_moe_in_base(const struct eb_moe_plan *p, const struct eb_route *rt, int phase, int leg,
			int writer, int d);
/* Every leg's arrival area (in_off, dst_len). */
void eb_moe_areas(struct eb_moe_plan *p, const struct eb_route *rt);

#endif
