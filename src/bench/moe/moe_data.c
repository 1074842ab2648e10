/* What efabench moe sends and how it checks what came. A token's bytes are the pattern of
 * (home rank, token id, epoch), so a token in the wrong slot or a torn one is caught. An
 * expert's output is bf16 small integers, a function of (home rank, token, expert, epoch,
 * element); the home rank sums its K outputs weighted by 1/4, 2/4, 3/4 or 1, which is exact
 * in float, and compares every sum with the one it expects. */
#include "moe_state.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "core/log.h"

#include <string.h>

static uint16_t bf16_of(int v)
{
	float f = (float)v;
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return (uint16_t)(bits >> 16); /* exact: small integers need no rounding */
}

static float float_of(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Expert e's output for token t of home rank s: n values from -15 to 16. */
static void output(uint16_t *v, int n, int s, int t, int e, uint64_t epoch)
{
	struct eb_pattern p = {(uint32_t)s, (uint32_t)t, epoch ^ ((uint64_t)(e + 1) << 40)};
	uint64_t word = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (i % 4 == 0)
			word = eb_pattern_word(&p, (uint64_t)(i / 4) * 8);
		v[i] = bf16_of((int)((word >> (16 * (i % 4))) & 31) - 15);
	}
}

static float weight(int t, int k)
{
	return 0.25f * (float)(1 + ((t + k) & 3));
}

/* Where this rank's regions can be read and written by the host: in place, or a host image
 * that is copied to or from GPU memory. */
static char *image(struct mstate *st, struct eb_payload *p)
{
	return p->pay.kind == EB_MEM_DEVICE ? st->host : (char *)p->pay.ptr;
}

static int push(struct mstate *st, struct eb_payload *p, uint64_t off, uint64_t len)
{
	struct eb_mem h = {
	    .kind = EB_MEM_HOST, .ptr = st->host, .len = len, .gpu = -1, .dmabuf_fd = -1};

	if (p->pay.kind != EB_MEM_DEVICE || len == 0)
		return EB_OK;
	h.ptr = st->host + off;
	return eb_mem_copy(&p->pay, off, &h, 0, len);
}

static int pull(struct mstate *st, struct eb_payload *p, uint64_t off, uint64_t len)
{
	struct eb_mem h = {
	    .kind = EB_MEM_HOST, .ptr = st->host + off, .len = len, .gpu = -1, .dmabuf_fd = -1};

	if (p->pay.kind != EB_MEM_DEVICE || len == 0)
		return EB_OK;
	return eb_mem_copy(&h, 0, &p->pay, off, len);
}

int eb_moe_prepare(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	struct eb_moe_plan *pl = &st->plan;
	struct eb_pattern poison = {UINT32_MAX, (uint32_t)c->rank, EB_EPOCH_POISON};
	int hidden = (int)(pl->out_bytes / 2), t, k, rc;
	char *img = image(st, &st->src);
	int64_t i;

	for (t = 0; t < st->rt.tokens; t++) {
		struct eb_pattern p = {(uint32_t)c->rank, (uint32_t)t, c->epoch};

		eb_pattern_fill(&p, img + pl->x_off + (uint64_t)t * pl->tok_bytes, pl->tok_bytes,
				0);
	}
	/* Packed per destination too: the all-to-all-v baseline moves those bytes. */
	for (i = 0; i < pl->dispatch.items; i++) {
		struct eb_pattern p = {
		    (uint32_t)c->rank,
		    (uint32_t)((pl->dispatch.src[i] - pl->x_off) / pl->tok_bytes), c->epoch};

		eb_pattern_fill(&p, img + pl->dispatch.packed[i], pl->tok_bytes, 0);
	}
	/* The outputs of every token received, expert by expert. */
	for (i = 0; i < pl->recv_tokens; i++) {
		const int32_t *x = eb_route_sel(&st->rt, pl->recv_src[i], (int)pl->recv_tok[i]);
		int64_t pos = pl->recv_outpos[i];

		for (k = 0; k < st->rt.width && x[k] >= 0; k++)
			if (x[k] / st->rt.per_rank == c->rank)
				output((uint16_t *)(void *)(img + pl->out_off +
							    (uint64_t)pos++ * pl->out_bytes),
				       hidden, pl->recv_src[i], (int)pl->recv_tok[i], x[k],
				       c->epoch);
	}
	rc = push(st, &st->src, 0, pl->src_len);
	if (rc != EB_OK)
		return rc;
	img = image(st, &st->dst);
	eb_pattern_fill(&poison, img, pl->dst_len, 0);
	return push(st, &st->dst, 0, pl->dst_len);
}

