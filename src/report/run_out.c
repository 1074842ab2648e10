/* Rank 0's output of a benchmark run: the seeds' table on stdout, a ratio table where variants
 * name a reference, and a record per (variant, size) with every statistic for CSV and JSON. */
#include "run.h"
#include "doc.h"
#include "efabench/size.h"
#include "efabench/status.h"

#include <stdio.h>

static const char *flow_name(enum eb_flow p)
{
	return p == EB_FLOW_PAIRS ? "pairs" : p == EB_FLOW_FANOUT ? "fanout" : "all-to-all";
}

static const char *mem_what(const char *mem)
{
	return mem[0] == 'p'   ? "pinned (malloc + cudaHostRegister, mapped)"
	       : mem[0] == 'd' ? "device (cudaMalloc)"
			       : "host (page-aligned malloc)";
}

/* Which memory the payloads are, how the NIC reaches them, and every rank's GPU. */
static void mem_line(const struct eb_run *r)
{
	int k;

	if (r->mem[0] == 'h') {
		printf("# memory: %s, registration: %s\n", mem_what(r->mem), r->registration);
		return;
	}
	if (r->staged)
		printf("# memory: device (cudaMalloc), STAGED through pinned bounce buffers "
		       "(cudaHostRegister), copies %s\n",
		       r->serial ? "serial (all, then the network)"
				 : "pipelined by chunk with the network");
	else
		printf("# memory: %s, registration: %s\n", mem_what(r->mem), r->registration);
	printf("# GPU of rank 0..%d:", r->ranks - 1);
	for (k = 0; k < r->ranks; k++)
		printf(" %d", r->gpus[k]);
	printf("\n");
}

void eb_run_header(struct eb_run *r)
{
	const char *names[EB_RUN_VARS];
	char chunk[24], link[64];
	int v, c;

	if (r->link_gbps > 0)
		snprintf(link, sizeof(link), "%.1f Gbps per NIC", r->link_gbps);
	else
		snprintf(link, sizeof(link), "unknown (BusBW shows -; set --link-gbps)");
	printf("# efabench %s: %s\n", r->bench, r->summary);
	printf("# ranks: %d (%s launcher)  provider: %s  link: %s\n", r->ranks, r->launcher,
	       r->provider, link);
	printf("# channels: %d on NICs:", r->nchan);
	for (c = 0; c < r->nchan; c++)
		printf(" %s", r->nics[c]);
	printf("  NICs used:");
	for (v = 0; v < r->nvars; v++)
		printf(" %s %d", r->vars[v].name, r->vars[v].nics);
	printf("\n# warmup: %ld  iters: %ld  chunk: %s  window: %d  check every iteration: %s  "
	       "timeout: %.0f s\n# poll: %s (%s%d ranks here, %d cores)  timer: %s\n",
	       r->warmup, r->iters, eb_size_format(r->chunk, chunk, sizeof(chunk)), r->window,
	       r->check ? "yes" : "no", r->timeout_s, r->yield ? "yield" : "spin",
	       r->poll_asked ? "asked; " : "auto: ", r->host_ranks, r->host_cores,
	       r->tsc ? "tsc, scaled to CLOCK_MONOTONIC per phase" : "CLOCK_MONOTONIC");
	if (r->rounds > 1)
		printf("# rounds: %ld (the variants of each size took turns, each time with a "
		       "share of their timed iterations)\n",
		       r->rounds);
	mem_line(r);
	eb_head_print(&r->own);
	printf("# %s\n", r->metric);
	printf("# BusBW (%%) = 100*Gbps/(link Gbps * NICs used); Lat (us) = t*1e6; "
	       "#wrong = wrong 8-byte words\n#\n");
	for (v = 0; v < r->nvars; v++)
		names[v] = r->vars[v].name;
	eb_table_seed(&r->table, names, r->nvars);
	eb_table_head(&r->table);
}

int eb_point_skewed(const struct eb_point *p)
{
	return p->phases == 0 && p->all.n >= 3 && p->all.p50 > 0 &&
	       p->all.mean > EB_SKEW * p->all.p50;
}

void eb_run_row(struct eb_run *r, int s)
{
	const struct eb_point *p = &r->pts[s * r->nvars];
	uint64_t wrong = 0;
	int v;

	eb_table_size(&r->table, p[0].size);
	for (v = 0; v < r->nvars; v++) {
		/* "!": stalls moved this mean; the note under the table gives the median's */
		eb_table_cell(&r->table, eb_point_skewed(&p[v]) ? "%.2f!" : "%.2f", p[v].gbps);
		if (p[v].busbw >= 0)
			eb_table_cell(&r->table, "%.1f", p[v].busbw);
		else
			eb_table_cell(&r->table, "-");
		eb_table_cell(&r->table, "%.2f", p[v].t_s * 1e6);
		wrong += p[v].wrong;
	}
	eb_table_cell(&r->table, "%llu", (unsigned long long)wrong);
	eb_table_row(&r->table);
}

