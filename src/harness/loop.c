#include "loop.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/ticks.h"

#include <stddef.h>

/* Ticks to seconds, scaled by the phase's span timed both ways (exact where ticks are ns). */
static void to_seconds(double *samples, long n, uint64_t span_ns, uint64_t span_ticks)
{
	double f = eb_ticks_tsc && span_ticks > 0 ? (double)span_ns / (double)span_ticks : 1.0;
	long i;

	for (i = 0; i < n; i++)
		samples[i] *= f * 1e-9;
}

static int check(const struct eb_loop *l, uint64_t *wrong)
{
	int rc = l->settle != NULL ? l->settle(l->arg) : EB_OK;

	if (rc == EB_OK && l->verify != NULL)
		rc = l->verify(l->arg, wrong);
	return rc;
}

/* Prepare and align: the clock starts when this returns. */
static int start(const struct eb_loop *l)
{
	int rc = l->prepare != NULL ? l->prepare(l->arg) : EB_OK;

	if (rc == EB_OK && l->align != NULL)
		rc = l->align(l->arg);
	return rc;
}

int eb_loop_phase(const struct eb_loop *l, long iters, double *samples, long *nsamples,
		  uint64_t *wrong)
{
	uint64_t t0 = 0, t1, ns0 = eb_now_ns(), k0 = eb_ticks();
	int self = l->iter == NULL;
	long m = self && !l->check && !l->align_each ? iters : 1, got = 0, i;
	int rc = EB_OK;

	for (i = 0; i < iters && rc == EB_OK; i += m) {
		if (i == 0 || l->check) {
			if (i > 0)
				rc = check(l, wrong);
			if (rc == EB_OK)
				rc = start(l);
			if (rc != EB_OK)
				break;
			t0 = eb_ticks();
		} else if (l->align_each && l->align != NULL) {
			rc = l->align(l->arg);
			if (rc != EB_OK)
				break;
			t0 = eb_ticks();
		}
		if (self) {
			long n = 0;

			rc = l->run(l->arg, m, samples != NULL ? samples + got : NULL, &n);
			got += samples != NULL ? n : 0;
		} else {
			rc = l->iter(l->arg, i);
			/* One timestamp: it ends this iteration and starts the next. */
			t1 = eb_ticks();
			if (samples != NULL)
				samples[got++] = (double)(t1 - t0);
			t0 = t1;
		}
		if (rc == EB_OK && l->after != NULL)
			l->after(l->arg, i);
	}
	if (rc == EB_OK && !self && samples != NULL)
		to_seconds(samples, got, eb_now_ns() - ns0, eb_ticks() - k0);
	if (rc == EB_OK && iters > 0)
		rc = check(l, wrong);
	if (nsamples != NULL)
		*nsamples = got;
	return rc;
}
