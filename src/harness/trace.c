/* --trace FILE: the sampled operations' stages in the Chrome Trace Event Format, which
 * Perfetto's UI and chrome://tracing open as a timeline. A process per rank; in it, lanes of
 * samples (a sample takes the first lane free at its start, so spans nest per lane): each
 * sample's whole span on the rank, and inside it its stages, each shown on the rank whose
 * event ends it. Times in microseconds from the first event of the run. */
#include "stages.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "efabench/versions.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LANES 64

struct eb_trace {
	FILE *f;
	char *path;
	double t0; /* ns of the first event, -1 before it */
	int any;
	int nranks;
	double *lane_end; /* [rank][LANES] ns */
	long samples;
};

int eb_trace_open(struct eb_trace **out, const char *path)
{
	struct eb_trace *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (t == NULL || (t->path = strdup(path)) == NULL) {
		free(t);
		return EB_ENOMEM;
	}
	t->f = fopen(path, "w");
	if (t->f == NULL) {
		eb_err("cannot write --trace %s", path);
		free(t->path);
		free(t);
		return EB_ESYS;
	}
	t->t0 = -1;
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", t->f);
	*out = t;
	return EB_OK;
}

static void span(struct eb_trace *t, const char *name, const char *point, uint64_t id, int pid,
		 int tid, double from, double to)
{
	fprintf(t->f,
		"%s\n{\"name\": \"%s\", \"cat\": \"stage\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": "
		"%.3f, \"pid\": %d, \"tid\": %d, \"args\": {\"point\": \"%s\", \"sample\": "
		"%llu}}",
		t->any++ ? "," : "", name, (from - t->t0) * 1e-3, (to - from) * 1e-3, pid, tid,
		point, (unsigned long long)id);
}

/* The first lane of rank whose last span ended by `from` (the last lane when none is). */
static int lane(struct eb_trace *t, int rank, double from, double to)
{
	double *end = t->lane_end + (size_t)rank * LANES;
	int l;

	for (l = 0; l < LANES - 1 && end[l] > from; l++)
		;
	end[l] = to > end[l] ? to : end[l];
	return l;
}

/* One sample on one rank: its span there, and its stages that end there. */
static void sample_on(struct eb_trace *t, const struct eb_ctx *c, const char *point,
		      const struct eb_at *v, size_t a, size_t b, int rank)
{
	double first = -1, last = -1, from, to;
	size_t i, j;
	int st, l;

	for (i = a; i < b; i++)
		if (v[i].rank == rank) {
			first = first < 0 ? v[i].t : first;
			last = v[i].t;
		}
	if (first < 0)
		return;
	for (st = 0; st < c->b->nstages; st++) /* a stage ending here starts its span */
		for (i = a; i < b; i++)
			if (v[i].ev == c->b->stages[st].to && v[i].rank == rank)
				for (j = a; j < b; j++)
					if (v[j].ev == c->b->stages[st].from && v[j].t < first)
						first = v[j].t;
	l = lane(t, rank, first, last);
	span(t, "sample", point, v[a].id, rank, l, first, last);
	for (st = 0; st < c->b->nstages; st++) {
		from = to = -1;
		for (i = a; i < b; i++) {
			if (v[i].ev == c->b->stages[st].from)
				from = v[i].t;
			if (v[i].ev == c->b->stages[st].to && v[i].rank == rank)
				to = v[i].t;
		}
		if (from >= 0 && to >= from)
			span(t, c->b->stages[st].name, point, v[a].id, rank, l, from, to);
	}
}

void eb_trace_point(struct eb_trace *t, const struct eb_ctx *c, const struct eb_meas *m,
		    const struct eb_at *v, size_t n)
{
	const char *point = m->pt->name != NULL ? m->pt->name : "";
	size_t a, b;
	int r;

	if (t->lane_end == NULL) {
		t->nranks = c->nranks;
		t->lane_end = calloc((size_t)c->nranks * LANES, sizeof(*t->lane_end));
		if (t->lane_end == NULL)
			return;
	}
	for (a = 0; a < n && t->samples == 0; a++) /* the run's first point: its earliest event */
		t->t0 = t->t0 < 0 || v[a].t < t->t0 ? v[a].t : t->t0;
	for (a = 0; a < n; a = b) {
		for (b = a; b < n && v[b].id == v[a].id; b++)
			;
		for (r = 0; r < c->nranks; r++)
			sample_on(t, c, point, v, a, b, r);
		t->samples++;
	}
}

/* The process and lane names, then the file closed. */
int eb_trace_close(struct eb_trace *t, const struct eb_ctx *c)
{
	char host[64], date[32];
	struct eb_versions v;
	time_t now = time(NULL);
	struct tm utc;
	int r, l, rc;

	for (r = 0; t->lane_end != NULL && r < t->nranks; r++) {
		fprintf(t->f,
			"%s\n{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"dur\": 0, "
			"\"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
			t->any++ ? "," : "", r, r);
		for (l = 0; l < LANES; l++)
			if (t->lane_end[(size_t)r * LANES + (size_t)l] > 0)
				fprintf(
				    t->f,
				    ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, "
				    "\"dur\": 0, \"pid\": %d, \"tid\": %d, \"args\": {\"name\": "
				    "\"samples, lane %d\"}}",
				    r, l, l);
	}
	eb_versions_get(&v);
	eb_host_name(host, sizeof(host));
	gmtime_r(&now, &utc);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &utc);
	fprintf(t->f,
		"\n], \"otherData\": {\"bench\": \"%s\", \"samples\": %ld, \"stamp\": "
		"{\"efabench\": \"%s\", \"commit\": \"%s\", \"host\": \"%s\", \"date\": "
		"\"%s\"}}}\n",
		c->o->cmd->name, t->samples, v.efabench, v.commit, host, date);
	rc = fclose(t->f) == 0 ? EB_OK : EB_ESYS;
	if (rc != EB_OK)
		eb_err("writing --trace %s failed", t->path);
	free(t->path);
	free(t->lane_end);
	free(t);
	return rc;
}
