#include "harness.h"
#include "harness_out.h"
#include "efabench/facts.h"
#include "efabench/size.h"
#include "efabench/topo.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/ticks.h"
#include "../core/log.h"
#include "../report/progress.h"

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

/* Testing aid: flip a byte of what just landed (in the payload, GPU memory included). */
static void corrupt(const struct eb_bench *b, struct eb_ctx *c)
{
	size_t off = 0;
	const struct eb_payload *p;

	if ((c->role != EB_ROLE_TARGET && c->role != EB_ROLE_ALL) || c->bytes == 0)
		return;
	p = b->landing(c, &off);
	if (p != NULL)
		eb_mem_flip(&p->pay, off + (uint64_t)c->o->corrupt_at % c->bytes);
}

/* Ticks to seconds, scaled by the phase's span timed both ways (exact where ticks are ns). */
static void to_seconds(double *samples, long n, uint64_t span_ns, uint64_t span_ticks)
{
	double f = eb_ticks_tsc && span_ticks > 0 ? (double)span_ns / (double)span_ticks : 1.0;
	long i;

	for (i = 0; i < n; i++)
		samples[i] *= f * 1e-9;
}

/* One phase: prepare, align every rank with a barrier, run iters timed iterations, verify.
 * samples (may be NULL) receives each iteration's seconds. */
static int phase(const struct eb_bench *b, struct eb_ctx *c, long iters, double *samples,
		 uint64_t *wrong)
{
	uint64_t mine = 0, t0 = 0, t1, ns0 = eb_now_ns(), k0 = eb_ticks();
	int64_t total = 0;
	int timed = 0; /* samples holds ticks to scale */
	/* A bench that times itself (GPU clocks, one launch for many iterations) gets the whole
	 * phase at once, or one iteration at a time with --check. */
	int self = b->run != NULL && (b->iter == NULL || (c->var->tag & EB_SELF_TIMED));
	int check = c->o->check, corrupting = c->o->corrupt_at >= 0;
	long m = self && !check ? iters : 1, i;
	int rc;

	c->iters = iters;
	for (i = 0; i < iters;) {
		if (i == 0 || check) {
			if (i > 0 && c->role != EB_ROLE_IDLE)
				mine += b->verify(c);
			c->epoch++;
			rc = b->prepare(c);
			if (rc != EB_OK)
				return rc;
			rc = eb_boot_barrier(c->e->boot, eb_engine_deadline(c->e));
			if (rc != EB_OK)
				return rc;
			t0 = eb_ticks();
		}
		rc = self ? b->run(c, m, samples != NULL ? samples + i : NULL) : b->iter(c, i);
		/* One timestamp per iteration: it ends this one and starts the next. */
		t1 = eb_ticks();
		if (rc != EB_OK)
			return rc;
		if (samples != NULL && !self) {
			samples[i] = (double)(t1 - t0);
			timed = 1;
		}
		t0 = t1;
		if (corrupting)
			corrupt(b, c);
		i += m;
	}
	if (timed)
		to_seconds(samples, iters, eb_now_ns() - ns0, eb_ticks() - k0);
	if (c->role != EB_ROLE_IDLE && iters > 0) {
		t0 = eb_now_ns();
		mine += b->verify(c);
		eb_dbg("checked %zu bytes of %s memory in %.3f ms", c->bytes,
		       eb_mem_kind_name(c->mem), (double)(eb_now_ns() - t0) * 1e-6);
	}
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

static void summarise(const struct eb_bench *b, const struct eb_report *rep, struct eb_result *res,
		      double *pooled, long iters)
{
	double half = b->one_way ? 0.5 : 1.0, cap;
	int g;

	for (g = 0; g < res->ngroups; g++) {
		eb_stats_compute(pooled + (size_t)g * (size_t)iters, (size_t)iters,
				 &res->groups[g]);
		scale(&res->groups[g], half);
	}
	eb_stats_compute(pooled, (size_t)iters * (size_t)res->ngroups, &res->all);
	scale(&res->all, half);
	res->t_s = res->all.mean;
	res->gbps = res->t_s > 0 ? 8.0 * eb_variant_bytes(res->var, res->size, rep->c->nranks) /
				       res->t_s / 1e9
				 : 0.0;
	res->nics = eb_variant_nics(rep->c->e, res->var, rep->c->nranks);
	cap = rep->link_gbps * res->nics;
	res->busbw = cap > 0 ? 100.0 * res->gbps / cap : -1.0;
}

/* What the progress line weighs a (size, variant) by: its bytes moved, plus a fixed cost per
 * iteration (about what a 64 KiB write takes), so that small sizes count too. */
static double point_work(const struct eb_opts *o, uint64_t size)
{
	return (double)(o->warmup + o->iters) * ((double)size + 65536.0);
}

/* Every group of one (size, variant): warm-up, then the timed phase. */
static int run_point(const struct eb_bench *b, struct eb_ctx *c, const struct eb_report *rep,
		     struct eb_result *res, double *samples, double *pooled)
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
		summarise(b, rep, res, pooled, o->iters);
	return EB_OK;
}

