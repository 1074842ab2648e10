/* efabench queue: the GPU->CPU command queue on its own. For each producer count it measures
 * the commands per second one consumer thread takes; with one producer, the push-to-seen
 * latency; and in the same run the machine's floor, a ping-pong through mapped memory.
 * Every command carries (producer, sequence) and a check word, so the consumer proves none was
 * lost, duplicated (out of order: both) or torn. */
#include "harness/bench.h"
#include "queue_prod.h"
#include "efabench/gpuq.h"
#include "efabench/proxy_thread.h"
#include "efabench/stats.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "gpu/floor.h"
#include "report/sheet.h"
#ifdef EB_HAVE_CUDA
#include "mem/cuda_check.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The points: the floor, then one producer's round trips (header points, a row each), then
 * a row of producer configurations. */
enum { Q_FLOOR, Q_LATENCY, Q_SHAPES };

/* One producer's push-to-seen: from its clock at the push, moved onto the host's, to the
 * consumer seeing the command. */
enum { SPAN_SEEN };
static const char *const spans[] = {"push_to_seen"};

struct qstate {
	struct qctx q;
	struct tally t;	  /* the last run's */
	struct qlat lat;  /* latency: each round trip and push-to-seen */
	struct qpin pin;  /* where the consumer runs */
	double floor_p50; /* the floor's median round trip, seconds */
};

static int queue_setup(struct eb_ctx *c)
{
	const struct qopts *o = c->own;
	struct qstate *st = c->priv;
	const char *why;
	int rc;

	st->q = (struct qctx){.o = o, .gpu = !o->on_cpu, .timeout_s = c->o->fab.timeout_s};
	/* One process: nothing started yet, so a missing GPU is bad input like any other. */
	if (st->q.gpu && (why = eb_mem_gpu_absent()) != NULL) {
		eb_err("--producers-on gpu (the default) needs a GPU, and CUDA sees none (%s); "
		       "--producers-on cpu runs the same protocol with CPU threads",
		       why);
		return EB_EINVAL;
	}
	if (st->q.gpu) {
#ifdef EB_HAVE_CUDA
		st->q.sms = eb_gpu_sms();
		if (st->q.sms < 0)
			return EB_ENOTSUP;
#else
		eb_err("GPU producers need a build with CUDA (this one has none); "
		       "--producers-on cpu runs the same queue with CPU threads");
		return EB_ENOTSUP;
#endif
	}
	st->pin = (struct qpin){.cpu = -1, .why = "CPU producers"};
	rc = st->q.gpu ? eb_q_pin_consumer(&st->pin, o->cpu, c->user_bound) : EB_OK;
	if (rc != EB_OK)
		return rc;
	st->lat.rtt_ns = calloc((size_t)o->lat_iters, sizeof(*st->lat.rtt_ns));
	st->lat.seen_ns = calloc((size_t)o->lat_iters, sizeof(*st->lat.seen_ns));
	if (st->lat.rtt_ns == NULL || st->lat.seen_ns == NULL) {
		eb_err("out of memory for %d round trips", o->lat_iters);
		return EB_ENOMEM;
	}
	rc = eb_q_alloc_flags(&st->q);
	if (rc == EB_OK)
		rc = eb_gpuq_create(&st->q.q, st->q.gpu ? EB_GPUQ_GPU : EB_GPUQ_CPU,
				    o->managed ? EB_GPUQ_MANAGED : EB_GPUQ_PINNED,
				    (uint32_t)o->log2n, (uint32_t)o->batch,
				    (uint64_t)(st->q.timeout_s * 1e9));
	return rc;
}

static void queue_teardown(struct eb_ctx *c)
{
	struct qstate *st = c->priv;

	eb_gpuq_destroy(&st->q.q);
	eb_q_free_flags(&st->q);
	eb_q_unpin_consumer(&st->pin);
	free(st->lat.rtt_ns);
	free(st->lat.seen_ns);
}

static int queue_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	const struct qopts *o = c->own;
	int i;

	if (row == Q_FLOOR || row == Q_LATENCY) {
		pts[0] = (struct eb_pt){.var = row,
					.turns = 1,
					.iters = o->lat_iters,
					.flags = EB_PT_SELF_TIMED | EB_PT_HEAD,
					.name = row == Q_FLOOR ? "floor" : "one producer"};
		return 1;
	}
	for (i = 0; row == Q_SHAPES && i < o->nshapes && i < max; i++)
		pts[i] = (struct eb_pt){.var = Q_SHAPES + i,
					.turns = 1,
					.iters = 1,
					.flags = EB_PT_SELF_TIMED,
					.name = o->shapes[i].name};
	return row == Q_SHAPES ? i : 0;
}

static int blocks_of(const struct qstate *st, const struct qshape *shp)
{
	return shp->blocks ? shp->blocks : st->q.sms;
}

