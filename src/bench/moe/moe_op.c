/* One dispatch or combine of efabench moe, by each initiator: producers (GPU blocks or CPU
 * threads) through the proxy threads, or the all-to-all-v baseline posting the same bytes as
 * one chunked write per destination on the harness's engine. A rank's step ends when its own
 * writes are complete and everything addressed to it has arrived. */
#define _GNU_SOURCE
#include "moe_op.h"
#include "moe_mpi.h"
#include "moe_stages.h"
#include "efabench/layout.h"
#include "efabench/status.h"
#include "efabench/xfer.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "moe_kernels.h"
#endif

#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct eb_moe_items eb_moe_host_items(const struct eb_ctx *c, const struct mstate *st, int which,
				      int leg)
{
	const struct eb_moe_leg *g = &st->plan.leg[which][leg];
	uint32_t word = (uint32_t)(which * 2 + leg);

	return (struct eb_moe_items){.off = g->off,
				     .src = g->src,
				     .packed = g->packed,
				     .len = g->len,
				     .dst = g->dst,
				     .rows = g->rows,
				     .first = g->first,
				     .row_at = g->row_at,
				     .row_w = g->row_w,
				     .same = g->same,
				     .sig = word * (uint32_t)c->nranks,
				     .flag = word * (uint32_t)c->nranks * EB_MOE_MAX_Q,
				     .from_dst = g->from_dst,
				     .piece = st->pieces[which]};
}

/* Where the current initiator's producers reach same-host peers: GPU blocks through the
 * peers' GPU addresses (arrays in GPU memory), CPU threads through their own mappings, or
 * through kernels over GPU memory. */
static void aim(struct eb_ctx *c, struct mstate *st)
{
	const struct mpeers *pe = &st->peers;

	st->w.gpeer = pe->gpu;
	if (st->init == INIT_GPU) {
		st->w.peer = pe->gpu_dev;
		st->w.peer_flags = pe->fgpu_dev;
	} else {
		st->w.peer = c->mem == EB_MEM_DEVICE ? pe->gpu : pe->cpu;
		st->w.peer_flags = pe->fcpu;
	}
}

/* Where each producer stamps the moments it pushed its fabric puts and made all of a leg, and
 * its time making (--stages): host memory for CPU threads, mapped host memory for GPU blocks. */
static int made_stamps(struct mstate *st)
{
	st->made = st->w.made = NULL;
	if (st->init == INIT_CPU) {
		st->made = st->w.made = calloc(3 * (size_t)st->producers, sizeof(*st->made));
		if (st->made == NULL)
			eb_err("out of memory for %d producers' stamps", st->producers);
		return st->made != NULL ? EB_OK : EB_ENOMEM;
	}
#ifdef EB_HAVE_CUDA
	return eb_mk_stamps(&st->made, &st->w.made, 3 * (size_t)st->producers) == 0 ? EB_OK
										    : EB_ESYS;
#else
	return EB_OK;
#endif
}

int eb_moe_begin(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	struct eb_proxy **px;
	int k, rc = EB_OK;

	st->puts_mark = 0;
	st->px = NULL;
	if (!INIT_PROXIED(st->init))
		return EB_OK;
	px = st->px = st->side[st->init].px;
	st->producers = st->init == INIT_GPU ? st->blocks : st->cpu_producers;
	st->w.producers = st->producers;
	st->w.tickets = st->init == INIT_GPU ? st->tickets_dev : st->tickets;
	aim(c, st);
	/* Each initiator runs once on its own proxy threads: their signal words start at 0. */
	memset(st->expect, 0, sizeof(*st->expect) * 4 * (size_t)c->nranks);
	for (k = 0; k < st->nq; k++)
		st->w.d[k] = eb_proxy_dev(px[k]);
	st->queues = eb_moe_queues(&st->w);
	for (k = 0; k < st->npx && rc == EB_OK; k++)
		rc = eb_proxy_start(px[k]);
	if (rc == EB_OK && c->o->stages_every > 0)
		rc = made_stamps(st);
	if (rc == EB_OK && st->init == INIT_CPU)
		rc = eb_moe_pool_start(&st->pool, st->producers, &st->w);
	st->puts_mark = eb_moe_puts(st);
	return rc;
}

