/* efabench queue: the GPU->CPU command queue on its own. For each producer count it measures
 * the commands per second one consumer thread takes; with one producer, the push-to-seen
 * latency; and in the same run the machine's floor, a ping-pong through mapped memory.
 * Every command carries (producer, sequence) and a check word, so the consumer proves none was
 * lost, duplicated, reordered or torn. */
#include "harness/bench.h"
#include "queue_prod.h"
#include "harness/loop.h"
#include "efabench/gpuq.h"
#include "efabench/stats.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "gpu/floor.h"
#include "report/sheet.h"
#ifdef EB_HAVE_CUDA
#include "mem/cuda_check.h"
#include "gpu/queue_kernels.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run of producers as the one loop sees it: self-timed (the consumer's clock), every
 * command checked as it is consumed. */
struct qrun {
	struct qctx *c;
	int blocks, threads;
	uint32_t per;
	_Atomic uint64_t *ack; /* latency: the echo */
	double *rtt_ns;	       /* latency: each round trip */
	struct tally t;
};

/* Latency: a sample per round trip (in ns, scaled by the caller); rate: one sample, the span
 * from the first command seen to the last. */
static int q_run(void *arg, long n, double *samples, long *got)
{
	struct qrun *r = arg;
	int rc = eb_q_run_producers(r->c, r->blocks, r->threads, r->per, r->ack, r->rtt_ns, &r->t);

	*got = 0;
	if (rc == EB_OK && samples != NULL && r->ack != NULL) {
		for (*got = 0; *got < (long)r->per; (*got)++)
			samples[*got] = r->rtt_ns[*got];
	} else if (rc == EB_OK && samples != NULL) {
		samples[0] = r->t.last_s - r->t.first_s;
		*got = 1;
	}
	return rc;
}

static int q_verify(void *arg, uint64_t *wrong)
{
	*wrong += eb_q_tally_wrong(&((struct qrun *)arg)->t);
	return EB_OK;
}

/* One run of producers through the one loop: one iteration, its samples and tally. */
static int measure(struct qrun *r, double *samples, long *got, uint64_t *wrong)
{
	struct eb_loop l = {.arg = r, .run = q_run, .verify = q_verify};

	return eb_loop_phase(&l, 1, samples, got, wrong);
}

/* Latency: one producer, one command in flight, the consumer echoing each; and the floor.
 * push-to-seen = queue round trip - floor p50 / 2 (the echo's way back). */
static int measure_latency(struct qctx *c, struct eb_stats *lat, struct eb_stats *rtt,
			   struct eb_stats *flo)
{
	int iters = c->o->lat_iters, i, rc;
	double *q_rtt = calloc((size_t)iters, sizeof(double));
	double *f_rtt = calloc((size_t)iters, sizeof(double));
	struct qrun r = {.c = c, .blocks = 1, .threads = 1, .per = (uint32_t)iters};
	uint64_t wrong = 0;
	long got = 0;

	if (q_rtt == NULL || f_rtt == NULL) {
		rc = EB_ENOMEM;
		goto free_bufs;
	}
	/* The floor first: a ping-pong through mapped memory (CPU memory in CPU mode). */
	rc = eb_floor_measure(c->gpu, iters, c->timeout_s, f_rtt);
	if (rc != EB_OK)
		goto free_bufs;
	eb_stats_compute(f_rtt, (size_t)iters, flo);
	r.ack = &c->h->ack.v;
	r.rtt_ns = q_rtt;
	rc = measure(&r, q_rtt, &got, &wrong);
	if (rc == EB_OK && wrong != 0) {
		eb_err("latency test: %llu commands lost, duplicated or torn",
		       (unsigned long long)wrong);
		rc = EB_EVERIFY;
	}
	if (rc != EB_OK)
		goto free_bufs;
	eb_stats_compute(q_rtt, (size_t)got, rtt);
	for (i = 0; i < got; i++)
		q_rtt[i] -= flo->p50 / 2;
	eb_stats_compute(q_rtt, (size_t)got, lat);
free_bufs:
	free(q_rtt);
	free(f_rtt);
	return rc;
}