/* The floor: a ping-pong through mapped memory (CPU memory in CPU mode), a sample per round
 * trip; one producer: one command in flight, the consumer echoing each; a configuration:
 * its commands from first seen to last, one sample. */
static int queue_run(struct eb_ctx *c, long n, double *samples, long *got)
{
	struct qstate *st = c->priv;
	const struct qshape *shp;
	long i;
	int rc;

	memset(&st->t, 0, sizeof(st->t));
	*got = c->pt->var < Q_SHAPES ? n : 1;
	if (c->pt->var == Q_FLOOR)
		return eb_floor_samples(st->q.gpu, n, st->q.timeout_s, samples);
	if (c->pt->var == Q_LATENCY) {
		rc = eb_q_run_producers(&st->q, 1, 1, (uint32_t)n, &st->lat, &st->t);
		for (i = 0; rc == EB_OK && samples != NULL && i < n; i++) {
			samples[i] = st->lat.rtt_ns[i] * 1e-9;
			eb_span(c, SPAN_SEEN, st->lat.seen_ns[i] * 1e-9);
		}
		return rc;
	}
	shp = &st->q.o->shapes[c->pt->var - Q_SHAPES];
	rc = eb_q_run_producers(&st->q, blocks_of(st, shp), shp->threads, (uint32_t)st->q.o->per,
				NULL, &st->t);
	if (rc == EB_OK && samples != NULL)
		samples[0] = st->t.last_s - st->t.first_s;
	return rc;
}

static int queue_verify(struct eb_ctx *c, uint64_t *wrong)
{
	*wrong += eb_q_tally_wrong(&((struct qstate *)c->priv)->t);
	return EB_OK;
}

/* Latency figures in microseconds. */
static void lat_obj(struct eb_rec *r, const char *key, const struct eb_stats *s)
{
	eb_rec_obj(r, key);
	eb_rec_num(r, "p50_us", s->p50 * 1e6);
	eb_rec_num(r, "p99_us", s->p99 * 1e6);
	eb_rec_num(r, "min_us", s->min * 1e6);
	eb_rec_num(r, "mean_us", s->mean * 1e6);
	eb_rec_num(r, "max_us", s->max * 1e6);
	eb_rec_int(r, "samples", (long long)s->n);
	eb_rec_end(r);
}

static void queue_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct qstate *st = c->priv;
	const struct qopts *o = st->q.o;

	eb_head_fact(&s->head, NULL, "efabench queue: %s producers -> one CPU consumer thread",
		     st->q.gpu ? "GPU" : "CPU");
	eb_fact_break(s);
	eb_fact_str(s, "producers_on", "producers on", st->q.gpu ? "gpu" : "cpu");
	eb_fact_str(s, "placement", "slots", o->managed ? "managed" : "pinned");
	if (!st->q.gpu)
		eb_head_fact(&s->head, NULL, "(host memory: CPU producers)");
	eb_fact_int(s, "slots", "ring slots", 1ll << o->log2n);
	eb_fact_int(s, "batch", "consumer publishes every", o->batch);
	eb_fact_int(s, "per_producer", "commands per producer", o->per);
	eb_fact_int(s, "consumer_cpu", NULL, st->pin.cpu);
	if (st->pin.cpu >= 0)
		eb_fact_say(s, "consumer thread", "CPU %d (%s)", st->pin.cpu, st->pin.why);
	else
		eb_fact_say(s, "consumer thread", "unpinned (%s)", st->pin.why);
	eb_fact_say(s, NULL,
		    "Mcmd/s = commands consumed / (last seen - first seen) / 1e6; #wrong = lost + "
		    "duplicated + torn + unknown");
}

/* The floor and one producer's latency: facts of the header. Beside the push-to-seen the
 * clocks give, the estimate without them: the round trip less half the floor's (the echo's
 * way back taken as half a ping-pong). */
static void latency(const struct eb_meas *m, struct qstate *st, struct eb_sheet *s)
{
	const struct eb_stats *seen = &m->span[SPAN_SEEN].all;
	double est = m->all.p50 - st->floor_p50 / 2;

	if (m->pt->var == Q_FLOOR) {
		st->floor_p50 = m->all.p50;
		lat_obj(&s->doc.head, "floor_round_trip", &m->all);
		eb_fact_say(s,
			    st->q.gpu ? "floor (ping-pong through mapped host memory)"
				      : "floor (ping-pong through host memory)",
			    "round trip p50 %.2f us, p99 %.2f us", m->all.p50 * 1e6,
			    m->all.p99 * 1e6);
		return;
	}
	lat_obj(&s->doc.head, "push_to_seen", seen);
	lat_obj(&s->doc.head, "queue_round_trip", &m->all);
	eb_rec_num(&s->doc.head, "clock_uncertainty_us", st->lat.clock_unc_ns * 1e-3);
	eb_rec_num(&s->doc.head, "rtt_less_half_floor_p50_us", est * 1e6);
	eb_fact_say(s, "one producer", "queue round trip p50 %.2f us, p99 %.2f us",
		    m->all.p50 * 1e6, m->all.p99 * 1e6);
	eb_fact_say(s, "push-to-seen",
		    "p50 %.2f us, p99 %.2f us (%s; round trip - floor p50 / 2: %.2f us)",
		    seen->p50 * 1e6, seen->p99 * 1e6,
		    st->q.gpu ? "GPU clock on the host's" : "one clock", est * 1e6);
	if (st->q.gpu)
		eb_fact_say(s, NULL, "(the GPU clock placed on the host's within %.2f us)",
			    st->lat.clock_unc_ns * 1e-3);
	eb_head_fact(&s->head, NULL, "%s", "");
}

