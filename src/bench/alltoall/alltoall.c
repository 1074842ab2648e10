/* efabench alltoall: every rank writes S bytes to every other rank at once with fi_writedata;
 * each target counts the immediate data of every chunk per (source, channel). A rank's
 * iteration ends when its writes completed locally and every source's chunks arrived here;
 * iterations need no barrier, cumulative counts keep them apart. Split balances: the channels
 * draw a peer's chunks from one pool, so no rail idles while another still holds its static
 * quarter (the target counts them over all channels). */
#include "harness/sweep.h"
#include "report/rec.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/a2av.h"

#include <stdlib.h>

struct a2a_state {
	struct eb_payload out, in; /* slot p of out goes to rank p; slot s of in comes from s */
	size_t slot;
	struct eb_a2av a;
};

static int a2a_setup(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;
	int rc;

	st->slot = (size_t)c->o->sizes[c->o->nsizes - 1];
	rc = eb_a2av_init(&st->a, c->e, c->nranks, c->chunk, c->window);
	if (rc == EB_OK)
		rc = eb_payload_alloc(c, &st->out, st->slot * (size_t)c->nranks,
				      "the alltoall send buffer");
	if (rc == EB_OK)
		rc = eb_payload_alloc(c, &st->in, st->slot * (size_t)c->nranks,
				      "the alltoall receive buffer");
	if (rc == EB_OK)
		rc = eb_payload_reg(c, &st->out, EB_USE_SOURCE, 0);
	if (rc == EB_OK)
		rc = eb_payload_reg(c, &st->in, EB_USE_TARGET, 1);
	return rc == EB_OK ? eb_payload_land(c, &st->in, st->slot) : rc;
}

static void a2a_teardown(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;

	eb_a2av_fini(&st->a);
	eb_payload_free(&st->out);
	eb_payload_free(&st->in);
}

/* Balanced split: static layouts know each channel's share; a pool does not. */
static int pooled(const struct eb_ctx *c, const struct a2a_state *st)
{
	return c->var->layout == EB_LAYOUT_SPLIT && c->e->nchan > 1 && !st->out.staged;
}

static int a2a_prepare(struct eb_ctx *c)
{
	struct a2a_state *st = c->priv;
	int p, rc = EB_OK;

	/* Every chunk of the last phase is here and none of the next has left (a barrier
	 * follows): count from what arrived, whichever channels a pool used. */
	eb_a2av_sync(&st->a, c->rank);
	for (p = 0; p < c->nranks && rc == EB_OK; p++) {
		struct eb_pattern out = {(uint32_t)c->rank, (uint32_t)p, c->epoch};
		struct eb_pattern in = {(uint32_t)p, (uint32_t)c->rank, EB_EPOCH_POISON};

		if (p == c->rank)
			continue;
		rc = eb_payload_fill(c, &st->out, (size_t)p * st->slot, c->bytes, &out);
		if (rc == EB_OK)
			rc = eb_payload_fill(c, &st->in, (size_t)p * st->slot, c->bytes, &in);
	}
	return rc;
}

static int a2a_iter(struct eb_ctx *c, long i)
{
	struct a2a_state *st = c->priv;
	enum eb_layout l = c->var->layout;
	int pool = pooled(c, st), p, rc = EB_OK;

	eb_a2av_begin(&st->a);
	/* Start with the next rank up so every rank's first write goes to a different peer. */
	for (p = (c->rank + 1) % c->nranks; p != c->rank && rc == EB_OK; p = (p + 1) % c->nranks) {
		struct eb_xfer *xs;
		int armed = eb_a2av_write(
		    &st->a, l, pool, c->rank, p, eb_payload_at(&st->out, (size_t)p * st->slot),
		    c->bytes, st->out.reg.mr, eb_region_key(&st->in.reg, p, 0),
		    (uint64_t)c->rank * st->slot, EB_IMM(c->rank, c->epoch), &xs);

		rc = eb_payload_stage(c, &st->out, xs, armed);
		eb_a2av_expect(&st->a, l, pool, c->rank, p, c->bytes);
	}
	rc = rc == EB_OK ? eb_a2av_wait(&st->a, EB_DEADLINE_LAZY) : rc;
	return rc == EB_OK ? eb_payload_landed(c, EB_DEADLINE_LAZY) : rc;
}

