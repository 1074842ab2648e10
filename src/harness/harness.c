#include "harness.h"
#include "handover.h"
#include "loop.h"
#include "efabench/size.h"
#include "efabench/topo.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/ticks.h"
#include "core/log.h"
#include "report/progress.h"

#include <rdma/fabric.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Idle ranks wait at the end of a phase while a pair works; every wait of the pair is itself
 * bounded by the timeout, so this bounds the phase. */
static uint64_t phase_deadline(const struct eb_ctx *c, long iters)
{
	return eb_deadline(c->o->fab.timeout_s * (double)(iters + 2));
}

/* The hooks the one loop calls, over a benchmark and its context. */
struct hooked {
	const struct eb_bench *b;
	struct eb_ctx *c;
};

static int h_prepare(void *arg)
{
	struct hooked *h = arg;

	h->c->epoch++;
	return h->b->prepare(h->c);
}

static int h_align(void *arg)
{
	struct hooked *h = arg;

	return eb_boot_barrier(h->c->e->boot, eb_engine_deadline(h->c->e));
}

static int h_iter(void *arg, long i)
{
	struct hooked *h = arg;

	return h->b->iter(h->c, i);
}

static int h_run(void *arg, long n, double *samples, long *got)
{
	struct hooked *h = arg;

	*got = h->c->var->tag & EB_PHASE_TIMED ? 1 : n;
	return h->b->run(h->c, n, samples);
}

/* Testing aid: flip a byte of what just landed (in the payload, GPU memory included). */
static void h_corrupt(void *arg, long i)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;
	const struct eb_payload *p;
	size_t off = 0;

	if ((c->role != EB_ROLE_TARGET && c->role != EB_ROLE_ALL) || c->bytes == 0)
		return;
	p = h->b->landing(c, &off);
	if (p != NULL)
		eb_mem_flip(&p->pay, off + (uint64_t)c->o->corrupt_at % c->bytes);
}

static int h_verify(void *arg, uint64_t *wrong)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;
	uint64_t t0 = eb_now_ns();

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	*wrong += h->b->verify(c);
	eb_dbg("checked %zu bytes of %s memory in %.3f ms", c->bytes, eb_mem_kind_name(c->mem),
	       (double)(eb_now_ns() - t0) * 1e-6);
	return EB_OK;
}

/* One phase through the one loop: prepare, align every rank with a barrier, iters timed
 * iterations, verify; then every rank learns the wrong words of all. samples (may be NULL)
 * receives each iteration's seconds. */
static int phase(const struct eb_bench *b, struct eb_ctx *c, long iters, double *samples,
		 uint64_t *wrong)
{
	struct hooked h = {b, c};
	/* A bench that times itself (GPU clocks, one launch for many iterations) gets the whole
	 * phase at once, or one iteration at a time with --check. */
	int self = b->run != NULL && (b->iter == NULL || (c->var->tag & EB_SELF_TIMED));
	struct eb_loop l = {.arg = &h,
			    .prepare = h_prepare,
			    .align = h_align,
			    .iter = self ? NULL : h_iter,
			    .run = self ? h_run : NULL,
			    .after = c->o->corrupt_at >= 0 ? h_corrupt : NULL,
			    .verify = h_verify,
			    /* a phase-timed phase stays whole: the bench checks each iteration */
			    .check = c->o->check && !(c->var->tag & EB_PHASE_TIMED)};
	uint64_t mine = 0;
	int64_t total = 0;
	int rc;

	c->iters = iters;
	rc = eb_loop_phase(&l, iters, samples, NULL, &mine);
	if (rc != EB_OK)
		return rc;
	if (mine > 0)
		eb_err("%llu wrong words received (%s %s, %zu bytes)", (unsigned long long)mine,
		       c->o->cmd->name, c->var->name[c->sel], c->bytes);
	if (c->o->stop_rank == c->rank && samples != NULL) /* testing aid: a hung rank */
		raise(SIGSTOP);
	/* Collective, so every rank fails together. */
	rc = eb_boot_allreduce(c->e->boot, (int64_t)mine, EB_SUM, &total, phase_deadline(c, iters));
	*wrong = (uint64_t)total;
	return rc;
}

static int group_count(enum eb_flow p, int nranks)
{
	return p == EB_FLOW_PAIRS ? nranks - 1 : p == EB_FLOW_ALL ? nranks : 1;
}

