/* Rank 0's output: the seeds' table on stdout, and CSV / JSON files with every statistic. */
#include "harness.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "../core/json.h"
#include "../core/log.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>

static void cell_busbw(char *buf, size_t len, double busbw)
{
	if (busbw < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", busbw);
}

static const char *flow_name(enum eb_flow p)
{
	return p == EB_FLOW_PAIRS ? "pairs" : p == EB_FLOW_FANOUT ? "fanout" : "all-to-all";
}

void eb_report_header(const struct eb_report *r)
{
	const struct eb_opts *o = r->o;
	const struct eb_engine *e = r->e;
	char chunk[24], link[64];
	int v, c;

	if (r->link_gbps > 0)
		snprintf(link, sizeof(link), "%.1f Gbps per NIC", r->link_gbps);
	else
		snprintf(link, sizeof(link), "unknown (BusBW shows -; set --link-gbps)");
	printf("# efabench %s: %s\n", r->b->name, r->b->summary);
	printf("# ranks: %d (%s launcher)  provider: %s  link: %s\n", r->nranks, r->launcher,
	       e->prov, link);
	printf("# channels: %d on NICs:", e->nchan);
	for (c = 0; c < e->nchan; c++)
		printf(" %s", e->chan[c].nic.domain);
	printf("  NICs used:");
	for (v = 0; v < r->nvars; v++)
		printf(" %s %d", r->vars[v]->name, eb_variant_nics(e, r->vars[v], r->nranks));
	printf("\n# warmup: %ld  iters: %ld  chunk: %s  window: %d  check every iteration: %s  "
	       "timeout: %.0f s\n",
	       o->warmup, o->iters, eb_size_format(r->chunk, chunk, sizeof(chunk)), r->window,
	       o->check ? "yes" : "no", o->fab.timeout_s);
	printf("# %s\n", r->b->metric);
	printf("# BusBW (%%) = 100*Gbps/(link Gbps * NICs used); Lat (us) = t*1e6; "
	       "#wrong = wrong 8-byte words\n");
	printf("#\n|  Size |     Count |");
	for (v = 0; v < r->nvars; v++)
		printf(" %10s | BusBW (%%) |  Lat (us) |", r->vars[v]->name);
	printf(" #wrong |\n|------:|----------:|");
	for (v = 0; v < r->nvars; v++)
		printf("-----------:|----------:|----------:|");
	printf("-------:|\n");
	fflush(stdout);
}

void eb_report_row(const struct eb_report *r, int s)
{
	const struct eb_result *res = &r->res[s * r->nvars];
	uint64_t wrong = 0;
	char size[24], busbw[16];
	int v;

	printf("| %5s | %9llu |", eb_size_format(res[0].size, size, sizeof(size)),
	       (unsigned long long)(res[0].size / 4));
	for (v = 0; v < r->nvars; v++) {
		cell_busbw(busbw, sizeof(busbw), res[v].busbw);
		printf(" %10.2f | %9s | %9.2f |", res[v].gbps, busbw, res[v].t_s * 1e6);
		wrong += res[v].wrong;
	}
	printf(" %6llu |\n", (unsigned long long)wrong);
	fflush(stdout);
}

void eb_report_footer(const struct eb_report *r, uint64_t wrong)
{
	(void)r;
	printf("#\n# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
	       wrong ? "FAILED" : "OK");
	fflush(stdout);
}

FILE *eb_report_open(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		eb_err("cannot write %s: %s", path, strerror(errno));
	return f;
}

int eb_report_close(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad) {
		eb_err("writing %s failed", path);
		return EB_ESYS;
	}
	return EB_OK;
}

int eb_report_csv(const struct eb_report *r, const char *path)
{
	const struct eb_opts *o = r->o;
	FILE *f = eb_report_open(path);
	int i, n = o->nsizes * r->nvars;

	if (f == NULL)
		return EB_ESYS;
	fprintf(f, "bench,variant,layout,pattern,size,count,ranks,provider,channels,nics_used,"
		   "link_gbps,warmup,iters,chunk,window,gbps,busbw_pct,lat_us,min_us,p50_us,p99_us,"
		   "max_us,stddev_us,wrong\n");
	for (i = 0; i < n; i++) {
		const struct eb_result *x = &r->res[i];

		fprintf(f, "%s,%s,%s,%s,%llu,%llu,%d,%s,%d,%d,", r->b->name, x->var->name,
			eb_layout_name(x->var->layout), flow_name(x->var->flow),
			(unsigned long long)x->size, (unsigned long long)(x->size / 4), r->nranks,
			r->e->prov, r->e->nchan, x->nics);
		if (r->link_gbps > 0)
			fprintf(f, "%.3f", r->link_gbps);
		fprintf(f, ",%ld,%ld,%llu,%d,%.4f,", o->warmup, o->iters,
			(unsigned long long)r->chunk, r->window, x->gbps);
		if (x->busbw >= 0)
			fprintf(f, "%.3f", x->busbw);
		fprintf(f, ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%llu\n", x->t_s * 1e6, x->all.min * 1e6,
			x->all.p50 * 1e6, x->all.p99 * 1e6, x->all.max * 1e6, x->all.stddev * 1e6,
			(unsigned long long)x->wrong);
	}
	return eb_report_close(f, path);
}