/* Every token that came in dispatch, in its slot. */
static uint64_t check_tokens(struct eb_ctx *c, struct mstate *st, const char *img)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t wrong = 0;
	int64_t i;

	for (i = 0; i < pl->recv_tokens; i++) {
		struct eb_pattern p = {(uint32_t)pl->recv_src[i], (uint32_t)pl->recv_tok[i],
				       c->epoch};

		wrong += eb_pattern_check(&p, img + pl->recv_off + (uint64_t)i * pl->tok_bytes,
					  pl->tok_bytes, 0, NULL);
	}
	return wrong;
}

/* Every output that came back in combine, and every token's weighted sum of them. */
static uint64_t check_outputs(struct eb_ctx *c, struct mstate *st, const char *img)
{
	const struct eb_moe_plan *pl = &st->plan;
	int hidden = (int)(pl->out_bytes / 2), t, k, i;
	uint64_t wrong = 0;

	for (t = 0; t < st->rt.tokens; t++) {
		const int32_t *x = eb_route_sel(&st->rt, c->rank, t);
		uint64_t was = wrong;

		memset(st->sum, 0, sizeof(*st->sum) * (size_t)hidden * 2);
		for (k = 0; k < st->rt.width && x[k] >= 0; k++) {
			const uint16_t *got =
			    (const uint16_t
				 *)(const void *)(img + pl->back_off +
						  (uint64_t)pl->back_slot[(size_t)t *
									      (size_t)st->rt.width +
									  (size_t)k] *
						      pl->out_bytes);
			float w = weight(t, k);

			output(st->vals, hidden, c->rank, t, x[k], c->epoch);
			for (i = 0; i < hidden; i++) {
				uint16_t v;

				memcpy(&v, &got[i], sizeof(v));
				wrong += v != st->vals[i];
				st->sum[i] += w * float_of(v);
				st->sum[hidden + i] += w * float_of(st->vals[i]);
			}
		}
		/* A wrong output makes its sum wrong too: a sum counts only where every output
		 * came right (one flipped byte, one wrong value). */
		for (i = 0; i < hidden && wrong == was; i++)
			st->wrong_sums += st->sum[i] != st->sum[hidden + i];
	}
	return wrong;
}

int eb_moe_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct mstate *st = c->priv;
	const struct eb_moe_plan *pl = &st->plan;
	const char *img = image(st, &st->dst);
	uint64_t bad = 0, sums = st->wrong_sums;
	int rc = pull(st, &st->dst, 0, pl->dst_len);

	if (rc != EB_OK)
		return rc;
	if (st->phase != PH_COMBINE)
		bad += check_tokens(c, st, img);
	if (st->phase != PH_DISPATCH)
		bad += check_outputs(c, st, img);
	st->wrong_tokens += bad;
	*wrong += bad + (st->wrong_sums - sums);
	return EB_OK;
}

void eb_moe_landing(const struct eb_ctx *c, size_t *off, size_t *len)
{
	const struct mstate *st = c->priv;
	const struct eb_moe_plan *pl = &st->plan;

	*len = st->phase == PH_COMBINE ? (uint64_t)pl->own_sel * pl->out_bytes
				       : (uint64_t)pl->recv_tokens * pl->tok_bytes;
	*off = st->phase == PH_COMBINE ? pl->back_off : pl->recv_off;
}
