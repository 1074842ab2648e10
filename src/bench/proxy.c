/* efabench proxy: GPU-initiated writes through a CPU proxy (seed 000), rank 0 -> rank k, beside
 * CPU-initiated writes of the same sizes and channels in the same run. Producers (GPU threads,
 * or CPU threads) push puts into the command queue; rank 0's proxy thread writes them with
 * fi_writedata; every producer's last put carries a signal, which the target's proxy applies
 * once every chunk before it has landed; the target waits for it, then checks every byte.
 *   bw    ProxySingle/ProxyMulti (a quiet after every put) and ...NBI (one quiet at the end)
 *   lat   put + quiet round trips from one producer, beside a CPU write and its completion,
 *         and the GPU<->CPU floor (header)
 *   rate  small puts from 1 block ... every SM, one quiet each at the end, beside the CPU
 *         posting the same writes with a window */
#define _GNU_SOURCE /* cpu_set_t for --proxy-cpu */
#include "bench.h"
#include "efabench/proxy.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../gpu/floor.h"
#include "../gpu/proxy_work.h"
#ifdef EB_HAVE_CUDA
#include "../gpu/proxy_kernels.h"
#endif
#include "../report/rec.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_BW, MODE_LAT, MODE_RATE };
enum { PIN_NONE = -2, PIN_AUTO = -1 };
enum { T_CPU, T_CPU_RATE, T_BLOCK, T_NBI }; /* low byte of a variant's tag; producers above */

#define MAX_CFG 6

struct popts {
	int mode, on_cpu, log2n, batch, active;
	int bad_put, stall_proxy; /* testing aids */
	int cpu;		  /* --proxy-cpu: a CPU, or PIN_AUTO / PIN_NONE */
	const char *producers;
	int nprod[MAX_CFG]; /* rate mode: producers per configuration; 0 = one block per SM */
	int ncfg;
	struct eb_variant vars[EB_MAX_VARIANTS];
	char names[EB_MAX_VARIANTS][24];
	int nvars;
};

struct pstate {
	struct eb_payload src, dst; /* rank 0 reads src; targets receive into dst */
	size_t slot;
	struct eb_mr *src_mr, *dst_mr;
	struct eb_rkey *rkeys; /* [rank][chan] of every dst */
	struct eb_proxy *proxy;
	struct eb_xfer *x; /* [nchan]: CPU-initiated puts */
	int window;
	uint64_t *expect; /* target: chunks counted per channel so far (CPU variants) */
	struct eb_imm_wait *waits;
	int sms0;	    /* rank 0's SMs: how many producers "all" means */
	double floor_us[2]; /* GPU<->CPU floor round trip, p50 and p99 (latency mode) */
	int cpu;	    /* the proxy thread's CPU, -1 when not pinned */
	char pin_why[48];   /* and why (rank 0's, for the header) */
};

static const struct popts *own(const struct eb_ctx *c)
{
	return c->o->own;
}

/* Producers of a variant: 1, or the rate configuration's count (0 = every SM of rank 0). */
static int producers(const struct eb_ctx *c, const struct pstate *st)
{
	int n = c->var->tag >> 8;

	return (c->var->tag & 0xff) == T_NBI && n == 0 ? st->sms0 : n > 0 ? n : 1;
}

/* Where the proxy thread runs: --proxy-cpu N, else (auto) a core of its own near the GPU
 * (the rank is bound to the GPU's NUMA node) when every spinning thread has one and nobody
 * bound the process; a launcher's or taskset's binding wins. */
