/* efabench write: rank 0 writes S bytes into rank k's registered buffer with fi_writedata, cut
 * into chunks with a window in flight; every chunk carries immediate data that the target
 * counts (EFA does not order writes), and the target acknowledges the iteration once every
 * chunk has landed. t runs from the first post to that acknowledgement. */
#include "harness.h"
#include "efabench/buf.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/xfer.h"

#include <stdlib.h>

struct write_state {
	char *src, *dst;
	struct eb_mr src_mr, *dst_mr; /* dst registered on every channel */
	struct eb_rkey *rkeys;	      /* [rank][chan] of every dst */
	uint64_t ack_out, ack_in;
	struct eb_mr ack_out_mr, ack_in_mr;
	struct eb_xfer x, ack; /* the data, and the target's acknowledgement */
	uint64_t expect;       /* chunks rank 0 has written to us so far */
};

static int write_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	size_t max = (size_t)c->o->sizes[c->o->nsizes - 1];
	struct write_state *st = calloc(1, sizeof(*st));
	int rc = EB_ENOMEM;

	if (st == NULL)
		return rc;
	c->priv = st;
	st->dst_mr = calloc((size_t)e->nchan, sizeof(*st->dst_mr));
	st->rkeys = calloc((size_t)e->nchan * (size_t)c->nranks, sizeof(*st->rkeys));
	if (st->dst_mr == NULL || st->rkeys == NULL)
		return rc;
	rc = eb_xfer_init(&st->x, e, c->window);
	if (rc == EB_OK)
		rc = eb_xfer_init(&st->ack, e, 1);
	if (rc != EB_OK)
		return rc;
	rc = EB_ENOMEM;
	/* Rank 0 only sends, the others only receive: each gets the one buffer it needs. */
	if (c->rank == 0) {
		st->src = eb_buf_alloc_host(max, "the write source");
		if (st->src == NULL)
			return rc;
		rc = eb_mr_reg(&e->chan[0], st->src, max, FI_WRITE, &st->src_mr);
		if (rc == EB_OK)
			rc = eb_mr_reg(&e->chan[0], &st->ack_in, sizeof(st->ack_in), FI_RECV,
				       &st->ack_in_mr);
		if (rc != EB_OK)
			return rc;
		/* Rank 0 is never a target, but key exchange is collective. */
		return eb_engine_reg(e, NULL, 0, FI_REMOTE_WRITE, st->dst_mr, st->rkeys);
	}
	st->dst = eb_buf_alloc_host(max, "the write target");
	if (st->dst == NULL)
		return rc;
	rc = eb_mr_reg(&e->chan[0], &st->ack_out, sizeof(st->ack_out), FI_SEND, &st->ack_out_mr);
	if (rc != EB_OK)
		return rc;
	return eb_engine_reg(e, st->dst, max, FI_REMOTE_WRITE, st->dst_mr, st->rkeys);
}

static void write_teardown(struct eb_ctx *c)
{
	struct write_state *st = c->priv;

	if (st == NULL)
		return;
	eb_xfer_fini(&st->x);
	eb_xfer_fini(&st->ack);
	if (st->dst_mr != NULL)
		eb_engine_dereg(c->e, st->dst_mr);
	eb_mr_dereg(&st->src_mr);
	eb_mr_dereg(&st->ack_in_mr);
	eb_mr_dereg(&st->ack_out_mr);
	eb_buf_free_host(st->src);
	eb_buf_free_host(st->dst);
	free(st->dst_mr);
	free(st->rkeys);
	free(st);
	c->priv = NULL;
}

static int write_prepare(struct eb_ctx *c)
{
	struct write_state *st = c->priv;
	struct eb_pattern p = {.src = 0,
			       .dst = (uint32_t)(c->role == EB_ROLE_INIT ? c->peer : c->rank),
			       .epoch = c->epoch};

	if (c->role == EB_ROLE_INIT) {
		eb_pattern_fill(&p, st->src, c->bytes, 0);
	} else if (c->role == EB_ROLE_TARGET) {
		p.epoch = EB_EPOCH_POISON;
		eb_pattern_fill(&p, st->dst, c->bytes, 0);
	}
	return EB_OK;
}

static int write_iter(struct eb_ctx *c, long i)
{
	struct write_state *st = c->priv;
	struct eb_engine *e = c->e;
	uint64_t deadline = eb_engine_deadline(e);
	size_t chunk = c->chunk;
	struct eb_xfer *xs[2] = {&st->ack, &st->x};
	int rc;

	(void)i;
	if (c->role == EB_ROLE_INIT) {
		const struct eb_rkey *rk = &st->rkeys[(size_t)c->peer * (size_t)e->nchan];

		eb_xfer_recv(&st->ack, 0, c->peer, &st->ack_in, sizeof(st->ack_in),
			     sizeof(st->ack_in), st->ack_in_mr.desc);
		eb_xfer_write(&st->x, 0, c->peer, st->src, c->bytes, chunk, st->src_mr.desc,
			      rk->addr, rk->key, EB_IMM(c->rank, c->epoch));
		/* The acknowledgement's receive goes first, so it is posted before any write. */
		return eb_xfer_wait(xs, 2, deadline);
	}
	if (c->role == EB_ROLE_TARGET) {
		st->expect += eb_xfer_nchunks(c->bytes, chunk);
		rc = eb_wait_imm(e, 0, 0, st->expect, deadline);
		if (rc != EB_OK)
			return rc;
		st->ack_out = st->expect;
		eb_xfer_send(&st->ack, 0, 0, &st->ack_out, sizeof(st->ack_out), sizeof(st->ack_out),
			     st->ack_out_mr.desc);
		return eb_xfer_wait(xs, 1, deadline);
	}
	return EB_OK;
}

static uint64_t write_verify(struct eb_ctx *c)
{
	struct write_state *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->rank, .epoch = c->epoch};

	if (c->role != EB_ROLE_TARGET)
		return 0;
	return eb_pattern_check(&p, st->dst, c->bytes, 0, NULL);
}

static void *write_landing(struct eb_ctx *c)
{
	return ((struct write_state *)c->priv)->dst;
}

const struct eb_bench eb_bench_write = {
    .name = "write",
    .summary = "one-sided fi_writedata from host memory, rank 0 -> rank k (k = 1..N-1), "
	       "averaged over pairs",
    .metric = "t = first post to the target's acknowledgement that every chunk landed",
    .nvariants = 1,
    .variants = {"SingleHost"},
    .setup = write_setup,
    .teardown = write_teardown,
    .prepare = write_prepare,
    .iter = write_iter,
    .verify = write_verify,
    .landing = write_landing,
};
