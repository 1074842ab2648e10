/* efabench moe's hooks (moe.c), for its subcommand (moe_opts.c). */
#ifndef EB_BENCH_MOE_H
#define EB_BENCH_MOE_H

#include "harness/bench.h"

extern const struct eb_bench eb_moe_bench;

#endif
