/* efabench moe's set-up (moe_setup.c): refuses shapes the rank count does not allow
 * (EB_EINVAL after one line on rank 0), then the routing, regions, engines and proxy
 * threads; and the teardown. */
#ifndef EB_BENCH_MOE_SETUP_H
#define EB_BENCH_MOE_SETUP_H

#include "moe_state.h"

int eb_moe_setup(struct eb_ctx *c, const struct mopts *mo);
void eb_moe_teardown(struct eb_ctx *c, int failed);

#endif