static int a2a_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct a2a_state *st = c->priv;
	int s;

	for (s = 0; s < c->nranks; s++) {
		struct eb_pattern in = {(uint32_t)s, (uint32_t)c->rank, c->epoch};

		if (s != c->rank)
			*wrong += eb_payload_check(c, &st->in, (size_t)s * st->slot, c->bytes, &in);
	}
	return EB_OK;
}

static const struct eb_payload *a2a_landing(struct eb_ctx *c, size_t *off, size_t *len)
{
	struct a2a_state *st = c->priv;

	/* The slot of the next rank down: every rank has one that some peer writes. */
	*off = (size_t)((c->rank + c->nranks - 1) % c->nranks) * st->slot;
	*len = c->bytes;
	return &st->in;
}

/* nccl-tests' alltoall figures, for comparison: its size is the whole send buffer of a rank
 * (S per rank, self included), algbw = size / t, busbw = algbw * (N - 1) / N, in GB/s. */
static void nccl_figures(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *rec)
{
	double n = c->nranks, size = (double)m->pt->size * n, t = m->all.mean;
	double algbw = t > 0 ? size / t / 1e9 : 0.0;

	eb_rec_obj(rec, "nccl_tests");
	eb_rec_num(rec, "size", size);
	eb_rec_num(rec, "time_us", t * 1e6);
	eb_rec_num(rec, "algbw_GBps", algbw);
	eb_rec_num(rec, "busbw_GBps", algbw * (n - 1) / n);
	eb_rec_end(rec);
}

static void a2a_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		       struct eb_rec *r)
{
	eb_sweep_record_own(c, m, s, r, nccl_figures);
}

static const struct eb_sweep_def a2a_sweep = {
    .nvariants = 3,
    .variants = {{{"Single", "SinglePin", "SingleDMA", "SingleStaged"},
		  EB_LAYOUT_SINGLE,
		  EB_FLOW_ALL},
		 {{"Split", "MultiPin", "MultiDMA", "MultiStaged"}, EB_LAYOUT_SPLIT, EB_FLOW_ALL},
		 {{"RoundRobin", "RoundRobinPin", "RoundRobinDMA", "RoundRobinStaged"},
		  EB_LAYOUT_RR,
		  EB_FLOW_ALL}},
};

static const struct eb_bench a2a_bench = {
    .priv_size = sizeof(struct a2a_state),
    .metric = "t = a rank's time per iteration (its writes done, every source's chunks here), "
	      "averaged over ranks; Gbps = 8*S*(N-1)/t per rank",
    EB_SWEEP_HOOKS,
    .plan = eb_sweep_plan,
    .sweep = &a2a_sweep,
    .facts = eb_sweep_facts,
    .record = a2a_record,
    EB_BENCH_HOOKS(a2a),
};

const struct eb_cmd eb_cmd_alltoall = {
    .name = "alltoall",
    .summary = "every rank writes to every other rank at once",
    .help = "  every rank writes S bytes to every other rank at once, each target counting\n"
	    "  immediate data per (source, channel); Split balances each peer's chunks over\n"
	    "  the channels as their windows free up (static quarters let one rail idle while\n"
	    "  another finishes); t = each rank's time per iteration\n"
	    "  (its writes done, every source's chunks arrived), averaged over ranks;\n"
	    "  Gbps = 8*S*(N-1)/t per rank. JSON adds nccl-tests' figures: size = S*N,\n"
	    "  algbw = size/t, busbw = algbw*(N-1)/N (GB/s)",
    .groups = EB_G_FABRIC_BENCH,
    .bench = &a2a_bench,
    .report = EB_REPORT_DEFAULT,
};
