/* The copy engines' rate for the bytes each rank stores into same-host peers' GPU memory:
 * what the GPU's DMA engines reach for those bytes, beside what the producers' stores reach.
 * A header point per op (dispatch, combine): in every iteration (each starting at a barrier) every
 * rank copies its op's same-host bytes to each peer at once, a stream per peer; the slowest rank's
 * p50 is the copy's time. */
#include "moe_ce.h"
#include "moe_figures.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>

int eb_moe_ce_wanted(const struct eb_ctx *c, const struct mstate *st)
{
	return c->mem == EB_MEM_DEVICE && st->plan.intra && st->hosts.most > 1;
}

/* This rank's same-host bytes to each mapped peer in an op (peers in rank order). */
static int lengths(const struct eb_ctx *c, const struct mstate *st, int op, char **to,
		   uint64_t *len)
{
	int d, leg, n = 0;

	for (d = 0; d < c->nranks; d++) {
		if (st->peers.gpu[d] == NULL || d == c->rank)
			continue;
		to[n] = st->peers.gpu[d];
		len[n] = 0;
		for (leg = 0; leg < st->plan.nlegs; leg++)
			len[n] += eb_moe_flow(&st->plan, &st->rt, op, leg, c->rank, d).bytes;
		n++;
	}
	return n;
}

static int ce_enter(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	struct mce *x = &st->ce;
	int n;

	x->to = calloc((size_t)c->nranks, sizeof(*x->to));
	x->len = calloc(2 * (size_t)c->nranks, sizeof(*x->len));
	if (x->to == NULL || x->len == NULL)
		return EB_ENOMEM;
	n = lengths(c, st, 0, x->to, x->len);
	lengths(c, st, 1, x->to, x->len + n);
	x->from = eb_payload_at(&st->dst, 0);
	x->n = n;
	return n > 0 ? eb_mem_ce_open(&x->ce, n) : EB_OK;
}

static int ce_leave(struct eb_ctx *c, int failed)
{
	struct mstate *st = c->priv;

	(void)failed;
	eb_mem_ce_close(st->ce.ce);
	free(st->ce.to);
	free(st->ce.len);
	st->ce = (struct mce){0};
	return EB_OK;
}

/* An iteration: the op's bytes to every peer at once (none: no same-host peer here). */
static int ce_iter(struct eb_ctx *c, long i)
{
	struct mce *x = &((struct mstate *)c->priv)->ce;

	(void)i;
	return x->ce != NULL ? eb_mem_ce_copy(x->ce, x->to, x->from, x->len + c->pt->step * x->n)
			     : EB_OK;
}

/* Rank 0: the op's time (the slowest rank's p50) and rate, for the header, the JSON head
 * and the records that compare with it. */
static void ce_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		      struct eb_rec *rec)
{
	struct mstate *st = c->priv;
	int op = m->pt->step, r;
	uint64_t by[3];
	int64_t items[3];
	char key[32];
	double gbps;

	st->ce_s[op] = m->slow >= 0 ? m->rep[m->slow].st.p50 : 0;
	for (r = 0, st->ce_bytes[op] = 0; r < c->nranks; r++) {
		eb_moe_moved(&st->plan, &st->rt, op, r, by, items);
		st->ce_bytes[op] += (double)by[EB_PATH_INTRA] / c->nranks;
	}
	gbps = st->ce_s[op] > 0 ? st->ce_bytes[op] / st->ce_s[op] / 1e9 : 0;
	st->have_ce = op == 1;
	if (op == 0) {
		eb_fact_break(s);
		eb_fact_say(s, "copy engines",
			    "the same same-host bytes by cudaMemcpyAsync, every rank to its peers "
			    "at once (slowest rank's p50 of %ld):",
			    m->pt->iters);
	}
	snprintf(key, sizeof(key), "ce_%s_us", eb_moe_op_name[op]);
	eb_fact_num(s, key, NULL, st->ce_s[op] * 1e6, NULL);
	snprintf(key, sizeof(key), "ce_%s_GBps", eb_moe_op_name[op]);
	eb_fact_num(s, key, NULL, gbps, NULL);
	eb_head_fact(&s->head, eb_moe_op_name[op], "%.1f us (%.1f GB/s)", st->ce_s[op] * 1e6, gbps);
	(void)rec; /* a header point: its figures are the header's */
}

/* The copy engines' points run these hooks, not moe's. */
static const struct eb_bench ce_hooks = {
    .enter = ce_enter, .leave = ce_leave, .iter = ce_iter, .record = ce_record};

int eb_moe_ce_points(const struct eb_ctx *c, const struct mstate *st, struct eb_pt *pts)
{
	static const char *const names[] = {"copy engines dispatch", "copy engines combine"};
	int op;

	for (op = 0; op < 2 && st->ce_wanted; op++)
		pts[op] = (struct eb_pt){.var = MOE_CE,
					 .step = op,
					 .turns = 1,
					 .warmup = c->o->warmup,
					 .iters = c->o->iters,
					 .flags = EB_PT_HEAD | EB_PT_ALIGN_EACH,
					 .name = names[op],
					 .own = &ce_hooks};
	return st->ce_wanted ? 2 : 0;
}