static void choose_cpu(const struct eb_ctx *c, struct pstate *st, struct eb_proxy_opts *pxo)
{
	int want = own(c)->cpu;

	st->cpu = -1;
	if (want >= 0)
		st->cpu = want;
	else if (want == PIN_NONE)
		snprintf(st->pin_why, sizeof(st->pin_why), "--proxy-cpu none");
	else if (c->user_bound)
		snprintf(st->pin_why, sizeof(st->pin_why), "the process was bound by its launcher");
	else if (c->e->yield)
		snprintf(st->pin_why, sizeof(st->pin_why), "fewer cores than spinning threads");
	else if ((st->cpu = eb_topo_helper_cpu(c->e->boot->local_rank)) < 0)
		snprintf(st->pin_why, sizeof(st->pin_why), "the CPU mask is unreadable");
	pxo->pin = st->cpu >= 0;
	pxo->cpu = st->cpu;
	if (st->cpu >= 0)
		snprintf(st->pin_why, sizeof(st->pin_why), "%s",
			 want >= 0 ? "--proxy-cpu" : "auto");
}

static int proxy_setup(struct eb_ctx *c)
{
	struct eb_engine *e = c->e;
	const struct popts *po = own(c);
	struct pstate *st = calloc(1, sizeof(*st));
	struct eb_proxy_opts pxo = {.layout = EB_LAYOUT_SINGLE,
				    .chunk = c->chunk,
				    .window = c->window,
				    .active = po->active,
				    .log2n = (uint32_t)po->log2n,
				    .batch = (uint32_t)po->batch,
				    .nsignals = 1,
				    .gpu = !po->on_cpu,
				    .timeout_s = c->o->fab.timeout_s,
				    .cuda_device = c->gpu,
				    .stall = po->stall_proxy};
	struct eb_proxy_bufs pb = {0};
	int32_t sms = 0, *all = NULL;
	int i, rc;

	if (st == NULL)
		return EB_ENOMEM;
	c->priv = st;
	st->slot = (size_t)c->o->sizes[c->o->nsizes - 1];
	st->window = c->window * e->nchan;
	st->src_mr = calloc((size_t)e->nchan, sizeof(*st->src_mr));
	st->dst_mr = calloc((size_t)e->nchan, sizeof(*st->dst_mr));
	st->rkeys = calloc((size_t)e->nchan * (size_t)c->nranks, sizeof(*st->rkeys));
	st->x = calloc((size_t)e->nchan, sizeof(*st->x));

	st->expect = calloc((size_t)e->nchan, sizeof(*st->expect));
	st->waits = calloc((size_t)e->nchan, sizeof(*st->waits));
	all = calloc((size_t)c->nranks, sizeof(*all));
	if (st->src_mr == NULL || st->dst_mr == NULL || st->rkeys == NULL || st->x == NULL ||
	    st->expect == NULL || st->waits == NULL || all == NULL) {
		free(all);
		return EB_ENOMEM;
	}
	for (i = 0, rc = EB_OK; i < e->nchan && rc == EB_OK; i++)
		rc = eb_xfer_init(&st->x[i], e, c->window);
	if (c->rank == 0) {
		rc = rc != EB_OK ? rc : eb_payload_alloc(c, &st->src, st->slot, "the put source");
		rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->src, FI_WRITE, st->src_mr, NULL);
		rc = rc != EB_OK ? rc : eb_engine_reg_mem(e, NULL, 0, 0, 0, st->dst_mr, st->rkeys);
		pb.src = eb_payload_at(&st->src, 0);
		pb.src_len = st->slot;
		pb.src_mrs = st->src_mr;
	} else {
		rc = rc != EB_OK ? rc : eb_payload_alloc(c, &st->dst, st->slot, "the put target");
		rc = rc != EB_OK
			 ? rc
			 : eb_payload_reg(c, &st->dst, FI_REMOTE_WRITE, st->dst_mr, st->rkeys);
	}
	pb.dst_len = st->slot;
	pb.dst_keys = st->rkeys;
#ifdef EB_HAVE_CUDA
	if (!po->on_cpu && c->rank == 0)
		sms = eb_pk_sms();
