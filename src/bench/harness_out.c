/* Rank 0's output of a harness benchmark: the seeds' table on stdout, and a record per
 * (variant, size) with every statistic for the CSV and JSON files. */
#include "harness_out.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "../core/ticks.h"
#include "../report/doc.h"

#include <rdma/fabric.h>
#include <stdio.h>

double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks)
{
	return (double)size * (v->flow == EB_FLOW_PAIRS ? 1.0 : (double)(nranks - 1));
}

/* Distinct NICs rank 0 drives in the variant: what BusBW is measured against. */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks)
{
	int used[64] = {0}, peer, ch, n = 0;
	int last = v->flow == EB_FLOW_PAIRS ? 1 : nranks - 1; /* one pair is typical */
	size_t off, len;

	for (peer = 1; peer <= last; peer++)
		for (ch = 0; ch < e->nchan; ch++)
			if (eb_layout_slice(v->layout, e->nchan, 0, peer, 1u << 20, ch, &off, &len))
				used[e->chan[ch].nic_index % 64] = 1;
	for (ch = 0; ch < 64; ch++)
		n += used[ch];
	return n;
}

static const char *flow_name(enum eb_flow p)
{
	return p == EB_FLOW_PAIRS ? "pairs" : p == EB_FLOW_FANOUT ? "fanout" : "all-to-all";
}

/* Which memory the payloads are, how the NIC reaches them, and every rank's GPU. */
static void mem_line(const struct eb_report *r)
{
	const struct eb_ctx *c = r->c;
	int k;

	if (c->mem == EB_MEM_HOST) {
		printf("# memory: host (page-aligned malloc), registration: %s\n",
		       eb_reg_path_name(r->path));
		return;
	}
	if (c->staged)
		printf("# memory: device (cudaMalloc), STAGED through pinned bounce buffers "
		       "(cudaHostRegister), copies %s\n",
		       c->serial ? "serial (all, then the network)"
				 : "pipelined by chunk with the network");
	else
		printf("# memory: %s, registration: %s\n",
		       c->mem == EB_MEM_PINNED ? "pinned (malloc + cudaHostRegister, mapped)"
					       : "device (cudaMalloc)",
		       eb_reg_path_name(r->path));
	printf("# GPU of rank 0..%d:", c->nranks - 1);
	for (k = 0; k < c->nranks; k++)
		printf(" %d", r->gpus[k]);
	printf("\n");
}

void eb_harness_header(struct eb_report *r)
{
	const struct eb_opts *o = r->c->o;
	const struct eb_engine *e = r->c->e;
	const char *names[EB_MAX_VARIANTS];
	char chunk[24], link[64];
	int v, c;

	if (r->link_gbps > 0)
		snprintf(link, sizeof(link), "%.1f Gbps per NIC", r->link_gbps);
	else
		snprintf(link, sizeof(link), "unknown (BusBW shows -; set --link-gbps)");
	printf("# efabench %s: %s\n", r->c->o->cmd->name, r->c->o->cmd->summary);
	printf("# ranks: %d (%s launcher)  provider: %s  link: %s\n", r->c->nranks, r->launcher,
	       e->prov, link);
	printf("# channels: %d on NICs:", e->nchan);
	for (c = 0; c < e->nchan; c++)
		printf(" %s", e->chan[c].nic.domain);
	printf("  NICs used:");
	for (v = 0; v < r->nvars; v++)
		printf(" %s %d", r->vars[v]->name[r->c->sel],
		       eb_variant_nics(e, r->vars[v], r->c->nranks));
	printf("\n# warmup: %ld  iters: %ld  chunk: %s  window: %d  check every iteration: %s  "
	       "timeout: %.0f s\n# poll: %s (%s%d ranks here, %d cores)  timer: %s\n",
	       o->warmup, o->iters, eb_size_format(r->c->chunk, chunk, sizeof(chunk)), r->c->window,
	       o->check ? "yes" : "no", o->fab.timeout_s, e->yield ? "yield" : "spin",
	       o->fab.poll != EB_POLL_AUTO ? "asked; " : "auto: ", e->host_ranks, e->cores,
	       eb_ticks_tsc ? "tsc, scaled to CLOCK_MONOTONIC per phase" : "CLOCK_MONOTONIC");
	mem_line(r);
	if (r->b->header != NULL)
		r->b->header(r->c);
	printf("# %s\n", r->b->metric);
	printf("# BusBW (%%) = 100*Gbps/(link Gbps * NICs used); Lat (us) = t*1e6; "
	       "#wrong = wrong 8-byte words\n#\n");
	for (v = 0; v < r->nvars; v++)
		names[v] = r->vars[v]->name[r->c->sel];
	eb_table_seed(&r->table, names, r->nvars);
	eb_table_head(&r->table);
}

