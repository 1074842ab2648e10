#include "floor.h"
#include "efabench/gpuq_proto.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "floor_kernel.h"
#endif

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Ping and pong, a cache line each. */
struct words {
	struct {
		_Atomic uint64_t v;
		char pad[120];
	} ping, pong;
};

struct side {
	struct words *w;
	int iters;
	double *rtt_ns;
};

/* CPU mode: the thread that stands where the GPU would. */
static void *cpu_side(void *arg)
{
	struct side *s = arg;
	int i;

	for (i = 0; i < s->iters; i++) {
		uint64_t t0 = eb_q_now_ns();

		atomic_store_explicit(&s->w->ping.v, (uint64_t)i + 1, memory_order_release);
		while (atomic_load_explicit(&s->w->pong.v, memory_order_acquire) < (uint64_t)i + 1)
			if (eb_q_now_ns() - t0 > 10000000000ull)
				return NULL;
		s->rtt_ns[i] = (double)(eb_q_now_ns() - t0);
	}
	return NULL;
}

/* The host echoes every ping. */
static int echo(struct words *w, int iters, double timeout_s)
{
	uint64_t deadline = eb_deadline(timeout_s);
	int i;

	for (i = 0; i < iters; i++) {
		while (atomic_load_explicit(&w->ping.v, memory_order_acquire) < (uint64_t)i + 1)
			if (eb_now_ns() > deadline) {
				eb_err("the floor ping-pong stalled at round %d of %d", i, iters);
				return EB_ETIMEDOUT;
			}
		atomic_store_explicit(&w->pong.v, (uint64_t)i + 1, memory_order_release);
	}
	return EB_OK;
}

int eb_floor_measure(int on_gpu, int iters, double timeout_s, double *rtt_ns)
{
	int rc = EB_ESYS;

	if (on_gpu) {
#ifdef EB_HAVE_CUDA
		struct words *hw, *dw = NULL;
		int i;
		uint64_t *dev_rtt = NULL, *h_rtt;

		hw = eb_fk_alloc_mapped(sizeof(*hw), (void **)&dw);
		h_rtt = eb_fk_alloc_mapped(sizeof(uint64_t) * (size_t)iters, (void **)&dev_rtt);
		if (hw != NULL && h_rtt != NULL)
			rc = eb_fk_floor((uint64_t *)&dw->ping.v, (uint64_t *)&dw->pong.v, dev_rtt,
					 iters);
		if (rc == EB_OK)
			rc = echo(hw, iters, timeout_s);
		if (hw != NULL && h_rtt != NULL && eb_fk_wait() != EB_OK && rc == EB_OK)
			rc = EB_ESYS;
		for (i = 0; rc == EB_OK && i < iters; i++)
			rtt_ns[i] = (double)h_rtt[i];
		eb_fk_free_mapped(h_rtt);
		eb_fk_free_mapped(hw);
#endif
		return rc;
	} else {
		struct words *w = aligned_alloc(128, sizeof(*w));
		struct side s = {.w = w, .iters = iters, .rtt_ns = rtt_ns};
		pthread_t th;

		if (w == NULL)
			return EB_ENOMEM;
		memset(w, 0, sizeof(*w));
		rc = pthread_create(&th, NULL, cpu_side, &s) == 0 ? EB_OK : EB_ESYS;
		if (rc == EB_OK) {
			rc = echo(w, iters, timeout_s);
			pthread_join(th, NULL);
		}
		free(w);
	}
	return rc;
}

int eb_floor_samples(int on_gpu, long n, double timeout_s, double *samples)
{
	double *rtt = calloc((size_t)(n > 0 ? n : 1), sizeof(*rtt));
	long i;
	int rc;

	if (rtt == NULL) {
		eb_err("out of memory for %ld round trips of the floor", n);
		return EB_ENOMEM;
	}
	rc = eb_floor_measure(on_gpu, (int)n, timeout_s, rtt);
	for (i = 0; rc == EB_OK && samples != NULL && i < n; i++)
		samples[i] = rtt[i] * 1e-9;
	free(rtt);
	return rc;
}

/* The clock's ping-pong: CLOCK_TRIPS round trips, of which the shortest quarter place the
 * offset. One trip's offset (the host's stamp against the middle of the GPU's two) is off by
 * at most half its round trip. The shortest trip alone moved the offset by 0.3-0.6 us in the
 * runs where a rare far shorter trip came; 512 trips of 2,048 do not hang on one trip. */
#define CLOCK_TRIPS 2048

struct trip {
	double rtt, off, at;
};

static int by_rtt(const void *a, const void *b)
{
	double x = ((const struct trip *)a)->rtt, y = ((const struct trip *)b)->rtt;

	return (x > y) - (x < y);
}

/* Every kept trip's offset is within half its round trip of the true one, so their mean is
 * too. The two clocks drift apart by up to 0.2 us over 2,048 trips, and the short trips fall
 * anywhere among them: the mean offset is the offset at the mean of their echoes' times
 * (exactly, for a steady drift), so that time is where it is placed, not the ping-pong's end.
 * Each trip's offset and time are kept as differences from the first trip's, small enough for
 * a double. */
