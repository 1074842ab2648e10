/* efabench moe's layout: from the routing, what one rank moves in dispatch and combine, and
 * where every piece lands. Every rank derives the same offsets for every other rank, so a
 * writer knows the receiver's slots without asking.
 *
 * A rank's source region:      x (its tokens) | pack (tokens grouped per destination) |
 *                              out (expert outputs of the tokens it received)
 * A rank's destination region: recv (tokens received, grouped by source, in token order) |
 *                              back (expert outputs of its own tokens, grouped by expert rank)
 * Sizes are the largest over ranks, so every rank's regions have the same length. */
#ifndef EB_BENCH_MOE_PLAN_H
#define EB_BENCH_MOE_PLAN_H

#include "moe_route.h"

#include <stdint.h>

/* What a phase moves from one rank: items grouped by destination rank, items [off[d],
 * off[d + 1]) going to d. An item is one write in decode; in prefill the items of one
 * destination, packed (copied from src to packed) where they are not contiguous, go as one.
 * The all-to-all-v baseline moves the packed bytes (packed before its clock starts). */
struct eb_moe_moves {
	void *block;	  /* the arrays below */
	int64_t *off;	  /* [ranks + 1] */
	uint64_t *src;	  /* [items] byte offset in the source region */
	uint64_t *packed; /* [items] where the item sits contiguous per destination */
	uint64_t *len;	  /* [items] bytes */
	uint64_t *dst;	  /* [items] byte offset in the destination's destination region */
	int64_t items;
	uint64_t bytes_out; /* bytes to other ranks */
	int64_t items_out;  /* items to other ranks */
	uint64_t max_len;
};

struct eb_moe_plan {
	int rank, ranks;
	uint64_t tok_bytes, out_bytes; /* a token in dispatch, an expert's output in combine */
	/* Region offsets, the same on every rank. */
	uint64_t x_off, pack_off, out_off, src_len;
	uint64_t recv_off, back_off, dst_len;
	struct eb_moe_moves dispatch, combine;
	void *block; /* the arrays below */
	/* What arrives here: from each source, tokens (dispatch) and writes (combine). */
	int64_t *recv_from;   /* [ranks] dispatch items from s */
	int64_t *back_from;   /* [ranks] combine items from expert rank d */
	int64_t recv_tokens;  /* tokens this rank receives (dispatch, self included) */
	int64_t recv_sel;     /* selections it serves as an expert */
	int64_t own_sel;      /* selections of its own tokens */
	int64_t *recv_tok;    /* [recv_tokens] token id per received slot */
	int32_t *recv_src;    /* [recv_tokens] its source rank */
	int64_t *recv_outpos; /* [recv_tokens + 1] first output (in out_bytes) of each */
	int64_t *back_base;   /* [ranks] first slot of expert rank d's block in back */
	int64_t *back_slot;   /* [tokens][width] slot in back of each own selection */
};

/* This rank's plan; EB_ENOMEM after one line. */
int eb_moe_plan_build(struct eb_moe_plan *p, const struct eb_route *rt, int rank,
		      uint64_t tok_bytes, uint64_t out_bytes);
void eb_moe_plan_free(struct eb_moe_plan *p);

#endif
