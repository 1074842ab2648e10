/* Summary statistics of per-iteration times. */
#ifndef EFABENCH_STATS_H
#define EFABENCH_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_stats {
	size_t n;
	double mean, min, p50, p99, max, stddev;
};

/* Summarise n samples; sorts the array in place. Percentiles use the nearest-rank rule. */
void eb_stats_compute(double *samples, size_t n, struct eb_stats *out);

/* Nearest-rank percentile (0 < pct <= 100) of an ascending array of n > 0 samples. */
double eb_stats_percentile(const double *sorted, size_t n, double pct);

#ifdef __cplusplus
}
#endif

#endif
