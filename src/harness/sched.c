#include "sched.h"
#include "loop.h"
#include "point.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* ---- a phase, through the one loop ---- */

/* The hooks the loop calls, over the benchmark and its context. */
struct hooked {
	const struct eb_bench *b;
	struct eb_ctx *c;
};

static int h_prepare(void *arg)
{
	struct hooked *h = arg;

	h->c->epoch++;
	return h->b->prepare != NULL ? h->b->prepare(h->c) : EB_OK;
}

/* Every rank here (a barrier with the run's deadline). */
static int together(struct eb_ctx *c)
{
	return c->boot != NULL ? eb_boot_barrier(c->boot, eb_deadline(c->o->fab.timeout_s)) : EB_OK;
}

static int h_align(void *arg)
{
	return together(((struct hooked *)arg)->c);
}

static int h_iter(void *arg, long i)
{
	struct hooked *h = arg;

	return h->b->iter(h->c, i);
}

static int h_run(void *arg, long n, double *samples, long *got)
{
	struct hooked *h = arg;

	/* one sample per phase when timed by the phase, else one per iteration */
	*got = h->c->pt->flags & EB_PT_PHASE_TIMED ? 1 : n;
	return h->b->run(h->c, n, samples, got);
}

/* Testing aid: flip a byte of what just landed (in the payload, GPU memory included). */
static void h_corrupt(void *arg, long i)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;
	const struct eb_payload *p;
	size_t off = 0, len = 0;

	if (c->role != EB_ROLE_TARGET && c->role != EB_ROLE_ALL)
		return;
	p = h->b->landing(c, &off, &len);
	if (p != NULL && len > 0)
		eb_mem_flip(&p->pay, off + (uint64_t)c->o->corrupt_at % len);
}

static int h_verify(void *arg, uint64_t *wrong)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;

	if (c->role == EB_ROLE_IDLE || h->b->verify == NULL)
		return EB_OK;
	return h->b->verify(c, wrong);
}

/* Idle ranks wait at the end of a phase while others work; every wait of theirs is itself
 * bounded by the timeout, so this bounds the phase. */
static uint64_t phase_deadline(const struct eb_ctx *c, long iters)
{
	return eb_deadline(c->o->fab.timeout_s * (double)(iters + 2));
}

/* One phase: prepare, align every rank, iters iterations, verify; then every rank learns the
 * wrong words of all (*wrong gets this rank's). samples (NULL: warm-up) gets *got seconds. */
static int phase(struct eb_ctx *c, long iters, double *samples, long *got, uint64_t *wrong)
{
	const struct eb_pt *pt = c->pt;
	const struct eb_bench *b = eb_pt_hooks(c->b, pt);
	struct hooked h = {b, c};
	int self = (pt->flags & EB_PT_SELF_TIMED) || b->iter == NULL;
	struct eb_loop l = {.arg = &h,
			    .prepare = h_prepare,
			    .align = h_align,
			    .iter = self ? NULL : h_iter,
			    .run = self ? h_run : NULL,
			    .after = c->o->corrupt_at >= 0 && b->landing != NULL ? h_corrupt : NULL,
			    .settle = pt->flags & EB_PT_SETTLE ? h_align : NULL,
			    .verify = h_verify,
			    .check = c->o->check && !(pt->flags & EB_PT_PHASE_TIMED),
			    .align_each = (pt->flags & EB_PT_ALIGN_EACH) != 0};
	uint64_t mine = 0;
	int64_t total = 0;
	int rc;

	c->iters = iters;
	rc = eb_loop_phase(&l, iters, samples, got, &mine);
	if (rc != EB_OK)
		return rc;
	if (mine > 0)
		eb_err("%llu wrong words received (%s %s)", (unsigned long long)mine,
		       c->o->cmd->name, pt->name != NULL ? pt->name : "");
	*wrong += mine;
	if (c->o->stop_rank == c->rank && samples != NULL) /* testing aid: a hung rank */
		raise(SIGSTOP);
	if (c->boot == NULL)
		return EB_OK;
	/* Collective, so every rank fails together. */
	return eb_boot_allreduce(c->boot, (int64_t)mine, EB_SUM, &total, phase_deadline(c, iters));
}

