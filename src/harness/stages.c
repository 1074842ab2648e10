#include "stages.h"
#include "point.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_ROUNDS 16

void eb_event(struct eb_ctx *c, int ev, uint64_t id, uint64_t t_ns, int tid)
{
	struct eb_events *e = c->events;

	if (e == NULL || ev < 0 || ev >= c->b->nevents)
		return; /* warm-up, or nothing kept */
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		struct eb_event_rec *v = realloc(e->v, cap * sizeof(*v));

		if (v == NULL) {
			e->lost = 1;
			return;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = (struct eb_event_rec){id, t_ns, ev, tid};
}

void eb_events_free(struct eb_events *ev)
{
	free(ev->v);
	memset(ev, 0, sizeof(*ev));
}

/* ---- one clock ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Rounds of a barrier and every rank's clock as it left it: a rank of another host is off
 * rank 0 by the median difference, give or take half their spread (the barrier's exit is not
 * one instant). Ranks with rank 0's host name read its clock. */
int eb_clocks_align(struct eb_ctx *c, struct eb_clocks *k)
{
	char(*host)[64] = calloc((size_t)c->nranks, sizeof(*host));
	uint64_t *t = calloc((size_t)c->nranks * CLOCK_ROUNDS, sizeof(*t)), now;
	double d[CLOCK_ROUNDS];
	int r, i, rc = host != NULL && t != NULL ? EB_OK : EB_ENOMEM;

	memset(k, 0, sizeof(*k));
	k->hosts = 1;
	k->off_ns = calloc((size_t)c->nranks, sizeof(*k->off_ns));
	if (rc == EB_OK && k->off_ns == NULL)
		rc = EB_ENOMEM;
	if (rc == EB_OK && c->boot != NULL) {
		char me[64] = "";

		eb_host_name(me, sizeof(me));
		rc = eb_boot_allgather(c->boot, me, host, sizeof(me),
				       eb_deadline(c->o->fab.timeout_s));
	}
	for (i = 0; rc == EB_OK && c->boot != NULL && i < CLOCK_ROUNDS; i++) {
		rc = eb_boot_barrier(c->boot, eb_deadline(c->o->fab.timeout_s));
		now = eb_now_ns();
		if (rc == EB_OK)
			rc = eb_boot_allgather(c->boot, &now, t + (size_t)i * (size_t)c->nranks,
					       sizeof(now), eb_deadline(c->o->fab.timeout_s));
	}
	for (r = 1; rc == EB_OK && c->boot != NULL && r < c->nranks; r++) {
		if (strcmp(host[r], host[0]) == 0)
			continue;
		for (i = 0; i < CLOCK_ROUNDS; i++)
			d[i] = (double)t[(size_t)i * (size_t)c->nranks] -
			       (double)t[(size_t)i * (size_t)c->nranks + (size_t)r];
		qsort(d, CLOCK_ROUNDS, sizeof(d[0]), cmp_double);
		k->off_ns[r] = d[CLOCK_ROUNDS / 2];
		if ((d[CLOCK_ROUNDS - 1] - d[0]) / 2 > k->unc_ns)
			k->unc_ns = (d[CLOCK_ROUNDS - 1] - d[0]) / 2;
		k->hosts = 2;
	}
	free(host);
	free(t);
	return rc;
}

void eb_clocks_free(struct eb_clocks *k)
{
	free(k->off_ns);
	memset(k, 0, sizeof(*k));
}

/* ---- a point's stages ---- */

static int cmp_at(const void *a, const void *b)
{
	const struct eb_at *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* Every rank's events on rank 0 (*out, *n): gathered, on one clock, by sample then time. */
static int gather_events(struct eb_ctx *c, const struct eb_events *ev, struct eb_at **out,
			 size_t *n)
{
	size_t stride, k, got = 0;
	char *all = NULL;
	int r, rc;

	*out = NULL;
	*n = 0;
	rc = eb_point_gather_var(c, ev->v, ev->n * sizeof(*ev->v), &all, &stride);
	if (rc != EB_OK || c->rank != 0) {
		free(all);
		return rc;
	}
	*out = calloc(stride / sizeof(struct eb_event_rec) * (size_t)c->nranks + 1, sizeof(**out));
	if (*out == NULL) {
		free(all);
		return EB_ENOMEM;
	}
	for (r = 0; r < c->nranks; r++)
		for (k = 0; k < stride / sizeof(struct eb_event_rec); k++) {
			struct eb_event_rec e;

			memcpy(&e, all + (size_t)r * stride + k * sizeof(e), sizeof(e));
			if (e.t == 0) /* padding */
				continue;
			(*out)[got++] = (struct eb_at){e.id, (double)e.t + c->clocks->off_ns[r],
						       e.ev, e.tid, r};
		}
	free(all);
	qsort(*out, got, sizeof(**out), cmp_at);
	*n = got;
	return EB_OK;
}

/* The time of event ev of the sample in [a, b), or < 0 where it did not pass it. */
static double when(const struct eb_at *v, size_t a, size_t b, int ev)
{
	size_t i;

	for (i = a; i < b; i++)
		if (v[i].ev == ev)
			return v[i].t;
	return -1;
}

/* Each stage's seconds over the samples, and the whole operation's. */
static int stage_stats(const struct eb_ctx *c, const struct eb_at *v, size_t n, struct eb_stages *s)
{
	const struct eb_bench *b = c->b;
	double *secs = calloc(n + 1, sizeof(*secs));
	size_t a, e, k;
	int st, rc = secs != NULL ? EB_OK : EB_ENOMEM;

	for (st = -1; rc == EB_OK && st < b->nstages; st++) {
		size_t got = 0;

		for (a = 0; a < n; a = e) {
			for (e = a; e < n && v[e].id == v[a].id; e++)
				;
			if (st < 0) { /* the whole: first event to last */
				secs[got++] = (v[e - 1].t - v[a].t) * 1e-9;
				continue;
			}
			if (when(v, a, e, b->stages[st].from) >= 0 &&
			    when(v, a, e, b->stages[st].to) >= 0)
				secs[got++] = (when(v, a, e, b->stages[st].to) -
					       when(v, a, e, b->stages[st].from)) *
					      1e-9;
		}
		if (st < 0)
			s->samples = (long)got;
		eb_stats_compute(secs, got, st < 0 ? &s->whole : &s->st[st]);
		for (k = 0; k < got; k++)
			secs[k] = 0;
	}
	free(secs);
	return rc;
}

int eb_stages_finish(struct eb_ctx *c, struct eb_events *ev, struct eb_meas *m)
{
	struct eb_at *v = NULL;
	size_t n = 0;
	int rc;

	if (c->b->nevents == 0)
		return EB_OK;
	if (ev->lost) {
		eb_err("out of memory for the stamps of %s's sampled operations", c->o->cmd->name);
		return EB_ENOMEM;
	}
	rc = gather_events(c, ev, &v, &n);
	if (rc == EB_OK && c->rank == 0) {
		m->stages.clock_us = (c->clocks->unc_ns + c->gpu_clock_unc_ns) * 1e-3;
		m->stages.clocks = c->clocks->hosts > 1
				       ? "other hosts' offset from the start barrier"
				       : "one host's CLOCK_MONOTONIC";
		rc = stage_stats(c, v, n, &m->stages);
	}
	if (rc == EB_OK && c->rank == 0 && c->trace != NULL)
		eb_trace_point(c->trace, c, m, v, n);
	free(v);
	return rc;
}

/* ---- what rank 0 says of them ---- */

int eb_stages_top(const struct eb_ctx *c, const struct eb_stages *s, int inside)
{
	const struct eb_op_stage *g = c->b->stages;
	int st, top = -1, part = -1, in = -1;

	for (st = 0; s->samples > 0 && st < c->b->nstages; st++)
		if (!g[st].part && s->st[st].n > 0 && (top < 0 || s->st[st].p50 > s->st[top].p50))
			top = st;
	for (st = 0; inside && top >= 0 && st < c->b->nstages; st++) {
		in = g[st].part ? in : st;
		if (g[st].part && in == top && s->st[st].n > 0 &&
		    (part < 0 || s->st[st].p50 > s->st[part].p50))
			part = st;
	}
	return part >= 0 ? part : top;
}

static void us_obj(struct eb_rec *r, const char *key, const struct eb_stats *s, double whole)
{
	eb_rec_obj(r, key);
	eb_rec_int(r, "samples", (long long)s->n);
	eb_rec_num_or_null(r, "p50_us", s->p50 * 1e6, s->n > 0);
	eb_rec_num_or_null(r, "p99_us", s->p99 * 1e6, s->n > 0);
	eb_rec_num_or_null(r, "mean_us", s->mean * 1e6, s->n > 0);
	eb_rec_num_or_null(r, "min_us", s->min * 1e6, s->n > 0);
	eb_rec_num_or_null(r, "max_us", s->max * 1e6, s->n > 0);
	eb_rec_num_or_null(r, "share", whole > 0 ? s->p50 / whole : 0, whole > 0 && s->n > 0);
	eb_rec_end(r);
}

void eb_stages_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *r)
{
	const struct eb_stages *s = &m->stages;
	int st, top = eb_stages_top(c, s, 0), part = eb_stages_top(c, s, 1);

	if (c->b->nevents == 0 || r->n == 0 || s->samples == 0)
		return;
	eb_rec_obj(r, "stages");
	eb_rec_int(r, "samples", s->samples);
	eb_rec_num(r, "clock_uncertainty_us", s->clock_us);
	eb_rec_str(r, "clocks", s->clocks);
	us_obj(r, "whole", &s->whole, s->whole.p50);
	for (st = 0; st < c->b->nstages; st++)
		us_obj(r, c->b->stages[st].name, &s->st[st], s->whole.p50);
	eb_rec_str(r, "dominant", top >= 0 ? c->b->stages[top].name : "");
	if (part != top)
		eb_rec_str(r, "dominant_part", c->b->stages[part].name);
	eb_rec_end(r);
}

static const struct eb_colspec stage_cols[] = {
    {"Point", "point", 20, 0, 1, NULL},	   {"Stage", "stage", 20, 0, 1, NULL},
    {"p50 (us)", "p50_us", 9, 2, 0, NULL}, {"p99 (us)", "p99_us", 9, 2, 0, NULL},
    {"share", "share_pct", 6, 1, 0, NULL}, {"samples", "samples", 7, 0, 0, NULL},
};

static void stage_row(struct eb_sheet *s, const char *point, const char *stage,
		      const struct eb_stats *x, double whole)
{
	struct eb_rec r = {0};

	eb_rec_str(&r, "point", point);
	eb_rec_str(&r, "stage", stage);
	eb_rec_num_or_null(&r, "p50_us", x->p50 * 1e6, x->n > 0);
	eb_rec_num_or_null(&r, "p99_us", x->p99 * 1e6, x->n > 0);
	eb_rec_num_or_null(&r, "share_pct", whole > 0 ? 100 * x->p50 / whole : 0,
			   whole > 0 && x->n > 0);
	eb_rec_int(&r, "samples", (long long)x->n);
	eb_sheet_show(s, &r);
	eb_rec_free(&r);
}

void eb_stages_table(const struct eb_ctx *c, struct eb_sheet *s, const struct eb_meas *m, int n)
{
	int i, st, any = 0;

	for (i = 0; i < n; i++)
		any += m[i].stages.samples > 0;
	if (c->b->nevents == 0 || any == 0)
		return;
	eb_sheet_table(s,
		       "Where the time goes: stages of the sampled operations, p50 and p99, and "
		       "each stage's p50 as a share of the whole's (the last row's points)",
		       stage_cols, (int)(sizeof(stage_cols) / sizeof(stage_cols[0])));
	for (i = 0; i < n; i++) {
		const char *point = m[i].pt->name != NULL ? m[i].pt->name : "";

		if (m[i].stages.samples == 0)
			continue;
		stage_row(s, point, "whole", &m[i].stages.whole, m[i].stages.whole.p50);
		for (st = 0; st < c->b->nstages; st++) /* stages a point never passes: left out */
			if (m[i].stages.st[st].n > 0)
				stage_row(s, point, c->b->stages[st].name, &m[i].stages.st[st],
					  m[i].stages.whole.p50);
	}
	for (i = 0; i < n; i++) {
		const struct eb_stages *x = &m[i].stages;
		int top = eb_stages_top(c, x, 0), part = eb_stages_top(c, x, 1);
		char in[96] = "";

		if (part != top)
			snprintf(in, sizeof(in), "; within it %s (p50 %.2f us)",
				 c->b->stages[part].name, x->st[part].p50 * 1e6);
		if (top >= 0)
			eb_sheet_say(s,
				     "%s: most of the time goes to %s (p50 %.2f of %.2f us)%s; "
				     "clocks: %s, within %.2f us",
				     m[i].pt->name != NULL ? m[i].pt->name : "",
				     c->b->stages[top].name, x->st[top].p50 * 1e6,
				     x->whole.p50 * 1e6, in, x->clocks, x->clock_us);
	}
}
