/* efabench ipc: one rank per GPU; each exports a buffer through a CUDA IPC handle, the handles
 * travel through the bootstrap, and an initiating GPU copies into (write) or out of (read) a
 * peer's buffer with the copy engine or a kernel of a swept launch shape. The GPU that
 * receives the data checks every byte of it. */
#include "ipc.h"
#include "bench.h"
#include "loop.h"
#include "efabench/boot.h"
#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"
#ifdef EB_HAVE_CUDA
#include "../gpu/ipc_kernels.h"
#include "../gpu/mem_kernels.h"
#include "../gpu/nvlink.h"
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

#define MAX_BATCH 100

struct ipc_ctx {
	const struct eb_opts *o;
	const struct ipc_opts *io;
	struct eb_boot *boot;
	int rank, n;
	struct eb_ik_gpu gpu;
	int *ordinal;		  /* CUDA ordinal of each rank's GPU */
	unsigned char *exp;	  /* exported: written by peers (write) or read by them (read) */
	unsigned char *loc;	  /* private: the source of writes, the target of reads */
	unsigned char **peer;	  /* each rank's exp mapped here (NULL for this rank) */
	size_t stride, flags_off; /* bytes per slot; where the flags start in exp */
	int nslots;		  /* one per peer when all GPUs run at once, else 1 */
	struct eb_ik_timer *timer;
	double *samples; /* the timed launches' (a warm-up's too, then thrown away) */
	uint64_t epoch;
	struct ipc_shape shapes[2 * EB_OPT_LIST_MAX * EB_OPT_LIST_MAX + 1];
	int nshapes;
	struct ipc_report rep; /* filled on rank 0 */
};

static uint64_t deadline(const struct ipc_ctx *c)
{
	return eb_deadline(c->o->fab.timeout_s);
}

static int barrier(void *arg)
{
	struct ipc_ctx *c = arg;

	return eb_boot_barrier(c->boot, deadline(c));
}

/* The slot of `me`'s buffers that holds what it exchanges with `other`. */
static size_t slot(const struct ipc_ctx *c, int me, int other)
{
	return c->nslots == 1 ? 0 : (size_t)((other - me - 1 + c->n) % c->n);
}

/* Links (initiator a, peer b) in phase p: one per phase, or every ordered pair at once. */
static int nphases(const struct ipc_ctx *c)
{
	return c->io->pairs == IPC_EACH ? c->n * (c->n - 1) : 1;
}

static int nlinks(const struct ipc_ctx *c)
{
	return c->io->pairs == IPC_ALL ? c->n * (c->n - 1) : 1;
}

static void link_of(const struct ipc_ctx *c, int p, int k, int *a, int *b)
{
	int idx = c->io->pairs == IPC_EACH ? p : c->io->pairs == IPC_ALL ? k : 0;
	int j = idx % (c->n - 1);

	*a = idx / (c->n - 1);
	*b = j >= *a ? j + 1 : j;
}

/* Link a -> b: data moves from its source holder to its destination holder. */
struct link {
	int a, b, src, dst;	/* ranks */
	unsigned char *src_mem; /* the source, in the source holder's own memory */
	unsigned char *dst_mem; /* the destination, in the destination holder's memory */
	uint64_t *flag;		/* write: the completion flag, in the destination's memory */
};

static struct link describe(const struct ipc_ctx *c, int dir, int a, int b)
{
	struct link l = {.a = a, .b = b};

	if (dir == IPC_WRITE) {
		l.src = a;
		l.dst = b;
		l.src_mem = c->loc + slot(c, a, b) * c->stride;
		l.dst_mem = c->exp + slot(c, b, a) * c->stride;
		l.flag = (uint64_t *)(c->exp + c->flags_off) + slot(c, b, a);
	} else {
		l.src = b;
		l.dst = a;
		l.src_mem = c->exp + slot(c, b, a) * c->stride;
		l.dst_mem = c->loc + slot(c, a, b) * c->stride;
	}
	return l;
}

static uint64_t seed(const struct link *l, uint64_t epoch)
{
	return eb_pattern_seed((uint32_t)l->src, (uint32_t)l->dst, epoch);
}

