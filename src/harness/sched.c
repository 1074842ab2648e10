#include "sched.h"
#include "loop.h"
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

static int h_align(void *arg)
{
	struct eb_ctx *c = ((struct hooked *)arg)->c;

	return c->boot != NULL ? eb_boot_barrier(c->boot, eb_deadline(c->o->fab.timeout_s)) : EB_OK;
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
	const struct eb_bench *b = c->b;
	const struct eb_pt *pt = c->pt;
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

/* Iterations in timed phase k of nph (the first ones get the rest). */
static long phase_len(long iters, long nph, long k)
{
	return iters / nph + (k < iters % nph ? 1 : 0);
}

void eb_sched_flow_turn(struct eb_ctx *c)
{
	int t = c->turn;

	if (c->var == NULL) { /* not a sweep: every rank measures */
		c->role = EB_ROLE_ALL;
		c->peer = -1;
		return;
	}
	switch (c->var->flow) {
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
	case EB_FLOW_ALL:
		c->role = EB_ROLE_ALL;
		c->peer = -1;
		break;
	}
}

/* What a point keeps on this rank across the rounds of its row. */
struct slot {
	double *samples;	  /* [turn][per] */
	long *count;		  /* [turn]: samples so far (fewer than iterations where a run
				   * hook times batches of them) */
	struct eb_turn_rep *mine; /* [turn] */
	long per;
};

static void set_point(struct eb_ctx *c, const struct eb_pt *pt)
{
	c->pt = pt;
	c->var = pt->variant;
	c->bytes = (size_t)pt->size;
}

/* Round r of a point: in every turn, the warm-up in round 0, then the round's share of the
 * timed phases. */
static int visit(struct eb_ctx *c, const struct eb_pt *pt, struct slot *s, long r,
		 struct eb_progress *prog)
{
	long nph = eb_sched_phases(c, pt), k;
	int t, rc = EB_OK;

	set_point(c, pt);
	if (r == 0 && c->rank == 0)
		eb_dbg("measuring %s", pt->name != NULL ? pt->name : "");
	for (t = 0; t < pt->turns && rc == EB_OK; t++) {
		struct eb_turn_rep *me = &s->mine[t];
		uint64_t t0 = eb_now_ns();

		c->turn = t;
		c->label[0] = '\0';
		if (c->b->turn != NULL)
			c->b->turn(c);
		else
			eb_sched_flow_turn(c);
		if (prog != NULL && c->label[0] != '\0')
			eb_progress_step(prog, c->label, eb_sched_work(c, pt) / pt->turns);
		me->active = c->role == EB_ROLE_INIT || c->role == EB_ROLE_ALL;
		me->peer = c->peer;
		if (r == 0)
			rc = phase(c, pt->warmup, NULL, NULL, &me->wrong);
		for (k = r * nph / c->o->rounds; k < (r + 1) * nph / c->o->rounds && rc == EB_OK;
		     k++) {
			long got = 0;

			rc = phase(c, phase_len(pt->iters, nph, k),
				   s->samples + (size_t)t * (size_t)s->per + s->count[t], &got,
				   &me->wrong);
			s->count[t] += got;
		}
		me->secs += (double)(eb_now_ns() - t0) * 1e-9;
		if (rc == EB_OK && r == c->o->rounds - 1 && c->b->report != NULL)
			c->b->report(c, me);
	}
	return rc;
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

/* Statistics of n samples (left in their order), scaled; phase-timed: the mean weighted by
 * the phases' iterations. */
static int stats_of(const struct eb_pt *pt, const double *v, long n, struct eb_stats *out)
{
	double *copy = malloc(sizeof(*copy) * (size_t)(n > 0 ? n : 1)), w = 0;
	long k;

	if (copy == NULL)
		return EB_ENOMEM;
	for (k = 0; k < n; k++) {
		copy[k] = v[k];
		w += v[k] * (double)phase_len(pt->iters, n, k);
	}
	eb_stats_compute(copy, (size_t)n, out);
	if ((pt->flags & EB_PT_PHASE_TIMED) && n > 0)
		out->mean = w / (double)pt->iters;
	scale(out, pt->scale > 0 ? pt->scale : 1.0);
	free(copy);
	return EB_OK;
}

/* Every rank's reports to every rank; rank 0 lists the groups. */
static int gather_reps(struct eb_ctx *c, const struct eb_pt *pt, struct slot *s, struct eb_meas *m)
{
	size_t per_rank = sizeof(*s->mine) * (size_t)pt->turns;
	int t, r, rc = EB_OK;

	m->rep = calloc((size_t)c->nranks * (size_t)pt->turns, sizeof(*m->rep));
	m->groups = calloc((size_t)c->nranks * (size_t)pt->turns, sizeof(*m->groups));
	if (m->rep == NULL || m->groups == NULL)
		return EB_ENOMEM;
	for (t = 0; t < pt->turns && rc == EB_OK; t++)
		if (s->mine[t].active)
			rc = stats_of(pt, s->samples + (size_t)t * (size_t)s->per, s->count[t],
				      &s->mine[t].st);
	if (rc != EB_OK)
		return rc;
	if (c->boot == NULL) {
		memcpy(m->rep, s->mine, per_rank);
	} else {
		struct eb_turn_rep *all = malloc(per_rank * (size_t)c->nranks);

		if (all == NULL)
			return EB_ENOMEM;
		rc = eb_boot_allgather(c->boot, s->mine, all, per_rank,
				       eb_deadline(c->o->fab.timeout_s));
		for (r = 0; rc == EB_OK && r < c->nranks; r++)
			for (t = 0; t < pt->turns; t++)
				m->rep[(size_t)t * (size_t)c->nranks + (size_t)r] =
				    all[(size_t)r * (size_t)pt->turns + (size_t)t];
		free(all);
	}
	for (t = 0; rc == EB_OK && t < pt->turns; t++)
		for (r = 0; r < c->nranks; r++) {
			const struct eb_turn_rep *x =
			    &m->rep[(size_t)t * (size_t)c->nranks + (size_t)r];

			m->wrong += x->wrong;
			if (x->active)
				m->groups[m->ngroups++] = (struct eb_group){
				    .rank = r, .peer = x->peer, .turn = t, .st = x->st};
		}
	return rc;
}

/* The samples of every group on rank 0, in group order: its own where only it measured, else
 * gathered (EB_PT_SAMPLES); then their pooled statistics. */
static int pool(struct eb_ctx *c, const struct eb_pt *pt, struct slot *s, struct eb_meas *m)
{
	size_t per_rank = sizeof(double) * (size_t)pt->turns * (size_t)s->per;
	double *all = NULL, *pooled, w = 0;
	size_t n = 0;
	int g, mine_only = 1, rc = EB_OK;

	for (g = 0; g < m->ngroups; g++)
		mine_only &= m->groups[g].rank == 0;
	if (!mine_only && !(pt->flags & EB_PT_SAMPLES))
		return EB_OK;
	if (!mine_only && c->boot != NULL) {
		all = malloc(per_rank * (size_t)c->nranks);
		if (all == NULL)
			return EB_ENOMEM;
		rc = eb_boot_allgather(c->boot, s->samples, all, per_rank,
				       eb_deadline(c->o->fab.timeout_s));
	}
	m->samples =
	    calloc((size_t)(m->ngroups > 0 ? m->ngroups : 1) * (size_t)s->per, sizeof(*m->samples));
	pooled =
	    calloc((size_t)(m->ngroups > 0 ? m->ngroups : 1) * (size_t)s->per, sizeof(*pooled));
	if (rc == EB_OK && (m->samples == NULL || pooled == NULL))
		rc = EB_ENOMEM;
	for (g = 0; rc == EB_OK && g < m->ngroups; g++) {
		const struct eb_group *x = &m->groups[g];
		const double *from =
		    all != NULL ? all + (size_t)x->rank * per_rank / sizeof(double) : s->samples;

		memcpy(m->samples + (size_t)g * (size_t)s->per,
		       from + (size_t)x->turn * (size_t)s->per, sizeof(double) * x->st.n);
		memcpy(pooled + n, from + (size_t)x->turn * (size_t)s->per,
		       sizeof(double) * x->st.n);
		n += x->st.n;
		w += x->st.mean / m->ngroups;
	}
	if (rc == EB_OK && n > 0) {
		eb_stats_compute(pooled, n, &m->all);
		scale(&m->all, pt->scale > 0 ? pt->scale : 1.0);
		if (pt->flags & EB_PT_PHASE_TIMED)
			m->all.mean = w; /* the groups' weighted means, already scaled */
	}
	free(pooled);
	free(all);
	return rc;
}

void eb_meas_free(struct eb_meas *m)
{
	free(m->rep);
	free(m->groups);
	free(m->samples);
	memset(m, 0, sizeof(*m));
}

static int finish(struct eb_ctx *c, const struct eb_pt *pt, struct slot *s, struct eb_meas *m)
{
	int rc;

	m->pt = pt;
	m->nranks = c->nranks;
	m->turns = pt->turns;
	m->per = s->per;
	m->phases = pt->flags & EB_PT_PHASE_TIMED ? (int)s->per : 0;
	rc = gather_reps(c, pt, s, m);
	return rc == EB_OK ? pool(c, pt, s, m) : rc;
}

double eb_sched_work(const struct eb_ctx *c, const struct eb_pt *pt)
{
	return (double)(pt->warmup + pt->iters) * ((double)pt->size + 65536.0) * (double)pt->turns /
	       (double)c->o->rounds;
}

/* enter the point's var when it is not the one entered; leave it before another. */
static int switch_to(struct eb_ctx *c, const struct eb_pt *pt, int *entered)
{
	int rc = EB_OK;

	if (*entered == pt->var + 1)
		return EB_OK;
	if (*entered && c->b->leave != NULL)
		rc = c->b->leave(c, 0);
	*entered = 0;
	if (rc == EB_OK && c->b->enter != NULL)
		rc = c->b->enter(c);
	if (rc == EB_OK)
		*entered = pt->var + 1;
	return rc;
}

static int alloc_slots(struct eb_ctx *c, const struct eb_pt *pts, int n, struct slot *s)
{
	int i;

	for (i = 0; i < n; i++) {
		s[i].per = eb_sched_per(c, &pts[i]);
		s[i].samples = calloc((size_t)pts[i].turns * (size_t)(s[i].per > 0 ? s[i].per : 1),
				      sizeof(double));
		s[i].mine = calloc((size_t)pts[i].turns, sizeof(*s[i].mine));
		s[i].count = calloc((size_t)pts[i].turns, sizeof(*s[i].count));
		if (s[i].samples == NULL || s[i].mine == NULL || s[i].count == NULL)
			return EB_ENOMEM;
	}
	return EB_OK;
}

int eb_sched_row(struct eb_ctx *c, const struct eb_pt *pts, int n, struct eb_meas *m,
		 struct eb_progress *prog)
{
	struct slot *s = calloc((size_t)n, sizeof(*s));
	int i, entered = 0, rc = s != NULL ? alloc_slots(c, pts, n, s) : EB_ENOMEM;
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
			rc = switch_to(c, &pts[i], &entered);
			if (rc == EB_OK)
				rc = visit(c, &pts[i], &s[i], r, prog);
			if (prog != NULL)
				prog->done += c->label[0] ? 0 : eb_sched_work(c, &pts[i]);
			if (rc == EB_OK && r == c->o->rounds - 1)
				rc = finish(c, &pts[i], &s[i], &m[i]);
		}
	if (entered && c->b->leave != NULL) {
		int rc2 = c->b->leave(c, rc != EB_OK);

		rc = rc != EB_OK ? rc : rc2;
	}
	for (i = 0; s != NULL && i < n; i++) {
		free(s[i].samples);
		free(s[i].mine);
		free(s[i].count);
		if (rc != EB_OK)
			eb_meas_free(&m[i]);
	}
	free(s);
	return rc;
}
