/* efabench moe's plan: from the routing and the hosts, how much each rank sends each other
 * in every leg of an op, dispatch or combine (the flows: the receivers' layouts and what they wait
 * for come from here), then one walk of what a writer sends a destination in a leg (walk) that
 * serves both ends: the writer makes its items from it, the destination learns from it what lands
 * where in the writer's block (tokens to check or forward, rows to sum or check); the items
 * made are checked against the flows. */
#include "plan.h"
#include "core/arrays.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

/* ---- the flows: bytes and items per (op, leg, writer, destination) ---- */

static int64_t at(const int64_t *m, int cols, int a, int b)
{
	return m[(size_t)a * (size_t)cols + (size_t)b];
}

static int same_host(const struct eb_moe_plan *p, int a, int b)
{
	return p->hosts->host[a] == p->hosts->host[b];
}

/* The experts token t of rank s selects, ascending (-1 after the last). */
static const int32_t *sel_of(const struct eb_route *rt, int s, int t)
{
	return &rt->sel[((size_t)s * (size_t)rt->tokens + (size_t)t) * (size_t)rt->width];
}

static int two_level(const struct eb_moe_plan *p)
{
	return p->mode == EB_MOE_NORMAL && p->hosts->n > 1;
}

static int direct(const struct eb_moe_plan *p, int s, int d)
{
	return !two_level(p) || same_host(p, s, d);
}

static int forwards(const struct eb_moe_plan *p, int f, int s)
{
	const struct eb_moe_hosts *h = p->hosts;

	return two_level(p) && !same_host(p, f, s) && h->local[s] == h->local[f];
}

/* Tokens of the sources that f forwards, bound for rank d (on f's host). */
static int64_t forwarded_to(const struct eb_moe_plan *p, const struct eb_route *rt, int f, int d)
{
	int64_t n = 0;
	int s;

	for (s = 0; s < p->ranks; s++)
		if (forwards(p, f, s))
			n += at(rt->count, p->ranks, s, d);
	return n;
}

static struct eb_moe_flow dispatch_flow(const struct eb_moe_plan *p, const struct eb_route *rt,
					int leg, int w, int d)
{
	const struct eb_moe_hosts *h = p->hosts;
	int64_t n = 0;

	if (leg == 0 && direct(p, w, d))
		n = at(p->mode == EB_MOE_LL ? rt->nsel : rt->count, p->ranks, w, d);
	else if (leg == 0 && forwards(p, d, w))
		n = at(p->hcount, h->n, w, h->host[d]);
	else if (leg == 1 && two_level(p) && same_host(p, w, d))
		n = forwarded_to(p, rt, w, d);
	return (struct eb_moe_flow){n, (uint64_t)n * p->tok_bytes};
}

static struct eb_moe_flow combine_flow(const struct eb_moe_plan *p, const struct eb_route *rt,
				       int leg, int w, int d)
{
	const struct eb_moe_hosts *h = p->hosts;
	int64_t sel = at(rt->nsel, p->ranks, d, w), rows = 0;

	if (leg == 1) {
		rows = forwards(p, w, d) ? at(p->hcount, h->n, d, h->host[w]) : 0;
		return (struct eb_moe_flow){rows, (uint64_t)rows * p->out_bytes};
	}
	if (p->mode == EB_MOE_RANK)
		return (struct eb_moe_flow){p->split_out ? sel : at(rt->count, p->ranks, d, w),
					    (uint64_t)sel * p->out_bytes};
	if (p->mode == EB_MOE_LL)
		return (struct eb_moe_flow){sel, (uint64_t)sel * p->out_bytes};
	if (direct(p, w, d))
		rows = at(rt->count, p->ranks, d, w);
	if (two_level(p) && same_host(p, w, d))
		rows += forwarded_to(p, rt, d, w);
	return (struct eb_moe_flow){rows, (uint64_t)rows * p->out_bytes};
}

struct eb_moe_flow eb_moe_flow(const struct eb_moe_plan *p, const struct eb_route *rt, int op,
			       int leg, int from, int to)
{
	return op == 0 ? dispatch_flow(p, rt, leg, from, to) : combine_flow(p, rt, leg, from, to);
}

