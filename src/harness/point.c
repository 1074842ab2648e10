#include "point.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

long eb_point_phase_len(long iters, long nph, long k)
{
	return iters / nph + (k < iters % nph ? 1 : 0);
}

int eb_point_alloc(const struct eb_pt *pt, long per, struct eb_point_run *p)
{
	size_t turns = (size_t)pt->turns;

	p->per = per;
	p->samples = calloc(turns * (size_t)(per > 0 ? per : 1), sizeof(double));
	p->mine = calloc(turns, sizeof(*p->mine));
	p->count = calloc(turns, sizeof(*p->count));
	p->spans = calloc(turns, sizeof(*p->spans));
	p->blob = calloc(turns, sizeof(*p->blob));
	if (p->samples == NULL || p->mine == NULL || p->count == NULL || p->spans == NULL ||
	    p->blob == NULL)
		return EB_ENOMEM;
	return EB_OK;
}

void eb_point_free(struct eb_point_run *p, int turns)
{
	eb_nics_free(&p->nics);
	eb_events_free(&p->events);
	int t, k;

	for (t = 0; p->spans != NULL && t < turns; t++)
		for (k = 0; k < EB_MAX_SPANS; k++)
			free(p->spans[t].v[k]);
	for (t = 0; p->blob != NULL && t < turns; t++)
		free(p->blob[t].data);
	free(p->samples);
	free(p->mine);
	free(p->count);
	free(p->spans);
	free(p->blob);
	memset(p, 0, sizeof(*p));
}

/* ---- what hooks hand over while the point runs ---- */

void eb_span(struct eb_ctx *c, int k, double secs)
{
	struct eb_spans *s = c->spans;

	if (s == NULL || k < 0 || k >= EB_MAX_SPANS)
		return; /* warm-up, or no span kept */
	if (s->n[k] == s->cap[k]) {
		long cap = s->cap[k] > 0 ? 2 * s->cap[k] : c->pt->iters > 64 ? c->pt->iters : 64;
		double *v = realloc(s->v[k], (size_t)cap * sizeof(*v));

		if (v == NULL) {
			s->lost = 1;
			return;
		}
		s->v[k] = v;
		s->cap[k] = cap;
	}
	s->v[k][s->n[k]++] = secs;
}

int eb_report_bytes(struct eb_ctx *c, const void *data, size_t len)
{
	struct eb_blob *b = c->blob;
	char *d;

	if (b == NULL) {
		eb_err("%s: bytes reported outside the report of a point that gathers them",
		       c->o->cmd->name);
		return EB_EINVAL;
	}
	d = realloc(b->data, len > 0 ? len : 1);
	if (d == NULL) {
		eb_err("out of memory for %zu bytes of rank %d's report", len, c->rank);
		return EB_ENOMEM;
	}
	if (len > 0)
		memcpy(d, data, len);
	b->data = d;
	b->len = len;
	return EB_OK;
}

/* ---- statistics ---- */

static void scale(struct eb_stats *s, double f)
{
	s->mean *= f;
	s->min *= f;
	s->p50 *= f;
	s->p99 *= f;
	s->max *= f;
	s->stddev *= f;
}

/* Statistics of n samples, left in their order. */
static int stats_of(const double *v, long n, struct eb_stats *out)
{
	double *copy;

	if (n <= 0) {
		memset(out, 0, sizeof(*out));
		return EB_OK;
	}
	copy = malloc(sizeof(*copy) * (size_t)n);
	if (copy == NULL)
		return EB_ENOMEM;
	memcpy(copy, v, sizeof(*copy) * (size_t)n);
	eb_stats_compute(copy, (size_t)n, out);
	free(copy);
	return EB_OK;
}

/* A point's time: scaled; phase-timed, the mean weighted by the phases' iterations. */
static int time_stats(const struct eb_pt *pt, const double *v, long n, struct eb_stats *out)
{
	double w = 0;
	long k;
	int rc = stats_of(v, n, out);

	for (k = 0; k < n; k++)
		w += v[k] * (double)eb_point_phase_len(pt->iters, n, k);
	if (rc == EB_OK && (pt->flags & EB_PT_PHASE_TIMED) && n > 0)
		out->mean = w / (double)pt->iters;
	scale(out, pt->scale > 0 ? pt->scale : 1.0);
	return rc;
}

/* A report's statistics of series k: a span, or (k < 0) the point's own time. */
static const struct eb_stats *series(const struct eb_turn_rep *r, int k)
{
	return k < 0 ? &r->st : &r->span[k];
}