static void set_roles(struct eb_ctx *c, int group)
{
	switch (c->var->flow) {
	case EB_FLOW_PAIRS:
		c->role = c->rank == 0		 ? EB_ROLE_INIT
			  : c->rank == group + 1 ? EB_ROLE_TARGET
						 : EB_ROLE_IDLE;
		c->peer = c->rank == 0 ? group + 1 : c->rank == group + 1 ? 0 : -1;
		break;
	case EB_FLOW_FANOUT:
		c->role = c->rank == 0 ? EB_ROLE_INIT : EB_ROLE_TARGET;
		c->peer = c->rank == 0 ? -1 : 0;
		break;
	case EB_FLOW_ALL:
		c->role = EB_ROLE_ALL;
		c->peer = -1;
		break;
	}
}

static void scale(struct eb_stats *s, double f)
{
	s->mean *= f;
	s->min *= f;
	s->p50 *= f;
	s->p99 *= f;
	s->max *= f;
	s->stddev *= f;
}

/* Iterations in timed phase k of a variant timed by the phase (the first ones get the rest). */
static long phase_len(const struct eb_opts *o, long nph, long k)
{
	return o->iters / nph + (k < o->iters % nph ? 1 : 0);
}

/* A phase-timed group's mean: its phases' seconds per iteration, weighted by their lengths. */
static double weighted(const struct eb_opts *o, const double *s, long nph)
{
	double sum = 0.0;
	long k;

	for (k = 0; k < nph; k++)
		sum += s[k] * (double)phase_len(o, nph, k);
	return sum / (double)o->iters;
}

/* Rank 0: the point's statistics from every group's samples (stride: iters), ns each, and the
 * benchmark's figures. */
static void summarise(const struct eb_bench *b, const struct eb_ctx *c, const struct eb_run *run,
		      struct eb_point *p, double *pooled, long ns)
{
	double half = b->one_way ? 0.5 : 1.0, cap, mean = 0.0;
	size_t stride = (size_t)c->o->iters;
	int g;

	for (g = 0; g < p->ngroups; g++) {
		double *s = pooled + (size_t)g * stride;
		double w = p->phases > 0 ? weighted(c->o, s, ns) : 0.0; /* before the sort */

		eb_stats_compute(s, (size_t)ns, &p->groups[g]);
		if (p->phases > 0)
			p->groups[g].mean = w;
		mean += w / p->ngroups;
		scale(&p->groups[g], half);
	}
	/* the groups side by side: compact them first where a group has fewer than stride */
	for (g = 1; g < p->ngroups && (size_t)ns < stride; g++)
		memmove(pooled + (size_t)g * (size_t)ns, pooled + (size_t)g * stride,
			sizeof(*pooled) * (size_t)ns);
	eb_stats_compute(pooled, (size_t)ns * (size_t)p->ngroups, &p->all);
	if (p->phases > 0)
		p->all.mean = mean;
	scale(&p->all, half);
	p->t_s = p->all.mean;
	p->bytes = eb_variant_bytes(c->var, p->size, c->nranks);
	p->gbps = p->t_s > 0 ? 8.0 * p->bytes / p->t_s / 1e9 : 0.0;
	cap = run->link_gbps * run->vars[p->var].nics;
	p->busbw = cap > 0 ? 100.0 * p->gbps / cap : -1.0;
	if (b->extra != NULL)
		b->extra(c, p, &p->own);
}

/* What the progress line weighs a (size, variant) by: its bytes moved, plus a fixed cost per
 * iteration (about what a 64 KiB write takes), so that small sizes count too. */
static double point_work(const struct eb_opts *o, uint64_t size)
{
	return (double)(o->warmup + o->iters) * ((double)size + 65536.0);
}

/* A (size, variant)'s timed phases: those timed by the phase get --phases (at least
 * --rounds), the others one per round; phase k runs phase_len(o, n, k) iterations. */
static long timed_phases(const struct eb_ctx *c)
{
	const struct eb_opts *o = c->o;
	long n = o->rounds;

	if ((c->var->tag & EB_PHASE_TIMED) && o->phases > n)
		n = o->phases;
	return n < o->iters ? n : o->iters;
}

/* Where phase k's samples start: its index when timed by the phase, else its first
 * iteration. */
static long sample_at(const struct eb_ctx *c, long nph, long k)
{
	long iters = c->o->iters, rest = iters % nph;

	if (c->var->tag & EB_PHASE_TIMED)
		return k;
	return k * (iters / nph) + (k < rest ? k : rest);
}

