#define _GNU_SOURCE
#include "proxy_state.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "core/log.h"
#include "proxy_work.h"
#ifdef EB_HAVE_CUDA
#include "proxy_kernels.h"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- through the proxy ---- */

/* Between two looks at producers or signals: puts are timed on the producers' clock, so
 * nothing here is latency, and a spinning main thread takes a core (or a vCPU's physical
 * core) the proxy thread or the peer's may need. */
static void nap(void)
{
	struct timespec t = {0, 20000};

	nanosleep(&t, NULL);
}

struct cpu_producer {
	pthread_t th;
	const struct eb_pwork *w;
	uint64_t id;
	int failed;
	_Atomic int finished;
};

static void *cpu_produce(void *arg)
{
	struct cpu_producer *p = arg;

	eb_producer_set(p->id);
	p->failed = eb_pwork_run(p->w, p->id) != 0;
	atomic_store(&p->finished, 1);
	return NULL;
}

/* Wait for CPU producers the same way: a lost peer makes them give up at once. */
static int wait_cpu(struct eb_ctx *c, struct pstate *st, struct cpu_producer *p, int np)
{
	int i, left = np, rc = EB_OK;

	while (left > 0) {
		for (i = 0, left = 0; i < np; i++)
			left += !atomic_load(&p[i].finished);
		if (left > 0 && rc == EB_OK && (rc = eb_boot_check(c->e->boot)) != EB_OK)
			eb_proxy_abort(st->px);
		if (left > 0)
			nap();
	}
	return rc;
}

#ifdef EB_HAVE_CUDA
/* Wait for GPU producers, watching for lost peers: a dead target must end the run, not hang. */
static int wait_gpu(struct eb_ctx *c, struct pstate *st, const struct eb_pwork *w, long n,
		    uint64_t *t, int *failed)
{
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s * (double)(n + 2));
	int rc;

	while ((rc = eb_pk_done(w, n, t, failed)) == 0) {
		if (eb_boot_check(c->e->boot) != EB_OK || eb_now_ns() > deadline) {
			eb_proxy_abort(st->px); /* producers give up; the kernel ends */
			while (eb_pk_done(w, n, t, failed) == 0)
				nap();
			return eb_now_ns() > deadline ? EB_ETIMEDOUT : EB_EPEER;
		}
		nap();
	}
	return rc < 0 ? rc : EB_OK;
}
#endif

static int produce(struct eb_ctx *c, struct pstate *st, struct eb_pwork *w, int np, long n,
		   uint64_t *t, int *failed)
{
	struct cpu_producer *p;
	int i, rc = EB_OK;

	if (!eb_px_opts(c)->on_cpu) {
#ifdef EB_HAVE_CUDA
		rc = eb_pk_times(w, n);
		if (rc == EB_OK)
			rc = eb_pk_launch(w, np);
		if (rc == EB_OK)
			rc = wait_gpu(c, st, w, n, t, failed);
		eb_pk_free_times(w);
#endif
		return rc;
	}
	p = calloc((size_t)np, sizeof(*p));
	w->t = calloc((size_t)n + 2, sizeof(*w->t));
	if (p == NULL || w->t == NULL) {
		free(p);
		free((void *)w->t);
		return EB_ENOMEM;
	}
	w->t[0] = UINT64_MAX;
	for (i = 0; i < np && rc == EB_OK; i++) {
		p[i] = (struct cpu_producer){.w = w, .id = (uint64_t)i};
		if (pthread_create(&p[i].th, NULL, cpu_produce, &p[i]) != 0) {
			eb_err("cannot start producer thread %d", i);
			eb_proxy_abort(st->px);
			rc = EB_ESYS;
			np = i;
		}
	}
	if (rc == EB_OK)
		rc = wait_cpu(c, st, p, np);
	for (i = 0; i < np; i++) {
		pthread_join(p[i].th, NULL);
		*failed |= p[i].failed;
	}
	for (i = 0; i < n + 2; i++)
		t[i] = w->t[i];
	free((void *)w->t);
	free(p);
	return rc;
}

