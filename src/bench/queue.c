/* efabench queue: the GPU->CPU command queue on its own. For each producer count it measures
 * the commands per second one consumer thread takes; with one producer, the push-to-seen
 * latency; and in the same run the machine's floor, a ping-pong through mapped memory.
 * Every command carries (producer, sequence) and a check word, so the consumer proves none was
 * lost, duplicated, reordered or torn. */
#include "queue.h"
#include "efabench/gpuq.h"
#include "efabench/stats.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/json.h"
#include "../core/log.h"
#ifdef EB_HAVE_CUDA
#include "../gpu/queue_kernels.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MAX 512

struct tally {
	uint64_t seen, lost, dup, torn, alien;
	double first_s, last_s;
};

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

static uint64_t tally_wrong(const struct tally *t)
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

struct floor_arg {
	_Atomic uint64_t *ping, *pong;
	int iters;
	double *rtt_ns;
};

static void *cpu_floor_side(void *arg)
{
	struct floor_arg *f = arg;
	int i;

	for (i = 0; i < f->iters; i++) {
		uint64_t t0 = eb_q_now_ns();

		atomic_store_explicit(f->ping, (uint64_t)i + 1, memory_order_release);
		while (atomic_load_explicit(f->pong, memory_order_acquire) < (uint64_t)i + 1)
			if (eb_q_now_ns() - t0 > 10000000000ull)
				return NULL;
		f->rtt_ns[i] = (double)(eb_q_now_ns() - t0);
	}
	return NULL;
}

/* The host side of the floor: echo every ping. */
static int echo(_Atomic uint64_t *ping, _Atomic uint64_t *pong, int iters, double timeout_s)
{
	uint64_t deadline = eb_deadline(timeout_s);
	int i;

	for (i = 0; i < iters; i++) {
		while (atomic_load_explicit(ping, memory_order_acquire) < (uint64_t)i + 1)
			if (eb_now_ns() > deadline) {
				eb_err("the floor ping-pong stalled at round %d of %d", i, iters);
				return EB_ETIMEDOUT;
			}
		atomic_store_explicit(pong, (uint64_t)i + 1, memory_order_release);
	}
	return EB_OK;
}

struct qrow {
	char name[32];
	uint64_t producers, commands;
	double seconds, mcmds;
	struct tally t;
};

/* The latency echo and the floor's ping and pong, a cache line each: mapped host memory in
 * GPU mode (h* for the host, d* for the GPU), plain memory in CPU mode. */
struct flags {
	struct {
		_Atomic uint64_t v;
		char pad[120];
	} ack, ping, pong;
};

struct qctx {
	const struct eb_qopts *o;
	struct eb_gpuq q;
	int gpu, sms;
	struct flags *h, *d;
};

/* Producers for one configuration: on the GPU blocks x threads, on the CPU threads. */
static int run_producers(struct qctx *c, int blocks, int threads, uint32_t per,
			 _Atomic uint64_t *ack, double *rtt_ns, struct tally *t)
{
	uint64_t producers = (uint64_t)blocks * (uint64_t)threads;
	int rc, i;

	if (c->gpu) {
#ifdef EB_HAVE_CUDA
		uint64_t *dev_rtt = NULL, *host_rtt = NULL;

		if (ack != NULL) {
			host_rtt = eb_qk_alloc_mapped(sizeof(uint64_t) * per, (void **)&dev_rtt);
			if (host_rtt == NULL)
				return EB_ESYS;
			rc = eb_qk_latency(c->q.dev, (uint64_t *)&c->d->ack.v, dev_rtt, (int)per);
		} else {
			rc = eb_qk_produce(c->q.dev, blocks, threads, per);
		}
		if (rc == EB_OK)
			rc = consume(&c->q, producers, per, ack, c->o->timeout_s, t);
		if (eb_qk_wait() != EB_OK && rc == EB_OK)
			rc = EB_ESYS;
		for (i = 0; host_rtt != NULL && i < (int)per; i++)
			rtt_ns[i] = (double)host_rtt[i];
		eb_qk_free_mapped(host_rtt);
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
		rc = consume(&c->q, producers, per, ack, c->o->timeout_s, t);
		for (i = 0; i < (int)producers; i++)
			pthread_join(p[i].th, NULL);
		free(p);
	}
	return rc;
}

