/* What efabench moe sends and how it checks what came. A token's bytes are the pattern of
 * (home rank, token id, epoch), so a token in the wrong slot or a torn one is caught. An
 * expert's output is bf16 small integers, a function of (home rank, token, expert, epoch,
 * element), from -4 to 3: a weighted sum of up to 64 of them with weights of 1/4, 2/4, 3/4 or
 * 1 is exact in float and in bf16. Every row that comes back (an output, or a sum of a rank's
 * or a host's) is compared with the one expected, and so is every token's weighted sum. */
#include "moe_data.h"
#include "moe_op.h"
#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"
#include "efabench/status.h"
#include "core/log.h"

#include <string.h>

static uint16_t bf16_of(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return (uint16_t)(bits >> 16); /* exact: the values need no rounding */
}

static float float_of(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Expert e's output for token t of home rank s, every element: small integers, four to a
 * pattern word, so that a row costs a word per four values. The seed is made once per row and
 * the mix inlined: prefill makes and checks tens of thousands of rows per iteration. */
static void output_row(int s, int t, int e, uint64_t epoch, int hidden, float *out)
{
	static const float value[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
	uint64_t seed =
	    eb_pattern_seed((uint32_t)s, (uint32_t)t, epoch ^ ((uint64_t)(e + 1) << 40));
	int i, j;

	for (i = 0; i + 4 <= hidden; i += 4) {
		uint64_t word = eb_pattern_mix(seed, (uint64_t)i * 2);

		out[i] = value[word & 7];
		out[i + 1] = value[(word >> 16) & 7];
		out[i + 2] = value[(word >> 32) & 7];
		out[i + 3] = value[(word >> 48) & 7];
	}
	for (j = 0; i + j < hidden; j++) /* the last word's first values */
		out[i + j] = value[(eb_pattern_mix(seed, (uint64_t)i * 2) >> (16 * j)) & 7];
}

/* Scratch rows after the three of check_token (the sum that came, the one expected, a slot's)
 * in st->sum: selection k's output. */
static float *scratch(const struct mstate *st, int k)
{
	size_t hidden = (size_t)st->plan.out_bytes / 2;

	return st->sum + (3 + (size_t)k) * hidden;
}

/* The expected row for selections [k0, k1) of token (s, t): their weighted sum (summed), or
 * the one output (k1 = k0 + 1, not summed), into st->vals. */
static void expected(const struct mstate *st, int s, int t, int k0, int k1, int summed,
		     uint64_t epoch)
{
	const int32_t *x = eb_route_sel(&st->rt, s, t);
	int hidden = (int)(st->plan.out_bytes / 2), i, k;
	float *acc = scratch(st, 1), *row = scratch(st, 0);

	memset(acc, 0, sizeof(*acc) * (size_t)hidden);
	for (k = k0; k < k1; k++) {
		float w = summed ? 0.25f * (float)eb_moe_weight_q(t, k) : 1.0f;

		output_row(s, t, x[k], epoch, hidden, row);
		for (i = 0; i < hidden; i++)
			acc[i] += w * row[i];
	}
	for (i = 0; i < hidden; i++)
		st->vals[i] = bf16_of(acc[i]);
}

/* Where this rank's regions can be read and written by the host: in place, or a host image
 * that is copied to or from GPU memory. */
static char *image(struct mstate *st, struct eb_payload *p)
{
	return p->pay.kind == EB_MEM_DEVICE ? st->host : (char *)p->pay.ptr;
}

static int push(struct mstate *st, struct eb_payload *p, uint64_t len)
{
	struct eb_mem h = {
	    .kind = EB_MEM_HOST, .ptr = st->host, .len = len, .gpu = -1, .dmabuf_fd = -1};

	if (p->pay.kind != EB_MEM_DEVICE || len == 0)
		return EB_OK;
	return eb_mem_copy(&p->pay, 0, &h, 0, len);
}

static int pull(struct mstate *st, struct eb_payload *p, uint64_t len)
{
	struct eb_mem h = {
	    .kind = EB_MEM_HOST, .ptr = st->host, .len = len, .gpu = -1, .dmabuf_fd = -1};

	if (p->pay.kind != EB_MEM_DEVICE || len == 0)
		return EB_OK;
	return eb_mem_copy(&h, 0, &p->pay, 0, len);
}

/* Tokens and the outputs of every token served here, expert by expert; in normal mode one row
 * per token, its experts' weighted sum (what DeepEP's normal combine is given). */
static void fill_source(struct eb_ctx *c, struct mstate *st, char *img)
{
	const struct eb_moe_plan *pl = &st->plan;
	int t, k, k0, i, hidden = (int)(pl->out_bytes / 2);
	float *vals = scratch(st, 0);
	int64_t j;

	for (t = 0; t < st->rt.tokens; t++) {
		struct eb_pattern p = {(uint32_t)c->rank, (uint32_t)t, c->epoch};

		eb_pattern_fill(&p, img + pl->x_off + (uint64_t)t * pl->tok_bytes, pl->tok_bytes,
				0);
	}
	for (j = 0; j < pl->served; j++) {
		int s = pl->serve_src[j], tok = pl->serve_tok[j];
		const int32_t *x = eb_route_sel(&st->rt, s, tok);

		for (k0 = 0; x[k0] / st->rt.per_rank != c->rank; k0++)
			;
		if (pl->mode == EB_MOE_NORMAL) {
			for (k = k0;
			     k < st->rt.width && x[k] >= 0 && x[k] / st->rt.per_rank == c->rank;
			     k++)
				;
			expected(st, s, tok, k0, k, 1, c->epoch);
			memcpy(img + pl->out_off + (uint64_t)pl->serve_out[j] * pl->out_bytes,
			       st->vals, pl->out_bytes);
			continue;
		}
		for (k = k0; k < k0 + (int)(pl->serve_out[j + 1] - pl->serve_out[j]); k++) {
			uint16_t *row = (uint16_t *)(void *)(img + pl->out_off +
							     (uint64_t)(pl->serve_out[j] + k - k0) *
								 pl->out_bytes);

			output_row(s, tok, x[k], c->epoch, hidden, vals);
			for (i = 0; i < hidden; i++)
				row[i] = bf16_of(vals[i]);
		}
	}
}

/* What the all-to-all-v sends, made before its clock starts as the producers make it in
 * theirs: every leg's items packed, the forwarding legs from what the first legs would have
 * brought (laid in this rank's destination image, which is poisoned after). */
static void pack_all(struct eb_ctx *c, struct mstate *st, char *src, char *dst)
{
	const struct eb_moe_plan *pl = &st->plan;
	struct eb_moe_work w = {.rank = c->rank, .ranks = c->nranks, .src = src, .dst = dst};
	int64_t i;
	int op, leg;

	for (i = 0; pl->nlegs > 1 && i < pl->nslots; i++) { /* one leg: nothing forwarded */
		struct eb_pattern p = {(uint32_t)pl->slots[i].src, (uint32_t)pl->slots[i].tok,
				       c->epoch};

		eb_pattern_fill(&p, dst + pl->slots[i].off, pl->tok_bytes, 0);
	}
	for (i = 0; i < pl->nstaged; i++) {
		const struct eb_moe_staged *g = &pl->staged[i];

		expected(st, g->src, g->tok, g->k0, g->k1, 1, c->epoch);
		memcpy(dst + g->off, st->vals, pl->out_bytes);
	}
	for (op = 0; op < 2; op++)
		for (leg = 0; leg < pl->nlegs; leg++) {
			w.items = eb_moe_host_items(c, st, op, leg);
			(void)eb_moe_make(&w, src, w.items.packed, 0, pl->leg[op][leg].items);
		}
}

int eb_moe_prepare(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	struct eb_moe_plan *pl = &st->plan;
	struct eb_pattern poison = {UINT32_MAX, (uint32_t)c->rank, EB_EPOCH_POISON};
	char *src = image(st, &st->src), *dst;
	int rc;

	fill_source(c, st, src);
	/* With GPU memory both images share one host buffer: the destination's goes after. */
	dst = st->src.pay.kind == EB_MEM_DEVICE ? st->host + pl->src_len : image(st, &st->dst);
	pack_all(c, st, src, dst);
	rc = push(st, &st->src, pl->src_len);
	if (rc != EB_OK)
		return rc;
	dst = image(st, &st->dst);
	eb_pattern_fill(&poison, dst, pl->dst_len, 0);
	return push(st, &st->dst, pl->dst_len);
}

/* Every token that landed here in dispatch (received, or to forward), in its slot. */
static uint64_t check_tokens(struct eb_ctx *c, struct mstate *st, const char *img)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t wrong = 0;
	int64_t i;

	for (i = 0; i < pl->nslots; i++) {
		struct eb_pattern p = {(uint32_t)pl->slots[i].src, (uint32_t)pl->slots[i].tok,
				       c->epoch};

		wrong += eb_pattern_check(&p, img + pl->slots[i].off, pl->tok_bytes, 0, NULL);
	}
	return wrong;
}

/* Wrong values of the row at img + off against st->vals. */
static uint64_t check_row(const struct mstate *st, const char *img, uint64_t off)
{
	const uint16_t *got = (const uint16_t *)(const void *)(img + off);
	int hidden = (int)(st->plan.out_bytes / 2), i;
	uint64_t wrong = 0;

	for (i = 0; i < hidden; i++) {
		uint16_t v;

		memcpy(&v, &got[i], sizeof(v));
		wrong += v != st->vals[i];
	}
	return wrong;
}

/* Rows summed here on their way to a token's home (another host's). */
static uint64_t check_staged(struct eb_ctx *c, struct mstate *st, const char *img)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t wrong = 0;
	int64_t i;

	for (i = 0; i < pl->nstaged; i++) {
		const struct eb_moe_staged *g = &pl->staged[i];

		expected(st, g->src, g->tok, g->k0, g->k1, 1, c->epoch);
		wrong += check_row(st, img, g->off);
	}
	return wrong;
}

