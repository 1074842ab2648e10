/* Before and as a run starts: the launcher's probe and each rank's GPU. */
#ifndef EB_BENCH_PROBE_H
#define EB_BENCH_PROBE_H

#include "bench.h"

/* Before the embedded launcher forks: there are two ranks or more, the provider and NICs exist
 * (checked in a child process). The rank count, or minus an exit status after one line. */
int eb_harness_probe(const struct eb_opts *o);

/* This rank's GPU (--gpu, else the local rank modulo the GPUs CUDA sees) where its memory or
 * options need one, its NUMA node's cores unless already bound; c->mem, staged, sel too. */
int eb_harness_pick_gpu(struct eb_ctx *c, struct eb_boot *boot);

#endif
