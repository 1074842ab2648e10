#include "sweep.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "core/ticks.h"

#include <rdma/fabric.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0's mean over a stalled phase: more than this times the median (over at least 3
 * iterations timed one by one) and the table marks the Gbps it gives. */
#define SKEW 1.5

/* The variants selected (--layout) and what they are compared with. */
static void open_sweep(const struct eb_ctx *c, struct eb_sweep *w)
{
	const struct eb_sweep_def *d = c->b->sweep;
	const struct eb_variant *all = d->variants;
	int v, k;

	w->sel = c->sel;
	if (d->variants_of != NULL)
		d->variants_of(c->o, &all);
	w->nvars = eb_sweep_select(d, c->o, w->vars);
	for (v = 0; v < w->nvars; v++) {
		const struct eb_variant *x = w->vars[v];

		w->nics[v] = eb_variant_nics(c->e, x, c->nranks);
		w->ref[v] = -1;
		for (k = 0; x->ref > 0 && k < w->nvars; k++)
			if (w->vars[k] == &all[x->ref - 1])
				w->ref[v] = k;
	}
}

int eb_sweep_gather(struct eb_ctx *c)
{
	int32_t mine[2] = {c->gpu, (int32_t)c->path}, *all;
	struct eb_sweep *w = calloc(1, sizeof(*w));
	int r, rc;

	if (w == NULL)
		return EB_ENOMEM;
	c->sweep = w;
	open_sweep(c, w);
	w->gpus = calloc((size_t)c->nranks, sizeof(*w->gpus));
	all = malloc(sizeof(mine) * (size_t)c->nranks);
	if (w->gpus == NULL || all == NULL) {
		free(all);
		return EB_ENOMEM;
	}
	rc = eb_boot_allgather(c->boot, mine, all, sizeof(mine), eb_engine_deadline(c->e));
	for (r = 0; rc == EB_OK && r < c->nranks; r++) {
		w->gpus[r] = all[2 * r];
		if (all[2 * r + 1] > (int32_t)w->path)
			w->path = (enum eb_reg_path)all[2 * r + 1];
	}
	free(all);
	return rc;
}

void eb_sweep_free(struct eb_sweep *w)
{
	if (w != NULL)
		free(w->gpus);
	free(w);
}

int eb_sweep_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	static char names[EB_MAX_VARIANTS][64];
	const struct eb_sweep *w = c->sweep;
	const struct eb_opts *o = c->o;
	int v;

	if (row >= o->nsizes)
		return 0;
	for (v = 0; v < w->nvars && v < max; v++) {
		const struct eb_variant *x = w->vars[v];
		char size[24];

		eb_size_format(o->sizes[row], size, sizeof(size));
		snprintf(names[v], sizeof(names[v]), "%s %s", x->name[c->sel], size);
		pts[v] = (struct eb_pt){.size = o->sizes[row],
					.var = v,
					.turns = x->flow == EB_FLOW_PAIRS ? c->nranks - 1 : 1,
					.warmup = o->warmup,
					.iters = o->iters,
					.flags = x->pt_flags |
						 (x->flow == EB_FLOW_ALL ? EB_PT_SAMPLES : 0),
					.scale = c->b->sweep->one_way ? 0.5 : 1.0,
					.flow = x->flow,
					.name = names[v],
					.variant = x};
	}
	return v;
}

static const char *flow_name(enum eb_flow p)
{
	return p == EB_FLOW_PAIRS ? "pairs" : p == EB_FLOW_FANOUT ? "fanout" : "all-to-all";
}

static const char *mem_what(enum eb_mem_kind m)
{
	return m == EB_MEM_PINNED   ? "pinned (malloc + cudaHostRegister, mapped)"
	       : m == EB_MEM_DEVICE ? "device (cudaMalloc)"
				    : "host (page-aligned malloc)";
}

