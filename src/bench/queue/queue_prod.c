#include "queue_prod.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "queue_kernels.h"
#include "gpu/floor_kernel.h"
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Drain producers * per commands, checking each; with ack, echo every sequence + 1 to it (the
 * latency test's way back). */
static int consume(struct eb_gpuq *q, uint64_t producers, uint64_t per, _Atomic uint64_t *ack,
		   double timeout_s, struct tally *t)
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
		while (atomic_load_explicit(p->ack, memory_order_acquire) < (uint64_t)s + 1)
			if (eb_q_now_ns() - t0 > p->q->timeout_ns)
				return NULL;
		p->rtt_ns[s] = (double)(eb_q_now_ns() - t0);
	}
	if (p->per > 0)
		eb_q_quiet(p->q, last);
	return NULL;
}

/* Producers for one configuration: on the GPU blocks x threads, on the CPU threads. */
int eb_q_run_producers(struct qctx *c, int blocks, int threads, uint32_t per, _Atomic uint64_t *ack,
		       double *rtt_ns, struct tally *t)
{
	uint64_t producers = (uint64_t)blocks * (uint64_t)threads;
	int rc, i;

	if (c->gpu) {
#ifdef EB_HAVE_CUDA
		uint64_t *dev_rtt = NULL, *host_rtt = NULL;

		if (ack != NULL) {
			host_rtt = eb_fk_alloc_mapped(sizeof(uint64_t) * per, (void **)&dev_rtt);
			if (host_rtt == NULL)
				return EB_ESYS;
			rc = eb_qk_latency(c->q.dev, (uint64_t *)&c->d->ack.v, dev_rtt, (int)per);
		} else {
			rc = eb_qk_produce(c->q.dev, blocks, threads, per);
		}
		if (rc == EB_OK)
			rc = consume(&c->q, producers, per, ack, c->timeout_s, t);
		if (eb_fk_wait() != EB_OK && rc == EB_OK)
			rc = EB_ESYS;
		for (i = 0; host_rtt != NULL && i < (int)per; i++)
			rtt_ns[i] = (double)host_rtt[i];
		eb_fk_free_mapped(host_rtt);
		return rc;
#endif
	}
	{
		struct cpu_prod *p = calloc((size_t)producers, sizeof(*p));

		if (p == NULL)
			return EB_ENOMEM;
		for (i = 0; i < (int)producers; i++) {
			p[i] = (struct cpu_prod){.q = &c->q.dev,
						 .id = (uint64_t)i,
						 .per = per,
						 .ack = ack,
						 .rtt_ns = rtt_ns};
			if (pthread_create(&p[i].th, NULL, cpu_produce, &p[i]) != 0) {
				eb_err("cannot start producer thread %d", i);
				producers = (uint64_t)i;
				break;
			}
		}
		rc = consume(&c->q, producers, per, ack, c->timeout_s, t);
		for (i = 0; i < (int)producers; i++)
			pthread_join(p[i].th, NULL);
		free(p);
	}
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
