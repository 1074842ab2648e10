#include "efabench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double eb_stats_percentile(const double *sorted, size_t n, double pct)
{
	double rank = ceil(pct / 100.0 * (double)n);
	size_t i = rank < 1.0 ? 0 : (size_t)rank - 1;

	return sorted[i < n ? i : n - 1];
}

void eb_stats_compute(double *samples, size_t n, struct eb_stats *out)
{
	double sum = 0.0, sq = 0.0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), cmp_double);
	for (i = 0; i < n; i++)
		sum += samples[i];
	out->n = n;
	out->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (samples[i] - out->mean) * (samples[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->p50 = eb_stats_percentile(samples, n, 50.0);
	out->p99 = eb_stats_percentile(samples, n, 99.0);
}
