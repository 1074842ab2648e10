#include "harness.h"
#include "loop.h"
#include "efabench/size.h"
#include "efabench/topo.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/ticks.h"
#include "../core/log.h"
#include "../report/progress.h"

#include <rdma/fabric.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Idle ranks wait at the end of a phase while a pair works; every wait of the pair is itself
 * bounded by the timeout, so this bounds the phase. */
static uint64_t phase_deadline(const struct eb_ctx *c, long iters)
{
	return eb_deadline(c->o->fab.timeout_s * (double)(iters + 2));
}

/* The hooks the one loop calls, over a benchmark and its context. */
struct hooked {
	const struct eb_bench *b;
	struct eb_ctx *c;
};

static int h_prepare(void *arg)
{
	struct hooked *h = arg;

	h->c->epoch++;
	return h->b->prepare(h->c);
}

static int h_align(void *arg)
{
	struct hooked *h = arg;

	return eb_boot_barrier(h->c->e->boot, eb_engine_deadline(h->c->e));
}

static int h_iter(void *arg, long i)
{
	struct hooked *h = arg;

	return h->b->iter(h->c, i);
}

static int h_run(void *arg, long n, double *samples, long *got)
{
	struct hooked *h = arg;

	*got = n;
	return h->b->run(h->c, n, samples);
}

/* Testing aid: flip a byte of what just landed (in the payload, GPU memory included). */
static void h_corrupt(void *arg, long i)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;
	const struct eb_payload *p;
	size_t off = 0;

	if ((c->role != EB_ROLE_TARGET && c->role != EB_ROLE_ALL) || c->bytes == 0)
		return;
	p = h->b->landing(c, &off);
	if (p != NULL)
		eb_mem_flip(&p->pay, off + (uint64_t)c->o->corrupt_at % c->bytes);
}

static int h_verify(void *arg, uint64_t *wrong)
{
	struct hooked *h = arg;
	struct eb_ctx *c = h->c;
	uint64_t t0 = eb_now_ns();

	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	*wrong += h->b->verify(c);
	eb_dbg("checked %zu bytes of %s memory in %.3f ms", c->bytes, eb_mem_kind_name(c->mem),
	       (double)(eb_now_ns() - t0) * 1e-6);
	return EB_OK;
}

/* One phase through the one loop: prepare, align every rank with a barrier, iters timed
 * iterations, verify; then every rank learns the wrong words of all. samples (may be NULL)
 * receives each iteration's seconds. */
static int phase(const struct eb_bench *b, struct eb_ctx *c, long iters, double *samples,
		 uint64_t *wrong)
{
	struct hooked h = {b, c};
	/* A bench that times itself (GPU clocks, one launch for many iterations) gets the whole
	 * phase at once, or one iteration at a time with --check. */
	int self = b->run != NULL && (b->iter == NULL || (c->var->tag & EB_SELF_TIMED));
	struct eb_loop l = {.arg = &h,
			    .prepare = h_prepare,
			    .align = h_align,
			    .iter = self ? NULL : h_iter,
			    .run = self ? h_run : NULL,
			    .after = c->o->corrupt_at >= 0 ? h_corrupt : NULL,
			    .verify = h_verify,
			    .check = c->o->check};
	uint64_t mine = 0;
	int64_t total = 0;
	int rc;

	c->iters = iters;
	rc = eb_loop_phase(&l, iters, samples, NULL, &mine);
	if (rc != EB_OK)
		return rc;
	if (mine > 0)
		eb_err("%llu wrong words received (%s %s, %zu bytes)", (unsigned long long)mine,
		       c->o->cmd->name, c->var->name[c->sel], c->bytes);
	if (c->o->stop_rank == c->rank && samples != NULL) /* testing aid: a hung rank */
		raise(SIGSTOP);
	/* Collective, so every rank fails together. */
	rc = eb_boot_allreduce(c->e->boot, (int64_t)mine, EB_SUM, &total, phase_deadline(c, iters));
	*wrong = (uint64_t)total;
	return rc;
}

static int group_count(enum eb_flow p, int nranks)
{
	return p == EB_FLOW_PAIRS ? nranks - 1 : p == EB_FLOW_ALL ? nranks : 1;
}

static void set_roles(struct eb_ctx *c, int group)
{
	switch (c->var->flow) {
	case EB_FLOW_PAIRS:
		c->role = c->rank == 0		 ? EB_ROLE_INIT
			  : c->rank == group + 1 ? EB_ROLE_TARGET
						 : EB_ROLE_IDLE;
		c->peer = c->rank == 0 ? group + 1 : c->rank == group + 1 ? 0 : -1;
		break;
	case EB_FLOW_FANOUT:
		c->role = c->rank == 0 ? EB_ROLE_INIT : EB_ROLE_TARGET;
		c->peer = c->rank == 0 ? -1 : 0;
		break;
	case EB_FLOW_ALL:
		c->role = EB_ROLE_ALL;
		c->peer = -1;
		break;
	}
}