#endif
	/* Every rank learns how many producers "all SMs" means on rank 0. */
	if (rc == EB_OK)
		rc = eb_boot_allgather(e->boot, &sms, all, sizeof(sms), eb_engine_deadline(e));
	st->sms0 = rc == EB_OK ? all[0] : 0;
	free(all);
	choose_cpu(c, st, &pxo);
	if (rc == EB_OK)
		rc = eb_proxy_open(&st->proxy, e, &pb, &pxo);
	if (rc == EB_OK && po->mode == MODE_LAT && c->rank == 0) {
		double *rtt = calloc(10000, sizeof(*rtt));
		struct eb_stats s;

		rc = rtt == NULL ? EB_ENOMEM
				 : eb_floor_measure(!po->on_cpu, 10000, c->o->fab.timeout_s, rtt);
		if (rc == EB_OK) {
			eb_stats_compute(rtt, 10000, &s);
			st->floor_us[0] = s.p50 / 1e3;
			st->floor_us[1] = s.p99 / 1e3;
		}
		free(rtt);
	}
	return rc;
}

static void proxy_teardown(struct eb_ctx *c)
{
	struct pstate *st = c->priv;
	int i;

	if (st == NULL)
		return;
	eb_proxy_close(st->proxy);
	for (i = 0; st->x != NULL && i < c->e->nchan; i++)
		eb_xfer_fini(&st->x[i]);
	if (st->dst_mr != NULL)
		eb_engine_dereg(c->e, st->dst_mr);
	if (st->src_mr != NULL)
		eb_engine_dereg(c->e, st->src_mr);
	eb_payload_free(&st->src);
	eb_payload_free(&st->dst);
	free(st->src_mr);
	free(st->dst_mr);
	free(st->rkeys);
	free(st->x);

	free(st->expect);
	free(st->waits);
	free(st);
	c->priv = NULL;
}

/* Every put of a phase carries the same S bytes to offset 0: fill, poison, reset the signal. */
static int proxy_prepare(struct eb_ctx *c)
{
	struct pstate *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->peer, .epoch = c->epoch};
	int ch;

	if (c->role == EB_ROLE_INIT)
		return eb_payload_fill(c, &st->src, 0, c->bytes, &p);
	if (c->role != EB_ROLE_TARGET)
		return EB_OK;
	/* Nothing is in flight before the barrier that follows: count this phase's arrivals
	 * from here (the proxy's writes count too). */
	for (ch = 0; ch < c->e->nchan; ch++)
		st->expect[ch] = eb_imm_count(c->e, 0, ch);
	eb_proxy_signals(st->proxy)[0] = 0;
	p.dst = (uint32_t)c->rank;
	p.epoch = EB_EPOCH_POISON;
	return eb_payload_fill(c, &st->dst, 0, c->bytes, &p);
}

static uint64_t proxy_verify(struct eb_ctx *c)
{
	struct pstate *st = c->priv;
	struct eb_pattern p = {.src = 0, .dst = (uint32_t)c->rank, .epoch = c->epoch};

	return c->role == EB_ROLE_TARGET ? eb_payload_check(c, &st->dst, 0, c->bytes, &p) : 0;
}

static const struct eb_payload *proxy_landing(struct eb_ctx *c, size_t *off)
{
	*off = 0;
	return &((struct pstate *)c->priv)->dst;
}

/* ---- CPU-initiated writes ---- */

/* One put as the CPU issues it: chunks over the variant's channels, then its completions. */
static int cpu_put(struct eb_ctx *c, struct pstate *st)
{
	struct eb_xfer *xs[64];
	int k,
	    n = eb_layout_write(c->var->layout, st->x, c->e->nchan, 0, c->peer,
				eb_payload_at(&st->src, 0), c->bytes, c->chunk, st->src_mr,
				&st->rkeys[(size_t)c->peer * (size_t)c->e->nchan], 0, EB_IMM(0, 0));

	for (k = 0; k < n; k++)
		xs[k] = &st->x[k];
	return eb_xfer_wait(xs, n, EB_DEADLINE_LAZY);
}

