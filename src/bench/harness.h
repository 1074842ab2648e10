/* The harness owns loops, timing, verification and what goes to the report; a benchmark
 * (bench.h) only says how to set up, fill, run one iteration and check. */
#ifndef EB_BENCH_HARNESS_H
#define EB_BENCH_HARNESS_H

#include "bench.h"

/* Before the embedded launcher forks: there are two ranks or more, the provider and NICs exist
 * (checked in a child process). The rank count, or minus an exit status after one line. */
int eb_harness_probe(const struct eb_opts *o);

/* This rank's GPU (--gpu, else the local rank modulo the GPUs CUDA sees) where its memory or
 * options need one, its NUMA node's cores unless already bound; c->mem, staged, sel too. */
int eb_harness_pick_gpu(struct eb_ctx *c, struct eb_boot *boot);

/* Run the benchmark on this rank; rank 0 prints and writes files. Returns a status. */
int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot);

#endif