/* Which memory the payloads are and how the NIC reaches them (JSON: only beside GPUs). */
static void mem_facts(const struct eb_ctx *c, const struct eb_sweep *w, struct eb_sheet *s)
{
	char gpus[16][12];
	const char *g[16];
	int k, n = c->nranks < 16 ? c->nranks : 16;

	eb_fact_break(s);
	if (c->o->mem_why[0]) /* --mem auto: what it found */
		eb_fact_str(s, "mem_why", "memory chosen", c->o->mem_why);
	if (c->mem == EB_MEM_HOST) {
		eb_head_fact(&s->head, "memory", "%s, registration: %s", mem_what(c->mem),
			     eb_reg_path_name(w->path));
		return;
	}
	eb_fact_str(s, "mem", "memory", eb_mem_kind_name(c->mem));
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_bool(s, "staged", c->staged ? "staged through pinned bounce buffers" : NULL,
		     c->staged);
	eb_fact_to(s, EB_TO_CSV);
	if (c->staged)
		eb_fact_bool(s, "stage_serial", "copies serial (all, then the network)", c->serial);
	eb_fact_str(s, "registration", "registration",
		    c->staged ? "staged" : eb_reg_path_name(w->path));
	eb_fact_to(s, EB_TO_CSV);
	for (k = 0; k < n; k++) {
		snprintf(gpus[k], sizeof(gpus[k]), "%d", w->gpus[k]);
		g[k] = gpus[k];
	}
	eb_fact_strs(s, "gpus", "GPU of each rank", g, n);
}

/* The run's settings, each once: the header's label and the JSON key of "settings" (the CSV
 * gets the ones that vary between runs as columns). */
static void settings(const struct eb_ctx *c, const struct eb_sweep *w, struct eb_sheet *s)
{
	const struct eb_engine *e = c->e;
	char libfabric[16], hosts[64];

	eb_fact_obj(s, "settings");
	eb_fact_str(s, "bench", NULL, c->o->cmd->name);
	eb_fact_int(s, "ranks", "ranks", c->nranks);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "launcher", "launcher", e->boot->ops->name);
	eb_fabric_facts(c, s);
	eb_fact_break(s);
	eb_fact_int(s, "warmup", "warmup", c->o->warmup);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_int(s, "iters", "iters", c->o->iters);
	eb_fact_to(s, EB_TO_CSV);
	eb_chunk_fact(c, s);
	eb_fact_int(s, "window", "window", c->window);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_bool(s, "check", "check every iteration", c->o->check);
	eb_fact_int(s, "rounds", "rounds", c->o->rounds);
	eb_fact_num(s, "timeout_s", "timeout", c->o->fab.timeout_s, "%.0f s");
	eb_fact_break(s);
	/* one header fact for three JSON ones: how waits poll, and the count that chose it */
	eb_fact_str(s, "poll", NULL, eb_engine_poll_name(e));
	eb_fact_int(s, "host_ranks", NULL, e->host_ranks);
	eb_fact_int(s, "host_cores", NULL, e->cores);
	snprintf(hosts, sizeof(hosts), "%s%d ranks here, %d cores",
		 c->o->fab.poll != EB_POLL_AUTO ? "asked; " : "auto: ", e->host_ranks, e->cores);
	eb_head_fact(&s->head, "poll", "%s (%s)", eb_engine_poll_name(e), hosts);
	if (c->o->cpu_map != NULL)
		eb_fact_str(s, "cpu_map", "cpu map", c->o->cpu_map);
	eb_fact_str(s, "timer", "timer", eb_ticks_tsc ? "tsc" : "clock_gettime");
	snprintf(libfabric, sizeof(libfabric), "%u.%u", FI_MAJOR(fi_version()),
		 FI_MINOR(fi_version()));
	eb_fact_str(s, "libfabric", "libfabric", libfabric);
	mem_facts(c, w, s);
	eb_fact_end(s);
}

