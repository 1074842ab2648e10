/* eb_stats_compute and eb_stats_percentile on arrays with known answers. */
#include "check.h"
#include "efabench/stats.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

static int near(double got, double want)
{
	double tol = 1e-9 * (fabs(want) > 1.0 ? fabs(want) : 1.0);

	if (fabs(got - want) > tol) {
		fprintf(stderr, "  got %.17g, want %.17g\n", got, want);
		return 0;
	}
	return 1;
}

static int is_sorted(const double *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			return 0;
	return 1;
}

static void test_one_to_hundred(void)
{
	double v[100];
	struct eb_stats s;
	size_t i;

	/* 1..100 in a scrambled order (37 is coprime with 100). */
	for (i = 0; i < 100; i++)
		v[i] = (double)((i * 37) % 100 + 1);
	eb_stats_compute(v, 100, &s);
	CHECK(s.n == 100);
	CHECK(near(s.mean, 50.5));
	CHECK(near(s.min, 1.0));
	CHECK(near(s.max, 100.0));
	CHECK(near(s.p50, 50.0));
	CHECK(near(s.p99, 99.0));
	/* Sample stddev of 1..n is sqrt(n (n + 1) / 12). */
	CHECK(near(s.stddev, sqrt(100.0 * 101.0 / 12.0)));
	CHECK(is_sorted(v, 100));
}

static void test_textbook(void)
{
	double v[] = {9, 4, 5, 2, 7, 4, 5, 4};
	struct eb_stats s;

	eb_stats_compute(v, 8, &s);
	CHECK(s.n == 8);
	CHECK(near(s.mean, 5.0));
	CHECK(near(s.min, 2.0));
	CHECK(near(s.max, 9.0));
	CHECK(near(s.p50, 4.0)); /* rank ceil(4) = 4th of 2 4 4 4 5 5 7 9 */
	CHECK(near(s.p99, 9.0));
	CHECK(near(s.stddev, sqrt(32.0 / 7.0)));
	CHECK(is_sorted(v, 8));
}

static void test_small(void)
{
	double one[] = {3.25}, two[] = {8.0, 2.0}, three[] = {1e-6, -5.0, 2.5};
	double same[] = {7.0, 7.0, 7.0, 7.0};
	struct eb_stats s;

	eb_stats_compute(one, 1, &s);
	CHECK(s.n == 1);
	CHECK(near(s.mean, 3.25) && near(s.min, 3.25) && near(s.max, 3.25));
	CHECK(near(s.p50, 3.25) && near(s.p99, 3.25));
	CHECK(s.stddev == 0.0);

	eb_stats_compute(two, 2, &s);
	CHECK(near(s.mean, 5.0));
	CHECK(near(s.p50, 2.0)); /* rank ceil(1) = 1st */
	CHECK(near(s.p99, 8.0));
	CHECK(near(s.stddev, sqrt(18.0)));
	CHECK(two[0] == 2.0 && two[1] == 8.0);

	eb_stats_compute(three, 3, &s);
	CHECK(near(s.min, -5.0) && near(s.max, 2.5) && near(s.p50, 1e-6));

	eb_stats_compute(same, 4, &s);
	CHECK(near(s.mean, 7.0) && s.stddev == 0.0 && near(s.p99, 7.0));

	s.n = 99;
	s.mean = 1.0;
	eb_stats_compute(one, 0, &s);
	CHECK(s.n == 0 && s.mean == 0.0 && s.max == 0.0);
}

static void test_percentile(void)
{
	double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	double *big;
	size_t n, i;

	CHECK(eb_stats_percentile(v, 10, 10.0) == 1.0);
	CHECK(eb_stats_percentile(v, 10, 10.5) == 2.0);
	CHECK(eb_stats_percentile(v, 10, 25.0) == 3.0);
	CHECK(eb_stats_percentile(v, 10, 50.0) == 5.0);
	CHECK(eb_stats_percentile(v, 10, 90.0) == 9.0);
	CHECK(eb_stats_percentile(v, 10, 99.0) == 10.0);
	CHECK(eb_stats_percentile(v, 10, 100.0) == 10.0);
	CHECK(eb_stats_percentile(v, 10, 0.001) == 1.0);

	/* Nearest rank is exact for every n: the k-th value where k = ceil(pct n / 100). */
	big = malloc(2000 * sizeof(*big));
	if (big == NULL)
		return;
	for (i = 0; i < 2000; i++)
		big[i] = (double)(i + 1);
	for (n = 1; n <= 2000; n++) {
		size_t k50 = (50 * n + 99) / 100, k99 = (99 * n + 99) / 100;

		if (eb_stats_percentile(big, n, 50.0) != (double)k50 ||
		    eb_stats_percentile(big, n, 99.0) != (double)k99) {
			fprintf(stderr, "  n %zu: p50 %g (want %zu) p99 %g (want %zu)\n", n,
				eb_stats_percentile(big, n, 50.0), k50,
				eb_stats_percentile(big, n, 99.0), k99);
			break;
		}
	}
	CHECK(n == 2001);
	free(big);
}

int main(void)
{
	test_one_to_hundred();
	test_textbook();
	test_small();
	test_percentile();
	return check_done();
}