static uint64_t in_base(const struct eb_moe_plan *p, const struct eb_route *rt, int op, int leg,
			int writer, int d)
{
	uint64_t off = p->in_off[op][leg];
	int w;

	for (w = 0; w < writer; w++)
		off += eb_moe_flow(p, rt, op, leg, w, d).bytes;
	return off;
}

/* Each leg's arrival area: as large as the most any rank receives in it. */
static void areas(struct eb_moe_plan *p, const struct eb_route *rt)
{
	uint64_t off = 0;
	int op, leg, d, w;

	for (op = 0; op < 2; op++)
		for (leg = 0; leg < 2; leg++) {
			uint64_t most = 0;

			for (d = 0; d < p->ranks && leg < p->nlegs; d++) {
				uint64_t in = 0;

				for (w = 0; w < p->ranks; w++)
					in += eb_moe_flow(p, rt, op, leg, w, d).bytes;
				most = in > most ? in : most;
			}
			p->in_off[op][leg] = off;
			off += most;
		}
	p->dst_len = off;
}

int eb_moe_path(const struct eb_moe_plan *p, int from, int to)
{
	if (from == to)
		return EB_PATH_OWN;
	return p->intra && same_host(p, from, to) ? EB_PATH_INTRA : EB_PATH_FABRIC;
}

void eb_moe_moved(const struct eb_moe_plan *p, const struct eb_route *rt, int op, int r,
		  uint64_t bytes[3], int64_t items[3])
{
	int leg, d, k;

	for (k = 0; k < 3; k++)
		bytes[k] = 0, items[k] = 0;
	for (leg = 0; leg < p->nlegs; leg++)
		for (d = 0; d < p->ranks; d++) {
			struct eb_moe_flow f = eb_moe_flow(p, rt, op, leg, r, d);

			bytes[eb_moe_path(p, r, d)] += f.bytes;
			items[eb_moe_path(p, r, d)] += f.items;
		}
}

/* ---- the walk ---- */

enum { IT_TOKEN, IT_OUT, IT_SUM_RANK, IT_SUM_HOST };

/* An item as the walk names it: token t of rank s, about its selections [k0, k1). */
struct item {
	int kind, s, t, k0, k1;
};

typedef void (*emit_fn)(void *arg, const struct item *it);

/* The selections of a token that live on rank d: [*k0, *k1) (empty: none). */
static void on_rank(const struct eb_route *rt, int s, int t, int d, int *k0, int *k1)
{
	const int32_t *x = sel_of(rt, s, t);
	int k = 0;

	while (k < rt->width && x[k] >= 0 && x[k] / rt->per_rank < d)
		k++;
	*k0 = k;
	while (k < rt->width && x[k] >= 0 && x[k] / rt->per_rank == d)
		k++;
	*k1 = k;
}

static int on_host(const struct eb_moe_plan *p, const struct eb_route *rt, int s, int t, int h)
{
	const int32_t *x = sel_of(rt, s, t);
	int k;

	for (k = 0; k < rt->width && x[k] >= 0; k++)
		if (p->hosts->host[x[k] / rt->per_rank] == h)
			return 1;
	return 0;
}

/* Each selection on d of s's tokens: one item per selection (ll), else one per token. */
static void walk_tokens(const struct eb_route *rt, int kind, int each, int s, int d, emit_fn f,
			void *arg)
{
	int t, k0, k1, k;

	for (t = 0; t < rt->tokens; t++) {
		on_rank(rt, s, t, d, &k0, &k1);
		for (k = k0; k < k1 && each; k++)
			f(arg, &(struct item){kind, s, t, k, k + 1});
		if (k0 < k1 && !each)
			f(arg, &(struct item){kind, s, t, k0, k1});
	}
}