static void scale(struct eb_stats *s, double f)
{
	s->mean *= f;
	s->min *= f;
	s->p50 *= f;
	s->p99 *= f;
	s->max *= f;
	s->stddev *= f;
}

/* Rank 0: the point's statistics from every group's samples, and the benchmark's figures. */
static void summarise(const struct eb_bench *b, const struct eb_ctx *c, const struct eb_run *run,
		      struct eb_point *p, double *pooled, long iters)
{
	double half = b->one_way ? 0.5 : 1.0, cap;
	int g;

	for (g = 0; g < p->ngroups; g++) {
		eb_stats_compute(pooled + (size_t)g * (size_t)iters, (size_t)iters, &p->groups[g]);
		scale(&p->groups[g], half);
	}
	eb_stats_compute(pooled, (size_t)iters * (size_t)p->ngroups, &p->all);
	scale(&p->all, half);
	p->t_s = p->all.mean;
	p->bytes = eb_variant_bytes(c->var, p->size, c->nranks);
	p->gbps = p->t_s > 0 ? 8.0 * p->bytes / p->t_s / 1e9 : 0.0;
	cap = run->link_gbps * run->vars[p->var].nics;
	p->busbw = cap > 0 ? 100.0 * p->gbps / cap : -1.0;
	if (b->extra != NULL)
		b->extra(c, p, &p->own);
}

/* What the progress line weighs a (size, variant) by: its bytes moved, plus a fixed cost per
 * iteration (about what a 64 KiB write takes), so that small sizes count too. */
static double point_work(const struct eb_opts *o, uint64_t size)
{
	return (double)(o->warmup + o->iters) * ((double)size + 65536.0);
}

/* Every group of one (size, variant): warm-up, then the timed phase. */
static int run_point(const struct eb_bench *b, struct eb_ctx *c, const struct eb_run *run,
		     struct eb_point *res, double *samples, double *pooled)
{
	const struct eb_opts *o = c->o;
	size_t bytes = sizeof(*samples) * (size_t)o->iters;
	uint64_t wrong;
	int g, rc;

	res->ngroups = group_count(c->var->flow, c->nranks);
	/* In ALL every rank measures: one pass over the group gathers everyone's samples. */
	for (g = 0; g < (c->var->flow == EB_FLOW_ALL ? 1 : res->ngroups); g++) {
		set_roles(c, g);
		rc = phase(b, c, o->warmup, NULL, &wrong);
		if (rc != EB_OK)
			return rc;
		res->wrong += wrong;
		rc = phase(b, c, o->iters, samples, &wrong);
		if (rc != EB_OK)
			return rc;
		res->wrong += wrong;
		if (c->var->flow == EB_FLOW_ALL)
			rc = eb_boot_allgather(c->e->boot, samples, pooled, bytes,
					       eb_engine_deadline(c->e));
		else if (c->rank == 0)
			memcpy(pooled + (size_t)g * (size_t)o->iters, samples, bytes);
		if (rc != EB_OK)
			return rc;
	}
	if (c->rank == 0)
		summarise(b, c, run, res, pooled, o->iters);
	return EB_OK;
}

static int alloc_points(struct eb_run *run)
{
	int i, n = run->nsizes * run->nvars;

	run->pts = calloc((size_t)n, sizeof(*run->pts));
	if (run->pts == NULL)
		return EB_ENOMEM;
	for (i = 0; i < n; i++) {
		run->pts[i].groups = calloc((size_t)run->ranks, sizeof(struct eb_stats));
		if (run->pts[i].groups == NULL)
			return EB_ENOMEM;
	}
	return EB_OK;
}

static void free_points(struct eb_run *run)
{
	int i;

	for (i = 0; run->pts != NULL && i < run->nsizes * run->nvars; i++) {
		free(run->pts[i].groups);
		eb_rec_free(&run->pts[i].own);
	}
	free(run->pts);
}

struct probe_arg {
	const struct eb_opts *o;
	int np;
};

/* Register a small GPU buffer on the first NIC the run would use: the registration path
 * every rank will take, known (or refused, with the provider named) before any starts. */
