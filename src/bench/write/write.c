/* efabench write: rank 0 writes S bytes into rank k's registered buffer with fi_writedata, cut
 * into chunks with a window in flight per channel; every chunk carries immediate data that the
 * target counts per channel (EFA does not order writes), and the target acknowledges the
 * iteration once every chunk has landed. t runs from the first post to the acknowledgement.
 * Single and split go to one k at a time; round-robin goes to every k at once. */
#include "harness/sweep.h"
#include "core/arrays.h"
#include "core/clock.h"
#include "core/log.h"
#include "report/rec.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/xfer.h"

#include <stdlib.h>

struct write_state {
	struct eb_payload src; /* rank 0: one slot of the largest size per target */
	struct eb_payload dst; /* targets: where rank 0 writes */
	size_t slot;
	uint64_t *ack_in, ack_out; /* rank 0: one acknowledgement per target */
	struct eb_region acks;	   /* whichever of them this rank uses */
	struct eb_xfer *x;	   /* [nranks][nchan] data transfers */
	struct eb_xfer *ack;	   /* [nranks] acknowledgements */
	void *block;		   /* all, expect, waits and ack_in */
	struct eb_xfer **all;	   /* what one iteration waits for */
	uint64_t *expect;	   /* target: chunks rank 0 has written per channel so far */
	struct eb_imm_wait *waits;
	int nall;     /* transfers in all[] */
	int pipeline; /* unstaged, without --check: the next iteration may be posted early */
	int ahead;    /* rank 0: the next iteration's transfers are posted already */
	int rate;     /* --rate: writes of a phase go round slots (span) */
	int spread;   /* --rate --check: each write of a phase lands in a slot of its own */
};

/* --rate: at most this many bytes of slots, then they are reused. */
#define SPREAD_BYTES (64ull << 20)

struct wopts {
	int rate;
};

/* Bytes a phase writes and checks: --rate goes round a slot per write in flight (--window; with
 * --check one per write) within SPREAD_BYTES, so that the check after the phase sees every write
 * of the last window in bytes of its own; else S. */
static size_t span(const struct eb_ctx *c, const struct write_state *st)
{
	size_t in_flight = st->rate ? (size_t)c->window : 1;

	return eb_payload_slots(c->bytes, st->slot, st->spread, in_flight, c->iters);
}

static int alloc_xfers(struct eb_ctx *c, struct write_state *st)
{
	int n = c->nranks * c->e->nchan;

	st->x = eb_xfers_new(c->e, n, c->window);
	st->ack = eb_xfers_new(c->e, c->nranks, 1);
	st->block = eb_arrays(&st->all, (size_t)(n + c->nranks), sizeof(*st->all), &st->expect,
			      (size_t)c->e->nchan, sizeof(*st->expect), &st->waits,
			      (size_t)c->e->nchan, sizeof(*st->waits), &st->ack_in,
			      (size_t)c->nranks, sizeof(*st->ack_in), NULL);
	return st->x == NULL || st->ack == NULL || st->block == NULL ? EB_ENOMEM : EB_OK;
}

static int write_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	struct write_state *st = c->priv;
	int rc;

	st->slot = (size_t)c->o->sizes[c->o->nsizes - 1];
	st->rate = ((const struct wopts *)c->o->own)->rate;
	st->spread = st->rate && c->o->check;
	if (st->rate) { /* room for every write of the longest phase, or of a window */
		long n = c->o->iters > c->o->warmup ? c->o->iters : c->o->warmup;
		size_t want = st->slot * (size_t)(st->spread ? n : c->window);

		want = want < SPREAD_BYTES ? want : SPREAD_BYTES;
		st->slot = want > st->slot ? want : st->slot;
	}
	rc = alloc_xfers(c, st);
	if (rc != EB_OK)
		return rc;
	/* Rank 0 only sends, the others only receive: each gets the buffers it needs. */
	if (c->rank == 0) {
		rc =
		    eb_payload_alloc(c, &st->src, st->slot * (size_t)c->nranks, "the write source");
		if (rc != EB_OK)
			return rc;
		rc = eb_payload_reg(c, &st->src, EB_USE_SOURCE, 0);
		if (rc == EB_OK)
			rc = eb_region_local(&st->acks, e, 0, st->ack_in,
					     sizeof(*st->ack_in) * c->nranks, EB_USE_RECV);
		/* Rank 0 is never a target, but the key exchange is collective. */
		rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->dst, EB_USE_TARGET, 1);
		if (rc == EB_OK && c->o->corrupt_key) {
			size_t i;

			for (i = 0; i < (size_t)e->nchan * (size_t)c->nranks; i++)
				st->dst.reg.rkeys[i].key ^= 0x5a5a5a5a5a5aull;
		}
		return rc;
	}
	rc = eb_payload_alloc(c, &st->dst, st->slot, "the write target");
	if (rc == EB_OK)
		rc = eb_region_local(&st->acks, e, 0, &st->ack_out, sizeof(st->ack_out),
				     EB_USE_SEND);
	if (rc == EB_OK)
		rc = eb_payload_reg(c, &st->dst, EB_USE_TARGET, 1);
	return rc == EB_OK ? eb_payload_land(c, &st->dst, 0) : rc;
}