void eb_harness_row(struct eb_report *r, int s)
{
	const struct eb_result *res = &r->res[s * r->nvars];
	uint64_t wrong = 0;
	int v;

	eb_table_size(&r->table, res[0].size);
	for (v = 0; v < r->nvars; v++) {
		eb_table_cell(&r->table, "%.2f", res[v].gbps);
		if (res[v].busbw >= 0)
			eb_table_cell(&r->table, "%.1f", res[v].busbw);
		else
			eb_table_cell(&r->table, "-");
		eb_table_cell(&r->table, "%.2f", res[v].t_s * 1e6);
		wrong += res[v].wrong;
	}
	eb_table_cell(&r->table, "%llu", (unsigned long long)wrong);
	eb_table_row(&r->table);
}

/* The run's settings; the CSV gets the ones that vary between runs as columns. */
static void settings(struct eb_rec *x, const struct eb_report *r)
{
	const struct eb_opts *o = r->c->o;
	const struct eb_engine *e = r->c->e;
	char ver[32];
	int c;

	eb_rec_obj(x, "settings");
	eb_rec_str(x, "bench", r->c->o->cmd->name);
	eb_rec_int(x, "ranks", r->c->nranks);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_str(x, "launcher", r->launcher);
	eb_rec_str(x, "provider", e->prov);
	eb_rec_to(x, EB_TO_CSV);
	for (c = 0; c < e->nchan; c++)
		eb_rec_strs(x, "channel_nics", e->chan[c].nic.domain);
	eb_rec_num_or_null(x, "link_gbps", r->link_gbps, r->link_gbps > 0);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "warmup", o->warmup);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "iters", o->iters);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "chunk", (long long)r->c->chunk);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "window", r->c->window);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_bool(x, "check", o->check);
	eb_rec_num(x, "timeout_s", o->fab.timeout_s);
	eb_rec_str(x, "poll", e->yield ? "yield" : "spin");
	eb_rec_int(x, "host_ranks", e->host_ranks);
	eb_rec_int(x, "host_cores", e->cores);
	if (o->cpu_map != NULL)
		eb_rec_str(x, "cpu_map", o->cpu_map);
	eb_rec_str(x, "timer", eb_ticks_tsc ? "tsc" : "clock_gettime");
	snprintf(ver, sizeof(ver), "%u.%u", FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	eb_rec_str(x, "libfabric", ver);
	if (r->c->mem != EB_MEM_HOST) {
		eb_rec_str(x, "mem", eb_mem_kind_name(r->c->mem));
		eb_rec_to(x, EB_TO_CSV);
		eb_rec_bool(x, "staged", r->c->staged);
		eb_rec_to(x, EB_TO_CSV);
		if (r->c->staged)
			eb_rec_bool(x, "stage_serial", r->c->serial);
		eb_rec_str(x, "registration", r->c->staged ? "staged" : eb_reg_path_name(r->path));
		eb_rec_to(x, EB_TO_CSV);
		for (c = 0; c < r->c->nranks; c++) {
			char g[16];

			snprintf(g, sizeof(g), "%d", r->gpus[c]);
			eb_rec_strs(x, "gpus", g);
		}
	}
	eb_rec_end(x);
}

/* The result of the variant res is compared with, at the same size; NULL when none ran. */
static const struct eb_result *ref_of(const struct eb_report *r, const struct eb_result *res)
{
	const struct eb_result *row = res - (res->var - r->vars[0] >= 0 ? 0 : 0);
	int v, s = (int)((res - r->res) / r->nvars);

	(void)row;
	if (res->var->ref == 0)
		return NULL;
	for (v = 0; v < r->nvars; v++)
		if (r->vars[v] == &r->all[res->var->ref - 1])
			return &r->res[s * r->nvars + v];
	return NULL;
}