/* Latency figures in microseconds, from nanoseconds. */
static void lat_obj(struct eb_rec *r, const char *key, const struct eb_stats *s)
{
	eb_rec_obj(r, key);
	eb_rec_num(r, "p50_us", s->p50 / 1e3);
	eb_rec_num(r, "p99_us", s->p99 / 1e3);
	eb_rec_num(r, "min_us", s->min / 1e3);
	eb_rec_num(r, "mean_us", s->mean / 1e3);
	eb_rec_num(r, "max_us", s->max / 1e3);
	eb_rec_int(r, "samples", (long long)s->n);
	eb_rec_end(r);
}

static void head(const struct qctx *c, struct eb_sheet *sh, const struct eb_stats *lat,
		 const struct eb_stats *rtt, const struct eb_stats *flo)
{
	const struct qopts *o = c->o;
	struct eb_head *h = &sh->head;
	struct eb_rec *d = &sh->doc.head;

	eb_head_fact(h, "efabench queue",
		     "%s producers -> one CPU consumer thread; %llu slots (%s), consumer publishes "
		     "every %d",
		     c->gpu ? "GPU" : "CPU", 1ull << o->log2n,
		     !c->gpu	  ? "host memory"
		     : o->managed ? "managed"
				  : "pinned mapped host",
		     o->batch);
	eb_head_break(h);
	eb_head_fact(h,
		     c->gpu ? "floor (ping-pong through mapped host memory)"
			    : "floor (ping-pong through host memory)",
		     "round trip p50 %.2f us, p99 %.2f us", flo->p50 / 1e3, flo->p99 / 1e3);
	eb_head_break(h);
	eb_head_fact(h, "one producer",
		     "queue round trip p50 %.2f us, p99 %.2f us; push-to-seen (round trip - floor "
		     "p50 / 2) p50 %.2f us, p99 %.2f us",
		     rtt->p50 / 1e3, rtt->p99 / 1e3, lat->p50 / 1e3, lat->p99 / 1e3);
	eb_head_break(h);
	eb_head_fact(h, NULL,
		     "Mcmd/s = commands consumed / (last seen - first seen) / 1e6; #wrong = lost + "
		     "duplicated + reordered + torn");
	eb_head_break(h);
	eb_head_fact(h, NULL, "%s", "");
	eb_rec_str(d, "producers_on", c->gpu ? "gpu" : "cpu");
	eb_rec_str(d, "placement", o->managed ? "managed" : "pinned");
	eb_rec_int(d, "slots", 1ll << o->log2n);
	eb_rec_int(d, "batch", o->batch);
	eb_rec_int(d, "per_producer", o->per);
	lat_obj(d, "push_to_seen", lat);
	lat_obj(d, "queue_round_trip", rtt);
	lat_obj(d, "floor_round_trip", flo);
}

static const struct eb_colspec cols[] = {
    {"Producers", "producers_config", 9, 0, 0},
    {"Threads", "producers", 9, 0, 0},
    {"Commands", "commands", 10, 0, 0},
    {"Mcmd/s", "mcommands_per_s", 8, 2, 0},
    {"Seconds", "seconds", 8, 4, 0},
    {"#wrong", "wrong", 6, 0, 0},
};