static void walk_dispatch(const struct eb_moe_plan *p, const struct eb_route *rt, int leg, int w,
			  int d, emit_fn f, void *arg)
{
	int s, t;

	if (leg == 0 && direct(p, w, d)) {
		walk_tokens(rt, IT_TOKEN, p->mode == EB_MOE_LL, w, d, f, arg);
	} else if (leg == 0 && forwards(p, d, w)) {
		for (t = 0; t < rt->tokens; t++)
			if (on_host(p, rt, w, t, p->hosts->host[d]))
				f(arg, &(struct item){IT_TOKEN, w, t, 0, 0});
	} else if (leg == 1 && two_level(p) && same_host(p, w, d)) {
		for (s = 0; s < p->ranks; s++)
			if (forwards(p, w, s))
				walk_tokens(rt, IT_TOKEN, 0, s, d, f, arg);
	}
}

static void walk_combine(const struct eb_moe_plan *p, const struct eb_route *rt, int leg, int w,
			 int d, emit_fn f, void *arg)
{
	int s, t;

	if (leg == 1) {
		for (t = 0; t < rt->tokens && forwards(p, w, d); t++)
			if (on_host(p, rt, d, t, p->hosts->host[w]))
				f(arg, &(struct item){IT_SUM_HOST, d, t, 0, 0});
		return;
	}
	if (p->mode != EB_MOE_NORMAL) {
		walk_tokens(rt, IT_OUT, p->mode == EB_MOE_LL || p->split_out, d, w, f, arg);
		return;
	}
	if (direct(p, w, d))
		walk_tokens(rt, IT_SUM_RANK, 0, d, w, f, arg);
	if (two_level(p) && same_host(p, w, d))
		for (s = 0; s < p->ranks; s++)
			if (forwards(p, d, s))
				walk_tokens(rt, IT_SUM_RANK, 0, s, w, f, arg);
}

/* What writer w sends d in a leg of a op, in the order it lands. */
static void walk(const struct eb_moe_plan *p, const struct eb_route *rt, int op, int leg, int w,
		 int d, emit_fn f, void *arg)
{
	if (op == 0)
		walk_dispatch(p, rt, leg, w, d, f, arg);
	else
		walk_combine(p, rt, leg, w, d, f, arg);
}

/* ---- the destination's side: what lands here, from each writer ---- */

struct land {
	struct eb_moe_plan *p;
	const struct eb_route *rt;
	int op, leg, w;
	uint64_t off; /* where the next item lands */
};

/* Two levels: where a token to forward or a row to sum sits, by its home's host. */
static size_t fwd_index(const struct eb_moe_plan *p, int s, int t)
{
	return (size_t)p->hosts->host[s] * (size_t)p->tokens + (size_t)t;
}

static size_t stage_index(const struct eb_moe_plan *p, int s, int t, int r)
{
	return fwd_index(p, s, t) * (size_t)p->hosts->most + (size_t)p->hosts->local[r];
}

static void land_back(struct land *l, const struct item *it)
{
	struct eb_moe_plan *p = l->p;
	const int32_t *x = sel_of(l->rt, it->s, it->t);
	size_t at = (size_t)it->t * (size_t)l->rt->width;
	int k;

	if (it->kind == IT_OUT) {
		for (k = it->k0; k < it->k1; k++) {
			p->back_at[at + (size_t)k] = l->off + (uint64_t)(k - it->k0) * p->out_bytes;
			p->back_sum[at + (size_t)k] = 0;
		}
		return;
	}
	for (k = 0; k < l->rt->width && x[k] >= 0; k++) {
		int mine = it->kind == IT_SUM_RANK
			       ? k >= it->k0 && k < it->k1
			       : p->hosts->host[x[k] / l->rt->per_rank] == p->hosts->host[l->w];

		if (mine) {
			p->back_at[at + (size_t)k] = l->off;
			p->back_sum[at + (size_t)k] = 1;
		}
	}
}

