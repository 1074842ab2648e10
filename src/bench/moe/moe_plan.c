#include "moe_plan.h"
#include "core/arrays.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

static int64_t at(const int64_t *m, int ranks, int s, int d)
{
	return m[(size_t)s * (size_t)ranks + (size_t)d];
}

/* The first and last selection of a token that live on rank d (first == last: none). */
static void on_rank(const struct eb_route *rt, const int32_t *x, int d, int *first, int *last)
{
	int k = 0;

	while (k < rt->width && x[k] >= 0 && x[k] / rt->per_rank < d)
		k++;
	*first = k;
	while (k < rt->width && x[k] >= 0 && x[k] / rt->per_rank == d)
		k++;
	*last = k;
}

static int moves_alloc(struct eb_moe_moves *m, int ranks, int64_t items)
{
	size_t n = (size_t)(items > 0 ? items : 1);

	m->items = items;
	m->block = eb_arrays(&m->off, (size_t)ranks + 1, sizeof(*m->off), &m->src, n,
			     sizeof(*m->src), &m->packed, n, sizeof(*m->packed), &m->len, n,
			     sizeof(*m->len), &m->dst, n, sizeof(*m->dst), NULL);
	return m->block != NULL ? EB_OK : EB_ENOMEM;
}

static void moves_tally(struct eb_moe_moves *m, int rank)
{
	int64_t i;

	for (i = 0; i < m->items; i++) {
		if (m->len[i] > m->max_len)
			m->max_len = m->len[i];
		if (i < m->off[rank] || i >= m->off[rank + 1]) {
			m->bytes_out += m->len[i];
			m->items_out++;
		}
	}
}

/* The largest of a per-rank quantity over ranks. */
static int64_t most(const int64_t *m, int ranks, int by_dst)
{
	int64_t best = 0;
	int a, b;

	for (a = 0; a < ranks; a++) {
		int64_t sum = 0;

		for (b = 0; b < ranks; b++)
			sum += by_dst ? at(m, ranks, b, a) : at(m, ranks, a, b);
		if (sum > best)
			best = sum;
	}
	return best;
}

/* The first token at or after t of rank `from` with experts on rank `to` (-1: none), and
 * those selections, [first, last). */
static int next_token(const struct eb_route *rt, int from, int to, int t, int *first, int *last)
{
	for (; t < rt->tokens; t++) {
		on_rank(rt, eb_route_sel(rt, from, t), to, first, last);
		if (*first != *last)
			return t;
	}
	return -1;
}

/* The sum of m's entries [a][b] for a before `upto` (by_row 0) or b before it (by_row 1). */
static int64_t sum_before(const int64_t *m, int ranks, int upto, int fixed, int by_row)
{
	int64_t sum = 0;
	int k;

	for (k = 0; k < upto; k++)
		sum += by_row ? at(m, ranks, fixed, k) : at(m, ranks, k, fixed);
	return sum;
}

/* Dispatch: token t goes once to every rank holding one of its experts. */
static void plan_dispatch(struct eb_moe_plan *p, const struct eb_route *rt)
{
	struct eb_moe_moves *m = &p->dispatch;
	int me = p->rank, d, t, first, last;
	int64_t j = 0;

	for (d = 0; d < p->ranks; d++) {
		int64_t base = sum_before(rt->count, p->ranks, me, d, 0);

		m->off[d] = j;
		for (t = next_token(rt, me, d, 0, &first, &last); t >= 0;
		     t = next_token(rt, me, d, t + 1, &first, &last)) {
			m->src[j] = p->x_off + (uint64_t)t * p->tok_bytes;
			m->packed[j] = p->pack_off + (uint64_t)j * p->tok_bytes;
			m->len[j] = p->tok_bytes;
			m->dst[j] = p->recv_off + (uint64_t)(base + j - m->off[d]) * p->tok_bytes;
			j++;
		}
	}
	m->off[p->ranks] = j;
}

/* What arrives in dispatch, and combine: each received token's outputs go back to its home
 * rank, contiguous per home rank already (slots are grouped by source). */
