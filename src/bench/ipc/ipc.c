/* efabench ipc: one rank per GPU; each exports a buffer through a CUDA IPC handle, the handles
 * travel through the bootstrap, and an initiating GPU copies into (write) or out of (read) a
 * peer's buffer with the copy engine or a kernel of a swept launch shape. The GPU that
 * receives the data checks every byte of it. */
#include "ipc_links.h"
#include "harness/bench.h"
#include "efabench/boot.h"
#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "ipc_kernels.h"
#include "mem/mem_kernels.h"
#include "gpu/nvlink.h"
#endif

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EB_HAVE_CUDA
static int ipc_none(void)
{
	eb_err("efabench ipc needs a build with CUDA (this one has none)");
	return -2;
}

static int ipc_probe(struct eb_opts *o)
{
	(void)o;
	return ipc_none();
}

static int ipc_refuse(struct eb_ctx *c)
{
	(void)c;
	return ipc_none() == -2 ? EB_EINVAL : EB_ENOTSUP;
}

/* Nothing to measure without CUDA: the probe refuses before any rank starts, and a rank that
 * an outside launcher started refuses in its setup. */
static const struct eb_bench ipc_bench = {.setup = ipc_refuse};
#else

struct ginfo {
	int32_t ordinal;
	char pci[32];
	char host[64];
	unsigned char handle[EB_IK_HANDLE_BYTES];
};

/* Everyone's GPU and IPC handle; refuse ranks on other hosts or sharing a GPU. */
static int exchange(struct ipc_ctx *c)
{
	struct ginfo me = {.ordinal = c->gpu.ordinal}, *all = calloc((size_t)c->n, sizeof(me));
	int r, q, rc;

	if (all == NULL)
		return EB_ENOMEM;
	snprintf(me.pci, sizeof(me.pci), "%s", c->gpu.pci);
	gethostname(me.host, sizeof(me.host) - 1);
	rc = eb_ik_export(c->exp, me.handle);
	if (rc == EB_OK)
		rc = eb_boot_allgather(c->boot, &me, all, sizeof(me), ipc_deadline(c));
	for (r = 0; r < c->n && rc == EB_OK; r++) {
		c->ordinal[r] = all[r].ordinal;
		if (strcmp(all[r].host, me.host) != 0) {
			eb_err("rank %d runs on %s and rank %d on %s: efabench ipc needs every "
			       "rank on one host",
			       c->rank, me.host, r, all[r].host);
			rc = EB_EINVAL;
		}
		for (q = 0; q < r && rc == EB_OK; q++)
			if (strcmp(all[q].pci, all[r].pci) == 0) {
				eb_err("ranks %d and %d share GPU %s: run one rank per GPU", q, r,
				       all[r].pci);
				rc = EB_EINVAL;
			}
	}
	for (r = 0; r < c->n && rc == EB_OK; r++)
		if (r != c->rank)
			rc = eb_ik_import(all[r].handle, (void **)&c->peer[r]);
	free(all);
	return rc;
}

static void close_peers(struct ipc_ctx *c)
{
	int r;

	for (r = 0; c->peer != NULL && r < c->n; r++)
		if (c->peer[r] != NULL)
			eb_ik_unimport(c->peer[r]);
}

static void ipc_teardown(struct eb_ctx *ctx)
{
	struct ipc_ctx *c = ctx->priv;

	close_peers(c);
	eb_ik_timer_destroy(c->timer);
	eb_ik_free(c->exp);
	eb_ik_free(c->loc);
	eb_rec_free(&c->row);
	free(c->ordinal);
	free(c->peer);
	free(c->scratch);
}

static void add_shape(struct ipc_ctx *c, int method, int grid, int block)
{
	struct ipc_shape *s = &c->shapes[c->nshapes++];

	s->method = method;
	s->grid = grid;
	s->block = block;
	if (method == EB_IK_CE)
		snprintf(s->name, sizeof(s->name), "CE");
	else if (method == EB_IK_ST)
		snprintf(s->name, sizeof(s->name), "st %dx%d", grid, block);
	else
		snprintf(s->name, sizeof(s->name), "tma %d", grid);
}

/* The launch shapes --methods, --grid and --block ask for. */
static void build_shapes(struct ipc_ctx *c)
{
	const struct ipc_opts *io = c->io;
	int g, b;

	if (io->methods & (1u << EB_IK_CE))
		add_shape(c, EB_IK_CE, 0, 0);
	for (g = 0; g < io->grids.n && (io->methods & (1u << EB_IK_ST)); g++)
		for (b = 0; b < io->blocks.n; b++)
			add_shape(c, EB_IK_ST, io->grids.v[g] ? io->grids.v[g] : c->gpu.sms,
				  io->blocks.v[b]);
	for (g = 0; g < io->grids.n && (io->methods & (1u << EB_IK_TMA)); g++)
		add_shape(c, EB_IK_TMA, io->grids.v[g] ? io->grids.v[g] : c->gpu.sms, 32);
}