static void land(void *arg, const struct item *it)
{
	struct land *l = arg;
	struct eb_moe_plan *p = l->p;

	if (it->kind == IT_TOKEN) {
		p->slots[p->nslots++] = (struct eb_moe_slot){l->off, it->s, it->t};
		if (l->leg == 0 && !direct(p, it->s, p->rank))
			p->fwd_at[fwd_index(p, it->s, it->t)] = l->off;
		l->off += p->tok_bytes;
		return;
	}
	if (it->s == p->rank) {
		land_back(l, it);
	} else { /* a row this rank sums for a token of another host */
		p->stage_at[stage_index(p, it->s, it->t, l->w)] = l->off;
		p->staged[p->nstaged++] =
		    (struct eb_moe_staged){l->off, it->s, it->t, (int16_t)it->k0, (int16_t)it->k1};
	}
	l->off += (uint64_t)(it->kind == IT_OUT ? it->k1 - it->k0 : 1) * p->out_bytes;
}

/* ---- the writer's side: this rank's items ---- */

struct make {
	struct eb_moe_plan *p;
	const struct eb_route *rt;
	struct eb_moe_leg *g;
	int count;   /* first pass: only count items and summed rows */
	uint64_t at; /* the destination's next byte */
};

/* Output row k of token (s, t) in this rank's source region (normal: the token's one row, at
 * its first selection here). */
static uint64_t out_row(const struct eb_moe_plan *p, const struct eb_route *rt, int s, int t, int k)
{
	int32_t i = p->serve_at[(size_t)s * (size_t)p->tokens + (size_t)t];
	int k0, k1;

	on_rank(rt, s, t, p->rank, &k0, &k1);
	return p->out_off + (uint64_t)(p->serve_out[i] + (k - k0)) * p->out_bytes;
}

/* A host's sum: the rows this host's ranks sent here for a token (each already its rank's
 * weighted sum), at weight 1. *one gets the row where there is only one: that sum is the row
 * itself, so the item is a copy of it. */
static uint32_t sum_rows(struct make *m, const struct item *it, int64_t ref, uint64_t *one)
{
	struct eb_moe_plan *p = m->p;
	const uint64_t *at = p->stage_at + fwd_index(p, it->s, it->t) * (size_t)p->hosts->most;
	uint32_t n = 0;
	int r;

	for (r = 0; r < p->hosts->most; r++)
		if (at[r] != UINT64_MAX) {
			*one = at[r];
			n++;
		}
	if (n < 2)
		return 0;
	for (r = 0; r < p->hosts->most && !m->count; r++)
		if (at[r] != UINT64_MAX) {
			m->g->row_at[ref] = at[r];
			m->g->row_w[ref++] = 4;
		}
	return n;
}

static void make(void *arg, const struct item *it)
{
	struct make *m = arg;
	struct eb_moe_leg *g = m->g;
	struct eb_moe_plan *p = m->p;
	int64_t i = g->items++;
	uint64_t len = it->kind == IT_TOKEN ? p->tok_bytes
		       : it->kind == IT_OUT ? (uint64_t)(it->k1 - it->k0) * p->out_bytes
					    : p->out_bytes;
	uint64_t one = 0;
	uint32_t rows = it->kind == IT_SUM_HOST ? sum_rows(m, it, g->refs, &one) : 0;

	if (m->count) {
		g->refs += rows;
		return;
	}
	g->len[i] = len;
	g->dst[i] = m->at;
	g->rows[i] = rows;
	g->first[i] = (uint32_t)g->refs;
	g->refs += rows;
	m->at += len;
	if (it->kind == IT_TOKEN)
		g->src[i] = g->from_dst ? p->fwd_at[fwd_index(p, it->s, it->t)]
					: p->x_off + (uint64_t)it->t * p->tok_bytes;
	else if (it->kind == IT_OUT || it->kind == IT_SUM_RANK) /* a rank's sum: its one row */
		g->src[i] = out_row(p, m->rt, it->s, it->t, it->k0);
	else
		g->src[i] = rows > 0 ? g->row_at[g->first[i]] : one;
}

