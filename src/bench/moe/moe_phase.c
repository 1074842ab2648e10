/* One dispatch or combine of efabench moe, by each initiator: producers (GPU blocks or CPU
 * threads) through the proxy threads, or the all-to-all-v baseline posting the same bytes as
 * one chunked write per destination on the harness's engine. A rank's step ends when its own
 * writes are complete and everything addressed to it has arrived. */
#define _GNU_SOURCE
#include "moe_state.h"
#include "efabench/layout.h"
#include "efabench/status.h"
#include "efabench/xfer.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "gpu/moe_kernels.h"
#endif

#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

static const char *const step_name[] = {"dispatch", "combine"};

int64_t eb_moe_piece(const struct eb_ctx *c, const struct mstate *st, int which)
{
	uint64_t n = eb_moe_piece_bytes(c, st) / (which ? st->plan.out_bytes : st->plan.tok_bytes);

	return n > 0 ? (int64_t)n : 1;
}

struct eb_moe_phase eb_moe_host_phase(const struct eb_ctx *c, const struct mstate *st, int which)
{
	const struct eb_moe_moves *m = which ? &st->plan.combine : &st->plan.dispatch;

	return (struct eb_moe_phase){m->off,
				     m->src,
				     m->packed,
				     m->len,
				     m->dst,
				     which ? 0 : st->plan.tok_bytes,
				     which ? (uint32_t)c->nranks : 0,
				     eb_moe_piece(c, st, which)};
}

int eb_moe_begin(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	const struct mopts *mo = st->mo;
	int k, rc = EB_OK;

	if (st->init == INIT_A2AV)
		return EB_OK;
	st->producers = st->init == INIT_GPU ? st->blocks
			: mo->producers > 0  ? mo->producers
					     : st->nq;
	st->w.producers = st->producers;
	st->w.tickets = st->init == INIT_GPU ? st->tickets_dev : st->tickets;
	/* Each initiator runs once on its own proxy threads: their signal words start at 0. */
	memset(st->expect, 0, sizeof(*st->expect) * 2 * (size_t)c->nranks);
	for (k = 0; k < st->nq; k++)
		st->w.d[k] = eb_proxy_dev(eb_moe_px(st, k));
	for (k = 0; k < st->npx && rc == EB_OK; k++)
		rc = eb_proxy_start(eb_moe_px(st, k));
	if (rc == EB_OK && st->init == INIT_CPU)
		rc = eb_moe_pool_start(&st->pool, st->producers, &st->w);
	return rc;
}

int eb_moe_end(struct eb_ctx *c, int failed)
{
	struct mstate *st = c->priv;
	int k, rc = EB_OK;

	if (st->init == INIT_A2AV)
		return EB_OK;
	for (k = 0; failed && k < st->npx; k++)
		if (eb_moe_px(st, k) != NULL)
			eb_proxy_abort(eb_moe_px(st, k));
	eb_moe_pool_stop(st->pool);
	st->pool = NULL;
	for (k = 0; k < st->npx; k++) {
		int r = eb_moe_px(st, k) != NULL ? eb_proxy_stop(eb_moe_px(st, k)) : EB_OK;

		if (rc == EB_OK)
			rc = r;
	}
	return rc;
}

uint64_t eb_moe_puts(const struct mstate *st)
{
	uint64_t n = 0;
	int k;

	for (k = 0; st->init != INIT_A2AV && k < st->nq; k++)
		n += eb_proxy_puts(eb_moe_px(st, k));
	return n;
}

/* What the proxy threads' signal words say source s sent here in this step's word. */
static uint64_t signalled(const struct mstate *st, unsigned word)
{
	uint64_t sum = 0;
	int k;

	for (k = 0; k < st->npx; k++)
		sum += atomic_load_explicit(
		    (_Atomic uint64_t *)&eb_proxy_signals(eb_moe_px(st, k))[word],
		    memory_order_acquire);
	return sum;
}