/* ---- a point's phases ---- */

long eb_sched_phases(const struct eb_ctx *c, const struct eb_pt *pt)
{
	long n = c->o->rounds;

	if ((pt->flags & EB_PT_PHASE_TIMED) && c->o->phases > n)
		n = c->o->phases;
	return n < pt->iters ? n : pt->iters;
}

long eb_sched_per(const struct eb_ctx *c, const struct eb_pt *pt)
{
	return pt->flags & EB_PT_PHASE_TIMED ? eb_sched_phases(c, pt) : pt->iters;
}

void eb_sched_flow_turn(struct eb_ctx *c)
{
	int t = c->turn;

	c->role = EB_ROLE_ALL;
	c->peer = -1;
	switch (c->pt->flow) {
	case EB_FLOW_ALL:
		break;
	case EB_FLOW_ONE:
		c->role = c->rank == 0 ? EB_ROLE_INIT : EB_ROLE_IDLE;
		break;
	case EB_FLOW_PAIRS:
		c->role = c->rank == 0	     ? EB_ROLE_INIT
			  : c->rank == t + 1 ? EB_ROLE_TARGET
					     : EB_ROLE_IDLE;
		c->peer = c->rank == 0 ? t + 1 : c->rank == t + 1 ? 0 : -1;
		break;
	case EB_FLOW_FANOUT:
		c->role = c->rank == 0 ? EB_ROLE_INIT : EB_ROLE_TARGET;
		c->peer = c->rank == 0 ? -1 : 0;
		break;
	}
}

static void set_point(struct eb_ctx *c, const struct eb_pt *pt)
{
	c->pt = pt;
	c->var = pt->variant;
	c->bytes = (size_t)pt->size;
}

/* The turn's timed phases of round r, their spans kept. */
static int timed(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p, int t, long r)
{
	long nph = eb_sched_phases(c, pt), k;
	int rc = EB_OK;

	c->spans = &p->spans[t];
	c->events = &p->events;
	for (k = r * nph / c->o->rounds; k < (r + 1) * nph / c->o->rounds && rc == EB_OK; k++) {
		long got = 0;

		rc = phase(c, eb_point_phase_len(pt->iters, nph, k),
			   p->samples + (size_t)t * (size_t)p->per + p->count[t], &got,
			   &p->mine[t].wrong);
		p->count[t] += got;
	}
	c->spans = NULL;
	c->events = NULL;
	return rc;
}

/* Round r of a point: in every turn, the warm-up in round 0, then the round's share of the
 * timed phases; after the last, the rank's report. */
static int visit(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p, long r,
		 struct eb_progress *prog)
{
	const struct eb_bench *b = eb_pt_hooks(c->b, pt);
	int t, rc = EB_OK;

	set_point(c, pt);
	if (r == 0 && c->rank == 0)
		eb_dbg("measuring %s", pt->name != NULL ? pt->name : "");
	eb_nics_before(&p->nics);
	eb_steal_before(&p->steal);
	for (t = 0; t < pt->turns && rc == EB_OK; t++) {
		struct eb_turn_rep *me = &p->mine[t];
		uint64_t t0 = eb_now_ns();

		c->turn = t;
		c->label[0] = '\0';
		if (b->turn != NULL)
			b->turn(c);
		else
			eb_sched_flow_turn(c);
		if (prog != NULL && c->label[0] != '\0')
			eb_progress_step(prog, c->label, eb_sched_work(c, pt) / pt->turns);
		me->active = c->role == EB_ROLE_INIT || c->role == EB_ROLE_ALL;
		me->peer = c->peer;
		if (r == 0)
			rc = phase(c, pt->warmup, NULL, NULL, &me->wrong);
		if (rc == EB_OK)
			rc = timed(c, pt, p, t, r);
		me->secs += (double)(eb_now_ns() - t0) * 1e-9;
		if (rc == EB_OK && r == c->o->rounds - 1 && b->report != NULL) {
			c->blob = pt->flags & EB_PT_GATHER ? &p->blob[t] : NULL;
			b->report(c, me);
			c->blob = NULL;
		}
	}
	eb_steal_after(&p->steal);
	eb_nics_after(&p->nics);
	return rc;
}