/* n single-chunk writes with a window of them in flight, the way small messages go fastest. */
static int cpu_rate(struct eb_ctx *c, struct pstate *st, long n)
{
	struct eb_rkey *k = &st->rkeys[(size_t)c->peer * (size_t)c->e->nchan];

	return eb_xfer_burst(c->e, 0, c->peer, eb_payload_at(&st->src, 0), c->bytes,
			     st->src_mr[0].desc, k[0].addr, k[0].key, EB_IMM(0, 0), n, st->window,
			     eb_engine_deadline(c->e));
}

/* The target of a CPU-initiated phase: every chunk of n puts counted on its channel. */
static int cpu_target(struct eb_ctx *c, struct pstate *st, long n)
{
	int ch, nw, rc = EB_OK;
	long i;

	/* A put at a time, each with its own deadline: the phase may outlast --timeout, a
	 * silent rank 0 may not. */
	for (i = 0; i < n && rc == EB_OK; i++) {
		for (ch = 0, nw = 0; ch < c->e->nchan; ch++) {
			uint64_t k = (c->var->tag & 0xff) == T_CPU_RATE
					 ? (ch == 0 ? 1 : 0)
					 : eb_layout_chunks(c->var->layout, c->e->nchan, 0, c->rank,
							    c->bytes, c->chunk, ch);

			if (k == 0)
				continue;
			st->expect[ch] += k;
			st->waits[nw++] =
			    (struct eb_imm_wait){.peer = 0, .chan = ch, .count = st->expect[ch]};
		}
		rc = eb_xfer_wait_imm(c->e, NULL, 0, st->waits, nw, EB_DEADLINE_LAZY);
	}
	return rc;
}

static int cpu_run(struct eb_ctx *c, struct pstate *st, long n, double *samples)
{
	uint64_t t0 = eb_now_ns(), t;
	long i;
	int rc;

	if (c->role == EB_ROLE_TARGET)
		return cpu_target(c, st, n);
	if ((c->var->tag & 0xff) == T_CPU_RATE) {
		rc = cpu_rate(c, st, n);
		for (i = 0; rc == EB_OK && samples != NULL && i < n; i++)
			samples[i] = (double)(eb_now_ns() - t0) * 1e-9 / (double)n;
		return rc;
	}
	for (i = 0; i < n; i++) {
		rc = cpu_put(c, st);
		if (rc != EB_OK)
			return rc;
		t = eb_now_ns();
		if (samples != NULL)
			samples[i] = (double)(t - t0) * 1e-9;
		t0 = t;
	}
	return EB_OK;
}

/* ---- through the proxy ---- */

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
			eb_proxy_abort(st->proxy);
		if (left > 0)
			sched_yield();
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
			eb_proxy_abort(st->proxy); /* producers give up; the kernel ends */
			while (eb_pk_done(w, n, t, failed) == 0)
				sched_yield();
			return eb_now_ns() > deadline ? EB_ETIMEDOUT : EB_EPEER;
		}
		sched_yield();
	}
	return rc < 0 ? rc : EB_OK;
}
#endif