/* The op an initiator runs for link a -> b. */
static struct eb_ik_op op_for(const struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int b,
			      uint64_t size)
{
	struct eb_ik_op op = {.method = (enum eb_ik_method)sh->method,
			      .grid = sh->grid,
			      .block = sh->block,
			      .len = size,
			      .tma_chunk = c->io->tma_chunk,
			      .tma_stages = c->io->tma_stages};
	unsigned char *remote = c->peer[b] + slot(c, b, c->rank) * c->stride;
	unsigned char *mine = c->loc + slot(c, c->rank, b) * c->stride;

	if (dir == IPC_WRITE) {
		op.src = mine;
		op.dst = remote;
		op.src_dev = c->gpu.ordinal;
		op.dst_dev = c->ordinal[b];
		if (sh->method != EB_IK_CE) {
			op.flag = (uint64_t *)(c->peer[b] + c->flags_off) + slot(c, b, c->rank);
			op.flag_val = c->epoch;
		}
	} else {
		op.src = remote;
		op.dst = mine;
		op.src_dev = c->ordinal[b];
		op.dst_dev = c->gpu.ordinal;
	}
	return op;
}

/* Source holders fill, destination holders poison (and clear the flag). */
static int prepare(struct ipc_ctx *c, int dir, int p, uint64_t size, int fill_sources)
{
	int k, a, b, rc = EB_OK;

	for (k = 0; k < nlinks(c) && rc == EB_OK; k++) {
		struct link l;

		link_of(c, p, k, &a, &b);
		l = describe(c, dir, a, b);
		if (fill_sources && c->rank == l.src)
			rc = eb_gk_fill(l.src_mem, size, seed(&l, c->epoch), 0);
		if (rc == EB_OK && c->rank == l.dst) {
			rc = eb_gk_fill(l.dst_mem, size, seed(&l, EB_EPOCH_POISON), 0);
			if (rc == EB_OK && l.flag != NULL)
				rc = eb_ik_put_u64(l.flag, 0);
		}
	}
	return rc;
}

/* Destination holders check every byte (and, for kernel writes, the completion flag). */
static int verify(struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
		  uint64_t *wrong)
{
	int k, a, b, rc = EB_OK;

	for (k = 0; k < nlinks(c) && rc == EB_OK; k++) {
		uint64_t w = 0, first = 0, flag = 0;
		struct link l;

		link_of(c, p, k, &a, &b);
		l = describe(c, dir, a, b);
		if (c->rank != l.dst)
			continue;
		if (c->o->corrupt_at >= 0 && (uint64_t)c->o->corrupt_at < size)
			rc = eb_ik_flip(l.dst_mem, (size_t)c->o->corrupt_at);
		if (rc == EB_OK)
			rc = eb_gk_check(l.dst_mem, size, seed(&l, c->epoch), 0, &w, &first);
		if (rc == EB_OK && w > 0)
			eb_err("%s %s, GPU %d -> GPU %d: %llu wrong words of %llu, first at byte "
			       "%llu",
			       ipc_dir_name(dir), sh->name, l.src, l.dst, (unsigned long long)w,
			       (unsigned long long)((size + 7) / 8), (unsigned long long)first);
		if (rc == EB_OK && l.flag != NULL && sh->method != EB_IK_CE) {
			rc = eb_ik_get_u64(l.flag, &flag);
			if (rc == EB_OK && flag != c->epoch) {
				eb_err("%s %s, GPU %d -> GPU %d: completion flag %llu, want %llu",
				       ipc_dir_name(dir), sh->name, l.src, l.dst,
				       (unsigned long long)flag, (unsigned long long)c->epoch);
				w++;
			}
		}
		*wrong += w;
	}
	return rc;
}

/* This rank's ops in phase p (as initiator); returns how many. */
static int my_ops(const struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p,
		  uint64_t size, struct eb_ik_op *ops)
{
	int k, a, b, n = 0;

	for (k = 0; k < nlinks(c); k++) {
		link_of(c, p, k, &a, &b);
		if (a == c->rank)
			ops[n++] = op_for(c, dir, sh, b, size);
	}
	return n;
}

struct ipart {
	struct eb_stats st;
	uint64_t wrong;
	int32_t active, peer;
};

/* One phase as the one loop sees it: this rank's ops on a link set of a direction and shape. */
struct iphase {
	struct ipc_ctx *c;
	int dir, p, nops, filled;
	const struct ipc_shape *sh;
	uint64_t size;
	struct eb_ik_op ops[64];
};

