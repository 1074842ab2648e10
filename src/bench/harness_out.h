/* What the harness prints and records on rank 0: the header lines, a row per size in the
 * seeds' shape, and a record per (variant, size) for the CSV and JSON files. */
#ifndef EB_BENCH_HARNESS_OUT_H
#define EB_BENCH_HARNESS_OUT_H

#include "harness.h"
#include "../report/table.h"

struct eb_report {
	const struct eb_bench *b;
	const struct eb_ctx *c;
	const char *launcher;
	double link_gbps;	      /* per NIC, 0 when unknown */
	const struct eb_variant *all; /* every variant of the benchmark, as ref indexes them */
	int nvars;		      /* the variants selected to run */
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	struct eb_result *res; /* [nsizes][nvars] */
	int32_t *gpus;	       /* each rank's GPU, -1 for none */
	enum eb_reg_path path; /* how payloads were registered (the most particular of all) */
	struct eb_table table;
};

void eb_harness_header(struct eb_report *r);
void eb_harness_row(struct eb_report *r, int size_index);
/* The footer, then the CSV and JSON files asked for: EB_OK or EB_ESYS. */
int eb_harness_files(struct eb_report *r, uint64_t wrong);

#endif
