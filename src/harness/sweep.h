/* The sweep: a plan of the fabric benchmarks whose points are every size of -b..-e by every
 * variant (a column of the seeds' table), the variants of a size taking turns --rounds times;
 * its header facts, its records (every statistic, each group of ranks) and the seeds' table
 * with the ratio table and notes under it, as hooks such a benchmark names. */
#ifndef EB_HARNESS_SWEEP_H
#define EB_HARNESS_SWEEP_H

#include "bench.h"

struct eb_sweep {
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	int nvars;
	int nics[EB_MAX_VARIANTS]; /* distinct NICs rank 0 drives: BusBW's denominator */
	int ref[EB_MAX_VARIANTS];  /* the selected variant each is compared with; -1: none */
	enum eb_memsel sel;	   /* which of a variant's names the run shows */
	int32_t *gpus;		   /* every rank's GPU */
	enum eb_reg_path path;	   /* the most particular registration of any rank */
};

/* The hooks a sweep benchmark takes from the sweep, beside its plan, facts and record
 * (eb_sweep_plan, eb_sweep_facts, eb_sweep_record, or hooks of its own around them). The
 * gather opens the sweep (the variants selected, what they are compared with, every rank's GPU
 * and registration path: c->sweep, freed by the harness with eb_sweep_free); the plan's row
 * `row` is size index `row`, a point per variant; record, row and close make the seeds' table,
 * the ratio table and the notes under it. Facts and figures of the benchmark's own go in with
 * eb_sweep_facts_own and eb_sweep_record_own. */
#define EB_SWEEP_HOOKS                                                                             \
	.uses = EB_USES_FABRIC, .min_ranks = 2, .ahead = 1, .gather = eb_sweep_gather,             \
	.row = eb_sweep_row, .close = eb_sweep_notes

int eb_sweep_gather(struct eb_ctx *c);
void eb_sweep_free(struct eb_sweep *w);
int eb_sweep_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max);
void eb_sweep_facts(const struct eb_ctx *c, struct eb_sheet *s);
void eb_sweep_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		     struct eb_rec *r);
void eb_sweep_row(const struct eb_ctx *c, struct eb_sheet *s, const struct eb_rec *const *recs,
		  int n);
int eb_sweep_notes(const struct eb_ctx *c, struct eb_sheet *s);
/* The same, with facts of the benchmark's own (after the NICs each variant drives), and
 * figures of its own in each record (before the settings and groups). */
void eb_sweep_facts_own(const struct eb_ctx *c, struct eb_sheet *s,
			void (*own)(const struct eb_ctx *c, struct eb_sheet *s));
void eb_sweep_record_own(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			 struct eb_rec *r,
			 void (*own)(const struct eb_ctx *c, const struct eb_meas *m,
				     struct eb_rec *r));

/* Whether a point's mean time sits well above its median (over at least 3 iterations timed
 * one by one): a few stalls moved the mean its Gbps comes from, and the table marks it. */
int eb_sweep_skewed(const struct eb_stats *all, int phases);

/* Distinct NICs rank 0 drives in the variant (BusBW's denominator counts these). */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks);
/* Bytes a measuring rank injects per iteration of the variant. */
double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks);

/* The sweep's variants whose layout is in --layout's mask (0: all); returns how many. */
int eb_sweep_select(const struct eb_sweep_def *d, const struct eb_opts *o,
		    const struct eb_variant **vars);

#endif