int eb_moe_end(struct eb_ctx *c, int failed)
{
	struct mstate *st = c->priv;
	struct eb_proxy **px = st->px;
	int k, rc = EB_OK;

	if (px == NULL)
		return EB_OK;
	for (k = 0; failed && k < st->npx; k++)
		if (px[k] != NULL)
			eb_proxy_abort(px[k]);
	eb_moe_pool_stop(st->pool);
	st->pool = NULL;
	if (st->init == INIT_CPU)
		free(st->made);
#ifdef EB_HAVE_CUDA
	else
		eb_mk_free_stamps(st->made);
#endif
	st->made = st->w.made = NULL;
	for (k = 0; k < st->npx; k++) {
		int r = px[k] != NULL ? eb_proxy_stop(px[k]) : EB_OK;

		if (rc == EB_OK)
			rc = r;
	}
	return rc;
}

uint64_t eb_moe_puts(const struct mstate *st)
{
	uint64_t n = 0;
	int k;

	for (k = 0; st->px != NULL && k < st->nq; k++)
		n += eb_proxy_puts(st->px[k]);
	return n;
}

/* What the proxy threads' signal words say source s sent here in this step's word. */
static uint64_t signalled(const struct mstate *st, unsigned word)
{
	uint64_t sum = 0;
	int k;

	for (k = 0; k < st->npx; k++)
		sum += atomic_load_explicit((_Atomic uint64_t *)&eb_proxy_signals(st->px[k])[word],
					    memory_order_acquire);
	return sum;
}

static uint64_t idle_ns(const struct mstate *st)
{
	uint64_t least = UINT64_MAX;
	int k;

	for (k = 0; k < st->npx; k++) {
		uint64_t n = eb_proxy_idle_ns(st->px[k]);

		least = n < least ? n : least;
	}
	return least;
}

/* Whether source s has told this rank it is done with the current leg: the flags its proxy
 * threads' producers store here (a same-host peer), or the signals that came through the
 * fabric. */
static int told(const struct eb_ctx *c, const struct mstate *st, int word, int s)
{
	const uint64_t *f = st->peers.flags.ptr;
	int q;

	if (st->plan.path[s] != EB_PATH_INTRA)
		return signalled(st, (unsigned)(word * c->nranks + s)) >=
		       st->expect[word * c->nranks + s];
	f += ((size_t)word * (size_t)c->nranks + (size_t)s) * EB_MOE_MAX_Q;
	for (q = 0; q < st->queues; q++)
		if (atomic_load_explicit((_Atomic uint64_t *)&f[q], memory_order_acquire) <
		    st->w.items.seq)
			return 0;
	return 1;
}

/* The first source still short of what it owes here, or -1. */
static int short_source(const struct eb_ctx *c, const struct mstate *st, int word)
{
	int s;

	for (s = 0; s < c->nranks; s++)
		if (s != c->rank && !told(c, st, word, s))
			return s;
	return -1;
}

static int producers_done(struct mstate *st, int *failed)
{
	if (st->init == INIT_CPU)
		return eb_moe_pool_done(st->pool, failed);
#ifdef EB_HAVE_CUDA
	return eb_mk_done(failed);
#else
	return EB_ENOTSUP;
#endif
}

/* The producers' error bits in words (EB_Q_ERR_*, lowest first). */
static const char *const q_errors[] = {
    "a producer gave up waiting for room in the queue",
    "a quiet gave up waiting for this rank's writes to complete",
    "a put or signal outside the buffers was refused",
    "a signal wait gave up at its deadline",
    "a proxy thread failed (it said why above)",
};

/* Producers failed: say why, and who this rank still waits for (a quiet that gives up at its
 * deadline most often means a peer stopped taking writes). */
static int producers_failed(const struct mstate *st, const char *step, int late)
{
	uint32_t bits = 0;
	size_t used = 0, k;
	char why[320] = "";

	for (k = 0; k < (size_t)st->nq; k++)
		bits |= eb_proxy_errors(st->px[k]);
	for (k = 0; k < sizeof(q_errors) / sizeof(q_errors[0]); k++)
		if ((bits & (1u << k)) && used < sizeof(why))
			used += (size_t)snprintf(why + used, sizeof(why) - used, "%s%s",
						 used ? "; " : "", q_errors[k]);
	if (late >= 0)
		eb_err("moe %s: producers failed (%s); nothing has come from rank %d for %.1f s",
		       step, used ? why : "a producer failed", late, (double)idle_ns(st) * 1e-9);
	else
		eb_err("moe %s: producers failed (%s)", step, used ? why : "a producer failed");
	return EB_EFABRIC;
}

/* Whether the rank's thread copies its own items while GPU blocks post: decode over host
 * memory, where blocks copying token by token across PCIe took longer than the rank's memcpy
 * of them. Prefill's own block, tens of MB, stays with the blocks: one CPU thread copying it
 * could outlast the writes. */