/* Token t's rows that came back (an output, or a sum of the selections sharing its slot),
 * each checked; then the token's weighted sum of them against the one expected. Each
 * selection's output is made once, into the scratch rows; sums go row by row, so that the
 * compiler vectorises them. */
static uint64_t check_token(struct eb_ctx *c, struct mstate *st, const char *img, int t)
{
	const struct eb_moe_plan *pl = &st->plan;
	const int32_t *x = eb_route_sel(&st->rt, c->rank, t);
	size_t at = (size_t)t * (size_t)st->rt.width;
	int hidden = (int)(pl->out_bytes / 2), k, j, i, n;
	float *got = st->sum, *want = got + hidden, *acc = want + hidden;
	uint64_t wrong = 0;

	for (n = 0; n < st->rt.width && x[n] >= 0; n++)
		output_row(c->rank, t, x[n], c->epoch, hidden, scratch(st, n));
	memset(got, 0, sizeof(*got) * (size_t)hidden * 2);
	for (k = 0; k < n; k++) {
		const float *r = scratch(st, k);
		float w = 0.25f * (float)eb_moe_weight_q(t, k);

		for (i = 0; i < hidden; i++)
			want[i] += w * r[i];
	}
	for (k = 0; k < n; k++) {
		uint64_t off = pl->back_at[at + (size_t)k];
		int summed = pl->back_sum[at + (size_t)k], seen = 0;
		const uint16_t *row = (const uint16_t *)(const void *)(img + off);
		const float *exp = scratch(st, k);
		float scale = summed ? 1.0f : 0.25f * (float)eb_moe_weight_q(t, k);

		for (j = 0; j < k && summed; j++) /* a sum's slot is checked once */
			seen |= pl->back_at[at + (size_t)j] == off;
		if (seen)
			continue;
		if (summed) { /* every selection sharing this slot */
			memset(acc, 0, sizeof(*acc) * (size_t)hidden);
			for (j = k; j < n; j++) {
				const float *r = scratch(st, j);
				float w = 0.25f * (float)eb_moe_weight_q(t, j);

				if (pl->back_at[at + (size_t)j] != off)
					continue;
				for (i = 0; i < hidden; i++)
					acc[i] += w * r[i];
			}
			exp = acc;
		}
		for (i = 0; i < hidden; i++) {
			uint16_t v;

			memcpy(&v, &row[i], sizeof(v));
			wrong += v != bf16_of(exp[i]);
			got[i] += scale * float_of(v);
		}
	}
	/* A wrong row makes its token's sum wrong too: a sum counts only where every row came
	 * right (one flipped byte, one wrong value). */
	for (i = 0; i < hidden && wrong == 0; i++)
		st->wrong_sums += got[i] != want[i];
	return wrong;
}

int eb_moe_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct mstate *st = c->priv;
	const struct eb_moe_plan *pl = &st->plan;
	const char *img = image(st, &st->dst);
	uint64_t bad = 0, sums = st->wrong_sums;
	int rc = pull(st, &st->dst, pl->dst_len), t;

	if (rc != EB_OK)
		return rc;
	if (st->op != OP_COMBINE)
		bad += check_tokens(c, st, img);
	if (st->op != OP_DISPATCH) {
		bad += check_staged(c, st, img);
		for (t = 0; t < st->rt.tokens; t++)
			bad += check_token(c, st, img, t);
	}
	st->wrong_tokens += bad;
	*wrong += bad + (st->wrong_sums - sums);
	return EB_OK;
}

void eb_moe_landing(const struct eb_ctx *c, size_t *off, size_t *len)
{
	const struct mstate *st = c->priv;
	int op = st->op == OP_COMBINE, w;

	*len = 0;
	for (w = 0; w < c->nranks; w++)
		*len += st->plan.leg[op][0].in[w].bytes;
	*off = st->plan.in_off[op][0];
}