/* Sources are filled once a phase; every start poisons the destinations again. */
static int i_prepare(void *arg)
{
	struct iphase *ph = arg;
	int rc = prepare(ph->c, ph->dir, ph->p, ph->size, !ph->filled);

	ph->filled = 1;
	return rc;
}

static int i_barrier(void *arg)
{
	return barrier(((struct iphase *)arg)->c);
}

/* n launches of every op, timed on the GPU (samples NULL: a warm-up, timed all the same). */
static int i_run(void *arg, long n, double *samples, long *got)
{
	struct iphase *ph = arg;
	struct ipc_ctx *c = ph->c;

	*got = 0;
	if (ph->nops == 0)
		return EB_OK;
	return eb_ik_run(c->timer, ph->ops, ph->nops, n, samples != NULL ? samples : c->samples,
			 got, c->o->fab.timeout_s, c->io->pairs == IPC_ALL ? barrier : NULL, c);
}

static int i_verify(void *arg, uint64_t *wrong)
{
	struct iphase *ph = arg;

	return verify(ph->c, ph->dir, ph->sh, ph->p, ph->size, wrong);
}

/* One phase: warm-up and the timed launches through the one loop, each verified; rank 0
 * gathers the groups. */
static int phase(struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
		 struct ipc_meas *m)
{
	struct iphase ph = {.c = c, .dir = dir, .p = p, .sh = sh, .size = size};
	struct eb_loop l = {.arg = &ph,
			    .prepare = i_prepare,
			    .align = i_barrier,
			    .run = i_run,
			    .settle = i_barrier,
			    .verify = i_verify,
			    .check = c->o->check};
	struct ipart me = {.peer = -1}, *all = NULL;
	int rc, r, a, b;
	long got = 0;

	c->epoch++;
	ph.nops = my_ops(c, dir, sh, p, size, ph.ops);
	rc = eb_loop_phase(&l, c->o->warmup, NULL, NULL, &me.wrong);
	if (rc == EB_OK)
		rc = eb_loop_phase(&l, c->o->iters, c->samples, &got, &me.wrong);
	if (rc != EB_OK)
		return rc;
	if (ph.nops > 0) {
		eb_stats_compute(c->samples, (size_t)got, &me.st);
		me.active = 1;
		if (c->io->pairs != IPC_ALL) {
			link_of(c, p, 0, &a, &b);
			me.peer = b;
		}
	}
	all = calloc((size_t)c->n, sizeof(*all));
	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->boot, &me, all, sizeof(me), deadline(c));
	if (rc != EB_OK || c->rank != 0)
		goto free_all;
	for (r = 0; r < c->n; r++) {
		m->wrong += all[r].wrong;
		if (all[r].active)
			m->groups[m->ngroups++] = (struct ipc_group){
			    .initiator = r, .peer = all[r].peer, .st = all[r].st};
	}
free_all:
	free(all);
	return rc;
}

