#define _GNU_SOURCE /* cpu_set_t for --proxy-cpu */
#include "proxy_state.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "mem/cuda_check.h"
#include "proxy_kernels.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the proxy thread runs: --proxy-cpu N, else (auto) a core of its own near the GPU
 * (the rank is bound to the GPU's NUMA node) when every spinning thread has one and nobody
 * bound the process; a launcher's or taskset's binding wins. */
static void choose_cpu(const struct eb_ctx *c, struct pstate *st, struct eb_proxy_opts *pxo)
{
	int want = eb_px_opts(c)->cpu;

	st->cpu = -1;
	if (want >= 0)
		st->cpu = want;
	else if (want == EB_CPU_NONE)
		snprintf(st->pin_why, sizeof(st->pin_why), "--proxy-cpu none");
	else if (c->user_bound)
		snprintf(st->pin_why, sizeof(st->pin_why), "the process was bound by its launcher");
	else if (c->e->yield)
		snprintf(st->pin_why, sizeof(st->pin_why), "fewer cores than spinning threads");
	else if ((st->cpu = eb_topo_helper_cpu(c->e->boot->local_rank)) < 0)
		snprintf(st->pin_why, sizeof(st->pin_why), "the CPU mask is unreadable");
	pxo->pin = st->cpu >= 0;
	pxo->cpu = st->cpu;
	if (st->cpu >= 0)
		snprintf(st->pin_why, sizeof(st->pin_why), "%s",
			 want >= 0 ? "--proxy-cpu" : "auto");
}

/* Rank 0's source and every target's buffer, registered and keys exchanged (collective); a
 * phase-timed phase's puts go round a slot per put in flight, with --check one per put, within
 * the cap (eb_px_span). */
static int buffers(struct eb_ctx *c, struct pstate *st, const struct popts *po,
		   struct eb_proxy_bufs *pb)
{
	int rc;

	st->slot = (size_t)c->o->sizes[c->o->nsizes - 1];
	st->spread = c->o->check && po->mode != MODE_LAT;
	if (po->mode != MODE_LAT) {
		long n = c->o->iters > c->o->warmup ? c->o->iters : c->o->warmup;
		size_t want = st->slot * (size_t)(st->spread ? n : po->active);

		want = want < EB_PX_SPREAD_BYTES ? want : EB_PX_SPREAD_BYTES;
		st->slot = want > st->slot ? want : st->slot;
	}
	if (c->rank == 0) {
		rc = eb_payload_alloc(c, &st->src, st->slot, "the put source");
		rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->src, EB_USE_SOURCE, 0);
		/* Rank 0 is never a target, but the key exchange is collective. */
		rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->dst, EB_USE_TARGET, 1);
		pb->src = eb_payload_at(&st->src, 0);
		pb->src_len = st->slot;
		pb->src_mrs = st->src.reg.mr;
	} else {
		rc = eb_payload_alloc(c, &st->dst, st->slot, "the put target");
		rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->dst, EB_USE_TARGET, 1);
	}
	pb->dst_len = st->slot;
	pb->dst_keys = st->dst.reg.rkeys;
	return rc;
}

/* Every rank learns how many producers "all SMs" means on rank 0. */
static int rank0_sms(struct eb_ctx *c, const struct popts *po, int *sms0)
{
	int32_t sms = 0, *all = calloc((size_t)c->nranks, sizeof(*all));
	int rc;

	if (all == NULL)
		return EB_ENOMEM;
#ifdef EB_HAVE_CUDA
	if (!po->on_cpu && c->rank == 0)
		sms = eb_gpu_sms();
#endif
	rc = eb_boot_allgather(c->e->boot, &sms, all, sizeof(sms), eb_engine_deadline(c->e));
	*sms0 = rc == EB_OK ? all[0] : 0;
	free(all);
	return rc;
}

int eb_px_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	const struct popts *po = eb_px_opts(c);
	struct pstate *st = c->priv;
	struct eb_proxy_opts pxo = {.layout = EB_LAYOUT_SINGLE,
				    .chunk = c->chunk,
				    .window = c->window,
				    .active = po->active,
				    .log2n = (uint32_t)po->log2n,
				    .batch = (uint32_t)po->batch,
				    .nsignals = 1,
				    .gpu = !po->on_cpu,
				    .timeout_s = c->o->fab.timeout_s,
				    .cuda_device = c->gpu,
				    .stall = po->stall_proxy,
				    .stamp_every = (uint32_t)c->o->stages_every,
				    .slow_ns = (uint32_t)po->slow_ns};
	struct eb_proxy_bufs pb = {0};
	int rc;

	st->window = c->window * e->nchan;
	st->x = eb_xfers_new(e, e->nchan, c->window);
	st->expect = calloc((size_t)e->nchan, sizeof(*st->expect));
	st->waits = calloc((size_t)e->nchan, sizeof(*st->waits));
	if (st->x == NULL || st->expect == NULL || st->waits == NULL)
		return EB_ENOMEM;
	rc = buffers(c, st, po, &pb);
	if (rc == EB_OK)
		rc = rank0_sms(c, po, &st->sms0);
	choose_cpu(c, st, &pxo);
	/* a sampled put's stamps wait in a ring until the phase ends: room for a phase's */
	pxo.nstamps = (uint32_t)((c->o->iters > c->o->warmup ? c->o->iters : c->o->warmup) /
				     (pxo.stamp_every > 0 ? pxo.stamp_every : 1) +
				 64);
	if (rc == EB_OK)
		rc = eb_proxy_open(&st->px, e, &pb, &pxo);
	return rc;
}

void eb_px_teardown(struct eb_ctx *c)
{
	struct pstate *st = c->priv;

	eb_proxy_close(st->px);
	eb_xfers_free(st->x, c->e->nchan);
	eb_payload_free(&st->src);
	eb_payload_free(&st->dst);

	free(st->expect);
	free(st->waits);
}

/* Every put of a phase carries the same S bytes to offset 0 (checked phase-timed phases: to a
 * slot of its own, eb_px_span): fill, poison, reset the signal. */
int eb_px_prepare(struct eb_ctx *c)
{
	struct pstate *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->peer, .epoch = c->epoch};
	int ch;

	if (c->var == NULL) /* the floor moves no payload */
		return EB_OK;
	if (c->role == EB_ROLE_INIT)
		return eb_payload_fill(c, &st->src, 0, eb_px_span(c, st), &p);
	if (c->role != EB_ROLE_TARGET)
		return EB_OK;
	/* Nothing is in flight before the barrier that follows: count this phase's arrivals
	 * from here (the proxy's writes count too). */
	for (ch = 0; ch < c->e->nchan; ch++)
		st->expect[ch] = eb_imm_count(c->e, 0, ch);
	eb_proxy_signals(st->px)[0] = 0;
	p.dst = (uint32_t)c->rank;
	p.epoch = EB_EPOCH_POISON;
	return eb_payload_fill(c, &st->dst, 0, eb_px_span(c, st), &p);
}

int eb_px_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct pstate *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->rank, .epoch = c->epoch};

	if (c->role == EB_ROLE_TARGET && c->var != NULL)
		*wrong += eb_payload_check(c, &st->dst, 0, eb_px_span(c, st), &p);
	return EB_OK;
}

const struct eb_payload *eb_px_landing(struct eb_ctx *c, size_t *off, size_t *len)
{
	*off = 0;
	*len = c->bytes;
	return &((struct pstate *)c->priv)->dst;
}