static int produce(struct eb_ctx *c, struct pstate *st, struct eb_pwork *w, int np, long n,
		   uint64_t *t, int *failed)
{
	struct cpu_producer *p;
	int i, rc = EB_OK;

	if (!own(c)->on_cpu) {
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
			eb_proxy_abort(st->proxy);
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
static int init_proxy(struct eb_ctx *c, struct pstate *st, long n, double *samples)
{
	int np = producers(c, st), failed = 0, rc;
	struct eb_pwork w = {.d = eb_proxy_dev(st->proxy),
			     .peer = (unsigned)c->peer,
			     .bytes = c->bytes,
			     .region = c->bytes > 0 ? c->bytes : 1,
			     .n = (n + np - 1) / np,
			     .blocking = (c->var->tag & 0xff) == T_BLOCK,
			     .bad = own(c)->bad_put};
	uint64_t *t = calloc((size_t)n + 2, sizeof(*t));
	long i;

	if (t == NULL)
		return EB_ENOMEM;
	rc = produce(c, st, &w, np, w.n, t, &failed);
	if (rc == EB_OK && (failed || eb_proxy_errors(st->proxy) != 0)) {
		uint64_t who = eb_proxy_refused(st->proxy);

		uint32_t bits = eb_proxy_errors(st->proxy);
		char why[256];

		say_errors(bits, why, sizeof(why));
		if (who)
			eb_err(
			    "producers failed: %s; the first refused put came from producer %llu "
			    "(%s) (queue error bits 0x%x)",
			    why, (unsigned long long)(who - 1),
			    own(c)->on_cpu ? "CPU thread" : "GPU thread index", bits);
		else
			eb_err("producers failed: %s (queue error bits 0x%x)", why, bits);
		rc = EB_EFABRIC;
	}
	for (i = 0; rc == EB_OK && samples != NULL && i < n; i++)
		samples[i] = w.blocking ? (double)(t[2 + i] - (i == 0 ? t[0] : t[1 + i])) * 1e-9
					: (double)(t[1] - t[0]) * 1e-9 / (double)(w.n * np);
	free(t);
	return rc;
}

/* A target: every producer's signal (one each) means every byte before it has landed. */
static int target_proxy(struct eb_ctx *c, struct pstate *st, long n)
{
	_Atomic uint64_t *sig = (_Atomic uint64_t *)eb_proxy_signals(st->proxy);
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s * (double)(n + 2));
	uint64_t want = (uint64_t)producers(c, st);

	while (atomic_load_explicit(sig, memory_order_acquire) < want) {
		int rc = eb_boot_check(c->e->boot);

		if (rc != EB_OK)
			return rc;
		/* A stopped rank 0 is alive to the bootstrap: judge it by what arrives. */
		if (eb_now_ns() > deadline ||
		    eb_proxy_idle_ns(st->proxy) > (uint64_t)(c->o->fab.timeout_s * 1e9)) {
			eb_err("timed out waiting for rank 0's signal (%llu of %llu producers): "
			       "nothing arrived from rank 0 for %.1f s",
			       (unsigned long long)atomic_load(sig), (unsigned long long)want,
			       (double)eb_proxy_idle_ns(st->proxy) * 1e-9);
			return EB_ETIMEDOUT;
		}
		sched_yield();
	}
	return EB_OK;
}

static int proxy_run(struct eb_ctx *c, long n, double *samples)
{
	struct pstate *st = c->priv;
	int tag = c->var->tag & 0xff, rc, rc2;

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	if (tag == T_CPU || tag == T_CPU_RATE)
		return cpu_run(c, st, n, samples);
	eb_proxy_layout(st->proxy, c->var->layout);
	rc = eb_proxy_start(st->proxy);
	if (rc != EB_OK)
		return rc;
	rc = c->role == EB_ROLE_INIT ? init_proxy(c, st, n, samples) : target_proxy(c, st, n);
	if (rc != EB_OK)
		eb_proxy_abort(st->proxy);
	rc2 = eb_proxy_stop(st->proxy);
	return rc != EB_OK ? rc : rc2;
}

static void proxy_facts(const struct eb_ctx *c, struct eb_head *h)
{
	const struct popts *po = own(c);
	const struct pstate *st = c->priv;

	eb_head_fact(h, "producers",
		     "%s threads (%s); queue %d slots, %d puts in flight; a put's chunks complete "
		     "= what quiet waits for",
		     po->on_cpu ? "CPU" : "GPU",
		     po->mode == MODE_RATE ? "per configuration" : "one", 1 << po->log2n,
		     po->active);
	eb_head_break(h);
	if (st->cpu >= 0)
		eb_head_fact(h, "proxy thread", "CPU %d on rank 0 (%s)", st->cpu, st->pin_why);
	else
		eb_head_fact(h, "proxy thread", "not pinned (%s)", st->pin_why);
	eb_head_break(h);
	/* Measured on one H100 with two ranks: 2.4 ms per put, ~1-8 % of the CPU's writes; under
	 * MPS 0.94-1.00. */
	if (!po->on_cpu && c->mem == EB_MEM_DEVICE && c->e->boot->local_size > 1 &&
	    (c->o->gpu >= 0 || c->e->boot->local_size > eb_mem_gpu_count())) {
		eb_head_fact(
		    h, "note",
		    "ranks here share a GPU. Without MPS their processes take turns on it "
		    "(time slices of milliseconds), and the producers' kernel holds it while "
		    "the peer's GPU copies wait: run one rank per GPU, or start MPS "
		    "(nvidia-cuda-mps-control -d)");
		eb_head_break(h);
	}
	if (po->mode == MODE_LAT)
		eb_head_fact(h,
			     po->on_cpu ? "GPU<->CPU floor (ping-pong through host memory)"
					: "GPU<->CPU floor (ping-pong through mapped host memory)",
			     "round trip p50 %.2f us, p99 %.2f us", st->floor_us[0],
			     st->floor_us[1]);
}

static void proxy_extra(const struct eb_ctx *c, const struct eb_point *res, struct eb_rec *rec)
{
	const struct popts *po = own(c);
	const struct pstate *st = c->priv;

	eb_rec_str(rec, "producers_on", po->on_cpu ? "cpu" : "gpu");
	eb_rec_num(rec, "proxy_cpu", st->cpu);
	if (po->mode == MODE_RATE)
		eb_rec_num(rec, "mmsg_per_s", res->t_s > 0 ? 1e-6 / res->t_s : 0.0);
	if (po->mode == MODE_LAT) {
		eb_rec_num(rec, "floor_rtt_p50_us", st->floor_us[0]);
		eb_rec_num(rec, "floor_rtt_p99_us", st->floor_us[1]);
	}
}

static int proxy_variants(const struct eb_opts *o, const struct eb_variant **vars)
{
	*vars = ((const struct popts *)o->own)->vars;
	return ((const struct popts *)o->own)->nvars;
}

/* One variant; the name is the same whatever the memory, but for CPU writes. */
static void add(struct popts *po, const char *const *names, const char *name, enum eb_layout l,
		int tag, int ref)
{
	struct eb_variant *v = &po->vars[po->nvars];
	int s;

	if (name != NULL)
		snprintf(po->names[po->nvars], sizeof(po->names[0]), "%s", name);
	for (s = 0; s < EB_NSEL; s++)
		v->name[s] = names != NULL ? names[s] : po->names[po->nvars];
	v->layout = l;
	v->flow = EB_FLOW_PAIRS;
	v->tag = tag;
	v->ref = ref;
	po->nvars++;
}

static const char *const single_names[] = {"Single", "SinglePin", "SingleDMA", "SingleStaged"};
static const char *const multi_names[] = {"Multi", "MultiPin", "MultiDMA", "MultiStaged"};

static int add_cfg(const char *item, void *arg)
{
	struct popts *po = arg;
	char *end;
	long n = strtol(item, &end, 10);

	if (po->ncfg == MAX_CFG)
		return EB_EINVAL;
	if (!po->on_cpu && strcmp(item, "all") == 0)
		n = 0;
	else if (end == item || (po->on_cpu ? *end != '\0' : strcmp(end, "b") != 0) || n < 1 ||
		 n > 65535)
		return EB_EINVAL;
	po->nprod[po->ncfg++] = (int)n;
	return EB_OK;
}

static int proxy_finish(struct eb_opts *o, void *arg)
{
	static const uint64_t begin[] = {8ull << 20, 8, 4096}, end[] = {1ull << 30, 65536, 4096};
	struct popts *po = arg;
	int i;

	if (o->staged) {
		eb_err("efabench proxy writes registered memory: use --mem pinned or --mem device "
		       "(--staged is not supported here)");
		return EB_EINVAL;
	}
	if (!po->on_cpu && !eb_mem_have_cuda()) {
		eb_err("GPU producers need a build with CUDA (this one has none); "
		       "--producers-on cpu runs the same puts from CPU threads");
		return EB_EINVAL;
	}
	o->want_gpu = po->on_cpu ? NULL : "--producers-on gpu (the default)";
	o->fab.threads = 2;    /* the rank and its proxy thread spin (CPU producers add theirs) */
	if (!o->sizes_given) { /* seed 000's sizes, or the small ones latency and rate are about */
		o->begin = begin[po->mode];
		o->end = end[po->mode];
	}
	if (po->mode == MODE_RATE && !o->iters_given)
		o->iters = 20000; /* an iteration is one message there */
	if (po->producers == NULL)
		po->producers = po->on_cpu ? "1,2,4" : "1b,16b,all";
	if (po->mode == MODE_RATE && eb_opt_each(po->producers, add_cfg, po) != EB_OK) {
		eb_err("bad --producers '%s': want up to %d of <N>b or all (GPU), thread counts "
		       "(CPU)",
		       po->producers, MAX_CFG);
		return EB_EINVAL;
	}
	for (i = 0; po->on_cpu && i < (po->mode == MODE_RATE ? po->ncfg : 0); i++)
		if (2 + po->nprod[i] > o->fab.threads)
			o->fab.threads = 2 + po->nprod[i];
	if (po->on_cpu && po->mode != MODE_RATE)
		o->fab.threads = 3;
	if (po->mode == MODE_BW) {
		add(po, single_names, NULL, EB_LAYOUT_SINGLE, T_CPU, 0);
		add(po, NULL, "ProxySingle", EB_LAYOUT_SINGLE, T_BLOCK | 1 << 8, 1);
		add(po, NULL, "ProxySingleNBI", EB_LAYOUT_SINGLE, T_NBI | 1 << 8, 1);
		add(po, multi_names, NULL, EB_LAYOUT_SPLIT, T_CPU, 0);
		add(po, NULL, "ProxyMulti", EB_LAYOUT_SPLIT, T_BLOCK | 1 << 8, 4);
		add(po, NULL, "ProxyMultiNBI", EB_LAYOUT_SPLIT, T_NBI | 1 << 8, 4);
	} else if (po->mode == MODE_LAT) {
		add(po, NULL, "CPUWrite", EB_LAYOUT_SINGLE, T_CPU, 0);
		add(po, NULL, "ProxyPut", EB_LAYOUT_SINGLE, T_BLOCK | 1 << 8, 1);
	} else {
		add(po, NULL, "CPURate", EB_LAYOUT_SINGLE, T_CPU_RATE, 0);
		for (i = 0; i < po->ncfg; i++) {
			char name[24];

			if (po->nprod[i] == 0)
				snprintf(name, sizeof(name), "ProxyAllSMs");
			else
				snprintf(name, sizeof(name), "Proxy%d%s", po->nprod[i],
					 po->on_cpu ? "t" : "b");
			add(po, NULL, name, EB_LAYOUT_SINGLE, T_NBI | po->nprod[i] << 8, 1);
		}
	}
	return EB_OK;
}

static void proxy_defaults(void *arg)
{
	struct popts *po = arg;

	po->log2n = 12;
	po->batch = 64;
	po->active = 64;
	po->cpu = PIN_AUTO;
}

#define P(field) EB_AT(struct popts, field)

static const char *const modes[] = {"bw", "lat", "rate", NULL};
static const char *const where[] = {"gpu", "cpu", NULL};

/* --proxy-cpu: auto, none, or a CPU this process may run on. */
static int parse_cpu(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	cpu_set_t mask;
	char *end;
	long v;

	(void)o;
	if (strcmp(arg, "auto") == 0 || strcmp(arg, "none") == 0) {
		*(int *)field = arg[0] == 'a' ? PIN_AUTO : PIN_NONE;
		return EB_OK;
	}
	v = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || v < 0 || v >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(mask), &mask) != 0 || !CPU_ISSET((int)v, &mask)) {
		snprintf(want, len, "auto, none or a CPU this process may run on");
		return EB_EINVAL;
	}
	*(int *)field = (int)v;
	return EB_OK;
}