static int leg_alloc(struct eb_moe_leg *g, int ranks)
{
	size_t n = (size_t)(g->items > 0 ? g->items : 1), r = (size_t)(g->refs > 0 ? g->refs : 1);

	g->block = eb_arrays(
	    &g->off, (size_t)ranks + 1, sizeof(*g->off), &g->src, n, sizeof(*g->src), &g->packed, n,
	    sizeof(*g->packed), &g->len, n, sizeof(*g->len), &g->dst, n, sizeof(*g->dst), &g->rows,
	    n, sizeof(*g->rows), &g->first, n, sizeof(*g->first), &g->row_at, r, sizeof(*g->row_at),
	    &g->row_w, r, sizeof(*g->row_w), &g->in, (size_t)ranks, sizeof(*g->in), NULL);
	return g->block != NULL ? EB_OK : EB_ENOMEM;
}

/* Where destination d's items are read from when they go as one write: in place where they
 * are copies already contiguous in the source region, else packed at *packed. */
static void place(struct eb_moe_leg *g, int d, uint64_t *packed)
{
	int64_t a = g->off[d], b = g->off[d + 1], i;
	int in_place = !g->from_dst;

	for (i = a; i < b && in_place; i++)
		in_place =
		    g->rows[i] == 0 && (i == a || g->src[i] == g->src[i - 1] + g->len[i - 1]);
	for (i = a; i < b; i++) {
		g->packed[i] = in_place ? g->src[i] : *packed;
		*packed += in_place ? 0 : g->len[i];
	}
}

/* The items this rank sends in one leg of a op, checked against the flows the routing
 * gives, tallied by path. */
static int build_leg(struct eb_moe_plan *p, const struct eb_route *rt, int op, int leg)
{
	struct eb_moe_leg *g = &p->leg[op][leg];
	struct make m = {p, rt, g, 1, 0};
	uint64_t packed = g->pack_off;
	int d;

	g->from_dst = leg == 1;
	for (d = 0; d < p->ranks; d++)
		walk(p, rt, op, leg, p->rank, d, make, &m);
	if (leg_alloc(g, p->ranks) != EB_OK)
		return EB_ENOMEM;
	g->items = g->refs = 0;
	m.count = 0;
	for (d = 0; d < p->ranks; d++) {
		struct eb_moe_flow want = eb_moe_flow(p, rt, op, leg, p->rank, d);
		int64_t a = g->items;
		uint64_t bytes = m.at;

		g->off[d] = a;
		bytes = m.at = in_base(p, rt, op, leg, p->rank, d);
		walk(p, rt, op, leg, p->rank, d, make, &m);
		if (g->items - a != want.items || m.at - bytes != want.bytes) {
			eb_err(
			    "moe's layout disagrees with its routing: rank %d sends rank %d %lld "
			    "items (%llu bytes) in leg %d of %s, the routing says %lld (%llu)",
			    p->rank, d, (long long)(g->items - a),
			    (unsigned long long)(m.at - bytes), leg, op ? "combine" : "dispatch",
			    (long long)want.items, (unsigned long long)want.bytes);
			return EB_EPROTO;
		}
		g->bytes[p->path[d]] += want.bytes;
		g->nitems[p->path[d]] += want.items;
	}
	g->off[p->ranks] = g->items;
	for (d = 0; d < p->ranks; d++) {
		place(g, d, &packed);
		g->in[d] = eb_moe_flow(p, rt, op, leg, d, p->rank);
	}
	g->same = op == 0 ? p->tok_bytes : p->out_bytes;
	for (d = 0; d < g->items; d++)
		if (g->len[d] != g->same)
			g->same = 0;
	return EB_OK;
}

/* The (source, token) pairs this rank serves, and where their outputs sit: a row per
 * selection, or in normal mode one row per pair, the weighted sum of its experts here. */
static void serve(struct eb_moe_plan *p, const struct eb_route *rt)
{
	int64_t rows = 0;
	int s, t, k0, k1;

	for (s = 0; s < p->ranks; s++)
		for (t = 0; t < p->tokens; t++) {
			size_t at = (size_t)s * (size_t)p->tokens + (size_t)t;

			on_rank(rt, s, t, p->rank, &k0, &k1);
			p->serve_at[at] = -1;
			if (k0 == k1)
				continue;
			p->serve_at[at] = (int32_t)p->served;
			p->serve_src[p->served] = s;
			p->serve_tok[p->served] = t;
			p->serve_out[p->served++] = rows;
			rows += p->mode == EB_MOE_NORMAL ? 1 : k1 - k0;
		}
	p->serve_out[p->served] = rows;
}