static void json_settings(struct eb_json *j, const struct eb_report *r)
{
	const struct eb_opts *o = r->o;
	char ver[32];
	int c;

	eb_json_obj_begin(j, "settings");
	eb_json_str(j, "bench", r->b->name);
	eb_json_int(j, "ranks", r->nranks);
	eb_json_str(j, "launcher", r->launcher);
	eb_json_str(j, "provider", r->e->prov);
	eb_json_arr_begin(j, "channel_nics");
	for (c = 0; c < r->e->nchan; c++)
		eb_json_str(j, NULL, r->e->chan[c].nic.domain);
	eb_json_arr_end(j);
	if (r->link_gbps > 0)
		eb_json_num(j, "link_gbps", r->link_gbps);
	else
		eb_json_null(j, "link_gbps");
	eb_json_int(j, "warmup", o->warmup);
	eb_json_int(j, "iters", o->iters);
	eb_json_int(j, "chunk", (long long)r->chunk);
	eb_json_int(j, "window", r->window);
	eb_json_bool(j, "check", o->check);
	eb_json_num(j, "timeout_s", o->fab.timeout_s);
	snprintf(ver, sizeof(ver), "%u.%u", FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	eb_json_str(j, "libfabric", ver);
	eb_json_obj_end(j);
}

static void json_stats(struct eb_json *j, const struct eb_stats *s)
{
	eb_json_num(j, "lat_us", s->mean * 1e6);
	eb_json_num(j, "min_us", s->min * 1e6);
	eb_json_num(j, "p50_us", s->p50 * 1e6);
	eb_json_num(j, "p99_us", s->p99 * 1e6);
	eb_json_num(j, "max_us", s->max * 1e6);
	eb_json_num(j, "stddev_us", s->stddev * 1e6);
}

/* nccl-tests' alltoall figures, for comparison: its size is the whole send buffer of a rank
 * (S per rank, self included), algbw = size / t, busbw = algbw * (N - 1) / N, in GB/s. */
static void json_nccl(struct eb_json *j, const struct eb_result *x, int n)
{
	double size = (double)x->size * n, algbw = x->t_s > 0 ? size / x->t_s / 1e9 : 0.0;

	eb_json_obj_begin(j, "nccl_tests");
	eb_json_num(j, "size", size);
	eb_json_num(j, "time_us", x->t_s * 1e6);
	eb_json_num(j, "algbw_GBps", algbw);
	eb_json_num(j, "busbw_GBps", algbw * (n - 1) / n);
	eb_json_obj_end(j);
}

int eb_report_json(const struct eb_report *r, const char *path)
{
	FILE *f = eb_report_open(path);
	struct eb_json j;
	int i, g, n = r->o->nsizes * r->nvars;

	if (f == NULL)
		return EB_ESYS;
	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "efabench", EB_VERSION_STRING);
	eb_json_str(&j, "metric", r->b->metric);
	json_settings(&j, r);
	eb_json_arr_begin(&j, "results");
	for (i = 0; i < n; i++) {
		const struct eb_result *x = &r->res[i];

		eb_json_obj_begin(&j, NULL);
		eb_json_str(&j, "bench", r->b->name);
		eb_json_str(&j, "variant", x->var->name);
		eb_json_str(&j, "layout", eb_layout_name(x->var->layout));
		eb_json_str(&j, "flow", flow_name(x->var->flow));
		eb_json_int(&j, "size", (long long)x->size);
		eb_json_int(&j, "count", (long long)(x->size / 4));
		eb_json_num(&j, "bytes_per_iter", eb_variant_bytes(x->var, x->size, r->nranks));
		eb_json_num(&j, "gbps", x->gbps);
		eb_json_int(&j, "nics_used", x->nics);
		if (x->busbw >= 0)
			eb_json_num(&j, "busbw_pct", x->busbw);
		else
			eb_json_null(&j, "busbw_pct");
		json_stats(&j, &x->all);
		eb_json_int(&j, "samples", (long long)x->all.n);
		eb_json_int(&j, "wrong", (long long)x->wrong);
		if (x->var->flow == EB_FLOW_ALL)
			json_nccl(&j, x, r->nranks);
		json_settings(&j, r);
		eb_json_arr_begin(&j, "groups");
		for (g = 0; g < x->ngroups; g++) {
			const struct eb_stats *p = &x->groups[g];
			double bytes = eb_variant_bytes(x->var, x->size, r->nranks);

			eb_json_obj_begin(&j, NULL);
			/* PAIRS: rank 0 -> g + 1; FANOUT: rank 0 -> all; ALL: rank g -> all. */
			eb_json_int(&j, "rank", x->var->flow == EB_FLOW_ALL ? g : 0);
			if (x->var->flow == EB_FLOW_PAIRS)
				eb_json_int(&j, "peer", g + 1);
			else
				eb_json_str(&j, "peer", "all");
			eb_json_num(&j, "gbps", p->mean > 0 ? 8.0 * bytes / p->mean / 1e9 : 0.0);
			json_stats(&j, p);
			eb_json_obj_end(&j);
		}
		eb_json_arr_end(&j);
		eb_json_obj_end(&j);
	}
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	return eb_report_close(f, path);
}