static int own_by_rank(const struct eb_ctx *c, const struct mstate *st)
{
	return !st->w.coalesce && (c->mem != EB_MEM_DEVICE || c->staged);
}

/* Start the producers on a leg; the rank's thread makes its own items where it should. */
static int launch(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	int own = own_by_rank(c, st), rc = EB_OK;

	if (st->init == INIT_CPU) {
		st->w.items = eb_moe_host_items(c, st, which, leg);
		st->w.items.seq = st->runs[which][leg];
#ifdef EB_HAVE_CUDA
		if (st->have_dev)
			st->w.gitems = st->dev[which][leg];
#endif
		eb_moe_pool_go(st->pool);
		return EB_OK;
	}
#ifdef EB_HAVE_CUDA
	st->w.items = st->dev[which][leg];
	st->w.items.seq = st->runs[which][leg];
	st->w.own_by_rank = own; /* the kernel takes w by value: CPU producers see 0 */
	rc = eb_mk_launch(&st->w);
	st->w.own_by_rank = 0;
#else
	rc = EB_ENOTSUP;
#endif
	if (rc == EB_OK && own) {
		struct eb_moe_work hw = st->w;

		hw.items = eb_moe_host_items(c, st, which, leg);
		hw.gather = NULL;
		(void)eb_moe_make(&hw, hw.dst, hw.items.dst, hw.items.off[c->rank],
				  hw.items.off[c->rank + 1]);
	}
	return rc;
}

/* A source that went quiet past the deadline: who, and what is missing. */
static void say_late(const struct eb_ctx *c, const struct mstate *st, int word, int late,
		     const char *step)
{
	if (late >= 0 && st->plan.path[late] != EB_PATH_INTRA) {
		/* Each missing signal is a producer's item count plus the mark. */
		uint64_t miss = st->expect[word * c->nranks + late] -
				signalled(st, (unsigned)(word * c->nranks + late));

		eb_err("moe %s: timed out waiting for rank %d: %llu of its proxy threads' signals "
		       "(%llu items) missing, nothing arrived for %.1f s",
		       step, late, (unsigned long long)(miss >> 32),
		       (unsigned long long)(miss & (EB_MOE_MARK - 1)), (double)idle_ns(st) * 1e-9);
	} else if (late >= 0) {
		eb_err("moe %s: timed out waiting for rank %d (same host): its producers never "
		       "said they were done",
		       step, late);
	} else {
		eb_err("moe %s: timed out waiting for this rank's producers", step);
	}
}

static int proxied_leg(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	static const char *const steps[2][2] = {{"dispatch", "dispatch (forwarding)"},
						{"combine", "combine (forwarding)"}};
	const char *step = steps[which][leg];
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s), spins = 0;
	int s, done = 0, sent = 0, failed = 0, rc = EB_OK, late, word = which * 2 + leg;

	st->runs[which][leg]++;
	for (s = 0; s < c->nranks; s++)
		if (s != c->rank)
			st->expect[word * c->nranks + s] +=
			    (uint64_t)st->plan.leg[which][leg].in[s].items +
			    (uint64_t)st->queues * EB_MOE_MARK;
	rc = launch(c, st, which, leg);
	if (rc != EB_OK)
		return rc;
	for (;;) {
		if (!done && (done = producers_done(st, &failed)) < 0)
			return done;
		if (done && !sent) {
			if ((rc = eb_moe_stamp_made(c, st, which, leg)) != EB_OK)
				return rc;
			eb_moe_stamp(c, st, which, MOE_AT_SENT, leg);
			sent = 1;
		}
		late = short_source(c, st, word);
		if (done && failed)
			return producers_failed(st, step, late);
		if (done && late < 0)
			return EB_OK;
		if ((++spins & 255) != 0) {
			sched_yield();
			continue;
		}
		if ((rc = eb_boot_check(c->boot)) != EB_OK)
			break;
		/* A stopped peer is alive to the bootstrap: judge it by what arrives. */
		if (eb_now_ns() > deadline && idle_ns(st) > (uint64_t)(c->o->fab.timeout_s * 1e9)) {
			say_late(c, st, word, late, step);
			rc = EB_ETIMEDOUT;
			break;
		}
	}
	for (s = 0; s < st->nq; s++) /* producers give up at once; the caller stops the rest */
		eb_proxy_abort(st->px[s]);
	while (!done && producers_done(st, &failed) == 0)
		sched_yield();
	return rc;
}