/* Every phase of one (direction, shape, size); rank 0 fills m. */
static int measure(struct ipc_ctx *c, int dir, int shape, uint64_t size, struct ipc_meas *m)
{
	const struct ipc_shape *sh = &c->shapes[shape];
	int p, g, rc = EB_OK;
	double sum = 0;

	memset(m, 0, sizeof(*m));
	if (c->rank == 0) {
		m->groups = calloc((size_t)c->n * (size_t)c->n, sizeof(*m->groups));
		if (m->groups == NULL)
			return EB_ENOMEM;
	}
	eb_dbg("%s %s %llu bytes", ipc_dir_name(dir), sh->name, (unsigned long long)size);
	for (p = 0; p < nphases(c) && rc == EB_OK; p++)
		rc = phase(c, dir, sh, p, size, m);
	if (rc != EB_OK || c->rank != 0)
		return rc;
	for (g = 0; g < m->ngroups; g++)
		sum += m->groups[g].st.mean;
	m->valid = m->ngroups > 0;
	m->t = m->ngroups > 0 ? sum / m->ngroups : 0;
	m->bytes = (double)size * (c->io->pairs == IPC_ALL ? c->n - 1 : 1);
	m->gbs = m->t > 0 ? m->bytes / m->t / 1e9 : 0;
	return EB_OK;
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

/* The sweep of one (direction, size), then a fresh CE and best-kernel pair. */
static int run_size(struct ipc_ctx *c, int dir, int si)
{
	uint64_t size = c->o->sizes[si];
	struct ipc_meas scratch = {0}, *m;
	struct ipc_sum *sum = c->rank == 0 ? ipc_sum_at(&c->rep, dir, si) : NULL;
	int s, best = -1, ce = -1, rc = EB_OK;
	int32_t best_all[1];

	for (s = 0; s < c->nshapes && rc == EB_OK; s++) {
		m = c->rank == 0 ? ipc_sweep_at(&c->rep, dir, si, s) : &scratch;
		rc = measure(c, dir, s, size, m);
		if (c->rank != 0 || rc != EB_OK)
			continue;
		if (c->shapes[s].method == EB_IK_CE)
			ce = s;
		else if (best < 0 || m->gbs > ipc_sweep_at(&c->rep, dir, si, best)->gbs)
			best = s;
	}
	if (rc != EB_OK)
		return rc;
	/* Rank 0 chose; everyone runs what it chose. */
	if (c->rank != 0)
		ce = c->shapes[0].method == EB_IK_CE ? 0 : -1;
	best_all[0] = best;
	{
		int32_t *got = malloc(sizeof(int32_t) * (size_t)c->n);

		if (got == NULL)
			return EB_ENOMEM;
		rc = eb_boot_allgather(c->boot, best_all, got, sizeof(int32_t), deadline(c));
		best = got[0];
		free(got);
	}
	if (rc == EB_OK && ce >= 0)
		rc = measure(c, dir, ce, size, sum != NULL ? &sum->ce : &scratch);
	if (rc == EB_OK && best >= 0)
		rc = measure(c, dir, best, size, sum != NULL ? &sum->best : &scratch);
	if (sum != NULL)
		sum->best_shape = best;
	if (c->rank != 0)
		free(scratch.groups);
	return rc;
}

/* The launch floor: empty kernels timed exactly as the copies are. */
static int launch_floor(struct ipc_ctx *c, double *us)
{
	struct eb_ik_op op = {.method = EB_IK_EMPTY, .grid = 1, .block = 32};
	struct eb_stats st;
	long got = 0;
	/* Rank 0 alone: no barrier before the gate opens, whatever --pairs says. */
	int rc = eb_ik_run(c->timer, &op, 1, MAX_BATCH, c->samples, &got, c->o->fab.timeout_s, NULL,
			   NULL);

	if (rc == EB_OK) {
		eb_stats_compute(c->samples, (size_t)got, &st);
		*us = st.mean * 1e6;
	}
	return rc;
}

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
		rc = eb_boot_allgather(c->boot, &me, all, sizeof(me), deadline(c));
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

static int run_all(struct ipc_ctx *c)
{
	int dir, si, rc = EB_OK;

	if (c->rank == 0) {
		rc = launch_floor(c, &c->rep.floor_us);
		c->rep.ce_api = eb_ik_ce_api();
		if (rc == EB_OK)
			ipc_print_header(&c->rep);
	}
	for (dir = 0; dir < IPC_NDIRS && rc == EB_OK; dir++) {
		if (!(c->io->dirs & (1u << dir)))
			continue;
		if (c->rank == 0)
			ipc_print_dir(&c->rep, dir);
		for (si = 0; si < c->o->nsizes && rc == EB_OK; si++) {
			rc = run_size(c, dir, si);
			if (rc == EB_OK && c->rank == 0)
				ipc_print_row(&c->rep, dir, si);
		}
	}
	if (rc != EB_OK || c->rank != 0)
		return rc;
	c->rep.ce_api = eb_ik_ce_api();
	return ipc_finish(&c->rep);
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
	build_shapes(&c);
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
		rc = run_all(&c);
	/* Any other failure ends this rank now: the launcher tells the others which rank it
	 * lost. A wrong payload is known on rank 0 alone, so every rank agrees on it first. */
	if (rc == EB_OK || rc == EB_EVERIFY) {
		if (eb_boot_allreduce(boot, rc, EB_MIN, &worst, deadline(&c)) == EB_OK)
			rc = (int)worst;
		/* Peers may still read this rank's buffer until everyone is done with it. */
		if (barrier(&c) != EB_OK && rc == EB_OK)
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