static int try_gpu_reg(const struct eb_opts *o, int gpu)
{
	struct eb_nic *nics;
	struct eb_chan ch;
	struct eb_mem m;
	struct eb_mr mr;
	char prov[32];
	int n, rc;

	rc = eb_fabric_choose(&o->fab, 1, prov, sizeof(prov));
	if (rc == EB_OK)
		rc = eb_fabric_nics(prov, &o->fab, 1, &nics, &n);
	if (rc != EB_OK)
		return rc;
	rc = eb_mem_use_gpu(gpu);
	if (rc == EB_OK)
		rc = eb_chan_open(&ch, &nics[0], 0, 1);
	if (rc != EB_OK)
		goto free_nics;
	rc = eb_mem_alloc(&m, EB_MEM_DEVICE, 1u << 16, "a probe buffer");
	if (rc == EB_OK) {
		rc = eb_mr_reg_mem(&ch, &m, 0, m.len, FI_WRITE | FI_REMOTE_WRITE, &mr);
		if (rc == EB_OK)
			eb_dbg("GPU memory registers on %s through %s", prov,
			       eb_reg_path_name(mr.path));
		eb_mr_dereg(&mr);
		eb_mem_free(&m);
	}
	eb_chan_close(&ch);
free_nics:
	eb_fabric_free_nics(nics, n);
	return rc == EB_ENOTSUP ? EB_EINVAL : rc;
}

/* GPUs before the fabric: on a machine without one, that is what the user needs to hear. */
static int validate(const void *arg, void *out)
{
	const struct probe_arg *a = arg;
	const struct eb_opts *o = a->o;
	int n, gpu, rc;

	if (o->mem != EB_MEM_HOST || o->want_gpu != NULL) {
		const char *why = eb_mem_gpu_absent();

		n = why == NULL ? eb_mem_gpu_count() : 0;
		gpu = o->gpu >= 0 ? o->gpu : 0;
		if (n == 0) {
			eb_err("%s%s needs a GPU, and CUDA sees none (%s)",
			       o->mem != EB_MEM_HOST ? "--mem " : "",
			       o->mem != EB_MEM_HOST ? eb_mem_kind_name(o->mem) : o->want_gpu, why);
			return 2;
		}
		if (gpu >= n) {
			eb_err("--gpu %d: CUDA sees %d GPU%s (0 to %d)", gpu, n, n == 1 ? "" : "s",
			       n - 1);
			return 2;
		}
	}
	rc = eb_fabric_validate(&o->fab, a->np, 1);
	if (rc == EB_OK && o->mem == EB_MEM_DEVICE && !o->staged)
		rc = try_gpu_reg(o, o->gpu >= 0 ? o->gpu : 0);
	return eb_exit_code(rc);
}

int eb_harness_probe(const struct eb_opts *o)
{
	struct probe_arg a = {o, o->np ? o->np : 2};
	char none;
	int code;

	if (a.np < 2) {
		eb_err("%s pairs rank 0 with every other rank: it needs --np 2 or more (got %d)",
		       o->cmd->name, a.np);
		return -2;
	}
	code = eb_launch_probe(validate, &a, &none, 1);
	return code != 0 ? -code : a.np;
}

/* This rank's GPU: --gpu, else the local rank modulo the GPUs CUDA sees. */
static int pick_gpu(struct eb_ctx *c, struct eb_boot *boot)
{
	int n, rc;

	c->user_bound = eb_topo_bound(); /* before we bind it ourselves */
	c->mem = (enum eb_mem_kind)c->o->mem;
	c->staged = c->o->staged;
	c->serial = c->o->serial;
	c->gpu = -1;
	c->sel = c->staged		   ? EB_SEL_STAGED
		 : c->mem == EB_MEM_DEVICE ? EB_SEL_DEVICE
		 : c->mem == EB_MEM_PINNED ? EB_SEL_PINNED
					   : EB_SEL_HOST;
	if (c->mem == EB_MEM_HOST && c->o->want_gpu == NULL)
		return EB_OK;
	n = eb_mem_gpu_count();
	c->gpu = c->o->gpu >= 0 ? c->o->gpu : n > 0 && boot != NULL ? boot->local_rank % n : 0;
	if (c->gpu >= n) {
		eb_err("--mem %s: GPU %d does not exist (CUDA sees %d)", eb_mem_kind_name(c->mem),
		       c->gpu, n);
		return EB_EINVAL;
	}
	rc = eb_mem_use_gpu(c->gpu);
	if (rc == EB_OK && eb_mem_gpu_pci(c->gpu, c->gpu_pci, sizeof(c->gpu_pci)) == EB_OK) {
		/* Its NUMA node's cores, unless a launcher or taskset bound us already. */
		char why[96];

		if (eb_topo_bind(eb_topo_numa_of(c->gpu_pci), why, sizeof(why)) >= 0)
			eb_dbg("GPU %d (%s): %s", c->gpu, c->gpu_pci, why);
	}
	return rc;
}