/* "1t", "1w", "1b", "<N>b", "all" on the GPU; a thread count on the CPU. */
static int parse_producers(const struct qctx *c, const char *tok, int *blocks, int *threads)
{
	char *end;
	long n;

	if (!c->gpu) {
		n = strtol(tok, &end, 10);
		if (*tok == '\0' || *end != '\0' || n < 1 || n > 4096)
			return EB_EINVAL;
		*blocks = 1;
		*threads = (int)n;
		return EB_OK;
	}
	*threads = c->o->block;
	if (strcmp(tok, "1t") == 0) {
		*blocks = *threads = 1;
	} else if (strcmp(tok, "1w") == 0) {
		*blocks = 1;
		*threads = 32;
	} else if (strcmp(tok, "all") == 0) {
		*blocks = c->sms;
	} else {
		n = strtol(tok, &end, 10);
		if (*tok == '\0' || strcmp(end, "b") != 0 || n < 1 || n > 65535)
			return EB_EINVAL;
		*blocks = (int)n;
	}
	return EB_OK;
}

static void json_row(struct eb_json *j, const struct qrow *r)
{
	eb_json_obj_begin(j, NULL);
	eb_json_str(j, "producers_config", r->name);
	eb_json_int(j, "producers", (long long)r->producers);
	eb_json_int(j, "commands", (long long)r->commands);
	eb_json_num(j, "seconds", r->seconds);
	eb_json_num(j, "mcommands_per_s", r->mcmds);
	eb_json_int(j, "lost", (long long)r->t.lost);
	eb_json_int(j, "duplicated", (long long)r->t.dup);
	eb_json_int(j, "torn", (long long)r->t.torn);
	eb_json_int(j, "unknown", (long long)r->t.alien);
	eb_json_obj_end(j);
}

static void json_lat(struct eb_json *j, const char *key, const struct eb_stats *s)
{
	eb_json_obj_begin(j, key);
	eb_json_num(j, "p50_us", s->p50 / 1e3);
	eb_json_num(j, "p99_us", s->p99 / 1e3);
	eb_json_num(j, "min_us", s->min / 1e3);
	eb_json_num(j, "mean_us", s->mean / 1e3);
	eb_json_num(j, "max_us", s->max / 1e3);
	eb_json_int(j, "samples", (long long)s->n);
	eb_json_obj_end(j);
}

static int write_json(const struct qctx *c, const struct qrow *rows, int nrows,
		      const struct eb_stats *lat, const struct eb_stats *rtt,
		      const struct eb_stats *flo)
{
	FILE *f = fopen(c->o->json, "w");
	struct eb_json j;
	int i;

	if (f == NULL) {
		eb_err("cannot write %s", c->o->json);
		return EB_ESYS;
	}
	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "bench", "queue");
	eb_json_str(&j, "producers_on", c->gpu ? "gpu" : "cpu");
	eb_json_str(&j, "placement", c->o->managed ? "managed" : "pinned");
	eb_json_int(&j, "slots", 1ll << c->o->log2n);
	eb_json_int(&j, "batch", c->o->batch);
	eb_json_int(&j, "per_producer", c->o->per);
	json_lat(&j, "push_to_seen", lat);
	json_lat(&j, "queue_round_trip", rtt);
	json_lat(&j, "floor_round_trip", flo);
	eb_json_arr_begin(&j, "results");
	for (i = 0; i < nrows; i++)
		json_row(&j, &rows[i]);
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	return fclose(f) == 0 ? EB_OK : EB_ESYS;
}