static int alloc_results(struct eb_report *rep, int nres)
{
	int i;

	rep->res = calloc((size_t)nres, sizeof(*rep->res));
	if (rep->res == NULL)
		return EB_ENOMEM;
	for (i = 0; i < nres; i++) {
		rep->res[i].groups = calloc((size_t)rep->c->nranks, sizeof(struct eb_stats));
		if (rep->res[i].groups == NULL)
			return EB_ENOMEM;
	}
	return EB_OK;
}

static void free_results(struct eb_report *rep, int nres)
{
	int i;

	for (i = 0; rep->res != NULL && i < nres; i++)
		free(rep->res[i].groups);
	free(rep->res);
}

void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window)
{
	int sock = eb_fabric_is_socket_prov(prov);
	/* shm copies GPU memory by CUDA IPC, one synchronous copy per operation on the target:
	 * per-chunk costs dominate, so device payloads go in 256M pieces (1G write on H100: 1M
	 * chunks 1.0, 16M 5.1-5.3, 64M 8.4-8.5, 256M 9.9, 1G 10.2 Tbps; window made no
	 * difference). */
	int ipc = o->mem == EB_MEM_DEVICE && !o->staged && strncmp(prov, "shm", 3) == 0;

	*chunk = o->chunk != 0 ? (size_t)o->chunk : ipc ? 256u << 20 : sock ? 512u << 10 : 1u << 20;
	*window = o->window != 0 ? (int)o->window : sock ? 16 : 4;
}

int eb_harness_select(const struct eb_bench *b, const struct eb_opts *o,
		      const struct eb_variant **vars)
{
	const struct eb_variant *all = b->variants;
	int v, n = 0, nall = b->variants_of != NULL ? b->variants_of(o, &all) : b->nvariants;

	for (v = 0; v < nall; v++)
		if (o->layouts == 0 || (o->layouts & (1u << all[v].layout)))
			vars[n++] = &all[v];
	return n;
}

struct probe_arg {
	const struct eb_opts *o;
	int np;
};

/* Register a small GPU buffer on the first NIC the run would use: the registration path
 * every rank will take, known (or refused, with the provider named) before any starts. */
