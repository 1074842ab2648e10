#define _GNU_SOURCE /* cpu_set_t, pthread_setaffinity_np */
#include "queue_prod.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/opt.h"
#include "efabench/topo.h"
#include "gpu/floor.h"
#ifdef EB_HAVE_CUDA
#include "queue_kernels.h"
#include "gpu/floor_kernel.h"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Drain producers * per commands, checking each; with ack, echo every sequence + 1 to it (the
 * latency test's way back) and keep when each sequence was seen in seen_at. */
static int consume(struct eb_gpuq *q, uint64_t producers, uint64_t per, _Atomic uint64_t *ack,
		   uint64_t *seen_at, double timeout_s, struct tally *t)
{
	uint32_t *next = calloc(producers, sizeof(*next));
	struct eb_q_cmd buf[POLL_MAX];
	uint64_t total = producers * per, idle_since = eb_now_ns(), p;
	int i, rc = EB_OK;

	memset(t, 0, sizeof(*t));
	if (next == NULL)
		return EB_ENOMEM;
	while (t->seen < total) {
		int n = eb_gpuq_poll(q, buf, POLL_MAX);
		uint64_t now = eb_now_ns();

		if (n == 0) {
			if (eb_gpuq_errors(q) != 0) {
				eb_err(
				    "a producer gave up (queue error bits 0x%x) after %llu of %llu "
				    "commands",
				    eb_gpuq_errors(q), (unsigned long long)t->seen,
				    (unsigned long long)total);
				rc = EB_ETIMEDOUT;
				break;
			}
			if ((double)(now - idle_since) * 1e-9 > timeout_s) {
				eb_err("no command for %.1f s: %llu of %llu arrived", timeout_s,
				       (unsigned long long)t->seen, (unsigned long long)total);
				rc = EB_ETIMEDOUT;
				break;
			}
			continue;
		}
		idle_since = now;
		if (t->seen == 0)
			t->first_s = (double)now * 1e-9;
		for (i = 0; i < n; i++) {
			uint64_t lo = buf[i].lo, who = lo >> 32;
			uint32_t seq = (uint32_t)lo;

			if (buf[i].hi != eb_q_check(lo))
				t->torn++;
			else if (who >= producers || seq >= per)
				t->alien++;
			else if (seq < next[who])
				t->dup++;
			else if (seq > next[who])
				t->lost +=
				    seq - next[who]; /* a gap: a command overtaken or missing */
			if (who < producers && seq >= next[who] && seq < per)
				next[who] = seq + 1;
			if (ack != NULL && seq < per)
				seen_at[seq] = now;
			if (ack != NULL)
				atomic_store_explicit(ack, (uint64_t)seq + 1, memory_order_release);
		}
		t->seen += (uint64_t)n;
		t->last_s = (double)eb_now_ns() * 1e-9;
		/* Commands here need no further work: each is complete once consumed. */
		eb_gpuq_complete(q, q->pos);
	}
	/* Giving up: release producers still waiting for room instead of letting them time out. */
	if (rc != EB_OK)
		eb_gpuq_close(q);
	for (p = 0; p < producers; p++)
		t->lost += per - (next[p] < per ? next[p] : per);
	free(next);
	return rc;
}

uint64_t eb_q_tally_wrong(const struct tally *t)
{
	return t->lost + t->dup + t->torn + t->alien;
}

/* CPU producers: threads running the same push as the GPU kernel. */
struct cpu_prod {
	pthread_t th;
	const struct eb_gpuq_dev *q;
	uint64_t id;
	uint32_t per;
	_Atomic uint64_t *ack; /* latency mode */
	uint64_t *pushed;
	double *rtt_ns;
};

static void *cpu_produce(void *arg)
{
	struct cpu_prod *p = arg;
	uint64_t last = 0;
	uint32_t s;

	for (s = 0; s < p->per; s++) {
		uint64_t lo = p->id << 32 | s, t0 = eb_q_now_ns();

		last = eb_q_push(p->q, lo, eb_q_check(lo));
		if (last == UINT64_MAX)
			return NULL;
		if (p->ack == NULL)
			continue;
		p->pushed[s] = t0;
		while (atomic_load_explicit(p->ack, memory_order_acquire) < (uint64_t)s + 1)
			if (eb_q_now_ns() - t0 > p->q->timeout_ns)
				return NULL;
		p->rtt_ns[s] = (double)(eb_q_now_ns() - t0);
	}
	if (p->per > 0)
		eb_q_quiet(p->q, last);
	return NULL;
}

/* Each round trip's push-to-seen: the consumer's stamp less the push's on the host's clock. */
static void one_way(const struct qlat *lat, const uint64_t *pushed, const uint64_t *seen_at,
		    uint32_t per, const struct eb_gpu_clock *k)
{
	uint32_t i;

	for (i = 0; i < per; i++)
		lat->seen_ns[i] = (double)seen_at[i] -
				  (double)(k != NULL ? eb_gpu_clock_host(k, pushed[i]) : pushed[i]);
}

/* GPU threads; for latency one, its pushes stamped with the GPU's clock, placed on the host's
 * by the clock measured just before and just after. */