static uint64_t idle_ns(const struct mstate *st)
{
	uint64_t least = UINT64_MAX;
	int k;

	for (k = 0; k < st->npx; k++) {
		uint64_t n = eb_proxy_idle_ns(eb_moe_px(st, k));

		least = n < least ? n : least;
	}
	return least;
}

/* The first source still short of what it owes here, or -1. */
static int short_source(const struct eb_ctx *c, const struct mstate *st, int which)
{
	int s;

	for (s = 0; s < c->nranks; s++)
		if (s != c->rank && signalled(st, (unsigned)(which * c->nranks + s)) <
					st->expect[which * c->nranks + s])
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
static int producers_failed(const struct eb_ctx *c, const struct mstate *st, int which, int late)
{
	uint32_t bits = 0;
	size_t used = 0, k;
	char why[320] = "";

	for (k = 0; k < (size_t)st->nq; k++)
		bits |= eb_proxy_errors(eb_moe_px(st, (int)k));
	for (k = 0; k < sizeof(q_errors) / sizeof(q_errors[0]); k++)
		if ((bits & (1u << k)) && used < sizeof(why))
			used += (size_t)snprintf(why + used, sizeof(why) - used, "%s%s",
						 used ? "; " : "", q_errors[k]);
	if (late >= 0)
		eb_err("moe %s: producers failed (%s); nothing has come from rank %d for %.1f s",
		       step_name[which], used ? why : "a producer failed", late,
		       (double)idle_ns(st) * 1e-9);
	else
		eb_err("moe %s: producers failed (%s)", step_name[which],
		       used ? why : "a producer failed");
	(void)c;
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

static int proxied_step(struct eb_ctx *c, struct mstate *st, int which)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s), spins = 0;
	int s, done = 0, failed = 0, rc = EB_OK, late, own = own_by_rank(c, st);

	for (s = 0; s < c->nranks; s++)
		if (s != c->rank)
			st->expect[which * c->nranks + s] +=
			    (uint64_t)(which ? pl->back_from[s] : pl->recv_from[s]) +
			    (uint64_t)eb_moe_queues(&st->w) * EB_MOE_MARK;
	if (st->init == INIT_CPU) {
		st->w.ph = eb_moe_host_phase(c, st, which);
#ifdef EB_HAVE_CUDA
		if (st->have_dev)
			st->w.gph = st->dev[which];
#endif
		eb_moe_pool_go(st->pool);
	} else {
#ifdef EB_HAVE_CUDA
		st->w.ph = st->dev[which];
		st->w.own_by_rank = own; /* the kernel takes w by value: CPU producers see 0 */
		rc = eb_mk_launch(&st->w);
		st->w.own_by_rank = 0;
#else
		rc = EB_ENOTSUP;
#endif
		if (rc != EB_OK)
			return rc;
		if (own) {
			struct eb_moe_work hw = st->w;

			hw.ph = eb_moe_host_phase(c, st, which);
			hw.gather = NULL;
			(void)eb_moe_copy_items(&hw, 1, hw.ph.off[c->rank], hw.ph.off[c->rank + 1]);
		}
	}
	for (;;) {
		if (!done && (done = producers_done(st, &failed)) < 0)
			return done;
		late = short_source(c, st, which);
		if (done && failed)
			return producers_failed(c, st, which, late);
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
			if (late >= 0) {
				/* Each missing signal is a producer's item count plus the mark. */
				uint64_t miss = st->expect[which * c->nranks + late] -
						signalled(st, (unsigned)(which * c->nranks + late));

				eb_err("moe %s: timed out waiting for rank %d: %llu of its proxy "
				       "threads' "
				       "signals (%llu items) missing, nothing arrived for %.1f s",
				       step_name[which], late, (unsigned long long)(miss >> 32),
				       (unsigned long long)(miss & (EB_MOE_MARK - 1)),
				       (double)idle_ns(st) * 1e-9);
			} else {
				eb_err("moe %s: timed out waiting for this rank's producers",
				       step_name[which]);
			}
			rc = EB_ETIMEDOUT;
			break;
		}
	}
	for (s = 0; s < st->nq; s++) /* producers give up at once; the caller stops the rest */
		eb_proxy_abort(eb_moe_px(st, s));
	while (!done && producers_done(st, &failed) == 0)
		sched_yield();
	return rc;
}