/* The producers' error bits in words (EB_Q_ERR_*, lowest first). */
static void say_errors(uint32_t bits, char *buf, size_t len)
{
	static const char *const what[] = {
	    "a producer gave up waiting for room in the queue",
	    "a quiet gave up waiting for its puts to complete",
	    "a put or signal outside the buffers was refused",
	    "a signal wait gave up at its deadline",
	    "the proxy failed (it said why above)",
	};
	size_t used = 0, k;

	buf[0] = '\0';
	for (k = 0; k < sizeof(what) / sizeof(what[0]); k++)
		if ((bits & (1u << k)) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "; " : "",
						 what[k]);
	if (used == 0)
		snprintf(buf, len, "a producer thread failed");
}

/* Rank 0: the producers' puts; per-put samples for blocking puts, else the mean. */
int eb_px_init(struct eb_ctx *c, struct pstate *st, long n, double *samples)
{
	int np = eb_px_producers(c, st), failed = 0, rc;
	struct eb_pwork w = {.d = eb_proxy_dev(st->px),
			     .peer = (unsigned)c->peer,
			     .bytes = c->bytes,
			     .region = c->bytes > 0 ? eb_px_span(c, st) : 1,
			     .n = (n + np - 1) / np,
			     .blocking = (c->var->tag & 0xff) == T_BLOCK,
			     .bad = eb_px_opts(c)->bad_put};
	uint64_t *t = calloc((size_t)n + 2, sizeof(*t));
	long i;

	if (t == NULL)
		return EB_ENOMEM;
	rc = produce(c, st, &w, np, w.n, t, &failed);
	if (rc == EB_OK && (failed || eb_proxy_errors(st->px) != 0)) {
		uint64_t who = eb_proxy_refused(st->px);

		uint32_t bits = eb_proxy_errors(st->px);
		char why[256];

		say_errors(bits, why, sizeof(why));
		if (who)
			eb_err(
			    "producers failed: %s; the first refused put came from producer %llu "
			    "(%s) (queue error bits 0x%x)",
			    why, (unsigned long long)(who - 1),
			    eb_px_opts(c)->on_cpu ? "CPU thread" : "GPU thread index", bits);
		else
			eb_err("producers failed: %s (queue error bits 0x%x)", why, bits);
		rc = EB_EFABRIC;
	}
	/* blocking: every put timed; NBI is timed by the phase, one sample */
	for (i = 0; rc == EB_OK && samples != NULL && i < (w.blocking ? n : 1); i++)
		samples[i] = w.blocking ? (double)(t[2 + i] - (i == 0 ? t[0] : t[1 + i])) * 1e-9
					: (double)(t[1] - t[0]) * 1e-9 / (double)(w.n * np);
	free(t);
	return rc;
}

/* A target: every producer's signal (one each) means every byte before it has landed. */
int eb_px_target(struct eb_ctx *c, struct pstate *st, long n)
{
	_Atomic uint64_t *sig = (_Atomic uint64_t *)eb_proxy_signals(st->px);
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s * (double)(n + 2));
	uint64_t want = (uint64_t)eb_px_producers(c, st);

	while (atomic_load_explicit(sig, memory_order_acquire) < want) {
		int rc = eb_boot_check(c->e->boot);

		if (rc != EB_OK)
			return rc;
		/* A stopped rank 0 is alive to the bootstrap: judge it by what arrives. */
		if (eb_now_ns() > deadline ||
		    eb_proxy_idle_ns(st->px) > (uint64_t)(c->o->fab.timeout_s * 1e9)) {
			eb_err("timed out waiting for rank 0's signal (%llu of %llu producers): "
			       "nothing arrived from rank 0 for %.1f s",
			       (unsigned long long)atomic_load(sig), (unsigned long long)want,
			       (double)eb_proxy_idle_ns(st->px) * 1e-9);
			return EB_ETIMEDOUT;
		}
		nap();
	}
	return EB_OK;
}
