/* The sweep: the points of a fabric benchmark that names no plan of its own, every size of
 * -b..-e by every variant (a column of the seeds' table), the variants of a size taking turns
 * --rounds times; its header facts, its records (every statistic, each group of ranks) and
 * the seeds' table with the ratio table and notes under it. */
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
	const struct eb_rec *row[EB_MAX_VARIANTS]; /* rank 0: the records of the current size */
};

/* The variants selected (--layout) and what they are compared with. */
void eb_sweep_open(const struct eb_ctx *c, struct eb_sweep *w);
/* After setup: every rank's GPU and registration path (collective). */
int eb_sweep_gather(struct eb_ctx *c, struct eb_sweep *w);
void eb_sweep_close(struct eb_sweep *w);
/* Row `row` = size index: a point per variant; 0 after the last size. */
int eb_sweep_plan(struct eb_ctx *c, const struct eb_sweep *w, int row, struct eb_pt *pts);
/* Rank 0: the header facts, the seeds' table head; a record per point, a table row per size;
 * the notes and ratio table after the last. */
void eb_sweep_facts(const struct eb_ctx *c, const struct eb_sweep *w, struct eb_sheet *s);
void eb_sweep_record(const struct eb_ctx *c, const struct eb_sweep *w, const struct eb_meas *m,
		     struct eb_sheet *s, struct eb_rec *r);
void eb_sweep_row(struct eb_sweep *w, struct eb_sheet *s, const struct eb_rec *const *recs);
void eb_sweep_notes(const struct eb_ctx *c, const struct eb_sweep *w, struct eb_sheet *s);

/* Whether a point's mean time sits well above its median (over at least 3 iterations timed
 * one by one): a few stalls moved the mean its Gbps comes from, and the table marks it. */
int eb_sweep_skewed(const struct eb_stats *all, int phases);

/* Distinct NICs rank 0 drives in the variant (BusBW's denominator counts these). */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks);
/* Bytes a measuring rank injects per iteration of the variant. */
double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks);

/* The benchmark's variants whose layout is in --layout's mask (0: all); returns how many. */
int eb_harness_select(const struct eb_bench *b, const struct eb_opts *o,
		      const struct eb_variant **vars);

#endif
