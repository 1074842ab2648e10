/* Before and as a run starts: the launcher's probe and each rank's GPU. */
#ifndef EB_BENCH_PROBE_H
#define EB_BENCH_PROBE_H

#include "bench.h"

/* Before the embedded launcher forks: there are two ranks or more, --mem auto decided, the
 * provider and NICs exist (checked in a child process). The rank count, or minus an exit
 * status after one line. */
int eb_harness_probe(struct eb_opts *o);

/* For subcommands with probes of their own: --poll block refused (minus exit status 2, after
 * one line) where the provider's completion queues have no file descriptor; else 0. */
int eb_harness_probe_poll(const struct eb_opts *o);

/* --mem auto decided: device memory where a GPU is present and the provider registers it,
 * pinned host memory where a GPU is but the provider cannot, else host; o->mem and
 * o->mem_why say which and why. boot NULL: before the embedded launcher forks (asked in a
 * child, so that this process initialises no CUDA); else in a rank, for itself. Nothing to do
 * unless o->mem is EB_MEM_AUTO. */
int eb_harness_mem_auto(struct eb_opts *o, const struct eb_boot *boot);

/* This rank's GPU (--gpu, else the local rank modulo the GPUs CUDA sees) where its memory or
 * options need one, its NUMA node's cores unless already bound; c->mem, staged, sel too. */
int eb_harness_pick_gpu(struct eb_ctx *c, struct eb_boot *boot);

#endif
