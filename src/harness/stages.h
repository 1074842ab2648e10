/* Where a sampled operation's time goes: the events a benchmark stamps on it (eb_event) on
 * every rank and thread it passes, gathered to rank 0 after each point, put on one clock (ranks
 * of one host share CLOCK_MONOTONIC; other hosts' offsets come from a barrier exchange at the
 * start, their uncertainty stated), and turned into each stage's statistics (eb_meas.stages)
 * and, with --trace, the Chrome Trace Event Format's spans. */
#ifndef EB_HARNESS_STAGES_H
#define EB_HARNESS_STAGES_H

#include "bench.h"

struct eb_event_rec {
	uint64_t id, t;
	int32_t ev, tid;
};

struct eb_events {
	struct eb_event_rec *v;
	size_t n, cap;
	int lost; /* an event that found no memory: the point fails */
};

/* Every rank's clock against rank 0's, once per run (collective where the benchmark names
 * events): offsets in ns and their uncertainty. */
struct eb_clocks {
	double *off_ns; /* [ranks]: add to a rank's time for rank 0's */
	double unc_ns;
	int hosts; /* hosts whose clocks differ (1: one clock) */
};

int eb_clocks_align(struct eb_ctx *c, struct eb_clocks *k);
void eb_clocks_free(struct eb_clocks *k);

/* After a point's last visit, collective: every rank's events on rank 0, the stages'
 * statistics into m->stages, and (trace not NULL) the sampled operations' spans appended. */
int eb_stages_finish(struct eb_ctx *c, struct eb_events *ev, struct eb_meas *m);
void eb_events_free(struct eb_events *ev);

/* An event as rank 0 has it: its rank, on rank 0's clock. */
struct eb_at {
	uint64_t id;
	double t; /* ns */
	int ev, tid, rank;
};

/* Rank 0: the Chrome Trace Event Format's spans of every point (trace.c): the sampled
 * operations of a point, sorted by sample then time, added; the file written at the end. */
struct eb_trace;
int eb_trace_open(struct eb_trace **t, const char *path);
void eb_trace_point(struct eb_trace *t, const struct eb_ctx *c, const struct eb_meas *m,
		    const struct eb_at *v, size_t n);
int eb_trace_close(struct eb_trace *t, const struct eb_ctx *c);

/* The stage with the largest p50 among those that are no part (-1: none measured); with
 * `inside`, then the part of it with the largest p50 where it has measured parts. */
int eb_stages_top(const struct eb_ctx *c, const struct eb_stages *s, int inside);

/* Rank 0: a record's stages (JSON "stages"), and the table of a row's points after the
 * benchmark's with the line naming the stage that dominates each. */
void eb_stages_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *r);
void eb_stages_table(const struct eb_ctx *c, struct eb_sheet *s, const struct eb_meas *m, int n);

#endif