/* The baseline: per leg, one chunked write per destination of the packed bytes, split over
 * the channels, and the chunks every source owes counted by immediate data. */
static int a2a_leg(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	const struct eb_moe_leg *g = &st->plan.leg[which][leg];
	struct eb_mem *to = eb_payload_nic(&st->dst), *from = eb_payload_nic(&st->src);
	const char *src = eb_payload_at(&st->src, 0);
	int k, rc = EB_OK;

	eb_a2av_begin(&st->a2a);
	for (k = 1; k <= c->nranks && rc == EB_OK; k++) {
		int p = (c->rank + k) % c->nranks;
		int64_t a = g->off[p], b = g->off[p + 1];
		uint64_t bytes = b > a ? g->packed[b - 1] + g->len[b - 1] - g->packed[a] : 0;
		uint64_t in = g->in[p].bytes;
		struct eb_xfer *xs;

		if (p == c->rank) { /* its own block, contiguous as every other: one copy */
			if (bytes > 0)
				rc = eb_mem_copy(to, g->dst[a], from, g->packed[a], bytes);
			continue;
		}
		if (bytes > 0)
			(void)eb_a2av_write(&st->a2a, EB_LAYOUT_SPLIT, 0, c->rank, p,
					    src + g->packed[a], bytes, st->src.reg.mr,
					    eb_region_key(&st->dst.reg, p, 0), g->dst[a],
					    EB_IMM(c->rank, 0), &xs);
		eb_a2av_expect(&st->a2a, EB_LAYOUT_SPLIT, 0, c->rank, p, in);
	}
	eb_moe_stamp(c, st, which, MOE_AT_SENT, leg);
	return rc != EB_OK ? rc : eb_a2av_wait(&st->a2a, EB_DEADLINE_LAZY);
}

/* --staged: tokens and outputs live in GPU memory and the fabric moves pinned bounce buffers;
 * an op copies what this rank sends to them before (its tokens or outputs, and the op's
 * packing areas, which the a2av sends from) and what it received from them after, inside its
 * time. */
static int stage(struct mstate *st, int which, int received)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t pack0 = pl->leg[0][0].pack_off, pack1 = pl->leg[1][0].pack_off, a, b;
	int rc;

	if (!st->src.staged)
		return EB_OK;
	if (received) {
		a = pl->in_off[which][0];
		b = which ? pl->dst_len : pl->in_off[1][0];
		return eb_mem_copy(&st->dst.pay, a, &st->dst.bounce, a, b - a);
	}
	a = which ? pl->out_off : pl->x_off;
	b = which ? pack0 : pl->out_off;
	rc = eb_mem_copy(&st->src.bounce, a, &st->src.pay, a, b - a);
	a = which ? pack1 : pack0;
	b = which ? pl->src_len : pack1;
	return rc != EB_OK ? rc : eb_mem_copy(&st->src.bounce, a, &st->src.pay, a, b - a);
}

/* One op, every leg; *cross gets the seconds of the leg that crosses between hosts. */
static int step(struct eb_ctx *c, struct mstate *st, int which, double *cross)
{
	int leg, rc;

	eb_moe_stamp(c, st, which, MOE_AT_START, 0);
	rc = stage(st, which, 0);
	for (leg = 0; leg < st->plan.nlegs && rc == EB_OK; leg++) {
		uint64_t t0 = leg == st->plan.cross_leg[which] ? eb_now_ns() : 0;

		rc = st->init == INIT_A2AV  ? a2a_leg(c, st, which, leg)
		     : st->init == INIT_MPI ? eb_moe_mpi_leg(c, st, which, leg)
					    : proxied_leg(c, st, which, leg);
		if (rc == EB_OK)
			eb_moe_stamp(c, st, which, MOE_AT_IN, leg);
		if (leg == st->plan.cross_leg[which])
			*cross += (double)(eb_now_ns() - t0) * 1e-9;
	}
	return rc == EB_OK ? stage(st, which, 1) : rc;
}

int eb_moe_iter(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	double cross = 0;
	int rc = EB_OK;

	eb_moe_stamp_next(c, st);
	if (st->op != OP_COMBINE)
		rc = step(c, st, 0, &cross);
	if (rc == EB_OK && st->op != OP_DISPATCH)
		rc = step(c, st, 1, &cross);
	if (rc == EB_OK && st->crossed[st->op])
		eb_span(c, MOE_SPAN_CROSS, cross);
	return rc;
}
