/* What bounds a result (verdict.c): rank 0 names it from the point's figures, its record's
 * BusBW, its NICs' counters and its stages; the record's JSON "verdict", and a line per point
 * of the last row after the tables. */
#ifndef EB_HARNESS_VERDICT_H
#define EB_HARNESS_VERDICT_H

#include "bench.h"

void eb_verdict(const struct eb_ctx *c, struct eb_meas *m, const struct eb_rec *r);
void eb_verdict_record(const struct eb_meas *m, struct eb_rec *r);
void eb_verdict_lines(struct eb_sheet *s, const struct eb_meas *m, int n);

#endif