/* One producer configuration: run it and record it. */
static int row(struct qctx *c, const struct qshape *shp, struct eb_sheet *sh, uint64_t *wrong)
{
	int blocks = shp->blocks ? shp->blocks : c->sms;
	uint64_t producers = (uint64_t)blocks * (uint64_t)shp->threads;
	uint64_t commands = producers * (uint64_t)c->o->per;
	struct eb_rec *r = eb_sheet_rec(sh);
	struct qrun run = {
	    .c = c, .blocks = blocks, .threads = shp->threads, .per = (uint32_t)c->o->per};
	struct tally tl;
	double secs = 0;
	long got = 0;
	int rc;

	if (r == NULL)
		return EB_ENOMEM;
	rc = measure(&run, &secs, &got, wrong);
	if (rc != EB_OK)
		return rc;
	tl = run.t;
	eb_rec_str(r, "producers_config", shp->name);
	eb_rec_int(r, "producers", (long long)producers);
	eb_rec_int(r, "commands", (long long)commands);
	eb_rec_num(r, "seconds", secs);
	eb_rec_num(r, "mcommands_per_s", secs > 0 ? (double)(tl.seen - 1) / secs / 1e6 : 0.0);
	eb_rec_int(r, "lost", (long long)tl.lost);
	eb_rec_int(r, "duplicated", (long long)tl.dup);
	eb_rec_int(r, "torn", (long long)tl.torn);
	eb_rec_int(r, "unknown", (long long)tl.alien);
	eb_rec_int(r, "wrong", (long long)eb_q_tally_wrong(&tl));
	eb_sheet_show(sh, r);
	return EB_OK;
}

static int queue_drive(struct eb_ctx *ctx)
{
	const struct eb_opts *eo = ctx->o;
	const struct qopts *o = eo->own;
	struct qctx c = {.o = o, .gpu = !o->on_cpu, .timeout_s = eo->fab.timeout_s};
	struct eb_stats lat, rtt, flo;
	struct eb_sheet sh;
	uint64_t wrong = 0;
	const char *why;
	int i, rc;

	/* One process: nothing started yet, so a missing GPU is bad input like any other. */
	if (c.gpu && (why = eb_mem_gpu_absent()) != NULL) {
		eb_err("--producers-on gpu (the default) needs a GPU, and CUDA sees none (%s); "
		       "--producers-on cpu runs the same protocol with CPU threads",
		       why);
		return EB_EINVAL;
	}
	if (c.gpu) {
#ifdef EB_HAVE_CUDA
		c.sms = eb_gpu_sms();
		if (c.sms < 0)
			return EB_ENOTSUP;
#else
		eb_err("GPU producers need a build with CUDA (this one has none); "
		       "--producers-on cpu runs the same queue with CPU threads");
		return EB_ENOTSUP;
#endif
	}
	rc = eb_q_alloc_flags(&c);
	if (rc != EB_OK)
		return rc;
	rc = eb_gpuq_create(&c.q, c.gpu ? EB_GPUQ_GPU : EB_GPUQ_CPU,
			    o->managed ? EB_GPUQ_MANAGED : EB_GPUQ_PINNED, (uint32_t)o->log2n,
			    (uint32_t)o->batch, (uint64_t)(c.timeout_s * 1e9));
	if (rc != EB_OK)
		goto free_flags;
	rc = measure_latency(&c, &lat, &rtt, &flo);
	if (rc != EB_OK)
		goto destroy;
	eb_sheet_begin(&sh, "queue", eo->csv, eo->json);
	head(&c, &sh, &lat, &rtt, &flo);
	eb_sheet_print_head(&sh);
	eb_sheet_table(&sh, NULL, cols, (int)(sizeof(cols) / sizeof(cols[0])));
	for (i = 0; i < o->nshapes && rc == EB_OK; i++)
		rc = row(&c, &o->shapes[i], &sh, &wrong);
	if (rc == EB_OK)
		rc = eb_sheet_end(&sh, wrong);
	else
		eb_doc_free(&sh.doc);
	if (rc == EB_OK && wrong > 0)
		rc = EB_EVERIFY;
destroy:
	eb_gpuq_destroy(&c.q);
free_flags:
	eb_q_free_flags(&c);
	return rc;
}

