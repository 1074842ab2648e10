/* efabench moe's data (moe_data.c): fill what goes out and poison what comes in; count what
 * arrived wrong; where a testing aid flips a byte: the tokens received, or the outputs come
 * back (*len 0: nothing arrives here). */
#ifndef EB_BENCH_MOE_DATA_H
#define EB_BENCH_MOE_DATA_H

#include "harness/bench.h"

int eb_moe_prepare(struct eb_ctx *c);
int eb_moe_verify(struct eb_ctx *c, uint64_t *wrong);
void eb_moe_landing(const struct eb_ctx *c, size_t *off, size_t *len);

#endif