static void plan_combine(struct eb_moe_plan *p, const struct eb_route *rt)
{
	struct eb_moe_moves *m = &p->combine;
	int me = p->rank, s, t, first, last;
	int64_t i = 0, pos = 0;

	for (s = 0; s < p->ranks; s++) {
		int64_t base = sum_before(rt->nsel, p->ranks, me, s, 1), first_pos = pos;

		m->off[s] = i;
		for (t = next_token(rt, s, me, 0, &first, &last); t >= 0;
		     t = next_token(rt, s, me, t + 1, &first, &last)) {
			p->recv_tok[i] = t;
			p->recv_src[i] = s;
			p->recv_outpos[i] = pos;
			m->src[i] = p->out_off + (uint64_t)pos * p->out_bytes;
			m->packed[i] = m->src[i];
			m->len[i] = (uint64_t)(last - first) * p->out_bytes;
			m->dst[i] = p->back_off + (uint64_t)(base + pos - first_pos) * p->out_bytes;
			pos += last - first;
			i++;
		}
		p->recv_from[s] = i - m->off[s];
	}
	m->off[p->ranks] = i;
	p->recv_outpos[i] = pos;
}

/* Where each of this rank's selections comes back: expert rank d's block, in token order. */
static void plan_back(struct eb_moe_plan *p, const struct eb_route *rt)
{
	int me = p->rank, d, t, k;
	int64_t base = 0;

	for (d = 0; d < p->ranks; d++) {
		int64_t pos = base;

		p->back_base[d] = base;
		p->back_from[d] = at(rt->count, p->ranks, me, d);
		for (t = 0; t < rt->tokens; t++) {
			int first, last;

			on_rank(rt, eb_route_sel(rt, me, t), d, &first, &last);
			for (k = first; k < last; k++)
				p->back_slot[(size_t)t * (size_t)rt->width + (size_t)k] = pos++;
		}
		base += at(rt->nsel, p->ranks, me, d);
	}
}

int eb_moe_plan_build(struct eb_moe_plan *p, const struct eb_route *rt, int rank,
		      uint64_t tok_bytes, uint64_t out_bytes)
{
	int n = rt->ranks, s;
	int64_t send_most = most(rt->count, n, 0), recv_most = most(rt->count, n, 1);
	int64_t serve_most = most(rt->nsel, n, 1), own_most = most(rt->nsel, n, 0);
	int rc;

	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->ranks = n;
	p->tok_bytes = tok_bytes;
	p->out_bytes = out_bytes;
	p->x_off = 0;
	p->pack_off = (uint64_t)rt->tokens * tok_bytes;
	p->out_off = p->pack_off + (uint64_t)send_most * tok_bytes;
	p->src_len = p->out_off + (uint64_t)serve_most * out_bytes;
	p->recv_off = 0;
	p->back_off = (uint64_t)recv_most * tok_bytes;
	p->dst_len = p->back_off + (uint64_t)own_most * out_bytes;
	for (s = 0; s < n; s++) {
		p->recv_tokens += at(rt->count, n, s, rank);
		p->recv_sel += at(rt->nsel, n, s, rank);
		p->own_sel += at(rt->nsel, n, rank, s);
	}
	p->block = eb_arrays(&p->recv_from, (size_t)n, sizeof(*p->recv_from), &p->back_from,
			     (size_t)n, sizeof(*p->back_from), &p->recv_tok,
			     (size_t)p->recv_tokens + 1, sizeof(*p->recv_tok), &p->recv_src,
			     (size_t)p->recv_tokens + 1, sizeof(*p->recv_src), &p->recv_outpos,
			     (size_t)p->recv_tokens + 1, sizeof(*p->recv_outpos), &p->back_base,
			     (size_t)n, sizeof(*p->back_base), &p->back_slot,
			     (size_t)rt->tokens * (size_t)rt->width, sizeof(*p->back_slot), NULL);
	rc = p->block != NULL ? EB_OK : EB_ENOMEM;
	if (rc == EB_OK) {
		int64_t out = 0;

		for (s = 0; s < n; s++)
			out += at(rt->count, n, rank, s);
		rc = moves_alloc(&p->dispatch, n, out);
	}
	if (rc == EB_OK)
		rc = moves_alloc(&p->combine, n, p->recv_tokens);
	if (rc != EB_OK) {
		eb_err("out of memory for the layout of %d tokens x %d ranks", rt->tokens, n);
		eb_moe_plan_free(p);
		return rc;
	}
	plan_dispatch(p, rt);
	plan_combine(p, rt);
	plan_back(p, rt);
	moves_tally(&p->dispatch, rank);
	moves_tally(&p->combine, rank);
	return EB_OK;
}

void eb_moe_plan_free(struct eb_moe_plan *p)
{
	free(p->dispatch.block);
	free(p->combine.block);
	free(p->block);
	memset(p, 0, sizeof(*p));
}