/* What rank 0 reports, besides the points: the selected variants, every rank's GPU and the
 * most particular registration path of all, resolved to names in run. */
struct sheet {
	struct eb_run run;
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	int32_t *gpus;
	enum eb_reg_path path;
	char libfabric[16];
};

/* Every rank's GPU and registration path, for rank 0's header and files. */
static int gather_mem(struct eb_ctx *c, struct sheet *sh)
{
	int32_t mine[2] = {c->gpu, (int32_t)c->path}, *all;
	int r, rc;

	all = malloc(sizeof(mine) * (size_t)c->nranks);
	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->e->boot, mine, all, sizeof(mine), eb_engine_deadline(c->e));
	for (r = 0; rc == EB_OK && r < c->nranks; r++) {
		sh->gpus[r] = all[2 * r];
		if (all[2 * r + 1] > (int32_t)sh->path)
			sh->path = (enum eb_reg_path)all[2 * r + 1];
	}
	free(all);
	sh->run.registration = eb_reg_path_name(sh->path);
	return rc;
}

/* The variants selected and what the report names them; ref points into the selection. */
static void describe_vars(const struct eb_bench *b, const struct eb_ctx *c, struct sheet *sh)
{
	const struct eb_variant *all = b->variants;
	int v, w;

	if (b->variants_of != NULL)
		b->variants_of(c->o, &all);
	sh->run.nvars = eb_harness_select(b, c->o, sh->vars);
	for (v = 0; v < sh->run.nvars; v++) {
		const struct eb_variant *x = sh->vars[v];
		struct eb_run_var *rv = &sh->run.vars[v];

		rv->name = x->name[c->sel];
		rv->layout = eb_layout_name(x->layout);
		rv->flow = x->flow;
		rv->nics = c->e != NULL ? eb_variant_nics(c->e, x, c->nranks) : 0;
		rv->ref = -1;
		for (w = 0; x->ref > 0 && w < sh->run.nvars; w++)
			if (sh->vars[w] == &all[x->ref - 1])
				rv->ref = w;
	}
}

/* The run's settings as the report shows them. */
static void describe_run(const struct eb_ctx *c, struct sheet *sh)
{
	const struct eb_opts *o = c->o;
	const struct eb_engine *e = c->e;
	struct eb_run *r = &sh->run;
	int ch;

	r->bench = o->cmd->name;
	r->summary = o->cmd->summary;
	r->ranks = c->nranks;
	r->launcher = e->boot->ops->name;
	r->provider = e->prov;
	r->link_gbps = e->chan[0].nic.link_gbps;
	r->nchan = e->nchan < EB_RUN_CHANS ? e->nchan : EB_RUN_CHANS;
	for (ch = 0; ch < r->nchan; ch++)
		r->nics[ch] = e->chan[ch].nic.domain;
	r->warmup = o->warmup;
	r->iters = o->iters;
	r->chunk = c->chunk;
	r->window = c->window;
	r->check = o->check;
	r->timeout_s = o->fab.timeout_s;
	r->yield = e->yield;
	r->poll_asked = o->fab.poll != EB_POLL_AUTO;
	r->host_ranks = e->host_ranks;
	r->host_cores = e->cores;
	r->cpu_map = o->cpu_map;
	r->tsc = eb_ticks_tsc;
	snprintf(sh->libfabric, sizeof(sh->libfabric), "%u.%u", FI_MAJOR(fi_version()),
		 FI_MINOR(fi_version()));
	r->libfabric = sh->libfabric;
	r->mem = eb_mem_kind_name(c->mem);
	r->staged = c->staged;
	r->serial = c->serial;
	r->gpus = sh->gpus;
	r->nsizes = o->nsizes;
	r->csv = o->csv;
	r->json = o->json;
}

/* A benchmark that drives the loop itself: its GPU, the engine where it uses the fabric. */
static int drive(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_ctx c = {.o = o,
			   .boot = boot,
			   .rank = boot != NULL ? boot->rank : 0,
			   .nranks = boot != NULL ? boot->size : 1,
			   .peer = -1};
	struct eb_fabric_opts fab = o->fab;
	struct eb_engine e;
	int rc = pick_gpu(&c, boot);

	if (rc != EB_OK)
		return rc;
	if (b->uses & EB_USES_FABRIC) {
		(void)eb_ticks_init();
		fab.near_pci = c.gpu_pci[0] ? c.gpu_pci : NULL;
		rc = eb_engine_open(&e, boot, &fab);
		if (rc != EB_OK)
			return rc;
		c.e = &e;
		eb_harness_tune(o, e.prov, &c.chunk, &c.window);
	}
	rc = b->drive(&c);
	if (c.e != NULL) {
		if (rc != EB_OK)
			eb_engine_abandon(&e);
		eb_engine_close(&e);
	}
	return rc;
}