/* Latency: one producer, one command in flight, the consumer echoing each; and the floor.
 * push-to-seen = queue round trip - floor p50 / 2 (the echo's way back). */
static int measure_latency(struct qctx *c, struct eb_stats *lat, struct eb_stats *rtt,
			   struct eb_stats *flo)
{
	int iters = c->o->lat_iters, i, rc;
	double *q_rtt = calloc((size_t)iters, sizeof(double));
	double *f_rtt = calloc((size_t)iters, sizeof(double));
	struct tally t;

	if (q_rtt == NULL || f_rtt == NULL) {
		rc = EB_ENOMEM;
		goto free_bufs;
	}
	/* The floor first: a ping-pong through mapped memory (CPU memory in CPU mode). */
	if (c->gpu) {
#ifdef EB_HAVE_CUDA
		uint64_t *dev_rtt = NULL,
			 *h_rtt = eb_qk_alloc_mapped(sizeof(uint64_t) * iters, (void **)&dev_rtt);

		rc = h_rtt == NULL ? EB_ESYS
				   : eb_qk_floor((uint64_t *)&c->d->ping.v,
						 (uint64_t *)&c->d->pong.v, dev_rtt, iters);
		if (rc == EB_OK)
			rc = echo(&c->h->ping.v, &c->h->pong.v, iters, c->o->timeout_s);
		if (eb_qk_wait() != EB_OK && rc == EB_OK)
			rc = EB_ESYS;
		for (i = 0; h_rtt != NULL && i < iters; i++)
			f_rtt[i] = (double)h_rtt[i];
		eb_qk_free_mapped(h_rtt);
#endif
	} else {
		struct floor_arg fa = {
		    .ping = &c->h->ping.v, .pong = &c->h->pong.v, .iters = iters, .rtt_ns = f_rtt};
		pthread_t th;

		rc = pthread_create(&th, NULL, cpu_floor_side, &fa) == 0 ? EB_OK : EB_ESYS;
		if (rc == EB_OK) {
			rc = echo(&c->h->ping.v, &c->h->pong.v, iters, c->o->timeout_s);
			pthread_join(th, NULL);
		}
	}
	if (rc != EB_OK)
		goto free_bufs;
	eb_stats_compute(f_rtt, (size_t)iters, flo);
	rc = run_producers(c, 1, 1, (uint32_t)iters, &c->h->ack.v, q_rtt, &t);
	if (rc == EB_OK && tally_wrong(&t) != 0) {
		eb_err("latency test: %llu commands lost, duplicated or torn",
		       (unsigned long long)tally_wrong(&t));
		rc = EB_EVERIFY;
	}
	if (rc != EB_OK)
		goto free_bufs;
	eb_stats_compute(q_rtt, (size_t)iters, rtt);
	for (i = 0; i < iters; i++)
		q_rtt[i] -= flo->p50 / 2;
	eb_stats_compute(q_rtt, (size_t)iters, lat);
free_bufs:
	free(q_rtt);
	free(f_rtt);
	return rc;
}