/* The reports with the largest and the smallest p50 of series k (-1: none has samples). */
static void extremes(const struct eb_meas *m, int k, int *slow, int *fast)
{
	int i, n = m->turns * m->nranks;

	*slow = *fast = -1;
	for (i = 0; i < n; i++) {
		const struct eb_stats *s = series(&m->rep[i], k);

		if (s->n == 0)
			continue;
		if (*slow < 0 || s->p50 > series(&m->rep[*slow], k)->p50)
			*slow = i;
		if (*fast < 0 || s->p50 < series(&m->rep[*fast], k)->p50)
			*fast = i;
	}
}

/* The largest of the rows' i-th samples, for i below the fewest any row has: the slowest
 * row's time in each iteration, where every iteration starts at a barrier. */
static int slowest_each(const double *v, const long *n, int rows, long stride, double f,
			struct eb_stats *out)
{
	long most = -1, i;
	double *worst;
	int r, rc;

	memset(out, 0, sizeof(*out));
	for (r = 0; r < rows; r++)
		if (n[r] > 0 && (most < 0 || n[r] < most))
			most = n[r];
	if (most <= 0)
		return EB_OK;
	worst = calloc((size_t)most, sizeof(*worst));
	if (worst == NULL)
		return EB_ENOMEM;
	for (r = 0; r < rows; r++)
		for (i = 0; n[r] > 0 && i < most; i++)
			if (v[(size_t)r * (size_t)stride + (size_t)i] > worst[i])
				worst[i] = v[(size_t)r * (size_t)stride + (size_t)i];
	rc = stats_of(worst, most, out);
	scale(out, f);
	free(worst);
	return rc;
}

/* This rank's reports: its time and spans summarised, its own bytes counted. */
static int summarise_mine(const struct eb_pt *pt, struct eb_point_run *p)
{
	int t, k, rc = EB_OK;

	for (t = 0; t < pt->turns && rc == EB_OK; t++) {
		struct eb_turn_rep *me = &p->mine[t];

		if (p->spans[t].lost) {
			eb_err("out of memory for the spans of %s",
			       pt->name != NULL ? pt->name : "");
			return EB_ENOMEM;
		}
		if (me->active)
			rc = time_stats(pt, p->samples + (size_t)t * (size_t)p->per, p->count[t],
					&me->st);
		for (k = 0; k < EB_MAX_SPANS && rc == EB_OK; k++)
			rc = stats_of(p->spans[t].v[k], p->spans[t].n[k], &me->span[k]);
		me->own_len = p->blob[t].len;
	}
	return rc;
}

/* Every rank's reports to every rank; the groups (active reports), turn by turn. */
static int gather_reps(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p,
		       struct eb_meas *m)
{
	size_t per_rank = sizeof(*p->mine) * (size_t)pt->turns;
	int t, r, rc;