/* The run's settings; the CSV gets the ones that vary between runs as columns. */
static void settings(struct eb_rec *x, const struct eb_run *r)
{
	int c;

	eb_rec_obj(x, "settings");
	eb_rec_str(x, "bench", r->bench);
	eb_rec_int(x, "ranks", r->ranks);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_str(x, "launcher", r->launcher);
	eb_rec_str(x, "provider", r->provider);
	eb_rec_to(x, EB_TO_CSV);
	for (c = 0; c < r->nchan; c++)
		eb_rec_strs(x, "channel_nics", r->nics[c]);
	eb_rec_num_or_null(x, "link_gbps", r->link_gbps, r->link_gbps > 0);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "warmup", r->warmup);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "iters", r->iters);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "chunk", (long long)r->chunk);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_int(x, "window", r->window);
	eb_rec_to(x, EB_TO_CSV);
	eb_rec_bool(x, "check", r->check);
	eb_rec_int(x, "rounds", r->rounds);
	eb_rec_num(x, "timeout_s", r->timeout_s);
	eb_rec_str(x, "poll", r->yield ? "yield" : "spin");
	eb_rec_int(x, "host_ranks", r->host_ranks);
	eb_rec_int(x, "host_cores", r->host_cores);
	if (r->cpu_map != NULL)
		eb_rec_str(x, "cpu_map", r->cpu_map);
	eb_rec_str(x, "timer", r->tsc ? "tsc" : "clock_gettime");
	eb_rec_str(x, "libfabric", r->libfabric);
	if (r->mem[0] != 'h') {
		eb_rec_str(x, "mem", r->mem);
		eb_rec_to(x, EB_TO_CSV);
		eb_rec_bool(x, "staged", r->staged);
		eb_rec_to(x, EB_TO_CSV);
		if (r->staged)
			eb_rec_bool(x, "stage_serial", r->serial);
		eb_rec_str(x, "registration", r->staged ? "staged" : r->registration);
		eb_rec_to(x, EB_TO_CSV);
		for (c = 0; c < r->ranks; c++) {
			char g[16];

			snprintf(g, sizeof(g), "%d", r->gpus[c]);
			eb_rec_strs(x, "gpus", g);
		}
	}
	eb_rec_end(x);
}

/* Under the table: each "!" cell's mean, median and slowest iteration, and the Gbps the median
 * gives, so that one stall cannot pass for the link's speed. */
static void skew_notes(const struct eb_run *r)
{
	char size[24];
	int i, any = 0;

	for (i = 0; i < r->nsizes * r->nvars; i++) {
		const struct eb_point *p = &r->pts[i];

		if (!eb_point_skewed(p))
			continue;
		if (!any++)
			printf("#\n# ! the mean time a Gbps comes from is over %.1fx the median: a "
			       "few "
			       "slow iterations (stalls) moved it\n",
			       EB_SKEW);
		printf("# ! %s %s: mean %.2f us, p50 %.2f us, max %.2f us over %zu iterations; the "
		       "p50 gives %.2f Gbps\n",
		       r->vars[p->var].name, eb_size_format(p->size, size, sizeof(size)),
		       p->all.mean * 1e6, p->all.p50 * 1e6, p->all.max * 1e6, p->all.n,
		       8.0 * p->bytes / p->all.p50 / 1e9);
	}
}

/* The point p is compared with, at the same size; NULL when its variant names none. */
static const struct eb_point *ref_of(const struct eb_run *r, const struct eb_point *p)
{
	int s = (int)((p - r->pts) / r->nvars), ref = r->vars[p->var].ref;

	return ref < 0 ? NULL : &r->pts[s * r->nvars + ref];
}

/* For benchmarks whose variants name a reference: each one's Gbps over its reference's. */
static void ratios(struct eb_run *r)
{
	struct eb_table t = {0};
	int s, v, any = 0;

	for (v = 0; v < r->nvars; v++)
		any |= r->vars[v].ref >= 0;
	if (!any)
		return;
	printf("#\n# Gbps of each variant over its reference's, same size\n");
	eb_table_col(&t, "Size", 5, 0);
	for (v = 0; v < r->nvars; v++) {
		char head[40];

		if (r->vars[v].ref < 0)
			continue;
		snprintf(head, sizeof(head), "%s/%s", r->vars[v].name,
			 r->vars[r->vars[v].ref].name);
		eb_table_col(&t, head, 8, 0);
	}
	eb_table_head(&t);
	for (s = 0; s < r->nsizes; s++) {
		char size[24];

		eb_table_cell(&t, "%s",
			      eb_size_format(r->pts[s * r->nvars].size, size, sizeof(size)));
		for (v = 0; v < r->nvars; v++) {
			const struct eb_point *x = &r->pts[s * r->nvars + v], *ref = ref_of(r, x);

			if (ref != NULL)
				eb_table_cell(&t, "%.3f",
					      ref->gbps > 0 ? x->gbps / ref->gbps : 0.0);
		}
		eb_table_row(&t);
	}
}