/* For benchmarks whose variants name a reference: each one's Gbps over its reference's. */
static void ratios(struct eb_report *r)
{
	struct eb_table t = {0};
	int s, v, any = 0;

	for (v = 0; v < r->nvars; v++)
		any |= ref_of(r, &r->res[v]) != NULL;
	if (!any)
		return;
	printf("#\n# Gbps of each variant over its reference's, same size\n");
	eb_table_col(&t, "Size", 5, 0);
	for (v = 0; v < r->nvars; v++) {
		const struct eb_result *ref = ref_of(r, &r->res[v]);
		char head[40];

		if (ref == NULL)
			continue;
		snprintf(head, sizeof(head), "%s/%s", r->vars[v]->name[r->c->sel],
			 ref->var->name[r->c->sel]);
		eb_table_col(&t, head, 8, 0);
	}
	eb_table_head(&t);
	for (s = 0; s < r->c->o->nsizes; s++) {
		char size[24];

		eb_table_cell(&t, "%s",
			      eb_size_format(r->res[s * r->nvars].size, size, sizeof(size)));
		for (v = 0; v < r->nvars; v++) {
			const struct eb_result *x = &r->res[s * r->nvars + v], *ref = ref_of(r, x);

			if (ref != NULL)
				eb_table_cell(&t, "%.3f",
					      ref->gbps > 0 ? x->gbps / ref->gbps : 0.0);
		}
		eb_table_row(&t);
	}
}

static void record(struct eb_rec *x, const struct eb_report *r, const struct eb_result *res)
{
	const struct eb_result *ref = ref_of(r, res);
	double bytes = eb_variant_bytes(res->var, res->size, r->c->nranks);
	int g;

	eb_rec_str(x, "bench", r->c->o->cmd->name);
	eb_rec_str(x, "variant", res->var->name[r->c->sel]);
	eb_rec_str(x, "layout", eb_layout_name(res->var->layout));
	eb_rec_str(x, "flow", flow_name(res->var->flow));
	eb_rec_int(x, "size", (long long)res->size);
	eb_rec_int(x, "count", (long long)(res->size / 4));
	eb_rec_num(x, "bytes_per_iter", bytes);
	eb_rec_num(x, "gbps", res->gbps);
	eb_rec_int(x, "nics_used", res->nics);
	eb_rec_num_or_null(x, "busbw_pct", res->busbw, res->busbw >= 0);
	eb_rec_stats(x, &res->all, "lat_us", "us", 1e6);
	eb_rec_int(x, "samples", (long long)res->all.n);
	eb_rec_int(x, "wrong", (long long)res->wrong);
	if (ref != NULL) {
		eb_rec_str(x, "ratio_to", ref->var->name[r->c->sel]);
		eb_rec_num(x, "ratio", ref->gbps > 0 ? res->gbps / ref->gbps : 0.0);
	}
	if (r->b->extra != NULL)
		r->b->extra(r->c, res, x);
	settings(x, r);
	eb_rec_items(x, "groups");
	for (g = 0; g < res->ngroups; g++) {
		const struct eb_stats *p = &res->groups[g];
		struct eb_rec *y = eb_rec_item(x, "groups");

		if (y == NULL)
			return;
		/* PAIRS: rank 0 -> g + 1; FANOUT: rank 0 -> all; ALL: rank g -> all. */
		eb_rec_int(y, "rank", res->var->flow == EB_FLOW_ALL ? g : 0);
		if (res->var->flow == EB_FLOW_PAIRS)
			eb_rec_int(y, "peer", g + 1);
		else
			eb_rec_str(y, "peer", "all");
		eb_rec_num(y, "gbps", p->mean > 0 ? 8.0 * bytes / p->mean / 1e9 : 0.0);
		eb_rec_stats(y, p, "lat_us", "us", 1e6);
	}
}

int eb_harness_files(struct eb_report *r, uint64_t wrong)
{
	const struct eb_opts *o = r->c->o;
	struct eb_doc d = {0};
	int i, rc = EB_OK;

	ratios(r);
	eb_table_footer(wrong);
	if (o->csv == NULL && o->json == NULL)
		return EB_OK;
	eb_rec_str(&d.head, "efabench", EB_VERSION_STRING);
	eb_rec_str(&d.head, "metric", r->b->metric);
	settings(&d.head, r);
	for (i = 0; i < o->nsizes * r->nvars && rc == EB_OK; i++) {
		struct eb_rec *x = eb_doc_add(&d);

		if (x == NULL)
			rc = EB_ENOMEM;
		else
			record(x, r, &r->res[i]);
	}
	if (rc == EB_OK)
		rc = eb_doc_write(&d, o->csv, o->json);
	eb_doc_free(&d);
	return rc == EB_OK ? EB_OK : EB_ESYS;
}