int eb_queue_run(struct eb_qopts *o)
{
	struct qctx c = {.o = o, .gpu = o->on_gpu};
	struct qrow rows[32];
	struct eb_stats lat, rtt, flo;
	char list[256], *tok, *save = NULL;
	uint64_t wrong = 0;
	int nrows = 0, rc;

	if (c.gpu) {
#ifdef EB_HAVE_CUDA
		c.sms = eb_qk_sm_count();
		if (c.sms < 0)
			return EB_ENOTSUP;
#else
		eb_err("GPU producers need a build with CUDA (this one has none); "
		       "--producers-on cpu runs the same queue with CPU threads");
		return EB_ENOTSUP;
#endif
	}
	if (c.gpu) {
#ifdef EB_HAVE_CUDA
		c.h = eb_qk_alloc_mapped(sizeof(*c.h), (void **)&c.d);
#endif
	} else {
		c.h = c.d = aligned_alloc(128, sizeof(*c.h));
		if (c.h != NULL)
			memset(c.h, 0, sizeof(*c.h));
	}
	if (c.h == NULL) {
		eb_err("cannot allocate the latency flags");
		return EB_ENOMEM;
	}
	rc = eb_gpuq_create(&c.q, c.gpu ? EB_GPUQ_GPU : EB_GPUQ_CPU,
			    o->managed ? EB_GPUQ_MANAGED : EB_GPUQ_PINNED, o->log2n, o->batch,
			    (uint64_t)(o->timeout_s * 1e9));
	if (rc != EB_OK)
		goto free_flags;
	rc = measure_latency(&c, &lat, &rtt, &flo);
	if (rc != EB_OK)
		goto destroy;
	printf("# efabench queue: %s producers -> one CPU consumer thread; %llu slots (%s), "
	       "consumer publishes every %u\n",
	       c.gpu ? "GPU" : "CPU", 1ull << o->log2n,
	       !c.gpu	    ? "host memory"
	       : o->managed ? "managed"
			    : "pinned mapped host",
	       o->batch);
	printf("# floor (ping-pong through %s memory): round trip p50 %.2f us, p99 %.2f us\n",
	       c.gpu ? "mapped host" : "host", flo.p50 / 1e3, flo.p99 / 1e3);
	printf("# one producer: queue round trip p50 %.2f us, p99 %.2f us; push-to-seen "
	       "(round trip - floor p50 / 2) p50 %.2f us, p99 %.2f us\n",
	       rtt.p50 / 1e3, rtt.p99 / 1e3, lat.p50 / 1e3, lat.p99 / 1e3);
	printf("# Mcmd/s = commands consumed / (last seen - first seen) / 1e6; #wrong = lost + "
	       "duplicated + reordered + torn\n#\n");
	printf("| Producers | Threads   | Commands   | Mcmd/s   | Seconds  | #wrong |\n"
	       "|----------:|----------:|-----------:|---------:|---------:|-------:|\n");
	snprintf(list, sizeof(list), "%s", o->producers);
	for (tok = strtok_r(list, ",", &save); tok != NULL && nrows < 32;
	     tok = strtok_r(NULL, ",", &save)) {
		struct qrow *r = &rows[nrows];
		int blocks, threads;

		if (parse_producers(&c, tok, &blocks, &threads) != EB_OK) {
			eb_err("bad producer count '%s'", tok);
			rc = EB_EINVAL;
			break;
		}
		snprintf(r->name, sizeof(r->name), "%s", tok);
		r->producers = (uint64_t)blocks * (uint64_t)threads;
		r->commands = r->producers * o->per;
		rc = run_producers(&c, blocks, threads, o->per, NULL, NULL, &r->t);
		if (rc != EB_OK)
			break;
		r->seconds = r->t.last_s - r->t.first_s;
		r->mcmds = r->seconds > 0 ? (double)(r->t.seen - 1) / r->seconds / 1e6 : 0.0;
		wrong += tally_wrong(&r->t);
		printf("| %9s | %9llu | %10llu | %8.2f | %8.4f | %6llu |\n", r->name,
		       (unsigned long long)r->producers, (unsigned long long)r->commands, r->mcmds,
		       r->seconds, (unsigned long long)tally_wrong(&r->t));
		fflush(stdout);
		nrows++;
	}
	printf("#\n# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
	       wrong ? "FAILED" : "OK");
	if (o->json != NULL && rc == EB_OK)
		rc = write_json(&c, rows, nrows, &lat, &rtt, &flo);
	if (rc == EB_OK && wrong > 0)
		rc = EB_EVERIFY;
destroy:
	eb_gpuq_destroy(&c.q);
free_flags:
	if (!c.gpu)
		free(c.h);
#ifdef EB_HAVE_CUDA
	else
		eb_qk_free_mapped(c.h);
#endif
	return rc;
}