void eb_sweep_facts_own(const struct eb_ctx *c, struct eb_sheet *s,
			void (*own)(const struct eb_ctx *c, struct eb_sheet *s))
{
	const struct eb_sweep *w = c->sweep;
	static const struct eb_colspec lead[] = {{"Size", "size_shown", 5, 0, 0, NULL},
						 {"Count", "count", 9, 0, 0, NULL}};
	static const struct eb_colspec each[] = {{NULL, "gbps", 10, 2, 0, "skewed"},
						 {"BusBW (%)", "busbw_pct", 9, 1, 0, NULL},
						 {"Lat (us)", "lat_us", 9, 2, 0, NULL}};
	static const struct eb_colspec tail[] = {{"#wrong", "wrong", 6, 0, 0, NULL}};
	const char *names[EB_MAX_VARIANTS];
	int v;

	eb_head_fact(&s->head, NULL, "efabench %s: %s", c->o->cmd->name, c->o->cmd->summary);
	eb_fact_break(s);
	eb_fact_str(s, "efabench", "version", EB_VERSION_STRING);
	settings(c, w, s);
	eb_fact_break(s);
	for (v = 0; v < w->nvars; v++)
		eb_head_fact(&s->head, v == 0 ? "NICs used" : NULL, "%s %d",
			     w->vars[v]->name[c->sel], w->nics[v]);
	if (own != NULL)
		own(c, s);
	eb_fact_break(s);
	eb_fact_str(s, "metric", "metric", c->b->metric);
	eb_fact_break(s);
	eb_fact_say(s, NULL,
		    "BusBW (%%) = 100*Gbps/(link Gbps * NICs used); Lat (us) = t*1e6; "
		    "#wrong = wrong 8-byte words");
	eb_head_fact(&s->head, NULL, "%s", "");
	for (v = 0; v < w->nvars; v++)
		names[v] = w->vars[v]->name[c->sel];
	eb_sheet_pivot(s, &(struct eb_pivot){.lead = lead,
					     .nlead = 2,
					     .each = each,
					     .neach = 3,
					     .tail = tail,
					     .ntail = 1,
					     .groups = names,
					     .ngroups = w->nvars});
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

int eb_sweep_skewed(const struct eb_stats *all, int phases)
{
	return phases == 0 && all->n >= 3 && all->p50 > 0 && all->mean > SKEW * all->p50;
}

static double gbps_of(double bytes, double t)
{
	return t > 0 ? 8.0 * bytes / t / 1e9 : 0.0;
}

static void groups(struct eb_rec *x, const struct eb_meas *m, enum eb_flow flow, double bytes)
{
	int g;

	eb_rec_items(x, "groups");
	for (g = 0; g < m->ngroups; g++) {
		const struct eb_group *gr = &m->groups[g];
		struct eb_rec *y = eb_rec_item(x, "groups");

		if (y == NULL)
			return;
		/* PAIRS: rank 0 -> turn + 1; FANOUT: rank 0 -> all; ALL: rank g -> all. */
		eb_rec_int(y, "rank", gr->rank);
		if (flow == EB_FLOW_PAIRS)
			eb_rec_int(y, "peer", gr->peer);
		else
			eb_rec_str(y, "peer", "all");
		eb_rec_num(y, "gbps", gbps_of(bytes, gr->st.mean));
		stats(y, &gr->st, m->phases);
	}
}

void eb_sweep_record_own(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			 struct eb_rec *x,
			 void (*own)(const struct eb_ctx *c, const struct eb_meas *m,
				     struct eb_rec *r))
{
	const struct eb_sweep *w = c->sweep;
	const struct eb_variant *v = w->vars[m->pt->var];
	double bytes = eb_variant_bytes(v, m->pt->size, c->nranks);
	double gbps = gbps_of(bytes, m->all.mean);
	double cap = eb_fabric_link_for_busbw(c->e) * w->nics[m->pt->var];
	char size[24];

	eb_rec_str(x, "bench", c->o->cmd->name);
	eb_rec_str(x, "variant", v->name[c->sel]);
	eb_rec_str(x, "layout", eb_layout_name(v->layout));
	eb_rec_str(x, "flow", flow_name(v->flow));
	eb_rec_int(x, "size", (long long)m->pt->size);
	eb_rec_str(x, "size_shown", eb_size_format(m->pt->size, size, sizeof(size)));
	eb_rec_to(x, EB_NOT_JSON | EB_NOT_CSV);
	eb_rec_int(x, "count", (long long)(m->pt->size / 4));
	eb_rec_num(x, "bytes_per_iter", bytes);
	eb_rec_num(x, "gbps", gbps);
	eb_rec_bool(x, "skewed", eb_sweep_skewed(&m->all, m->phases));
	eb_rec_to(x, EB_NOT_JSON | EB_NOT_CSV);
	eb_rec_int(x, "nics_used", w->nics[m->pt->var]);
	eb_rec_num_or_null(x, "busbw_pct", cap > 0 ? 100.0 * gbps / cap : 0, cap > 0);
	stats(x, &m->all, m->phases);
	eb_rec_int(x, "samples", (long long)m->all.n);
	eb_rec_int(x, "wrong", (long long)m->wrong);
	if (own != NULL)
		own(c, m, x);
	eb_rec_append_obj(x, &s->doc.head, "settings", 0);
	eb_rec_append_obj(x, &s->doc.head, "stamp", EB_NOT_JSON); /* the CSV's columns */
	groups(x, m, v->flow, bytes);
}

static double num(const struct eb_rec *r, const char *key)
{
	const struct eb_field *f = eb_rec_field(r, key);

	return f != NULL && f->kind == EB_V_NUM ? f->d : 0.0;
}

void eb_sweep_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		     struct eb_rec *r)
{
	eb_sweep_record_own(c, m, s, r, NULL);
}