static void queue_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			 struct eb_rec *r)
{
	struct qstate *st = c->priv;
	const struct qshape *shp;
	uint64_t producers, commands;
	double secs = m->all.mean;

	if (m->pt->var < Q_SHAPES) {
		latency(m, st, s);
		return;
	}
	shp = &st->q.o->shapes[m->pt->var - Q_SHAPES];
	producers = (uint64_t)blocks_of(st, shp) * (uint64_t)shp->threads;
	commands = producers * (uint64_t)st->q.o->per;
	eb_rec_str(r, "producers_config", shp->name);
	eb_rec_int(r, "producers", (long long)producers);
	eb_rec_int(r, "commands", (long long)commands);
	eb_rec_num(r, "seconds", secs);
	eb_rec_num(r, "mcommands_per_s", secs > 0 ? (double)(st->t.seen - 1) / secs / 1e6 : 0.0);
	eb_rec_int(r, "lost", (long long)st->t.lost);
	eb_rec_int(r, "duplicated", (long long)st->t.dup);
	eb_rec_int(r, "torn", (long long)st->t.torn);
	eb_rec_int(r, "unknown", (long long)st->t.alien);
	eb_rec_int(r, "wrong", (long long)eb_q_tally_wrong(&st->t));
}

static const struct eb_colspec cols[] = {
    {"Producers", "producers_config", 9, 0, 0, NULL},
    {"Threads", "producers", 9, 0, 0, NULL},
    {"Commands", "commands", 10, 0, 0, NULL},
    {"Mcmd/s", "mcommands_per_s", 8, 2, 0, NULL},
    {"Seconds", "seconds", 8, 4, 0, NULL},
    {"#wrong", "wrong", 6, 0, 0, NULL},
};

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
	if (o->on_cpu && o->cpu >= 0) {
		eb_err("--consumer-cpu %d: the consumer is placed beside GPU producers only (CPU "
		       "producers' threads would share its core)",
		       o->cpu);
		return EB_EINVAL;
	}
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

	o->log2n = EB_PROXY_LOG2N;
	o->batch = EB_PROXY_BATCH;
	o->block = 256;
	o->lat_iters = 10000;
	o->cpu = EB_CPU_AUTO;
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
    {"consumer-cpu", 0, "C", eb_opt_cpu, Q(cpu), 0, 0,
     "GPU producers: the consumer thread's CPU (it also echoes\n"
     "the floor's pings): auto (default: a core of its own, the\n"
     "top CPU of the mask, unless the process was bound), none,\n"
     "or a number"},
};

static const struct eb_bench queue_bench = {
    .priv_size = sizeof(struct qstate),
    .spans = spans,
    .nspans = 1,
    .plan = queue_plan,
    .setup = queue_setup,
    .teardown = queue_teardown,
    .run = queue_run,
    .verify = queue_verify,
    .facts = queue_facts,
    .record = queue_record,
    .cols = cols,
    .ncols = (int)(sizeof(cols) / sizeof(cols[0])),
};

const struct eb_cmd eb_cmd_queue = {
    .name = "queue",
    .summary = "the GPU->CPU command queue alone: commands/s and latency",
    .help = "  commands/s one consumer thread takes per producer count, one producer's\n"
	    "  push-to-seen latency, and the floor (a GPU<->CPU ping-pong through mapped\n"
	    "  memory) in the same run. push-to-seen = from one producer's clock as it\n"
	    "  pushes to the consumer's as it sees the command, each command echoed before\n"
	    "  the next (the GPU's clock placed on the host's by a ping-pong just before and\n"
	    "  after, its uncertainty in the header; beside it the round trip less half the\n"
	    "  floor's, which needs no clock); Mcmd/s = commands / (last seen - first\n"
	    "  seen) / 1e6; #wrong = lost + duplicated + torn + unknown commands, each\n"
	    "  producer's in sequence (one that overtakes counts the ones it passed as lost,\n"
	    "  and each of those as duplicated when it comes)\n" EB_HELP_STEAL,
    .groups = EB_G_OUTPUT,
    EB_CMD_OPTS(queue_opts, struct qopts, queue_defaults, queue_finish),
    .bench = &queue_bench,
    .alone = 1,
    .report = EB_REPORT_DEFAULT,
};