	m->rep = calloc((size_t)c->nranks * (size_t)pt->turns, sizeof(*m->rep));
	m->groups = calloc((size_t)c->nranks * (size_t)pt->turns, sizeof(*m->groups));
	if (m->rep == NULL || m->groups == NULL)
		return EB_ENOMEM;
	rc = summarise_mine(pt, p);
	if (rc == EB_OK && c->boot == NULL) {
		memcpy(m->rep, p->mine, per_rank);
	} else if (rc == EB_OK) {
		struct eb_turn_rep *all = malloc(per_rank * (size_t)c->nranks);

		if (all == NULL)
			return EB_ENOMEM;
		rc = eb_boot_allgather(c->boot, p->mine, all, per_rank,
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

/* Every rank's [turn][len] rows of `len`-byte items to every rank (len 0: nothing). */
static int gather_rows(struct eb_ctx *c, const struct eb_pt *pt, const void *mine, size_t len,
		       void **all)
{
	size_t per_rank = len * (size_t)pt->turns;

	*all = malloc(per_rank * (size_t)c->nranks + 1);
	if (*all == NULL)
		return EB_ENOMEM;
	if (c->boot == NULL) {
		memcpy(*all, mine, per_rank);
		return EB_OK;
	}
	return eb_boot_allgather(c->boot, mine, *all, per_rank, eb_deadline(c->o->fab.timeout_s));
}

/* The point's samples, in group order: rank 0's own where only it measured, else gathered
 * (EB_PT_SAMPLES); their pooled statistics and the slowest group of each iteration
 * (EB_PT_ALIGN_EACH). */
static int pool(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p, struct eb_meas *m)
{
	size_t per_rank = (size_t)pt->turns * (size_t)p->per;
	double *all = NULL, *pooled, w = 0, f = pt->scale > 0 ? pt->scale : 1.0;
	long *n = calloc((size_t)(m->ngroups > 0 ? m->ngroups : 1), sizeof(*n));
	size_t got = 0;
	int g, mine_only = 1, rc = n != NULL ? EB_OK : EB_ENOMEM;

	/* alike on every rank: the gathering below is collective */
	for (g = 0; g < m->ngroups; g++)
		mine_only &= m->groups[g].rank == 0;
	if (rc != EB_OK || (!mine_only && !(pt->flags & EB_PT_SAMPLES))) {
		free(n);
		return rc;
	}
	if (!mine_only)
		rc = gather_rows(c, pt, p->samples, sizeof(double) * (size_t)p->per, (void **)&all);
	m->samples =
	    calloc((size_t)(m->ngroups > 0 ? m->ngroups : 1) * (size_t)p->per, sizeof(*m->samples));
	pooled =
	    calloc((size_t)(m->ngroups > 0 ? m->ngroups : 1) * (size_t)p->per, sizeof(*pooled));
	if (rc == EB_OK && (m->samples == NULL || pooled == NULL))
		rc = EB_ENOMEM;
	for (g = 0; rc == EB_OK && g < m->ngroups; g++) {
		const struct eb_group *x = &m->groups[g];
		const double *from = all != NULL ? all + (size_t)x->rank * per_rank : p->samples;

		n[g] = (long)x->st.n;
		memcpy(m->samples + (size_t)g * (size_t)p->per,
		       from + (size_t)x->turn * (size_t)p->per, sizeof(double) * x->st.n);
		memcpy(pooled + got, from + (size_t)x->turn * (size_t)p->per,
		       sizeof(double) * x->st.n);
		got += x->st.n;
		w += x->st.mean / m->ngroups;
	}
	if (rc == EB_OK && got > 0) {
		eb_stats_compute(pooled, got, &m->all);
		scale(&m->all, f);
		if (pt->flags & EB_PT_PHASE_TIMED)
			m->all.mean = w; /* the groups' weighted means, already scaled */
	}
	if (rc == EB_OK && (pt->flags & EB_PT_ALIGN_EACH))
		rc = slowest_each(m->samples, n, m->ngroups, p->per, f, &m->each);
	free(pooled);
	free(all);
	free(n);
	return rc;
}

/* Span k over every rank's reports: the slowest and fastest; gathered (EB_PT_SAMPLES), the
 * pooled samples and (EB_PT_ALIGN_EACH) the slowest report of each iteration. */
static int span_over(struct eb_ctx *c, const struct eb_pt *pt, const struct eb_point_run *p, int k,
		     struct eb_meas *m)
{
	struct eb_over *o = &m->span[k];
	int i, t, nrep = m->turns * m->nranks, rc = EB_OK;
	long most = 1, *n = calloc((size_t)nrep, sizeof(*n));
	double *mine = NULL, *all = NULL, *rows = NULL, *pooled = NULL;
	size_t got = 0;
	int with = 0;

	extremes(m, k, &o->slow, &o->fast);
	for (i = 0; i < nrep; i++)
		with += m->rep[i].span[k].n > 0;
	if (with == 1) /* one report alone: its own */
		o->all = m->rep[o->slow].span[k];
	if (n == NULL || o->slow < 0 || !(pt->flags & EB_PT_SAMPLES)) {
		free(n);
		return n == NULL ? EB_ENOMEM : EB_OK;
	}
	for (i = 0; i < nrep; i++) {
		n[i] = (long)m->rep[i].span[k].n;
		most = n[i] > most ? n[i] : most;
	}
	mine = calloc((size_t)pt->turns * (size_t)most, sizeof(*mine));
	rows = calloc((size_t)nrep * (size_t)most, sizeof(*rows));
	pooled = calloc((size_t)nrep * (size_t)most, sizeof(*pooled));
	if (mine == NULL || rows == NULL || pooled == NULL)
		rc = EB_ENOMEM;
	for (t = 0; rc == EB_OK && t < pt->turns; t++)
		if (p->spans[t].n[k] > 0)
			memcpy(mine + (size_t)t * (size_t)most, p->spans[t].v[k],
			       sizeof(double) * (size_t)p->spans[t].n[k]);
	if (rc == EB_OK)
		rc = gather_rows(c, pt, mine, sizeof(double) * (size_t)most, (void **)&all);
	/* all is [rank][turn][most]; the reports are [turn][rank] */
	for (i = 0; rc == EB_OK && i < nrep; i++) {
		size_t from =
		    ((size_t)(i % m->nranks) * (size_t)pt->turns + (size_t)(i / m->nranks)) *
		    (size_t)most;

		memcpy(rows + (size_t)i * (size_t)most, all + from, sizeof(double) * (size_t)n[i]);
		memcpy(pooled + got, all + from, sizeof(double) * (size_t)n[i]);
		got += (size_t)n[i];
	}
	if (rc == EB_OK)
		rc = stats_of(pooled, (long)got, &o->all);
	if (rc == EB_OK && (pt->flags & EB_PT_ALIGN_EACH))
		rc = slowest_each(rows, n, nrep, most, 1.0, &o->each);
	free(pooled);
	free(rows);
	free(mine);
	free(all);
	free(n);
	return rc;
}

/* Each rank's own bytes (EB_PT_GATHER) on every rank, [turn][rank]. */
static int gather_blobs(struct eb_ctx *c, const struct eb_pt *pt, const struct eb_point_run *p,
			struct eb_meas *m)
{
	int i, t, nrep = m->turns * m->nranks, rc;
	size_t most = 1;
	char *mine, *all = NULL;

	for (i = 0; i < nrep; i++)
		most = m->rep[i].own_len > most ? (size_t)m->rep[i].own_len : most;
	mine = calloc((size_t)pt->turns, most);
	m->blob = calloc((size_t)nrep, sizeof(*m->blob));
	m->blob_len = calloc((size_t)nrep, sizeof(*m->blob_len));
	if (mine == NULL || m->blob == NULL || m->blob_len == NULL) {
		free(mine);
		return EB_ENOMEM;
	}
	for (t = 0; t < pt->turns; t++)
		if (p->blob[t].len > 0)
			memcpy(mine + (size_t)t * most, p->blob[t].data, p->blob[t].len);
	rc = gather_rows(c, pt, mine, most, (void **)&all);
	free(mine);
	if (rc != EB_OK) {
		free(all);
		return rc;
	}
	m->blob_data = all; /* freed with m */
	for (i = 0; i < nrep; i++) {
		m->blob[i] =
		    all +
		    ((size_t)(i % m->nranks) * (size_t)pt->turns + (size_t)(i / m->nranks)) * most;
		m->blob_len[i] = (size_t)m->rep[i].own_len;
	}
	return EB_OK;
}

void eb_meas_free(struct eb_meas *m)
{
	free(m->nic);
	free(m->rep);
	free(m->groups);
	free(m->samples);
	free(m->blob);
	free(m->blob_len);
	free(m->blob_data);
	memset(m, 0, sizeof(*m));
}

int eb_point_finish(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p,
		    struct eb_meas *m)
{
	int k, rc;

	m->pt = pt;
	m->nranks = c->nranks;
	m->turns = pt->turns;
	m->per = p->per;
	m->phases = pt->flags & EB_PT_PHASE_TIMED ? (int)p->per : 0;
	rc = gather_reps(c, pt, p, m);
	if (rc == EB_OK)
		rc = pool(c, pt, p, m);
	if (rc == EB_OK)
		extremes(m, -1, &m->slow, &m->fast);
	for (k = 0; rc == EB_OK && k < c->b->nspans; k++)
		rc = span_over(c, pt, p, k, m);
	if (rc == EB_OK && (pt->flags & EB_PT_GATHER))
		rc = gather_blobs(c, pt, p, m);
	if (rc == EB_OK)
		rc = eb_nics_finish(c, &p->nics, m);
	if (rc == EB_OK)
		rc = eb_steal_finish(c, &p->steal, m);
	if (rc == EB_OK)
		rc = eb_stages_finish(c, &p->events, m);
	return rc;
}

int eb_point_gather_var(struct eb_ctx *c, const void *mine, size_t len, char **all, size_t *stride)
{
	int64_t most = (int64_t)len;
	char *padded;
	int rc = c->boot != NULL ? eb_boot_allreduce(c->boot, most, EB_MAX, &most,
						     eb_deadline(c->o->fab.timeout_s))
				 : EB_OK;

	*all = NULL;
	*stride = (size_t)(most > 0 ? most : 1);
	if (rc != EB_OK)
		return rc;
	padded = calloc(1, *stride);
	*all = malloc(*stride * (size_t)c->nranks);
	if (padded == NULL || *all == NULL) {
		free(padded);
		return EB_ENOMEM;
	}
	if (len > 0)
		memcpy(padded, mine, len);
	rc = c->boot != NULL ? eb_boot_allgather(c->boot, padded, *all, *stride,
						 eb_deadline(c->o->fab.timeout_s))
			     : (memcpy(*all, padded, *stride), EB_OK);
	free(padded);
	return rc;
}