void eb_sweep_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	eb_sweep_facts_own(c, s, NULL);
}

void eb_sweep_row(const struct eb_ctx *c, struct eb_sheet *s, const struct eb_rec *const *recs,
		  int n)
{
	const struct eb_sweep *w = c->sweep;
	int v;

	/* Each variant's Gbps over its reference's, at the same size. */
	for (v = 0; v < w->nvars && v < n; v++) {
		struct eb_rec *x = (struct eb_rec *)recs[v];
		double ref;

		if (w->ref[v] < 0)
			continue;
		ref = num(recs[w->ref[v]], "gbps");
		eb_rec_str(x, "ratio_to", w->vars[w->ref[v]]->name[w->sel]);
		eb_rec_num(x, "ratio", ref > 0 ? num(x, "gbps") / ref : 0.0);
	}
	eb_sheet_pivot_row(s, recs);
}

/* Rank 0, after the last size: each marked cell's mean, median and slowest iteration, and
 * the Gbps the median gives, so that one stall cannot pass for the link's speed; then each
 * variant's Gbps over its reference's. */
int eb_sweep_notes(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct eb_sweep *w = c->sweep;
	static const struct eb_colspec lead[] = {{"Size", "size_shown", 5, 0, 0, NULL}};
	static const struct eb_colspec each[] = {{NULL, "ratio", 8, 3, 0, NULL}};
	const struct eb_rec *row[EB_MAX_VARIANTS];
	char heads[EB_MAX_VARIANTS][40];
	const char *names[EB_MAX_VARIANTS];
	int i, v, n = 0, any = 0;

	for (i = 0; i < s->doc.nres; i++) {
		const struct eb_rec *r = &s->doc.res[i];
		const struct eb_field *k = eb_rec_field(r, "skewed");

		if (k == NULL || !k->i)
			continue;
		if (!any++) {
			eb_sheet_say(s, NULL);
			eb_sheet_say(s,
				     "! the mean time a Gbps comes from is over %.1fx the median: "
				     "a few slow iterations (stalls) moved it",
				     SKEW);
		}
		eb_sheet_say(s,
			     "! %s %s: mean %.2f us, p50 %.2f us, max %.2f us over %lld "
			     "iterations; the p50 gives %.2f Gbps",
			     eb_rec_field(r, "variant")->s, eb_rec_field(r, "size_shown")->s,
			     num(r, "lat_us"), num(r, "p50_us"), num(r, "max_us"),
			     eb_rec_field(r, "samples")->i,
			     gbps_of(num(r, "bytes_per_iter"), num(r, "p50_us") * 1e-6));
	}
	for (v = 0; v < w->nvars; v++) {
		if (w->ref[v] < 0)
			continue;
		snprintf(heads[n], sizeof(heads[n]), "%s/%s", w->vars[v]->name[w->sel],
			 w->vars[w->ref[v]]->name[w->sel]);
		names[n] = heads[n];
		n++;
	}
	if (n == 0)
		return EB_OK;
	eb_sheet_say(s, NULL);
	eb_sheet_say(s, "Gbps of each variant over its reference's, same size");
	eb_sheet_pivot(
	    s,
	    &(struct eb_pivot){
		.lead = lead, .nlead = 1, .each = each, .neach = 1, .groups = names, .ngroups = n});
	for (i = 0; i + w->nvars <= s->doc.nres; i += w->nvars) {
		for (v = 0, n = 0; v < w->nvars; v++)
			if (w->ref[v] >= 0)
				row[n++] = &s->doc.res[i + v];
		eb_sheet_pivot_row(s, row);
	}
	return EB_OK;
}
