#include "handover.h"
#include "efabench/status.h"
#include "core/ticks.h"

#include <rdma/fabric.h>
#include <stdio.h>
#include <stdlib.h>

/* Every rank's GPU and registration path, for rank 0's header and files. */
int eb_handover_mem(struct eb_ctx *c, struct eb_handover *sh)
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
void eb_handover_vars(const struct eb_bench *b, const struct eb_ctx *c, struct eb_handover *sh)
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
void eb_handover_run(const struct eb_ctx *c, struct eb_handover *sh)
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
	r->rounds = o->rounds;
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

int eb_handover_points(struct eb_run *run)
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

void eb_handover_free(struct eb_run *run)
{
	int i;

	for (i = 0; run->pts != NULL && i < run->nsizes * run->nvars; i++) {
		free(run->pts[i].groups);
		eb_rec_free(&run->pts[i].own);
	}
	free(run->pts);
}