static void write_teardown(struct eb_ctx *c)
{
	struct write_state *st = c->priv;

	eb_xfers_free(st->x, c->nranks * c->e->nchan);
	eb_xfers_free(st->ack, c->nranks);
	eb_region_close(&st->acks);
	eb_payload_free(&st->src);
	eb_payload_free(&st->dst);
	free(st->block);
}

/* Targets of this phase as seen from rank 0: one, or every rank at once. */
static int first_target(const struct eb_ctx *c)
{
	return c->peer >= 0 ? c->peer : 1;
}

static int last_target(const struct eb_ctx *c)
{
	return c->peer >= 0 ? c->peer : c->nranks - 1;
}

static int write_prepare(struct eb_ctx *c)
{
	struct write_state *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->rank, .epoch = EB_EPOCH_POISON};
	int k, rc = EB_OK;

	if (c->role == EB_ROLE_INIT) {
		for (k = first_target(c); k <= last_target(c) && rc == EB_OK; k++) {
			p.dst = (uint32_t)k;
			p.epoch = c->epoch;
			rc = eb_payload_fill(c, &st->src, (size_t)k * st->slot, span(c, st), &p);
		}
	} else if (c->role == EB_ROLE_TARGET) {
		rc = eb_payload_fill(c, &st->dst, 0, span(c, st), &p);
	}
	st->ahead = 0;
	st->pipeline = !st->src.staged && !c->o->check;
	return rc;
}

/* Rank 0: this iteration's writes to every target, then the acknowledgements' receives (they
 * cannot come sooner than a round trip, so they are posted in time and their posts stay off
 * the path), each posted as far as its window allows: a one-chunk write goes out at once. */
static int init_post(struct eb_ctx *c, struct write_state *st)
{
	struct eb_engine *e = c->e;
	int k, i, n = 0, nx = e->nchan, rc = EB_OK;

	for (k = first_target(c); k <= last_target(c) && rc == EB_OK; k++) {
		struct eb_xfer *xs = &st->x[(size_t)k * (size_t)nx];
		int armed = eb_layout_write(
		    c->var->layout, xs, nx, 0, k, eb_payload_at(&st->src, (size_t)k * st->slot),
		    c->bytes, c->chunk, st->src.reg.mr, eb_region_key(&st->dst.reg, k, 0), 0,
		    EB_IMM(0, c->epoch));

		rc = eb_payload_stage(c, &st->src, xs, armed);
		for (i = 0; i < armed; i++)
			st->all[n++] = &xs[i];
	}
	for (k = first_target(c); k <= last_target(c); k++) {
		eb_xfer_recv(&st->ack[k], 0, k, &st->ack_in[k], sizeof(*st->ack_in),
			     sizeof(*st->ack_in), eb_region_desc(&st->acks, 0));
		st->all[n++] = &st->ack[k];
	}
	st->nall = n;
	for (i = 0; i < n && rc == EB_OK; i++)
		rc = eb_xfer_step(st->all[i]);
	return rc;
}

/* Unstaged and without --check, the next iteration's writes go out as soon as this one is
 * acknowledged, before the harness's timestamp: an iteration then runs from one post to the
 * next, and no clock read sits between the acknowledgement and the next write. */
static int init_iter(struct eb_ctx *c, struct write_state *st, long i)
{
	int rc = st->ahead ? EB_OK : init_post(c, st);

	st->ahead = 0;
	if (rc == EB_OK)
		rc = eb_xfer_wait(st->all, st->nall, EB_DEADLINE_LAZY);
	if (rc == EB_OK && st->pipeline && i + 1 < c->iters) {
		rc = init_post(c, st);
		st->ahead = rc == EB_OK;
	}
	return rc;
}