/* "1t", "1w", "1b", "<N>b", "all" on the GPU; a thread count on the CPU. */
static int add_shape(const char *tok, void *arg)
{
	struct qopts *o = arg;
	struct qshape *sh = &o->shapes[o->nshapes];
	char *end;
	long n = strtol(tok, &end, 10);

	if (o->nshapes == MAX_PRODUCERS)
		return EB_EINVAL;
	snprintf(sh->name, sizeof(sh->name), "%s", tok);
	sh->blocks = 1;
	sh->threads = o->block;
	if (o->on_cpu) {
		if (end == tok || *end != '\0' || n < 1 || n > 4096)
			return EB_EINVAL;
		sh->threads = (int)n;
	} else if (strcmp(tok, "1t") == 0 || strcmp(tok, "1w") == 0) {
		sh->threads = tok[1] == 't' ? 1 : 32;
	} else if (strcmp(tok, "all") == 0) {
		sh->blocks = 0;
	} else if (end != tok && strcmp(end, "b") == 0 && n >= 1 && n <= 65535) {
		sh->blocks = (int)n;
	} else {
		return EB_EINVAL;
	}
	o->nshapes++;
	return EB_OK;
}

static int queue_finish(struct eb_opts *eo, void *own)
{
	struct qopts *o = own;

	if (o->producers == NULL)
		o->producers = o->on_cpu ? "1,2,4,8" : "1t,1w,1b,16b,64b,all";
	if (o->per == 0)
		o->per = o->on_cpu ? 100000 : 1000;
	if (eb_opt_each(o->producers, add_shape, o) != EB_OK) {
		eb_err("bad --producers '%s': want a comma list of up to %d of 1t, 1w, 1b, <N>b, "
		       "all (GPU) or thread counts from 1 to 4096 (CPU)",
		       o->producers, MAX_PRODUCERS);
		return EB_EINVAL;
	}
	return EB_OK;
}

static void queue_defaults(void *own)
{
	struct qopts *o = own;

	o->log2n = 12;
	o->batch = 64;
	o->block = 256;
	o->lat_iters = 10000;
}

#define Q(field) EB_AT(struct qopts, field)

static const char *const where[] = {"gpu", "cpu", NULL};
static const char *const placements[] = {"pinned", "managed", NULL};

static const struct eb_opt queue_opts[] = {
    {"producers-on", 0, "P", eb_opt_choice, Q(on_cpu), 0, 0,
     "gpu (default) or cpu (threads run the same push)", where},
    {"producers", 0, "LIST", eb_opt_str, Q(producers), 0, 0,
     "GPU: 1t (one thread), 1w (a warp), 1b (a block), <N>b, all\n"
     "(a block per SM); CPU: thread counts (default 1,2,4,8)"},
    {"iters", 'n', "N", eb_opt_lng, Q(per), 1, 1e9,
     "commands per producer (default 1000 GPU, 100000 CPU)"},
    {"block", 0, "N", eb_opt_num, Q(block), 1, 1024, "threads per block (default 256)"},
    {"slots", 0, "N", eb_opt_pow2, Q(log2n), 2, 1 << 24,
     "ring slots, a power of two (default 4096)"},
    {"batch", 0, "N", eb_opt_num, Q(batch), 1, 1 << 30,
     "the consumer publishes its position every N (default 64)"},
    {"placement", 0, "P", eb_opt_choice, Q(managed), 0, 0,
     "pinned (host, mapped; default) or managed slots", placements},
    {"lat-iters", 0, "N", eb_opt_num, Q(lat_iters), 1, 1e7,
     "round trips of the latency and floor tests (default 10000)"},
};

static const struct eb_bench queue_bench = {.drive = queue_drive};

const struct eb_cmd eb_cmd_queue = {
    .name = "queue",
    .summary = "the GPU->CPU command queue alone: commands/s and latency",
    .help = "  commands/s one consumer thread takes per producer count, one producer's\n"
	    "  push-to-seen latency, and the floor (a GPU<->CPU ping-pong through mapped\n"
	    "  memory) in the same run. push-to-seen = one producer's round trip (push; the\n"
	    "  consumer sees it and echoes through mapped memory) minus half the floor's\n"
	    "  median round trip; Mcmd/s = commands / (last seen - first seen) / 1e6; every\n"
	    "  command is checked for loss, duplication, reordering and tearing (#wrong)",
    .groups = EB_G_OUTPUT,
    EB_CMD_OPTS(queue_opts, struct qopts, queue_defaults, queue_finish),
    .bench = &queue_bench,
    .alone = 1,
};
