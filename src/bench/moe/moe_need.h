/* What a rank of efabench moe allocates at least, from the options alone, and the refusal of a
 * shape the host or the GPU cannot hold, before anything is allocated. */
#ifndef EB_BENCH_MOE_NEED_H
#define EB_BENCH_MOE_NEED_H

#include "moe_state.h"

#include <stdint.h>

/* A rank's least: the routing table and the plan's per-token arrays (host memory), and the
 * source and destination regions (host or GPU memory, by --mem; neither while --mem auto is
 * undecided). */
struct eb_moe_need {
	uint64_t route, lists, regions;
	uint64_t host, gpu; /* what lands in host memory and in GPU memory */
};

struct eb_moe_need eb_moe_need_of(const struct eb_opts *o, const struct mopts *mo, int ranks);

/* Bytes per token as dispatched: bf16, or fp8 with a 4-byte scale per 128 values (DeepEP's). */
uint64_t eb_moe_token_bytes(const struct mopts *mo);

/* Before the local launcher starts `ranks` ranks here: the shape against the host's available
 * memory, and with --mem device against the free memory of the GPUs they would share (asked
 * in a child process, so that this one initialises no CUDA before it forks). EB_EINVAL after
 * one line naming the bytes needed and those available; EB_OK when they fit or the host does
 * not say. */
int eb_moe_need_check(const struct eb_opts *o, const struct mopts *mo, int ranks);

#endif