/* This rank's GPU, its exported and private buffers, the timer, and every peer's buffer
 * mapped here. */
static int ipc_setup(struct eb_ctx *ctx)
{
	const struct eb_opts *o = ctx->o;
	const struct ipc_opts *io = ctx->own;
	long nsamples = o->iters > o->warmup ? o->iters : o->warmup;
	struct ipc_ctx *c = ctx->priv;
	size_t region;
	int rc;

	*c = (struct ipc_ctx){.o = o,
			      .io = io,
			      .boot = ctx->boot,
			      .rank = ctx->rank,
			      .n = ctx->nranks,
			      .table_dir = -1};
	rc = eb_ik_use(ctx->boot->local_rank, &c->gpu);
	if (rc != EB_OK)
		return rc;
	/* Slots start on 4 KiB boundaries, which the bulk copies' 16-byte alignment needs. */
	c->nslots = io->pairs == IPC_ALL ? c->n - 1 : 1;
	c->stride = (o->end + 4095) / 4096 * 4096;
	c->flags_off = c->stride * (size_t)c->nslots;
	region = c->flags_off + 4096;
	c->ordinal = calloc((size_t)c->n, sizeof(*c->ordinal));
	c->peer = calloc((size_t)c->n, sizeof(*c->peer));
	c->scratch = calloc((size_t)(nsamples > MAX_BATCH ? nsamples : MAX_BATCH), sizeof(double));
	if (c->ordinal == NULL || c->peer == NULL || c->scratch == NULL)
		return EB_ENOMEM;
	build_shapes(c);
	ipc_peak(c);
	c->exp = eb_ik_alloc(region);
	c->loc = eb_ik_alloc(c->flags_off);
	if (c->exp == NULL || c->loc == NULL)
		return EB_ENOMEM;
	rc = eb_ik_timer_create(&c->timer, c->nslots, MAX_BATCH, !io->no_gate);
	return rc == EB_OK ? exchange(c) : rc;
}

struct probe_result {
	int rc, ngpus, bad_a, bad_b;
	char why[160]; /* why CUDA sees no GPU */
};

static int probe_gpus(const void *arg, void *out)
{
	struct probe_result *r = out;
	const char *why;

	memset(r, 0, sizeof(*r));
	why = eb_mem_gpu_absent();
	if (why != NULL) {
		snprintf(r->why, sizeof(r->why), " (%s)", why);
		r->ngpus = 0;
		r->rc = EB_OK;
		return 0;
	}
	r->rc = eb_ik_probe(*(const int *)arg, &r->ngpus, &r->bad_a, &r->bad_b);
	return 0;
}

/* Count GPUs and check peer access in a child, so this process never initialises CUDA
 * before it forks the ranks. */
static int ipc_probe(struct eb_opts *o)
{
	const struct ipc_opts *io = o->own;
	struct probe_result r;
	int want = io->pairs == IPC_FIRST ? 2 : o->np ? o->np : INT_MAX;

	if (eb_launch_probe(probe_gpus, &want, &r, sizeof(r)) != 0)
		return -1;
	if (r.rc != EB_OK || r.ngpus < 2) {
		eb_err("efabench ipc needs two or more GPUs that can access each other's memory; "
		       "CUDA sees %d%s",
		       r.ngpus, r.why);
		return -2;
	}
	if (o->np == 1 || o->np > r.ngpus) {
		eb_err("--np %d: efabench ipc runs one rank per GPU, 2 to %d here", o->np, r.ngpus);
		return -2;
	}
	if (r.bad_a >= 0) {
		eb_err("GPU %d cannot access GPU %d's memory (no peer access between them): "
		       "efabench ipc needs NVLink or PCIe peer-to-peer",
		       r.bad_a, r.bad_b);
		return -2;
	}
	return o->np ? o->np : r.ngpus;
}

#endif

static int ipc_check(struct eb_opts *o, void *own)
{
	struct ipc_opts *io = own;

	if (io->tma_chunk % 16 != 0) {
		eb_err("bad --tma-chunk %llu: want a multiple of 16 up to 1M",
		       (unsigned long long)io->tma_chunk);
		return EB_EINVAL;
	}
	return EB_OK;
}

static void ipc_defaults(void *own)
{
	static const int grids[] = {1, 2, 4, 8, 16, 32, 64, 128, 0};
	struct ipc_opts *io = own;

	memcpy(io->grids.v, grids, sizeof(grids));
	io->grids.n = (int)(sizeof(grids) / sizeof(grids[0]));
	io->blocks.v[0] = 256;
	io->blocks.v[1] = 1024;
	io->blocks.n = 2;
	io->pairs = IPC_FIRST;
	io->methods = 1u << IPC_CE | 1u << IPC_ST | 1u << IPC_TMA;
	io->dirs = 1u << IPC_WRITE | 1u << IPC_READ;
	/* 32K x 4 measured best on H200 NVLink (4K..64K chunks, 3..8 stages tried). */
	io->tma_chunk = 32768;
	io->tma_stages = 4;
	io->copies = 1;
}