static int try_gpu_reg(const struct eb_opts *o, int gpu)
{
	struct eb_gpu_reg r;
	char prov[32];
	int rc;

	rc = eb_fabric_choose(&o->fab, 1, prov, sizeof(prov));
	if (rc != EB_OK)
		return rc;
	rc = eb_gpu_reg_probe(prov, &o->fab, 1, gpu, &r);
	if (rc == EB_OK) {
		eb_dbg("GPU memory registers on %s through %s", prov,
		       eb_reg_path_name(r.dmabuf ? EB_REG_DMABUF : EB_REG_HMEM_CUDA));
		return EB_OK;
	}
	if (r.state != EB_GREG_FAILED) /* a failed call has said why */
		eb_err("--mem device: %s", r.why);
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
	c->gpu = c->o->gpu >= 0 ? c->o->gpu : n > 0 ? boot->local_rank % n : 0;
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

/* Every rank's GPU and registration path, for rank 0's header and files. */
static int gather_mem(struct eb_ctx *c, struct eb_report *rep)
{
	int32_t mine[2] = {c->gpu, (int32_t)c->path}, *all;
	int r, rc;

	all = malloc(sizeof(mine) * (size_t)c->nranks);
	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->e->boot, mine, all, sizeof(mine), eb_engine_deadline(c->e));
	for (r = 0; rc == EB_OK && r < c->nranks; r++) {
		rep->gpus[r] = all[2 * r];
		if (all[2 * r + 1] > (int32_t)rep->path)
			rep->path = (enum eb_reg_path)all[2 * r + 1];
	}
	free(all);
	return rc;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c = {.o = o, .rank = boot->rank, .nranks = boot->size, .peer = -1};
	struct eb_report rep = {.b = b, .c = &c};
	struct eb_progress prog = {0};
	struct eb_fabric_opts fab;
	double *samples = NULL, *pooled = NULL;
	uint64_t wrong_total = 0;
	int file_rc = EB_OK, nres, s, v, rc;

	rep.nvars = eb_harness_select(b, o, rep.vars);
	rep.all = b->variants;
	if (b->variants_of != NULL)
		b->variants_of(o, &rep.all);
	nres = o->nsizes * rep.nvars;
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
	rep.launcher = boot->ops->name;
	rep.link_gbps = e.chan[0].nic.link_gbps;
	rc = alloc_results(&rep, nres);
	samples = calloc((size_t)o->iters, sizeof(*samples));
	pooled = calloc((size_t)o->iters * (size_t)boot->size, sizeof(*pooled));
	rep.gpus = calloc((size_t)boot->size, sizeof(*rep.gpus));
	if (rc != EB_OK || samples == NULL || pooled == NULL || rep.gpus == NULL) {
		eb_err("out of memory for results");
		rc = EB_ENOMEM;
		goto free_results;
	}
	if (c.staged && (rc = eb_stage_create(&c.stage, 64)) != EB_OK)
		goto free_results;
	rc = b->setup(&c);
	if (rc == EB_OK)
		rc = gather_mem(&c, &rep);
	if (rc != EB_OK)
		goto teardown;
	if (c.rank == 0)
		eb_harness_header(&rep);
	eb_progress_start(&prog, c.rank == 0 && !o->quiet, o->cmd->name, 0);
	for (s = 0; s < o->nsizes; s++)
		prog.total += point_work(o, o->sizes[s]) * rep.nvars;
	for (s = 0; s < o->nsizes; s++) {
		c.bytes = (size_t)o->sizes[s];
		for (v = 0; v < rep.nvars; v++) {
			struct eb_result *res = &rep.res[s * rep.nvars + v];
			char step[64], size[16];

			c.var = rep.vars[v];
			res->size = o->sizes[s];
			res->var = c.var;
			eb_size_format(o->sizes[s], size, sizeof(size));
			snprintf(step, sizeof(step), "%s %s", c.var->name[c.sel], size);
			eb_progress_step(&prog, step, point_work(o, o->sizes[s]));
			rc = run_point(b, &c, &rep, res, samples, pooled);
			if (rc != EB_OK)
				goto teardown;
			wrong_total += res->wrong;
		}
		eb_progress_clear(&prog);
		if (c.rank == 0)
			eb_harness_row(&rep, s);
	}
	if (c.rank == 0)
		file_rc = eb_harness_files(&rep, wrong_total);
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
	free(rep.gpus);
	free(pooled);
	free(samples);
	free_results(&rep, nres);
	eb_engine_close(&e);
	return rc;
}