int eb_clock_place(const uint64_t *sent, const uint64_t *back, const uint64_t *echo, int n,
		   struct eb_clock_point *p)
{
	struct trip *t = n > 0 ? malloc(sizeof(*t) * (size_t)n) : NULL;
	int i, kept = n / 4 > 0 ? n / 4 : 1;
	double off = 0, at = 0;
	int64_t off0;

	if (n < 1) {
		eb_err("the GPU clock needs a round trip at least, not %d", n);
		return EB_EINVAL;
	}
	if (t == NULL) {
		eb_err("out of memory for the GPU clock's %d round trips", n);
		return EB_ENOMEM;
	}
	off0 = (int64_t)(echo[0] - sent[0]);
	for (i = 0; i < n; i++) {
		t[i].rtt = (double)(back[i] - sent[i]);
		t[i].off = (double)((int64_t)(echo[i] - sent[i]) - off0) - t[i].rtt / 2;
		t[i].at = (double)(echo[i] - echo[0]);
	}
	qsort(t, (size_t)n, sizeof(*t), by_rtt);
	for (i = 0; i < kept; i++) {
		off += t[i].off;
		at += t[i].at;
	}
	p->off_ns = off0 + llround(off / kept);
	p->at_ns = (int64_t)echo[0] + llround(at / kept);
	p->unc_ns = t[kept - 1].rtt / 2;
	free(t);
	return EB_OK;
}

#ifdef EB_HAVE_CUDA
/* The host's side of the clock ping-pong: each ping echoed, the host's time kept. */
static int echo_at(struct words *w, int iters, double timeout_s, uint64_t *h)
{
	uint64_t deadline = eb_deadline(timeout_s);
	int i;

	for (i = 0; i < iters; i++) {
		while (atomic_load_explicit(&w->ping.v, memory_order_acquire) < (uint64_t)i + 1)
			if (eb_now_ns() > deadline) {
				eb_err("the GPU clock's ping-pong stalled at round %d of %d", i,
				       iters);
				return EB_ETIMEDOUT;
			}
		h[i] = eb_now_ns();
		atomic_store_explicit(&w->pong.v, (uint64_t)i + 1, memory_order_release);
	}
	return EB_OK;
}

#endif

int eb_floor_gpu_clock(double timeout_s, struct eb_clock_point *p)
{
#ifdef EB_HAVE_CUDA
	struct words *hw, *dw = NULL;
	uint64_t *g, *dg = NULL, *h = malloc(sizeof(*h) * CLOCK_TRIPS);
	int rc = EB_ESYS;

	if (h == NULL) {
		eb_err("out of memory for the GPU clock's %d round trips", CLOCK_TRIPS);
		return EB_ENOMEM;
	}
	hw = eb_fk_alloc_mapped(sizeof(*hw), (void **)&dw);
	g = eb_fk_alloc_mapped(2 * sizeof(uint64_t) * CLOCK_TRIPS, (void **)&dg);
	if (hw != NULL && g != NULL)
		rc = eb_fk_clock((uint64_t *)&dw->ping.v, (uint64_t *)&dw->pong.v, dg,
				 dg + CLOCK_TRIPS, CLOCK_TRIPS);
	if (rc == EB_OK)
		rc = echo_at(hw, CLOCK_TRIPS, timeout_s, h);
	if (hw != NULL && g != NULL && eb_fk_wait() != EB_OK && rc == EB_OK)
		rc = EB_ESYS;
	if (rc == EB_OK)
		rc = eb_clock_place(g, g + CLOCK_TRIPS, h, CLOCK_TRIPS, p);
	eb_fk_free_mapped(g);
	eb_fk_free_mapped(hw);
	free(h);
	return rc;
#else
	(void)timeout_s;
	memset(p, 0, sizeof(*p));
	return EB_ENOTSUP;
#endif
}

int eb_gpu_clock_mark(struct eb_gpu_clock *k, int which, double timeout_s)
{
	struct eb_clock_point p;
	int rc = eb_floor_gpu_clock(timeout_s, &p);

	if (rc != EB_OK)
		return rc;
	k->at[which] = p.at_ns;
	k->off[which] = p.off_ns;
	if (which == 0)
		k->at[1] = 0;
	k->unc_ns = which == 0 || p.unc_ns > k->unc_ns ? p.unc_ns : k->unc_ns;
	eb_dbg("GPU clock %d: offset %" PRId64 " ns at %" PRId64 " ns, within %.1f ns", which,
	       p.off_ns, p.at_ns, p.unc_ns);
	return EB_OK;
}

uint64_t eb_gpu_clock_host(const struct eb_gpu_clock *k, uint64_t t)
{
	int64_t h = (int64_t)t + k->off[0], span = k->at[1] - k->at[0];

	/* The drift's share: small offsets' difference over the run's span, in a double. */
	if (span > 0)
		h += llround((double)(k->off[1] - k->off[0]) * (double)(h - k->at[0]) /
			     (double)span);
	return (uint64_t)h;
}