/* A benchmark on the harness's sweep: every size, every variant, every group of ranks. */
static int sweep(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c = {
	    .o = o, .boot = boot, .rank = boot->rank, .nranks = boot->size, .peer = -1};
	struct sheet sh = {.run = {.metric = b->metric, .ranks = boot->size}};
	struct eb_run *run = &sh.run;
	struct eb_progress prog = {0};
	struct eb_fabric_opts fab;
	double *samples = NULL, *pooled = NULL;
	uint64_t wrong_total = 0;
	int file_rc = EB_OK, s, v, rc;

	if (boot->size < 2) {
		if (boot->rank == 0)
			eb_err("%s needs at least 2 ranks; got %d", o->cmd->name, boot->size);
		return EB_EINVAL;
	}
	rc = pick_gpu(&c, boot);
	if (rc != EB_OK)
		return rc;
	(void)eb_ticks_init();
	fab = o->fab;
	fab.near_pci = c.gpu_pci[0] ? c.gpu_pci : NULL;
	rc = eb_engine_open(&e, boot, &fab);
	if (rc != EB_OK)
		return rc;
	c.e = &e;
	e.misplace_chunk = (size_t)o->misplace_chunk;
	eb_harness_tune(o, e.prov, &c.chunk, &c.window);
	describe_run(&c, &sh);
	describe_vars(b, &c, &sh);
	rc = alloc_points(run);
	samples = calloc((size_t)o->iters, sizeof(*samples));
	pooled = calloc((size_t)o->iters * (size_t)boot->size, sizeof(*pooled));
	sh.gpus = calloc((size_t)boot->size, sizeof(*sh.gpus));
	run->gpus = sh.gpus;
	if (rc != EB_OK || samples == NULL || pooled == NULL || sh.gpus == NULL) {
		eb_err("out of memory for results");
		rc = EB_ENOMEM;
		goto free_results;
	}
	if (c.staged && (rc = eb_stage_create(&c.stage, 64)) != EB_OK)
		goto free_results;
	rc = b->setup(&c);
	if (rc == EB_OK)
		rc = gather_mem(&c, &sh);
	if (rc != EB_OK)
		goto teardown;
	if (c.rank == 0) {
		if (b->facts != NULL)
			b->facts(&c, &run->own);
		eb_run_header(run);
	}
	eb_progress_start(&prog, c.rank == 0 && !o->quiet, o->cmd->name, 0);
	for (s = 0; s < o->nsizes; s++)
		prog.total += point_work(o, o->sizes[s]) * run->nvars;
	for (s = 0; s < o->nsizes; s++) {
		c.bytes = (size_t)o->sizes[s];
		for (v = 0; v < run->nvars; v++) {
			struct eb_point *p = &run->pts[s * run->nvars + v];
			char step[64], size[16];

			c.var = sh.vars[v];
			p->size = o->sizes[s];
			p->var = v;
			eb_size_format(o->sizes[s], size, sizeof(size));
			snprintf(step, sizeof(step), "%s %s", c.var->name[c.sel], size);
			eb_progress_step(&prog, step, point_work(o, o->sizes[s]));
			rc = run_point(b, &c, run, p, samples, pooled);
			if (rc != EB_OK)
				goto teardown;
			wrong_total += p->wrong;
		}
		eb_progress_clear(&prog);
		if (c.rank == 0)
			eb_run_row(run, s);
	}
	if (c.rank == 0)
		file_rc = eb_run_files(run, wrong_total);
	/* Nobody tears down while a peer may still read its memory. */
	rc = eb_boot_barrier(boot, eb_engine_deadline(&e));
	if (rc == EB_OK && wrong_total > 0)
		rc = EB_EVERIFY;
	if (rc == EB_OK)
		rc = file_rc;
teardown:
	eb_progress_clear(&prog);
	if (rc != EB_OK)
		eb_engine_abandon(&e);
	eb_engine_quiesce(&e); /* before the buffers and requests posted on it are freed */
	eb_payload_unland(&c);
	b->teardown(&c);
	eb_stage_destroy(c.stage);
free_results:
	free(sh.gpus);
	free(pooled);
	free(samples);
	free_points(run);
	eb_engine_close(&e);
	return rc;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	return b->drive != NULL ? drive(b, o, boot) : sweep(b, o, boot);
}