double eb_sched_work(const struct eb_ctx *c, const struct eb_pt *pt)
{
	return (double)(pt->warmup + pt->iters) * ((double)pt->size + 65536.0) * (double)pt->turns /
	       (double)c->o->rounds;
}

/* The var entered and the hooks that entered it (NULL: none). */
struct entered {
	int var;
	const struct eb_bench *b;
};

/* Leave the var entered once every rank is done with it (no rank stops what a peer still
 * writes to or waits on), or at once where a rank failed. */
static int leave(struct eb_ctx *c, struct entered *in, int failed)
{
	const struct eb_bench *b = in->b;
	int rc = EB_OK, rc2 = EB_OK;

	in->b = NULL;
	if (b == NULL || b->leave == NULL)
		return EB_OK;
	rc = failed ? EB_OK : together(c);
	rc2 = b->leave(c, failed || rc != EB_OK);
	return rc != EB_OK ? rc : rc2;
}

/* enter the point's var when it is not the one entered, every rank together; leave it before
 * another. */
static int switch_to(struct eb_ctx *c, const struct eb_pt *pt, struct entered *in)
{
	const struct eb_bench *b = eb_pt_hooks(c->b, pt);
	int rc = EB_OK;

	if (in->b == b && in->var == pt->var)
		return EB_OK;
	rc = leave(c, in, 0);
	if (rc == EB_OK && b->enter != NULL) {
		rc = together(c);
		rc = rc != EB_OK ? rc : b->enter(c);
	}
	if (rc == EB_OK)
		*in = (struct entered){pt->var, b};
	return rc;
}

static int alloc_points(struct eb_ctx *c, const struct eb_pt *pts, int n, struct eb_point_run *p)
{
	int i, rc = EB_OK;

	for (i = 0; i < n && rc == EB_OK; i++) {
		rc = eb_point_alloc(&pts[i], eb_sched_per(c, &pts[i]), &p[i]);
		if (rc == EB_OK)
			rc = eb_nics_alloc(c, &p[i].nics);
	}
	return rc;
}

int eb_sched_row(struct eb_ctx *c, const struct eb_pt *pts, int n, struct eb_meas *m,
		 struct eb_progress *prog)
{
	struct eb_point_run *s = calloc((size_t)n, sizeof(*s));
	struct entered in = {0, NULL};
	int i, rc = s != NULL ? alloc_points(c, pts, n, s) : EB_ENOMEM;
	long r;

	memset(m, 0, sizeof(*m) * (size_t)n);
	for (r = 0; r < c->o->rounds && rc == EB_OK; r++)
		for (i = 0; i < n && rc == EB_OK; i++) {
			if (c->o->rounds > 1 && c->rank == 0)
				eb_dbg("round %ld of %ld: %s", r + 1, c->o->rounds,
				       pts[i].name != NULL ? pts[i].name : "");
			if (prog != NULL && pts[i].name != NULL)
				eb_progress_step(prog, pts[i].name, 0);
			set_point(c, &pts[i]);
			rc = switch_to(c, &pts[i], &in);
			if (rc == EB_OK)
				rc = visit(c, &pts[i], &s[i], r, prog);
			if (prog != NULL)
				prog->done += c->label[0] ? 0 : eb_sched_work(c, &pts[i]);
			if (rc == EB_OK && r == c->o->rounds - 1)
				rc = eb_point_finish(c, &pts[i], &s[i], &m[i]);
		}
	if (in.b != NULL) {
		int rc2 = leave(c, &in, rc != EB_OK);

		rc = rc != EB_OK ? rc : rc2;
	}
	for (i = 0; s != NULL && i < n; i++) {
		eb_point_free(&s[i], pts[i].turns);
		if (rc != EB_OK)
			eb_meas_free(&m[i]);
	}
	free(s);
	return rc;
}