/* What lands here in every leg, writer by writer. */
static void receive(struct eb_moe_plan *p, const struct eb_route *rt)
{
	int op, leg, w;

	for (op = 0; op < 2; op++)
		for (leg = 0; leg < p->nlegs; leg++)
			for (w = 0; w < p->ranks; w++) {
				struct land l = {p,   rt, op,
						 leg, w,  in_base(p, rt, op, leg, w, p->rank)};

				walk(p, rt, op, leg, w, p->rank, land, &l);
			}
}

static int64_t arriving(const struct eb_moe_plan *p, const struct eb_route *rt, int op)
{
	int64_t n = 0;
	int leg, w;

	for (leg = 0; leg < p->nlegs; leg++)
		for (w = 0; w < p->ranks; w++)
			n += eb_moe_flow(p, rt, op, leg, w, p->rank).items;
	return n;
}

static int64_t tokens_with_sel(const struct eb_route *rt, int d)
{
	int64_t n = 0;
	int s;

	for (s = 0; s < rt->ranks; s++)
		n += rt->count[(size_t)s * (size_t)rt->ranks + (size_t)d];
	return n;
}

static void count_hosts(struct eb_moe_plan *p, const struct eb_route *rt)
{
	int s, t, h;

	for (s = 0; s < p->ranks; s++)
		for (t = 0; t < p->tokens; t++)
			for (h = 0; h < p->hosts->n; h++)
				p->hcount[(size_t)s * (size_t)p->hosts->n + (size_t)h] +=
				    on_host(p, rt, s, t, h);
}

/* What every leg's flows need first: the paths and the tokens per (rank, host). */
static int alloc_counts(struct eb_moe_plan *p, const struct eb_route *rt)
{
	size_t n = (size_t)p->ranks;

	p->block = eb_arrays(&p->path, n, sizeof(*p->path), &p->hcount, n * (size_t)p->hosts->n,
			     sizeof(*p->hcount), NULL);
	if (p->block == NULL)
		return EB_ENOMEM;
	count_hosts(p, rt);
	return EB_OK;
}

/* What this rank checks, serves and forwards. */
static int alloc_lists(struct eb_moe_plan *p, const struct eb_route *rt)
{
	size_t n = (size_t)p->ranks, toks = (size_t)rt->tokens, hosts = (size_t)p->hosts->n;
	size_t sel = toks * (size_t)rt->width, two = two_level(p) ? 1 : 0;
	size_t slots = (size_t)arriving(p, rt, 0) + 1, staged = (size_t)arriving(p, rt, 1) + 1;
	size_t served = (size_t)tokens_with_sel(rt, p->rank) + 1, i;

	p->lists =
	    eb_arrays(&p->slots, slots, sizeof(*p->slots), &p->staged, staged, sizeof(*p->staged),
		      &p->serve_src, served, sizeof(*p->serve_src), &p->serve_tok, served,
		      sizeof(*p->serve_tok), &p->serve_out, served, sizeof(*p->serve_out),
		      &p->serve_at, n * toks, sizeof(*p->serve_at), &p->back_at, sel,
		      sizeof(*p->back_at), &p->back_sum, sel, sizeof(*p->back_sum), &p->fwd_at,
		      two ? hosts * toks : 1, sizeof(*p->fwd_at), &p->stage_at,
		      two ? hosts * toks * (size_t)p->hosts->most : 1, sizeof(*p->stage_at), NULL);
	if (p->lists == NULL)
		return EB_ENOMEM;
	for (i = 0; two && i < hosts * toks * (size_t)p->hosts->most; i++)
		p->stage_at[i] = UINT64_MAX;
	return EB_OK;
}

