/* efabench ipc: one rank per GPU; each exports a buffer through a CUDA IPC handle, the handles
 * travel through the bootstrap, and an initiating GPU copies into (write) or out of (read) a
 * peer's buffer with the copy engine or a kernel of a swept launch shape. The GPU that
 * receives the data checks every byte of it. */
#include "ipc_opts.h"
#include "ipc_run.h"
#include "harness/bench.h"
#include "harness/loop.h"
#include "efabench/boot.h"
#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "gpu/ipc_kernels.h"
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
static int ipc_probe(const struct eb_opts *o)
{
	eb_err("efabench ipc needs a build with CUDA (this one has none)");
	return -2;
}

static int ipc_drive(struct eb_ctx *c)
{
	return ipc_probe(c->o) == -2 ? EB_EINVAL : EB_ENOTSUP;
}
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

	for (r = 0; r < c->n; r++)
		if (c->peer[r] != NULL)
			eb_ik_unimport(c->peer[r]);
}

static int alloc_report(struct ipc_ctx *c)
{
	struct ipc_report *r = &c->rep;
	size_t nsw = (size_t)IPC_NDIRS * c->o->nsizes;
	int links = 0;
	double gbs = 0;

	r->sizes = c->o->sizes;
	r->nsizes = c->o->nsizes;
	r->warmup = c->o->warmup;
	r->iters = c->o->iters;
	r->check = c->o->check;
	r->csv = c->o->csv;
	r->json = c->o->json;
	r->pairs = c->io->pairs;
	r->dirs = c->io->dirs;
	r->no_gate = c->io->no_gate;
	r->tma_chunk = c->io->tma_chunk;
	r->tma_stages = c->io->tma_stages;
	r->launcher = c->boot->ops->name;
	r->nranks = c->n;
	snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", c->gpu.name);
	r->sms = c->gpu.sms;
	r->shapes = c->shapes;
	r->nshapes = c->nshapes;
	r->sweep = calloc(nsw * (size_t)c->nshapes, sizeof(*r->sweep));
	r->sum = calloc(nsw, sizeof(*r->sum));
	if (r->sweep == NULL || r->sum == NULL)
		return EB_ENOMEM;
	if (eb_nvlink_peak(c->gpu.pci, &links, &gbs) == EB_OK && links > 0) {
		r->links = links;
		r->link_gbs = gbs;
		r->peak_gbs = links * gbs;
		r->peak_from = "NVML";
	} else if (c->io->link_gbps > 0) {
		r->peak_gbs = c->io->link_gbps / 8;
		r->peak_from = "--link-gbps";
	}
	return EB_OK;
}

static void free_report(struct ipc_ctx *c)
{
	size_t i, nsw = (size_t)IPC_NDIRS * c->o->nsizes;

	for (i = 0; c->rep.sweep != NULL && i < nsw * (size_t)c->nshapes; i++)
		free(c->rep.sweep[i].groups);
	for (i = 0; c->rep.sum != NULL && i < nsw; i++) {
		free(c->rep.sum[i].ce.groups);
		free(c->rep.sum[i].best.groups);
	}
	free(c->rep.sweep);
	free(c->rep.sum);
}

static int ipc_drive(struct eb_ctx *ctx)
{
	struct eb_boot *boot = ctx->boot;
	const struct eb_opts *o = ctx->o;
	const struct ipc_opts *io = o->own;
	struct ipc_ctx c = {.o = o, .io = io, .boot = boot, .rank = boot->rank, .n = boot->size};
	int64_t worst;
	size_t region;
	long nsamples = o->iters > o->warmup ? o->iters : o->warmup;
	int gpu = boot->local_rank, rc;

	eb_log_set_rank(boot->rank);
	rc = eb_ik_use(gpu, &c.gpu);
	if (rc != EB_OK)
		return rc;
	/* Slots start on 4 KiB boundaries, which the bulk copies' 16-byte alignment needs. */
	c.nslots = io->pairs == IPC_ALL ? c.n - 1 : 1;
	c.stride = (o->end + 4095) / 4096 * 4096;
	c.flags_off = c.stride * (size_t)c.nslots;
	region = c.flags_off + 4096;
	c.ordinal = calloc((size_t)c.n, sizeof(*c.ordinal));
	c.peer = calloc((size_t)c.n, sizeof(*c.peer));
	c.samples = calloc((size_t)(nsamples > MAX_BATCH ? nsamples : MAX_BATCH), sizeof(double));
	if (c.ordinal == NULL || c.peer == NULL || c.samples == NULL) {
		rc = EB_ENOMEM;
		goto free_host;
	}
	ipc_build_shapes(&c);
	c.exp = eb_ik_alloc(region);
	c.loc = eb_ik_alloc(c.flags_off);
	if (c.exp == NULL || c.loc == NULL) {
		rc = EB_ENOMEM;
		goto free_dev;
	}
	rc = eb_ik_timer_create(&c.timer, c.nslots, MAX_BATCH, !c.io->no_gate);
	if (rc != EB_OK)
		goto free_dev;
	rc = exchange(&c);
	if (rc == EB_OK && c.rank == 0)
		rc = alloc_report(&c);
	if (rc == EB_OK)
		rc = ipc_run_all(&c);
	/* Any other failure ends this rank now: the launcher tells the others which rank it
	 * lost. A wrong payload is known on rank 0 alone, so every rank agrees on it first. */
	if (rc == EB_OK || rc == EB_EVERIFY) {
		if (eb_boot_allreduce(boot, rc, EB_MIN, &worst, ipc_deadline(&c)) == EB_OK)
			rc = (int)worst;
		/* Peers may still read this rank's buffer until everyone is done with it. */
		if (ipc_barrier(&c) != EB_OK && rc == EB_OK)
			rc = EB_EPEER;
	}
	close_peers(&c);
	free_report(&c);
	eb_ik_timer_destroy(c.timer);
free_dev:
	eb_ik_free(c.exp);
	eb_ik_free(c.loc);
free_host:
	free(c.ordinal);
	free(c.peer);
	free(c.samples);
	return rc;
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
static int ipc_probe(const struct eb_opts *o)
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
    {"link-gbps", 0, "G", eb_opt_dbl, I(link_gbps), 0, 1e9,
     "NVLink Gbps per GPU and direction when NVML reports none"},
    {"no-gate", 0, NULL, eb_opt_flag, I(no_gate), 0, 0,
     "queue launches without the gate kernel (their host cost is\n"
     "then in t): for compute-sanitizer, which serializes launches,\n"
     "so a gate would wait for its deadline"},
};

static const struct eb_bench ipc_bench = {.drive = ipc_drive};

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
	    "  writes' completion flag",
    .groups = EB_G_SIZES | EB_G_RANKS | EB_G_OUTPUT | EB_G_TESTING,
    EB_CMD_OPTS(ipc_opts, struct ipc_opts, ipc_defaults, ipc_check),
    .bench = &ipc_bench,
    .probe = ipc_probe,
    .one_host = 1,
};