/* Per-iteration statistics where iterations were timed one by one; for a point timed by the
 * phase, the spread of its phases (seconds per iteration of each) and null where no single
 * iteration was measured. Every record has the same keys. */
static void stats(struct eb_rec *x, const struct eb_stats *s, int phases)
{
	static const char *const each[] = {"min_us", "p50_us", "p99_us", "max_us", "stddev_us"};
	static const char *const phase[] = {"phase_min_us", "phase_p50_us", NULL, "phase_max_us",
					    "phase_stddev_us"};
	const double v[] = {s->min, s->p50, s->p99, s->max, s->stddev};
	int i;

	eb_rec_num(x, "lat_us", s->mean * 1e6);
	for (i = 0; i < 5; i++)
		eb_rec_num_or_null(x, each[i], v[i] * 1e6, phases == 0);
	eb_rec_int(x, "phases", phases);
	for (i = 0; i < 5; i++)
		if (phase[i] != NULL)
			eb_rec_num_or_null(x, phase[i], v[i] * 1e6, phases > 0);
}

static void group(struct eb_rec *x, const struct eb_point *p, enum eb_flow flow, int g)
{
	const struct eb_stats *s = &p->groups[g];
	struct eb_rec *y = eb_rec_item(x, "groups");

	if (y == NULL)
		return;
	/* PAIRS: rank 0 -> g + 1; FANOUT: rank 0 -> all; ALL: rank g -> all. */
	eb_rec_int(y, "rank", flow == EB_FLOW_ALL ? g : 0);
	if (flow == EB_FLOW_PAIRS)
		eb_rec_int(y, "peer", g + 1);
	else
		eb_rec_str(y, "peer", "all");
	eb_rec_num(y, "gbps", s->mean > 0 ? 8.0 * p->bytes / s->mean / 1e9 : 0.0);
	stats(y, s, p->phases);
}

static void record(struct eb_rec *x, const struct eb_run *r, const struct eb_point *p)
{
	const struct eb_run_var *v = &r->vars[p->var];
	const struct eb_point *ref = ref_of(r, p);
	int g;

	eb_rec_str(x, "bench", r->bench);
	eb_rec_str(x, "variant", v->name);
	eb_rec_str(x, "layout", v->layout);
	eb_rec_str(x, "flow", flow_name(v->flow));
	eb_rec_int(x, "size", (long long)p->size);
	eb_rec_int(x, "count", (long long)(p->size / 4));
	eb_rec_num(x, "bytes_per_iter", p->bytes);
	eb_rec_num(x, "gbps", p->gbps);
	eb_rec_int(x, "nics_used", v->nics);
	eb_rec_num_or_null(x, "busbw_pct", p->busbw, p->busbw >= 0);
	stats(x, &p->all, p->phases);
	eb_rec_int(x, "samples", (long long)p->all.n);
	eb_rec_int(x, "wrong", (long long)p->wrong);
	if (ref != NULL) {
		eb_rec_str(x, "ratio_to", r->vars[v->ref].name);
		eb_rec_num(x, "ratio", ref->gbps > 0 ? p->gbps / ref->gbps : 0.0);
	}
	eb_rec_append(x, &p->own);
	settings(x, r);
	eb_rec_items(x, "groups");
	for (g = 0; g < p->ngroups; g++)
		group(x, p, v->flow, g);
}

int eb_run_files(struct eb_run *r, uint64_t wrong)
{
	struct eb_doc d = {0};
	int i, rc = EB_OK;

	skew_notes(r);
	ratios(r);
	eb_table_footer(wrong);
	if (r->csv == NULL && r->json == NULL)
		return EB_OK;
	eb_rec_str(&d.head, "efabench", EB_VERSION_STRING);
	eb_rec_str(&d.head, "metric", r->metric);
	settings(&d.head, r);
	for (i = 0; i < r->nsizes * r->nvars && rc == EB_OK; i++) {
		struct eb_rec *x = eb_doc_add(&d);

		if (x == NULL)
			rc = EB_ENOMEM;
		else
			record(x, r, &r->pts[i]);
	}
	if (rc == EB_OK)
		rc = eb_doc_write(&d, r->csv, r->json);
	eb_doc_free(&d);
	return rc == EB_OK ? EB_OK : EB_ESYS;
}
