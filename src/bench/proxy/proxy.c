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
#include "proxy_state.h"
#include "harness/sweep.h"
#include "efabench/proxy_thread.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "core/log.h"
#include "gpu/floor.h"
#include "proxy_work.h"
#ifdef EB_HAVE_CUDA
#include "proxy_kernels.h"
#endif
#include "report/rec.h"

#include <stdlib.h>
#include <string.h>

static int proxy_run(struct eb_ctx *c, long n, double *samples, long *got)
{
	struct pstate *st = c->priv;
	int tag = c->var != NULL ? c->var->tag & 0xff : 0, rc, rc2;

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	if (c->var == NULL) /* the floor, rank 0 alone */
		return eb_floor_samples(!eb_px_opts(c)->on_cpu, n, c->o->fab.timeout_s, samples);
	if (tag == T_CPU || tag == T_CPU_RATE)
		return eb_px_cpu_run(c, st, n, samples);
	eb_proxy_layout(st->px, c->var->layout);
	rc = samples != NULL ? eb_px_gpu_clock(c, st, 0) : EB_OK;
	if (rc == EB_OK)
		rc = eb_proxy_start(st->px);
	if (rc != EB_OK)
		return rc;
	rc = c->role == EB_ROLE_INIT ? eb_px_init(c, st, n, samples) : eb_px_target(c, st, n);
	if (rc != EB_OK)
		eb_proxy_abort(st->px);
	rc2 = eb_proxy_stop(st->px);
	if (rc == EB_OK && rc2 == EB_OK && samples != NULL)
		rc2 = eb_px_gpu_clock(c, st, 1);
	if (rc == EB_OK && rc2 == EB_OK)
		eb_px_stage_events(c, st, samples != NULL);
	return rc != EB_OK ? rc : rc2;
}

static void proxy_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	struct eb_head *h = &s->head;

	const struct popts *po = eb_px_opts(c);
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
	    (c->o->gpu >= 0 || c->e->boot->local_size > eb_mem_gpu_count()) &&
	    !eb_mem_mps_running()) {
		eb_head_fact(
		    h, "note",
		    "ranks here share a GPU. Without MPS their processes take turns on it "
		    "(time slices of milliseconds), and the producers' kernel holds it while "
		    "the peer's GPU copies wait: run one rank per GPU, or start MPS "
		    "(nvidia-cuda-mps-control -d)");
		eb_head_break(h);
	}
}

static void proxy_head(const struct eb_ctx *c, struct eb_sheet *s)
{
	eb_sweep_facts_own(c, s, proxy_facts);
}

static void proxy_figures(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *rec)
{
	const struct popts *po = eb_px_opts(c);
	const struct pstate *st = c->priv;

	eb_rec_str(rec, "producers_on", po->on_cpu ? "cpu" : "gpu");
	eb_rec_num(rec, "proxy_cpu", st->cpu);
	if (po->mode == MODE_RATE)
		eb_rec_num(rec, "mmsg_per_s", m->all.mean > 0 ? 1e-6 / m->all.mean : 0.0);
	if (po->mode == MODE_LAT) {
		eb_rec_num(rec, "floor_rtt_p50_us", st->floor_us[0]);
		eb_rec_num(rec, "floor_rtt_p99_us", st->floor_us[1]);
	}
}

/* Latency mode: the GPU<->CPU floor first, a header point; then the sweep. */
static int proxy_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	if (eb_px_opts(c)->mode == MODE_LAT && row-- == 0) {
		pts[0] = (struct eb_pt){.turns = 1,
					.iters = EB_FLOOR_ROUND_TRIPS,
					.flags = EB_PT_SELF_TIMED | EB_PT_HEAD,
					.flow = EB_FLOW_ONE,
					.name = "floor"};
		return 1;
	}
	return eb_sweep_plan(c, row, pts, max);
}

