/* efabench moe's figures (moe_figures.c): the initiators' and ops' names, the table's
 * columns and a point's record (rank 0: every rank's p50/p99 and writes). */
#ifndef EB_BENCH_MOE_FIGURES_H
#define EB_BENCH_MOE_FIGURES_H

#include "moe_state.h"

#define EB_MOE_NCOLS 14
extern const char *const eb_moe_init_name[];
extern const char *const eb_moe_op_name[];
extern const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS];
void eb_moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		   struct eb_rec *r);

#endif