/* Round r of one (size, variant) for every group of ranks: the warm-up in round 0, then the
 * round's share of the timed phases. Samples go to pooled (rank 0, one stride of iters per
 * group) or to samples (every rank in all-rank flows; scratch for the others). */
static int run_round(const struct eb_bench *b, struct eb_ctx *c, struct eb_point *res, long r,
		     double *samples, double *pooled)
{
	const struct eb_opts *o = c->o;
	long nph = timed_phases(c), k;
	uint64_t wrong;
	int g, rc;

	if (o->rounds > 1 && c->rank == 0)
		eb_dbg("round %ld of %ld: %s, %zu bytes", r + 1, o->rounds, c->var->name[c->sel],
		       c->bytes);
	if (r == 0) {
		res->ngroups = group_count(c->var->flow, c->nranks);
		res->phases = c->var->tag & EB_PHASE_TIMED ? (int)nph : 0;
	}
	/* In ALL every rank measures: one pass over the group gathers everyone's samples. */
	for (g = 0; g < (c->var->flow == EB_FLOW_ALL ? 1 : res->ngroups); g++) {
		double *s = c->var->flow != EB_FLOW_ALL && c->rank == 0
				? pooled + (size_t)g * (size_t)o->iters
				: samples;

		set_roles(c, g);
		if (r == 0) {
			rc = phase(b, c, o->warmup, NULL, &wrong);
			if (rc != EB_OK)
				return rc;
			res->wrong += wrong;
		}
		for (k = r * nph / o->rounds; k < (r + 1) * nph / o->rounds; k++) {
			rc = phase(b, c, phase_len(o, nph, k), s + sample_at(c, nph, k), &wrong);
			if (rc != EB_OK)
				return rc;
			res->wrong += wrong;
		}
	}
	return EB_OK;
}

/* After a (size, variant)'s last round: every rank's samples to all (all-rank flows), then
 * rank 0's figures. */
static int finish_point(const struct eb_bench *b, struct eb_ctx *c, const struct eb_run *run,
			struct eb_point *res, double *samples, double *pooled)
{
	long ns = c->var->tag & EB_PHASE_TIMED ? timed_phases(c) : c->o->iters;
	int rc = EB_OK;

	if (c->var->flow == EB_FLOW_ALL)
		rc = eb_boot_allgather(c->e->boot, samples, pooled,
				       sizeof(*samples) * (size_t)c->o->iters,
				       eb_engine_deadline(c->e));
	if (rc == EB_OK && c->rank == 0)
		summarise(b, c, run, res, pooled, ns);
	return rc;
}

/* A benchmark that drives the loop itself: its GPU, the engine where it uses the fabric. */
static int drive(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_ctx c = {.o = o,
			   .boot = boot,
			   .rank = boot != NULL ? boot->rank : 0,
			   .nranks = boot != NULL ? boot->size : 1,
			   .peer = -1};
	struct eb_fabric_opts fab = o->fab;
	struct eb_engine e;
	int rc = eb_harness_pick_gpu(&c, boot);

	if (rc != EB_OK)
		return rc;
	if (b->uses & EB_USES_FABRIC) {
		(void)eb_ticks_init();
		fab.near_pci = c.gpu_pci[0] ? c.gpu_pci : NULL;
		rc = eb_engine_open(&e, boot, &fab);
		if (rc != EB_OK)
			return rc;
		c.e = &e;
		e.misplace_chunk = (size_t)o->misplace_chunk;
		eb_harness_tune(o, e.prov, &c.chunk, &c.window);
	}
	rc = b->drive(&c);
	if (c.e != NULL) {
		if (rc != EB_OK)
			eb_engine_abandon(&e);
		eb_engine_close(&e);
	}
	return rc;
}