static const struct eb_opt proxy_opts[] = {
    {"mode", 0, "M", eb_opt_choice, P(mode), 0, 0,
     "bw (default: seed 000's four variants beside CPU writes,\n"
     "8M..1G), lat (put + quiet round trips, 8..64K, beside a\n"
     "CPU write and the GPU<->CPU floor) or rate (small puts\n"
     "from many producers, 4K, beside CPU-posted writes)",
     modes},
    {"producers-on", 0, "P", eb_opt_choice, P(on_cpu), 0, 0,
     "gpu (default) or cpu (threads run the same device API)", where},
    {"producers", 0, "LIST", eb_opt_str, P(producers), 0, 0,
     "rate mode: <N>b blocks or all (one per SM) on the GPU,\n"
     "thread counts on the CPU (default 1b,16b,all / 1,2,4)"},
    {"active", 0, "N", eb_opt_num, P(active), 1, 4096,
     "puts the proxy keeps in flight at once (default 64)"},
    {"slots", 0, "N", eb_opt_pow2, P(log2n), 2, 1 << 24,
     "command queue slots, a power of two (default 4096)"},
    {"batch", 0, "N", eb_opt_num, P(batch), 1, 1 << 30,
     "the proxy publishes its queue position every N (default 64)"},
    {"proxy-cpu", 0, "C", parse_cpu, P(cpu), 0, 0,
     "the proxy thread's CPU: auto (default: a core of its own\n"
     "near the GPU, the top CPUs of the rank's mask, unless the\n"
     "process was bound or cores are short), none, or a number"},
    {"bad-put", 0, NULL, eb_opt_flag, P(bad_put), 0, 0,
     "testing aid: producer 0's first put aims past the buffer"},
    {"stall-proxy", 0, NULL, eb_opt_flag, P(stall_proxy), 0, 0,
     "testing aid: rank 0's proxy thread blocks for good once it\n"
     "has started a put (as one stuck inside a provider call)"},
};