/* The baseline: one chunked write per destination of the packed bytes, split over the
 * channels, and the chunks every source owes counted by immediate data. */
static int a2a_step(struct eb_ctx *c, struct mstate *st, int which)
{
	const struct eb_moe_plan *pl = &st->plan;
	const struct eb_moe_moves *m = which ? &pl->combine : &pl->dispatch;
	int k, rc = EB_OK;

	eb_a2av_begin(&st->a2a);
	for (k = 1; k <= c->nranks && rc == EB_OK; k++) {
		int p = (c->rank + k) % c->nranks;
		int64_t a = m->off[p], b = m->off[p + 1];
		uint64_t bytes = b > a ? m->packed[b - 1] + m->len[b - 1] - m->packed[a] : 0;
		uint64_t in =
		    which ? (uint64_t)st->rt.nsel[(size_t)c->rank * (size_t)c->nranks + (size_t)p] *
				pl->out_bytes
			  : (uint64_t)pl->recv_from[p] * pl->tok_bytes;
		struct eb_xfer *xs;

		if (p == c->rank) { /* its own block, contiguous as every other: one copy */
			if (bytes > 0)
				rc = eb_mem_copy(eb_payload_nic(&st->dst), m->dst[a],
						 eb_payload_nic(&st->src), m->packed[a], bytes);
			continue;
		}
		if (bytes > 0)
			(void)eb_a2av_write(&st->a2a, EB_LAYOUT_SPLIT, 0, c->rank, p,
					    eb_payload_at(&st->src, m->packed[a]), bytes,
					    st->src.reg.mr, eb_region_key(&st->dst.reg, p, 0),
					    m->dst[a], EB_IMM(c->rank, 0), &xs);
		eb_a2av_expect(&st->a2a, EB_LAYOUT_SPLIT, 0, c->rank, p, in);
	}
	return rc != EB_OK ? rc : eb_a2av_wait(&st->a2a, EB_DEADLINE_LAZY);
}

/* --staged: tokens and outputs live in GPU memory and the fabric moves pinned bounce buffers;
 * a phase copies what this rank sends to them before (tokens and their packed copies, or the
 * outputs) and what it received from them after (tokens, or outputs), inside its time. */
static int stage(struct mstate *st, int which, int received)
{
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t a, b;

	if (!st->src.staged)
		return EB_OK;
	if (!received) {
		a = which ? pl->out_off : pl->x_off;
		b = which ? pl->src_len : pl->out_off;
		return eb_mem_copy(&st->src.bounce, a, &st->src.pay, a, b - a);
	}
	a = which ? pl->back_off : pl->recv_off;
	b = which ? pl->dst_len : pl->back_off;
	return eb_mem_copy(&st->dst.pay, a, &st->dst.bounce, a, b - a);
}

static int step(struct eb_ctx *c, struct mstate *st, int which)
{
	int rc = stage(st, which, 0);

	if (rc == EB_OK)
		rc = st->init == INIT_A2AV ? a2a_step(c, st, which) : proxied_step(c, st, which);
	return rc == EB_OK ? stage(st, which, 1) : rc;
}

int eb_moe_iter(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	int rc = EB_OK;

	if (st->phase != PH_COMBINE)
		rc = step(c, st, 0);
	if (rc == EB_OK && st->phase != PH_DISPATCH)
		rc = step(c, st, 1);
	return rc;
}