static int ack(struct eb_ctx *c, struct write_state *st);

static int target_iter(struct eb_ctx *c, struct write_state *st)
{
	struct eb_engine *e = c->e;
	int ch, n = 0, rc;

	for (ch = 0; ch < e->nchan; ch++) {
		uint64_t k =
		    eb_layout_chunks(c->var->layout, e->nchan, 0, c->rank, c->bytes, c->chunk, ch);

		if (k == 0)
			continue;
		st->expect[ch] += k;
		st->waits[n++] =
		    (struct eb_imm_wait){.peer = 0, .chan = ch, .count = st->expect[ch]};
	}
	rc = eb_xfer_wait_imm(e, NULL, 0, st->waits, n, EB_DEADLINE_LAZY);
	if (rc == EB_OK)
		rc = eb_payload_landed(c, EB_DEADLINE_LAZY);
	return rc == EB_OK ? ack(c, st) : rc;
}

/* Tell rank 0 that everything it wrote has landed. */
static int ack(struct eb_ctx *c, struct write_state *st)
{
	st->ack_out = st->expect[0];
	eb_xfer_send(&st->ack[0], 0, 0, &st->ack_out, sizeof(st->ack_out), sizeof(st->ack_out),
		     eb_region_desc(&st->acks, 0));
	st->all[0] = &st->ack[0];
	return eb_xfer_wait(st->all, 1, EB_DEADLINE_LAZY);
}

static int write_iter(struct eb_ctx *c, long i)
{
	struct write_state *st = c->priv;

	if (c->role == EB_ROLE_INIT)
		return init_iter(c, st, i);
	if (c->role == EB_ROLE_TARGET)
		return target_iter(c, st);
	return EB_OK;
}

static int write_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct write_state *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->rank, .epoch = c->epoch};

	if (c->role == EB_ROLE_TARGET)
		*wrong += eb_payload_check(c, &st->dst, 0, span(c, st), &p);
	return EB_OK;
}

static const struct eb_payload *write_landing(struct eb_ctx *c, size_t *off, size_t *len)
{
	*off = 0;
	*len = c->bytes;
	return &((struct write_state *)c->priv)->dst;
}

/* --rate: message rate. An iteration is one write of S; a phase posts them back to back with
 * --window in flight on channel 0, the target counts them all and acknowledges once, and t is
 * the phase over its writes (like OSU's osu_mbw_mr, fabtests' windowed fi_rma_bw). With
 * --check the phase is the same burst, each write into a slot of its own. */
static int rate_run(struct eb_ctx *c, long n, double *samples, long *got)
{
	struct write_state *st = c->priv;
	struct eb_engine *e = c->e;
	uint64_t t0 = eb_now_ns(), deadline = eb_deadline(c->o->fab.timeout_s * (double)(n + 2));
	const struct eb_rkey *k = eb_region_key(&st->dst.reg, c->peer, 0);
	struct eb_imm_wait w = {.peer = 0, .chan = 0};
	int rc;

	if (c->role == EB_ROLE_TARGET) {
		st->expect[0] += (uint64_t)n;
		w.count = st->expect[0];
		rc = eb_xfer_wait_imm(e, NULL, 0, &w, 1, deadline);
		return rc == EB_OK ? ack(c, st) : rc;
	}
	if (c->role != EB_ROLE_INIT)
		return EB_OK;
	eb_xfer_recv(&st->ack[c->peer], 0, c->peer, &st->ack_in[c->peer], sizeof(*st->ack_in),
		     sizeof(*st->ack_in), eb_region_desc(&st->acks, 0));
	st->all[0] = &st->ack[c->peer];
	rc = eb_xfer_step(st->all[0]);
	if (rc == EB_OK)
		rc = eb_xfer_burst_slots(
		    e, 0, c->peer, eb_payload_at(&st->src, (size_t)c->peer * st->slot), c->bytes,
		    eb_region_desc(&st->src.reg, 0), k->addr, k->key, EB_IMM(0, c->epoch), n,
		    (long)(span(c, st) / c->bytes), c->mem == EB_MEM_DEVICE ? 0 : EB_BURST_INJECT,
		    c->window, deadline);
	if (rc == EB_OK)
		rc = eb_xfer_wait(st->all, 1, deadline);
	/* One clock read ends the phase: its one sample is the phase over its writes. */
	if (rc == EB_OK && samples != NULL)
		samples[0] = (double)(eb_now_ns() - t0) * 1e-9 / (double)n;
	return rc;
}

