/* efabench alltoall: every rank writes S bytes to every other rank at once with fi_writedata;
 * each target counts the immediate data of every chunk per (source, channel). A rank's
 * iteration ends when its writes completed locally and every source's chunks arrived here;
 * iterations need no barrier, cumulative counts keep them apart. */
#include "harness.h"
#include "../report/rec.h"
#include "efabench/buf.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/xfer.h"

#include <stdlib.h>

struct a2a_state {
	char *out, *in; /* slot p of out goes to rank p; slot s of in comes from rank s */
	size_t slot;
	struct eb_mr *out_mr, *in_mr; /* one per channel */
	struct eb_rkey *rkeys;	      /* [rank][chan] of every in buffer */
	struct eb_xfer *x;	      /* [nranks][nchan] */
	struct eb_xfer **all;
	uint64_t *expect; /* [source][chan] chunks counted so far */
	struct eb_imm_wait *waits;
};

static int a2a_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	size_t nx = (size_t)c->nranks * (size_t)e->nchan, i;
	struct a2a_state *st = calloc(1, sizeof(*st));
	int rc = EB_ENOMEM;

	if (st == NULL)
		return rc;
	c->priv = st;
	st->slot = (size_t)c->o->sizes[c->o->nsizes - 1];
	st->out_mr = calloc((size_t)e->nchan, sizeof(*st->out_mr));
	st->in_mr = calloc((size_t)e->nchan, sizeof(*st->in_mr));
	st->rkeys = calloc(nx, sizeof(*st->rkeys));
	st->x = calloc(nx, sizeof(*st->x));
	st->all = calloc(nx, sizeof(*st->all));
	st->expect = calloc(nx, sizeof(*st->expect));
	st->waits = calloc(nx, sizeof(*st->waits));
	if (st->out_mr == NULL || st->in_mr == NULL || st->rkeys == NULL || st->x == NULL ||
	    st->all == NULL || st->expect == NULL || st->waits == NULL)
		return rc;
	for (i = 0; i < nx; i++)
		if (eb_xfer_init(&st->x[i], e, c->window) != EB_OK)
			return rc;
	st->out = eb_buf_alloc_host(st->slot * (size_t)c->nranks, "the alltoall send buffer");
	st->in = eb_buf_alloc_host(st->slot * (size_t)c->nranks, "the alltoall receive buffer");
	if (st->out == NULL || st->in == NULL)
		return rc;
	rc = eb_engine_reg(e, st->out, st->slot * (size_t)c->nranks, FI_WRITE, st->out_mr, NULL);
	if (rc != EB_OK)
		return rc;
	return eb_engine_reg(e, st->in, st->slot * (size_t)c->nranks, FI_REMOTE_WRITE, st->in_mr,
			     st->rkeys);
}

static void a2a_teardown(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;
	int i;

	if (st == NULL)
		return;
	for (i = 0; st->x != NULL && i < c->nranks * c->e->nchan; i++)
		eb_xfer_fini(&st->x[i]);
	if (st->in_mr != NULL)
		eb_engine_dereg(c->e, st->in_mr);
	if (st->out_mr != NULL)
		eb_engine_dereg(c->e, st->out_mr);
	eb_buf_free_host(st->out);
	eb_buf_free_host(st->in);
	free(st->out_mr);
	free(st->in_mr);
	free(st->rkeys);
	free(st->x);
	free(st->all);
	free(st->expect);
	free(st->waits);
	free(st);
	c->priv = NULL;
}

static int a2a_prepare(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;
	int p;

	for (p = 0; p < c->nranks; p++) {
		struct eb_pattern out = {(uint32_t)c->rank, (uint32_t)p, c->epoch};
		struct eb_pattern in = {(uint32_t)p, (uint32_t)c->rank, EB_EPOCH_POISON};

		if (p == c->rank)
			continue;
		eb_pattern_fill(&out, st->out + (size_t)p * st->slot, c->bytes, 0);
		eb_pattern_fill(&in, st->in + (size_t)p * st->slot, c->bytes, 0);
	}
	return EB_OK;
}