static const struct eb_bench proxy_bench = {
    .metric = "t = one put, first push to its completion (blocking: per put; NBI and rate: the "
	      "phase / puts); CPU: the same writes posted by the host; Gbps = 8*S/t",
    .setup = proxy_setup,
    .teardown = proxy_teardown,
    .prepare = proxy_prepare,
    .run = proxy_run,
    .verify = proxy_verify,
    .landing = proxy_landing,
    .extra = proxy_extra,
    .facts = proxy_facts,
    .variants_of = proxy_variants,
};

const struct eb_cmd eb_cmd_proxy = {
    .name = "proxy",
    .summary = "GPU-initiated writes through a CPU proxy, beside CPU-initiated writes",
    .help = "  producers (GPU threads, or CPU threads with --producers-on cpu) push puts into\n"
	    "  the command queue; rank 0's proxy thread writes them with fi_writedata, cut\n"
	    "  into chunks on channel 0 (Single) or across every channel (Multi); blocking\n"
	    "  variants quiet after every put (seed: ProxySingle, ProxyMulti), NBI ones once at\n"
	    "  the end. Each producer's last put carries a signal the target applies only once\n"
	    "  every chunk before it has landed; the target then checks every byte.\n"
	    "  t = seconds per put on the producer's clock (GPU %globaltimer or host clock);\n"
	    "  Gbps = 8*S/t; the ratio table divides each proxy variant's Gbps by the CPU\n"
	    "  write's of the same channels and size; rate mode adds Mmsg/s = 1/t in JSON",
    .groups = EB_G_FABRIC_BENCH & ~EB_G_LAYOUT,
    EB_CMD_OPTS(proxy_opts, struct popts, proxy_defaults, proxy_finish),
    .bench = &proxy_bench,
};