/* The source region: x | out | each leg's packing area (room for all the leg sends). */
static void lay_out_source(struct eb_moe_plan *p, const struct eb_route *rt)
{
	uint64_t off;
	int op, leg, d;

	p->x_off = 0;
	p->out_off = (uint64_t)p->tokens * p->tok_bytes;
	off = p->out_off + (uint64_t)p->serve_out[p->served] * p->out_bytes;
	for (op = 0; op < 2; op++)
		for (leg = 0; leg < p->nlegs; leg++) {
			p->leg[op][leg].pack_off = off;
			for (d = 0; d < p->ranks; d++)
				off += eb_moe_flow(p, rt, op, leg, p->rank, d).bytes;
		}
	p->src_len = off;
}

/* Bytes rank r sends to other hosts in a leg of an op. */
static uint64_t across(const struct eb_moe_plan *p, const struct eb_route *rt, int op, int leg,
		       int r)
{
	uint64_t n = 0;
	int d;

	for (d = 0; d < p->ranks; d++)
		if (!eb_moe_same_host(p->hosts, r, d))
			n += eb_moe_flow(p, rt, op, leg, r, d).bytes;
	return n;
}

/* The leg of each op that crosses between hosts, where one alone does, and every rank's
 * bytes across in it. */
static int cross_legs(struct eb_moe_plan *p, const struct eb_route *rt)
{
	int op, leg, r;

	p->cross = calloc(2 * (size_t)p->ranks, sizeof(*p->cross));
	if (p->cross == NULL)
		return EB_ENOMEM;
	for (op = 0; op < 2; op++) {
		int found = -1, legs = 0;

		for (leg = 0; leg < p->nlegs && p->nlegs > 1; leg++)
			for (r = 0; r < p->ranks; r++)
				if (across(p, rt, op, leg, r) > 0) {
					found = leg;
					legs++;
					break;
				}
		p->cross_leg[op] = legs == 1 ? found : -1;
		for (r = 0; p->cross_leg[op] >= 0 && r < p->ranks; r++)
			p->cross[(size_t)op * (size_t)p->ranks + (size_t)r] =
			    across(p, rt, op, found, r);
	}
	return EB_OK;
}

int eb_moe_plan_build(struct eb_moe_plan *p, const struct eb_route *rt,
		      const struct eb_moe_hosts *h, int rank, int mode, int intra,
		      uint64_t tok_bytes, uint64_t out_bytes, int split_out)
{
	int d, op, leg, rc;

	memset(p, 0, sizeof(*p));
	*p = (struct eb_moe_plan){.rank = rank,
				  .ranks = rt->ranks,
				  .mode = mode,
				  .split_out = split_out,
				  .intra = intra,
				  .hosts = h,
				  .tokens = rt->tokens,
				  .tok_bytes = tok_bytes,
				  .out_bytes = out_bytes};
	p->nlegs = two_level(p) ? 2 : 1;
	rc = alloc_counts(p, rt);
	rc = rc != EB_OK ? rc : alloc_lists(p, rt);
	if (rc != EB_OK)
		goto fail;
	for (d = 0; d < p->ranks; d++)
		p->path[d] = (int8_t)eb_moe_path(p, rank, d);
	serve(p, rt);
	areas(p, rt);
	lay_out_source(p, rt);
	receive(p, rt);
	for (op = 0; op < 2 && rc == EB_OK; op++)
		for (leg = 0; leg < p->nlegs && rc == EB_OK; leg++)
			rc = build_leg(p, rt, op, leg);
	rc = rc != EB_OK ? rc : cross_legs(p, rt);
	if (rc == EB_OK)
		return EB_OK;
fail:
	if (rc == EB_ENOMEM)
		eb_err("out of memory for the layout of %d tokens x %d ranks", rt->tokens,
		       rt->ranks);
	eb_moe_plan_free(p);
	return rc;
}

void eb_moe_plan_free(struct eb_moe_plan *p)
{
	int op, leg;

	for (op = 0; op < 2; op++)
		for (leg = 0; leg < 2; leg++)
			free(p->leg[op][leg].block);
	free(p->lists);
	free(p->block);
	free(p->cross);
	memset(p, 0, sizeof(*p));
}
