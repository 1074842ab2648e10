/* What the harness hands to src/report: the run's settings and variants resolved to names,
 * every rank's GPU and registration path, and room for a point per (size, variant). */
#ifndef EB_BENCH_HANDOVER_H
#define EB_BENCH_HANDOVER_H

#include "bench.h"

/* What rank 0 reports, besides the points: the selected variants, every rank's GPU and the
 * most particular registration path of all, resolved to names in run. */
struct eb_handover {
	struct eb_run run;
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	int32_t *gpus;
	enum eb_reg_path path;
	char libfabric[16];
};

/* The run's settings as the report shows them (after the engine opened). */
void eb_handover_run(const struct eb_ctx *c, struct eb_handover *sh);
/* The variants selected and what the report names them; ref points into the selection. */
void eb_handover_vars(const struct eb_bench *b, const struct eb_ctx *c, struct eb_handover *sh);
/* Every rank's GPU and registration path (collective). */
int eb_handover_mem(struct eb_ctx *c, struct eb_handover *sh);
/* A point per (size, variant), each with room for every rank's group; freed with their own
 * records by eb_handover_free. */
int eb_handover_points(struct eb_run *run);
void eb_handover_free(struct eb_run *run);

#endif
