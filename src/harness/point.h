/* What a point keeps on this rank across the rounds of its row (the schedule fills it), and the
 * point as every rank then has it (eb_meas): each rank's report, the samples pooled, the slowest
 * and fastest groups, the slowest group of each iteration, each span's the same, and the bytes
 * ranks report of their own. Statistics of samples are made here and nowhere else. */
#ifndef EB_HARNESS_POINT_H
#define EB_HARNESS_POINT_H

#include "bench.h"
#include "nics.h"
#include "stages.h"
#include "steal.h"

/* One turn's spans on this rank. */
struct eb_spans {
	double *v[EB_MAX_SPANS];
	long n[EB_MAX_SPANS], cap[EB_MAX_SPANS];
	int lost; /* a sample that found no memory: the point fails */
};

/* One turn's report bytes (EB_PT_GATHER). */
struct eb_blob {
	char *data;
	size_t len;
};

struct eb_point_run {
	double *samples;	  /* [turn][per] */
	long *count;		  /* [turn]: samples so far (fewer than iterations where a run
				   * hook times batches of them) */
	struct eb_turn_rep *mine; /* [turn] */
	struct eb_spans *spans;	  /* [turn] */
	struct eb_blob *blob;	  /* [turn] */
	struct eb_nicrun nics;	  /* what the rank's NICs carried in its visits */
	struct eb_stealrun steal; /* the CPU time a hypervisor took in its visits */
	struct eb_events events;  /* the sampled operations' events of its timed phases */
	long per;
};

/* Room for a point of per samples a turn. */
int eb_point_alloc(const struct eb_pt *pt, long per, struct eb_point_run *p);
void eb_point_free(struct eb_point_run *p, int turns);

/* After the point's last round, on every rank (collective): m gets the point. */
int eb_point_finish(struct eb_ctx *c, const struct eb_pt *pt, struct eb_point_run *p,
		    struct eb_meas *m);
void eb_meas_free(struct eb_meas *m);

/* Every rank's len bytes to every rank: *all gets them at a *stride each (the longest),
 * rank by rank. Collective; EB_ENOMEM. */
int eb_point_gather_var(struct eb_ctx *c, const void *mine, size_t len, char **all, size_t *stride);

/* Iterations in timed phase k of nph (the first ones get the rest). */
long eb_point_phase_len(long iters, long nph, long k);

#endif
