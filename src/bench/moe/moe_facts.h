/* efabench moe's header (moe_facts.c): rank 0's facts of the run. */
#ifndef EB_BENCH_MOE_FACTS_H
#define EB_BENCH_MOE_FACTS_H

#include "moe_state.h"

void eb_moe_facts(const struct eb_ctx *c, struct eb_sheet *sh);

#endif