/* A benchmark on the harness's sweep: every size, every variant, every group of ranks. */
static int sweep(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c = {
	    .o = o, .boot = boot, .rank = boot->rank, .nranks = boot->size, .peer = -1};
	struct eb_handover sh = {.run = {.metric = b->metric, .ranks = boot->size}};
	struct eb_run *run = &sh.run;
	struct eb_progress prog = {0};
	struct eb_fabric_opts fab;
	double *samples = NULL, *pooled = NULL;
	uint64_t wrong_total = 0;
	/* Taking turns, every variant keeps its samples until its last round. */
	size_t nbuf, per = (size_t)o->iters;
	int file_rc = EB_OK, s, v, rc;
	long r;

	if (boot->size < 2) {
		if (boot->rank == 0)
			eb_err("%s needs at least 2 ranks; got %d", o->cmd->name, boot->size);
		return EB_EINVAL;
	}
	rc = eb_harness_pick_gpu(&c, boot);
	if (rc != EB_OK)
		return rc;
	(void)eb_ticks_init();
	fab = o->fab;
	fab.near_pci = c.gpu_pci[0] ? c.gpu_pci : NULL;
	rc = eb_engine_open(&e, boot, &fab);
	if (rc != EB_OK)
		return rc;
	c.e = &e;
	e.misplace_chunk = (size_t)o->misplace_chunk;
	eb_harness_tune(o, e.prov, &c.chunk, &c.window);
	eb_handover_run(&c, &sh);
	eb_handover_vars(b, &c, &sh);
	rc = eb_handover_points(run);
	nbuf = o->rounds > 1 ? (size_t)run->nvars : 1;
	samples = calloc(nbuf * per, sizeof(*samples));
	pooled = calloc(nbuf * per * (size_t)boot->size, sizeof(*pooled));
	sh.gpus = calloc((size_t)boot->size, sizeof(*sh.gpus));
	run->gpus = sh.gpus;
	if (rc != EB_OK || samples == NULL || pooled == NULL || sh.gpus == NULL) {
		eb_err("out of memory for results");
		rc = EB_ENOMEM;
		goto free_results;
	}
	if (c.staged && (rc = eb_stage_create(&c.stage, 64)) != EB_OK)
		goto free_results;
	rc = b->setup(&c);
	if (rc == EB_OK)
		rc = eb_handover_mem(&c, &sh);
	if (rc != EB_OK)
		goto teardown;
	if (c.rank == 0) {
		if (b->facts != NULL)
			b->facts(&c, &run->own);
		eb_run_header(run);
	}
	eb_progress_start(&prog, c.rank == 0 && !o->quiet, o->cmd->name, 0);
	for (s = 0; s < o->nsizes; s++)
		prog.total += point_work(o, o->sizes[s]) * run->nvars;
	for (s = 0; s < o->nsizes; s++) {
		c.bytes = (size_t)o->sizes[s];
		for (r = 0; r < o->rounds; r++) {
			for (v = 0; v < run->nvars; v++) {
				struct eb_point *p = &run->pts[s * run->nvars + v];
				size_t b0 = nbuf > 1 ? (size_t)v : 0;
				double *sv = samples + b0 * per;
				double *pv = pooled + b0 * per * (size_t)boot->size;
				char step[64], size[16];

				c.var = sh.vars[v];
				p->size = o->sizes[s];
				p->var = v;
				eb_size_format(o->sizes[s], size, sizeof(size));
				snprintf(step, sizeof(step), "%s %s", c.var->name[c.sel], size);
				eb_progress_step(&prog, step,
						 point_work(o, o->sizes[s]) / (double)o->rounds);
				rc = run_round(b, &c, p, r, sv, pv);
				if (rc == EB_OK && r == o->rounds - 1)
					rc = finish_point(b, &c, run, p, sv, pv);
				if (rc != EB_OK)
					goto teardown;
				if (r == o->rounds - 1)
					wrong_total += p->wrong;
			}
		}
		eb_progress_clear(&prog);
		if (c.rank == 0)
			eb_run_row(run, s);
	}
	if (c.rank == 0)
		file_rc = eb_run_files(run, wrong_total);
	/* Nobody tears down while a peer may still read its memory. */
	rc = eb_boot_barrier(boot, eb_engine_deadline(&e));
	if (rc == EB_OK && wrong_total > 0)
		rc = EB_EVERIFY;
	if (rc == EB_OK)
		rc = file_rc;
teardown:
	eb_progress_clear(&prog);
	if (rc != EB_OK)
		eb_engine_abandon(&e);
	eb_engine_quiesce(&e); /* before the buffers and requests posted on it are freed */
	eb_payload_unland(&c);
	b->teardown(&c);
	eb_stage_destroy(c.stage);
free_results:
	free(sh.gpus);
	free(pooled);
	free(samples);
	eb_handover_free(run);
	eb_engine_close(&e);
	return rc;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	return b->drive != NULL ? drive(b, o, boot) : sweep(b, o, boot);
}