/* The floor's figures go to the header and to every record after it. */
static void proxy_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			 struct eb_rec *r)
{
	struct pstate *st = c->priv;

	if (m->pt->variant != NULL) {
		eb_sweep_record_own(c, m, s, r, proxy_figures);
		return;
	}
	st->floor_us[0] = m->all.p50 * 1e6;
	st->floor_us[1] = m->all.p99 * 1e6;
	eb_head_fact(&s->head,
		     eb_px_opts(c)->on_cpu
			 ? "GPU<->CPU floor (ping-pong through host memory)"
			 : "GPU<->CPU floor (ping-pong through mapped host memory)",
		     "round trip p50 %.2f us, p99 %.2f us", st->floor_us[0], st->floor_us[1]);
	eb_head_fact(&s->head, NULL, "%s", "");
}

static int proxy_variants(const struct eb_opts *o, const struct eb_variant **vars)
{
	*vars = ((const struct popts *)o->own)->vars;
	return ((const struct popts *)o->own)->nvars;
}

/* One variant; the name is the same whatever the memory, but for CPU writes. */
static void add_variant(struct popts *po, const char *const *names, const char *name,
			enum eb_layout l, int tag, unsigned flags, int ref)
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
	v->pt_flags = flags;
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
	o->fab.threads = 2; /* the rank and its proxy thread spin (CPU producers add theirs) */
	if (!o->rounds_given && o->rounds > o->iters) /* -n below the turns' default */
		o->rounds = o->iters;
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
		add_variant(po, single_names, NULL, EB_LAYOUT_SINGLE, T_CPU, 0, 0);
		add_variant(po, NULL, "ProxySingle", EB_LAYOUT_SINGLE, T_BLOCK | 1 << 8, 0, 1);
		add_variant(po, NULL, "ProxySingleNBI", EB_LAYOUT_SINGLE, T_NBI | 1 << 8,
			    EB_PT_PHASE_TIMED, 1);
		add_variant(po, multi_names, NULL, EB_LAYOUT_SPLIT, T_CPU, 0, 0);
		add_variant(po, NULL, "ProxyMulti", EB_LAYOUT_SPLIT, T_BLOCK | 1 << 8, 0, 4);
		add_variant(po, NULL, "ProxyMultiNBI", EB_LAYOUT_SPLIT, T_NBI | 1 << 8,
			    EB_PT_PHASE_TIMED, 4);
	} else if (po->mode == MODE_LAT) {
		add_variant(po, NULL, "CPUWrite", EB_LAYOUT_SINGLE, T_CPU, 0, 0);
		add_variant(po, NULL, "ProxyPut", EB_LAYOUT_SINGLE, T_BLOCK | 1 << 8, 0, 1);
	} else {
		add_variant(po, NULL, "CPURate", EB_LAYOUT_SINGLE, T_CPU_RATE, EB_PT_PHASE_TIMED,
			    0);
		for (i = 0; i < po->ncfg; i++) {
			char name[24];

			if (po->nprod[i] == 0)
				snprintf(name, sizeof(name), "ProxyAllSMs");
			else
				snprintf(name, sizeof(name), "Proxy%d%s", po->nprod[i],
					 po->on_cpu ? "t" : "b");
			add_variant(po, NULL, name, EB_LAYOUT_SINGLE, T_NBI | po->nprod[i] << 8,
				    EB_PT_PHASE_TIMED, 1);
		}
	}
	return EB_OK;
}

static void proxy_defaults(void *arg)
{
	struct popts *po = arg;

	po->log2n = EB_PROXY_LOG2N;
	po->batch = EB_PROXY_BATCH;
	po->active = EB_PROXY_ACTIVE;
	po->cpu = EB_CPU_AUTO;
}

#define P(field) EB_AT(struct popts, field)

static const char *const mode_words[] = {"bw", "lat", "rate", NULL};
static const char *const sites[] = {"gpu", "cpu", NULL};

