/* The harness owns loops, timing, verification and what goes to the report; a benchmark
 * (bench.h) only says how to set up, fill, run one iteration and check. */
#ifndef EB_BENCH_HARNESS_H
#define EB_BENCH_HARNESS_H

#include "bench.h"
#include "probe.h"

/* Run the benchmark on this rank; rank 0 prints and writes files. Returns a status. */
int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot);

/* The files' stamp (JSON "stamp"): efabench's version and commit, libfabric's at build and run
 * time, the host, the date (UTC) and the command line. */
void eb_stamp(const struct eb_ctx *c, struct eb_sheet *s);

#endif
