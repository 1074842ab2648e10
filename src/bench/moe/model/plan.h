/* efabench moe's layout: from the routing and the hosts, what one rank moves in dispatch and
 * combine, leg by leg, and where every piece lands. Every rank derives the same offsets for
 * every other rank, so a writer knows the receiver's slots without asking.
 *
 * Modes (what a write carries, after the EP libraries that move the same tokens):
 *   rank    a token goes once to every rank holding one of its experts; the outputs of a
 *           rank's experts for a token come back together, unreduced;
 *   ll      a token goes once per expert (DeepEP's low-latency kernels), and each expert's
 *           output comes back on its own; the home rank sums them;
 *   normal  a token crosses the fabric once per destination host, to the rank with the
 *           sender's local index there, which forwards it to that host's ranks holding its
 *           experts (DeepEP's normal kernels); combine starts, as DeepEP's does, from one row
 *           per token a rank received: its experts' outputs weighted and summed, the MoE
 *           layer's work before the combine (made once, outside the clock). That row goes
 *           back; across hosts, to the forwarding rank, which sums its host's rows to one,
 *           and only that row crosses the fabric. With one host an op has one leg; across
 *           hosts dispatch and combine each have two: to the forwarding ranks, then from
 *           them.
 *
 * A rank's source region:      x (its tokens) | out (expert outputs of the tokens it
 *                              received; normal: a row per token) | pack[op][leg] (items
 *                              packed per destination)
 * A rank's destination region: recv (tokens received, by leg and writer) | back (what
 *                              returns for its own tokens, by writer) | fwd (tokens to
 *                              forward, by source) | stage (rows to sum before the fabric)
 * Area sizes are the largest over ranks, so every rank's regions have the same length. */
#ifndef EB_BENCH_MOE_PLAN_H
#define EB_BENCH_MOE_PLAN_H

#include "hosts.h"
#include "route.h"

#include <stdint.h>

enum { EB_MOE_RANK, EB_MOE_LL, EB_MOE_NORMAL };	     /* modes */
enum { EB_PATH_OWN, EB_PATH_INTRA, EB_PATH_FABRIC }; /* how a destination is reached */

/* Items and bytes, of a leg between two ranks. */
struct eb_moe_flow {
	int64_t items;
	uint64_t bytes;
};

/* What one leg of an op moves from this rank: items grouped by destination rank, items
 * [off[d], off[d + 1]) going to d, their destinations contiguous in the same order. An item
 * is a copy of len bytes from src, or (rows > 0) the weighted sum of `rows` bf16 rows of len
 * bytes at row_at[first..] with weights row_w[first..] in quarters. Going through the fabric,
 * items are made (copied or summed) into packed, contiguous per destination, where they do
 * not already sit there. */
struct eb_moe_leg {
	void *block; /* the arrays below */
	int64_t *off;
	uint64_t *src, *packed, *len, *dst;
	uint32_t *rows;	  /* [items] 0: a copy */
	uint32_t *first;  /* [items] a sum's first row in row_at, row_w */
	uint64_t *row_at; /* [refs] a row's offset in the region items are read from */
	uint8_t *row_w;	  /* [refs] its weight in quarters (4: 1.0) */
	int64_t items, refs;
	int from_dst;	   /* items are read from this rank's destination region */
	uint64_t same;	   /* every item's length, or 0 */
	uint64_t pack_off; /* this leg's packing area in the source region */
	/* What this rank moves, by path (EB_PATH_*): bytes and items. */
	uint64_t bytes[3];
	int64_t nitems[3];
	/* [ranks] what each rank sends this one in the leg (eb_moe_flow's), kept so that an
	 * iteration counts what it awaits without asking the routing again. */
	struct eb_moe_flow *in;
};

/* A token landed here (dispatch), and a row summed on its way to the token's home: both are
 * checked like the rest. */
struct eb_moe_slot {
	uint64_t off; /* in the destination region */
	int32_t src, tok;
};
struct eb_moe_staged {
	uint64_t off;
	int32_t src, tok;
	int16_t k0, k1; /* the selections summed */
};

struct eb_moe_plan {
	int rank, ranks, mode, nlegs, tokens;
	int split_out; /* rank mode: each output an item (packed writes cut by --piece) */
	int intra;     /* same-host peers reached by stores */
	const struct eb_moe_hosts *hosts;
	uint64_t tok_bytes, out_bytes;
	int8_t *path;	 /* [ranks] how this rank reaches each (EB_PATH_*) */
	int64_t *hcount; /* [ranks][hosts] tokens of a rank with an expert on a host */
	uint64_t x_off, out_off, src_len;
	uint64_t in_off[2][2], dst_len; /* what arrives in each leg, by writer */
	struct eb_moe_leg leg[2][2];	/* [dispatch, combine][leg] */
	void *block, *lists;		/* path and hcount; the arrays below */
	int64_t nslots, nstaged;
	struct eb_moe_slot *slots;
	struct eb_moe_staged *staged;
	/* The (source, token) pairs with an expert here, in that order: each has its experts'
	 * outputs, in selection order, from row serve_out[i] of out (normal: one row, their
	 * weighted sum). */
	int64_t served;
	int32_t *serve_src, *serve_tok;
	int64_t *serve_out; /* [served + 1] */
	int32_t *serve_at;  /* [ranks][tokens] index in the served list, -1 */
	uint64_t *back_at;  /* [tokens][width] where each own selection's part comes back */
	uint8_t *back_sum;  /* [tokens][width] 1: there, a weighted sum; 0: its output alone */
	/* Two levels: the slot of a token to forward (by its home's host), and the rows of
	 * this host's ranks to sum for it ([hosts][tokens][ranks per host], ~0: none). */
	uint64_t *fwd_at, *stage_at;
	/* Over several hosts in two legs, the leg of each op whose bytes cross between hosts
	 * (-1: one leg, or none crosses; timed on its own, it says whether the rails limit the
	 * op), and the bytes each rank sends across in it ([op][ranks]). */
	int cross_leg[2];
	uint64_t *cross;
};

/* Items and bytes rank `from` sends rank `to` in a leg of a op, from the routing alone
 * (every rank computes it alike; the builder checks its own items against it). */
struct eb_moe_flow eb_moe_flow(const struct eb_moe_plan *p, const struct eb_route *rt, int op,
			       int leg, int from, int to);

/* How rank `from` reaches `to` (EB_PATH_*), and what rank r moves in a op, every leg,
 * by path: bytes and items. */
int eb_moe_path(const struct eb_moe_plan *p, int from, int to);
void eb_moe_moved(const struct eb_moe_plan *p, const struct eb_route *rt, int op, int r,
		  uint64_t bytes[3], int64_t items[3]);

/* This rank's plan; EB_ENOMEM after one line, EB_EPROTO after one line where its items
 * disagree with eb_moe_flow. */
int eb_moe_plan_build(struct eb_moe_plan *p, const struct eb_route *rt,
		      const struct eb_moe_hosts *h, int rank, int mode, int intra,
		      uint64_t tok_bytes, uint64_t out_bytes, int split_out);
void eb_moe_plan_free(struct eb_moe_plan *p);

/* Weight k of token t, in quarters (1..4): what the home rank multiplies expert k's output
 * of token t by. */
static inline int eb_moe_weight_q(int t, int k)
{
	return 1 + ((t + k) & 3);
}

#endif