static const struct eb_opt proxy_opts[] = {
    {"mode", 0, "M", eb_opt_choice, P(mode), 0, 0,
     "bw (default: seed 000's four variants beside CPU writes),\n"
     "lat (put + quiet round trips, beside a CPU write and the\n"
     "GPU<->CPU floor) or rate (small puts from many producers,\n"
     "beside CPU-posted writes); each mode's sizes and\n"
     "iterations: Defaults, below",
     mode_words},
    {"producers-on", 0, "P", eb_opt_choice, P(on_cpu), 0, 0,
     "gpu (default) or cpu (threads run the same device API)", sites},
    {"producers", 0, "LIST", eb_opt_str, P(producers), 0, 0,
     "rate mode: <N>b blocks or all (one per SM) on the GPU,\n"
     "thread counts on the CPU (default 1b,16b,all / 1,2,4)"},
    {"active", 0, "N", eb_opt_num, P(active), 1, 4096,
     "puts the proxy keeps in flight at once (default 64)"},
    {"slots", 0, "N", eb_opt_pow2, P(log2n), 2, 1 << 24,
     "command queue slots, a power of two (default 4096)"},
    {"batch", 0, "N", eb_opt_num, P(batch), 1, 1 << 30,
     "the proxy publishes its queue position every N (default 64)"},
    {"proxy-cpu", 0, "C", eb_opt_cpu, P(cpu), 0, 0,
     "the proxy thread's CPU: auto (default: a core of its own\n"
     "near the GPU, the top CPUs of the rank's mask, unless the\n"
     "process was bound or cores are short), none, or a number"},
    {"bad-put", 0, NULL, eb_opt_flag, P(bad_put), 0, 0,
     "testing aid: producer 0's first put aims past the buffer"},
    {"stall-proxy", 0, NULL, eb_opt_flag, P(stall_proxy), 0, 0,
     "testing aid: rank 0's proxy thread blocks for good once it\n"
     "has started a put (as one stuck inside a provider call)"},
    {"slow-proxy", 0, "NS", eb_opt_lng, P(slow_ns), 1, 1e9,
     "testing aid: every proxy thread spends NS ns on each\n"
     "command it takes (a slow proxy, for the stage breakdown)"},
};

static const struct eb_sweep_def proxy_sweep = {.variants_of = proxy_variants};

static const struct eb_bench proxy_bench = {
    .priv_size = sizeof(struct pstate),
    .metric = "t = one put, first push to its completion (blocking: per put; NBI and rate: the "
	      "phase / puts); CPU: the same writes posted by the host from the proxy thread's "
	      "CPU; Gbps = 8*S/t",
    EB_SWEEP_HOOKS,
    .sweep = &proxy_sweep,
    .events = eb_px_events,
    .nevents = EB_PX_NEVENTS,
    .stages = eb_px_stages,
    .nstages = EB_PX_NSTAGES,
    .plan = proxy_plan,
    .facts = proxy_head,
    .record = proxy_record,
    .setup = eb_px_setup,
    .teardown = eb_px_teardown,
    .prepare = eb_px_prepare,
    .run = proxy_run,
    .verify = eb_px_verify,
    .landing = eb_px_landing,
};

/* bw: seed 000's sizes; lat and rate: the small ones they are about. A latency's p50 needs
 * thousands of round trips (two H200s, 8-byte put: 6.85 us over 20, 4.10 over 5,000); a rate
 * iteration is one message. The ratio table is the point: the variants take turns (shm's
 * copies drift over a run by more than the ratios, measurements.md). */
static const struct eb_run_dflt proxy_dflts[] = {
    [MODE_BW] = {"bw", 8ull << 20, 1ull << 30, 5, 20, 5},
    [MODE_LAT] = {"lat", 8, 65536, 100, 5000, 5},
    [MODE_RATE] = {"rate", 4096, 4096, 5, 20000, 5},
};

static int proxy_dflt_of(const void *own)
{
	return ((const struct popts *)own)->mode;
}

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
	    "  write's of the same channels and size (posted from the proxy thread's CPU),\n"
	    "  the variants taking turns (--rounds; 1: each variant in one go); rate mode\n"
	    "  adds Mmsg/s = 1/t in JSON; -v prints what each proxy thread did",
    .groups = (EB_G_FABRIC_BENCH & ~EB_G_LAYOUT) | EB_G_PHASES | EB_G_STAGES,
    EB_CMD_OPTS(proxy_opts, struct popts, proxy_defaults, proxy_finish),
    .dflts = proxy_dflts,
    .ndflts = 3,
    .dflt_by = "--mode",
    .dflt_of = proxy_dflt_of,
    .bench = &proxy_bench,
    .report = EB_REPORT_DEFAULT,
};