static int a2a_iter(struct eb_ctx *c, long i)
{
	struct a2a_state *st = c->priv;
	struct eb_engine *e = c->e;
	int nch = e->nchan, p, ch, n = 0, nw = 0;

	(void)i;
	/* Start with the next rank up so every rank's first write goes to a different peer. */
	for (p = (c->rank + 1) % c->nranks; p != c->rank; p = (p + 1) % c->nranks) {
		struct eb_xfer *xs = &st->x[(size_t)p * (size_t)nch];
		int k, armed = eb_layout_write(
			   c->var->layout, xs, nch, c->rank, p, st->out + (size_t)p * st->slot,
			   c->bytes, c->chunk, st->out_mr, &st->rkeys[(size_t)p * (size_t)nch],
			   (uint64_t)c->rank * st->slot, EB_IMM(c->rank, c->epoch));

		for (k = 0; k < armed; k++)
			st->all[n++] = &xs[k];
		for (ch = 0; ch < nch; ch++) {
			uint64_t *want = &st->expect[(size_t)p * (size_t)nch + (size_t)ch];
			uint64_t more = eb_layout_chunks(c->var->layout, nch, p, c->rank, c->bytes,
							 c->chunk, ch);

			if (more == 0)
				continue;
			*want += more;
			st->waits[nw++] =
			    (struct eb_imm_wait){.peer = p, .chan = ch, .count = *want};
		}
	}
	return eb_xfer_wait_imm(e, st->all, n, st->waits, nw, eb_engine_deadline(e));
}

static uint64_t a2a_verify(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;
	uint64_t wrong = 0;
	int s;

	for (s = 0; s < c->nranks; s++) {
		struct eb_pattern in = {(uint32_t)s, (uint32_t)c->rank, c->epoch};

		if (s != c->rank)
			wrong +=
			    eb_pattern_check(&in, st->in + (size_t)s * st->slot, c->bytes, 0, NULL);
	}
	return wrong;
}

static void *a2a_landing(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;

	/* The slot of the next rank down: every rank has one that some peer writes. */
	return st->in + (size_t)((c->rank + c->nranks - 1) % c->nranks) * st->slot;
}

/* nccl-tests' alltoall figures, for comparison: its size is the whole send buffer of a rank
 * (S per rank, self included), algbw = size / t, busbw = algbw * (N - 1) / N, in GB/s. */
static void a2a_extra(const struct eb_ctx *c, const struct eb_result *x, struct eb_rec *rec)
{
	double n = c->nranks, size = (double)x->size * n;
	double algbw = x->t_s > 0 ? size / x->t_s / 1e9 : 0.0;

	eb_rec_obj(rec, "nccl_tests");
	eb_rec_num(rec, "size", size);
	eb_rec_num(rec, "time_us", x->t_s * 1e6);
	eb_rec_num(rec, "algbw_GBps", algbw);
	eb_rec_num(rec, "busbw_GBps", algbw * (n - 1) / n);
	eb_rec_end(rec);
}

static const struct eb_bench a2a_bench = {
    .metric = "t = a rank's time per iteration (its writes done, every source's chunks here), "
	      "averaged over ranks; Gbps = 8*S*(N-1)/t per rank",
    .nvariants = 3,
    .variants = {{"Single", EB_LAYOUT_SINGLE, EB_FLOW_ALL},
		 {"Split", EB_LAYOUT_SPLIT, EB_FLOW_ALL},
		 {"RoundRobin", EB_LAYOUT_RR, EB_FLOW_ALL}},
    EB_BENCH_HOOKS(a2a),
    .extra = a2a_extra,
};

const struct eb_cmd eb_cmd_alltoall = {
    .name = "alltoall",
    .summary = "every rank writes to every other rank at once",
    .help = "  every rank writes S bytes to every other rank at once, each target counting\n"
	    "  immediate data per (source, channel); t = each rank's time per iteration\n"
	    "  (its writes done, every source's chunks arrived), averaged over ranks;\n"
	    "  Gbps = 8*S*(N-1)/t per rank. JSON adds nccl-tests' figures: size = S*N,\n"
	    "  algbw = size/t, busbw = algbw*(N-1)/N (GB/s)",
    .groups = EB_G_FABRIC_BENCH,
    .bench = &a2a_bench,
};