static const struct eb_variant all_variants[] = {
    {{"Single", "SinglePin", "SingleDMA", "SingleStaged"}, EB_LAYOUT_SINGLE, EB_FLOW_PAIRS},
    {{"Split", "MultiPin", "MultiDMA", "MultiStaged"}, EB_LAYOUT_SPLIT, EB_FLOW_PAIRS},
    {{"RoundRobin", "RoundRobinPin", "RoundRobinDMA", "RoundRobinStaged"},
     EB_LAYOUT_RR,
     EB_FLOW_FANOUT},
};

static const struct eb_variant rate_variants[] = {
    {{"SingleRate", "SinglePinRate", "SingleDMARate", "SingleStagedRate"},
     EB_LAYOUT_SINGLE,
     EB_FLOW_PAIRS,
     0,
     EB_PT_SELF_TIMED | EB_PT_PHASE_TIMED},
};

static int write_variants(const struct eb_opts *o, const struct eb_variant **vars)
{
	if (((const struct wopts *)o->own)->rate) {
		*vars = rate_variants;
		return 1;
	}
	*vars = all_variants;
	return 3;
}

static void rate_figures(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *rec)
{
	if (!(m->pt->flags & EB_PT_SELF_TIMED))
		return;
	eb_rec_num(rec, "mmsg_per_s", m->all.mean > 0 ? 1e-6 / m->all.mean : 0.0);
	/* whether the burst injected its writes (rate_run) */
	eb_rec_bool(rec, "inject", c->mem != EB_MEM_DEVICE && m->pt->size <= c->e->lim.inject_rma);
}

static void write_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			 struct eb_rec *r)
{
	eb_sweep_record_own(c, m, s, r, rate_figures);
}

static const struct eb_sweep_def write_sweep = {.variants_of = write_variants};

static int write_finish(struct eb_opts *o, void *own)
{
	if (((struct wopts *)own)->rate && o->staged) {
		eb_err("--rate writes each message as it is; --staged is not supported with it");
		return EB_EINVAL;
	}
	return EB_OK;
}

static const struct eb_opt write_opts[] = {
    {"rate", 0, NULL, eb_opt_flag, EB_AT(struct wopts, rate), 0, 0,
     "message rate: every iteration is one write of S, a phase\n"
     "keeps --window of them in flight on channel 0 and is\n"
     "acknowledged once; t = phase / writes over --phases\n"
     "phases (no write is timed alone: per-write percentiles\n"
     "are null), Mmsg/s in JSON. The writes of a phase go round\n"
     "--window slots (with --check, a slot per write), up to\n"
     "64 MiB of them, and every slot is checked after the phase:\n"
     "each write in flight lands in bytes of its own. Writes of at\n"
     "most the provider's inject size (host memory) go by\n"
     "fi_inject_writedata, as raw-libfabric benchmarks send\n"
     "small messages: no completion each, the provider bounds\n"
     "those in flight (JSON: inject)"},
};

static const struct eb_bench write_bench = {
    .priv_size = sizeof(struct write_state),
    .metric = "t = first post to the acknowledgement that every chunk landed (--rate: the "
	      "phase over its writes); Gbps counts S (Single, Split) or S*(N-1) (RoundRobin) "
	      "bytes per t",
    EB_SWEEP_HOOKS,
    .plan = eb_sweep_plan,
    .sweep = &write_sweep,
    .facts = eb_sweep_facts,
    .record = write_record,
    EB_BENCH_HOOKS(write),
    .run = rate_run,
};

const struct eb_cmd eb_cmd_write = {
    .name = "write",
    .summary = "one-sided RDMA write + immediate data, rank 0 -> rank k",
    .help = "  one-sided fi_writedata, rank 0 -> rank k (k = 1..N-1); every chunk carries\n"
	    "  immediate data the target counts; t = first post until the target\n"
	    "  acknowledges that all chunks landed. Single and Split: one k at a time,\n"
	    "  averaged over pairs (each pair in JSON); RoundRobin: every k at once, peer k\n"
	    "  on channel k % channels. Gbps counts S bytes per t for Single and Split,\n"
	    "  S*(N-1) for RoundRobin",
    .groups = EB_G_FABRIC_BENCH | EB_G_PHASES,
    EB_CMD_OPTS(write_opts, struct wopts, NULL, write_finish),
    .bench = &write_bench,
    .report = EB_REPORT_DEFAULT,
};