#define I(field) EB_AT(struct ipc_opts, field)

static const char *const all_word[] = {"all", NULL};
static const char *const pairs_words[] = {"first", "each", "all", NULL};
static const char *const method_words[] = {"ce", "st", "tma", NULL};
static const char *const dir_words[] = {"write", "read", NULL};

static const struct eb_opt ipc_opts[] = {
    {"pairs", 0, "P", eb_opt_choice, I(pairs), 0, 0,
     "first (GPU 0 -> 1, default), each (every ordered pair, one\n"
     "at a time, averaged) or all (every GPU to every other at\n"
     "once; GB/s per GPU)",
     pairs_words},
    {"dirs", 0, "LIST", eb_opt_mask, I(dirs), 0, 0,
     "write (initiator stores into the peer), read (initiator\n"
     "loads the peer's memory into its own); default both",
     dir_words},
    {"methods", 0, "LIST", eb_opt_mask, I(methods), 0, 0,
     "ce (cudaMemcpyPeerAsync), st (16-byte load/store kernel),\n"
     "tma (bulk asynchronous copies); default all three",
     method_words},
    {"grid", 0, "LIST", eb_opt_list, I(grids), 1, 1 << 20,
     "blocks per launch to sweep; all = one per SM (default\n"
     "1,2,4,8,16,32,64,128,all)",
     all_word},
    {"block", 0, "LIST", eb_opt_list, I(blocks), 1, 1024,
     "threads per block to sweep for st (default 256,1024)"},
    {"tma-chunk", 0, "S", eb_opt_size, I(tma_chunk), 16, 1 << 20,
     "bytes per bulk copy, a multiple of 16 (default 32K)"},
    {"tma-stages", 0, "N", eb_opt_num, I(tma_stages), 2, 16,
     "shared-memory buffers per tma block (default 4)"},
    {"copies", 0, "N", eb_opt_num, I(copies), 1, 64,
     "copies of the buffer per launch, t = a launch's time / N\n"
     "(default 1): the launch cost spread over N copies, as\n"
     "nvbandwidth times its copies (16 per launch)"},
    {"link-gbps", 0, "G", eb_opt_dbl, I(link_gbps), 0, 1e9,
     "NVLink Gbps per GPU and direction when NVML reports none"},
    {"no-gate", 0, NULL, eb_opt_flag, I(no_gate), 0, 0,
     "queue launches without the gate kernel (their host cost is\n"
     "then in t): for compute-sanitizer, which serializes launches,\n"
     "so a gate would wait for its deadline"},
};

#ifdef EB_HAVE_CUDA
static const struct eb_bench ipc_bench = {
    .priv_size = sizeof(struct ipc_ctx),
    .plan = ipc_plan,
    .setup = ipc_setup,
    .teardown = ipc_teardown,
    .turn = ipc_turn,
    .prepare = ipc_prepare_hook,
    .run = ipc_run,
    .verify = ipc_verify_hook,
    .facts = ipc_facts,
    .record = ipc_record,
    .close = ipc_close,
};
#endif

const struct eb_cmd eb_cmd_ipc = {
    .name = "ipc",
    .summary = "GPU -> GPU copies over NVLink through CUDA IPC, kernels vs copy engine",
    .help = "  one rank per GPU (--np = GPUs to use, default all): the copy engine and\n"
	    "  kernels of every launch shape swept, the best shape measured again beside\n"
	    "  the copy engine; writes and reads.\n"
	    "  t = mean seconds per copy on the initiating GPU (CUDA events between launches\n"
	    "  queued behind a gate kernel, so host launch cost stays out); GB/s = bytes per\n"
	    "  copy / t / 1e9; Gbps = 8 x GB/s; NVL% = of NVML's active links x link speed;\n"
	    "  %CE = of the copy engine at that size; the receiving GPU checks every byte\n"
	    "  after warm-up and after the timed copies (--check: every copy), and kernel\n"
	    "  writes' completion flag; --copies N: N copies per launch, t = the launch / "
	    "N\n" EB_HELP_STEAL,
    .groups = EB_G_SIZES | EB_G_ITERS | EB_G_RANKS | EB_G_OUTPUT | EB_G_TESTING,
    EB_CMD_OPTS(ipc_opts, struct ipc_opts, ipc_defaults, ipc_check),
    .bench = &ipc_bench,
    .probe = ipc_probe,
    .one_host = 1,
    .report = EB_REPORT_TWO_GPUS,
};