static int gpu_run(struct qctx *c, int blocks, int threads, uint32_t per, struct qlat *lat,
		   uint64_t *seen_at, struct tally *t)
{
#ifdef EB_HAVE_CUDA
	uint64_t *dev = NULL, *host = NULL; /* [per] push stamps, then [per] round trips */
	struct eb_gpu_clock k;
	uint32_t i;
	int rc;

	if (lat == NULL) {
		rc = eb_qk_produce(c->q.dev, blocks, threads, per);
		if (rc == EB_OK)
			rc = consume(&c->q, (uint64_t)blocks * (uint64_t)threads, per, NULL, NULL,
				     c->timeout_s, t);
		return eb_fk_wait() != EB_OK && rc == EB_OK ? EB_ESYS : rc;
	}
	host = eb_fk_alloc_mapped(2 * sizeof(uint64_t) * per, (void **)&dev);
	if (host == NULL)
		return EB_ESYS;
	rc = eb_gpu_clock_mark(&k, 0, c->timeout_s);
	if (rc == EB_OK)
		rc = eb_qk_latency(c->q.dev, (uint64_t *)&c->d->ack.v, dev, dev + per, (int)per);
	if (rc == EB_OK)
		rc = consume(&c->q, 1, per, &c->h->ack.v, seen_at, c->timeout_s, t);
	if (eb_fk_wait() != EB_OK && rc == EB_OK)
		rc = EB_ESYS;
	if (rc == EB_OK)
		rc = eb_gpu_clock_mark(&k, 1, c->timeout_s);
	for (i = 0; rc == EB_OK && i < per; i++)
		lat->rtt_ns[i] = (double)host[per + i];
	if (rc == EB_OK) {
		one_way(lat, host, seen_at, per, &k);
		lat->clock_unc_ns = k.unc_ns;
	}
	eb_fk_free_mapped(host);
	return rc;
#else
	(void)c, (void)blocks, (void)threads, (void)per, (void)lat, (void)seen_at, (void)t;
	return EB_ENOTSUP;
#endif
}

/* CPU threads running the same push; their clock is the host's. */
static int cpu_run(struct qctx *c, int threads, uint32_t per, struct qlat *lat, uint64_t *seen_at,
		   struct tally *t)
{
	struct cpu_prod *p = calloc((size_t)threads, sizeof(*p));
	uint64_t *pushed = lat != NULL ? calloc(per, sizeof(*pushed)) : NULL;
	int i, started = threads, rc = EB_ENOMEM;

	if (p == NULL || (lat != NULL && pushed == NULL)) {
		eb_err("out of memory for %d producer threads", threads);
		goto free_arrays;
	}
	for (i = 0; i < threads; i++) {
		p[i] = (struct cpu_prod){.q = &c->q.dev,
					 .id = (uint64_t)i,
					 .per = per,
					 .ack = lat != NULL ? &c->h->ack.v : NULL,
					 .pushed = pushed,
					 .rtt_ns = lat != NULL ? lat->rtt_ns : NULL};
		if (pthread_create(&p[i].th, NULL, cpu_produce, &p[i]) != 0) {
			eb_err("cannot start producer thread %d", i);
			started = i;
			break;
		}
	}
	rc = consume(&c->q, (uint64_t)started, per, lat != NULL ? &c->h->ack.v : NULL, seen_at,
		     c->timeout_s, t);
	for (i = 0; i < started; i++)
		pthread_join(p[i].th, NULL);
	if (rc == EB_OK && lat != NULL) {
		one_way(lat, pushed, seen_at, per, NULL);
		lat->clock_unc_ns = 0;
	}
free_arrays:
	free(pushed);
	free(p);
	return rc;
}

int eb_q_run_producers(struct qctx *c, int blocks, int threads, uint32_t per, struct qlat *lat,
		       struct tally *t)
{
	uint64_t *seen_at = lat != NULL ? calloc(per, sizeof(*seen_at)) : NULL;
	int rc;

	if (lat != NULL && seen_at == NULL) {
		eb_err("out of memory for %u round trips", per);
		return EB_ENOMEM;
	}
	rc = c->gpu ? gpu_run(c, blocks, threads, per, lat, seen_at, t)
		    : cpu_run(c, blocks * threads, per, lat, seen_at, t);
	free(seen_at);
	return rc;
}

int eb_q_alloc_flags(struct qctx *c)
{
	if (c->gpu) {
#ifdef EB_HAVE_CUDA
		c->h = eb_fk_alloc_mapped(sizeof(*c->h), (void **)&c->d);
#endif
	} else {
		c->h = c->d = aligned_alloc(128, sizeof(*c->h));
		if (c->h != NULL)
			memset(c->h, 0, sizeof(*c->h));
	}
	if (c->h == NULL) {
		eb_err("cannot allocate the latency flags");
		return EB_ENOMEM;
	}
	return EB_OK;
}

void eb_q_free_flags(struct qctx *c)
{
	if (!c->gpu)
		free(c->h);
#ifdef EB_HAVE_CUDA
	else
		eb_fk_free_mapped(c->h);
#endif
}

int eb_q_pin_consumer(struct qpin *p, int want, int user_bound)
{
	int rc;

	*p = (struct qpin){.cpu = -1};
	if (want == EB_CPU_NONE || (want == EB_CPU_AUTO && user_bound)) {
		snprintf(p->why, sizeof(p->why), "%s",
			 want == EB_CPU_NONE ? "--consumer-cpu none" : "the process was bound");
		return EB_OK;
	}
	p->cpu = want >= 0 ? want : eb_topo_helper_cpu(0);
	if (p->cpu < 0) {
		snprintf(p->why, sizeof(p->why), "the CPU mask is unreadable");
		return EB_OK;
	}
	rc = eb_topo_move_thread(p->cpu, &p->was);
	if (rc != 0) {
		eb_err("cannot run the consumer thread on CPU %d: %s", p->cpu, strerror(rc));
		return EB_ESYS;
	}
	snprintf(p->why, sizeof(p->why), "%s", want >= 0 ? "--consumer-cpu" : "auto");
	return EB_OK;
}

void eb_q_unpin_consumer(struct qpin *p)
{
	eb_topo_thread_back(p->was);
	p->was = NULL;
}
