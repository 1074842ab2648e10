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

#define EB_VERSION_STRING "0.1.0"

static void cell_busbw(char *buf, size_t len, double busbw)
{
	if (busbw < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", busbw);
}

void eb_report_header(const struct eb_report *r)
{
	const struct eb_opts *o = r->o;
	const struct eb_bench *b = r->b;
	char chunk[24], link[64];
	int v;

	if (r->link_gbps > 0)
		snprintf(link, sizeof(link), "%.1f Gbps", r->link_gbps);
	else
		snprintf(link, sizeof(link), "unknown (BusBW shows -; set --link-gbps)");
	printf("# efabench %s: %s\n", b->name, b->summary);
	printf("# ranks: %d (%s launcher)  provider: %s  NIC: %s  link: %s  channels used: %d\n",
	       r->nranks, r->launcher, r->e->prov, r->e->chan[0].nic.domain, link, r->channels);
	printf("# warmup: %ld  iters: %ld  chunk: %s  window: %d  check every iteration: %s  "
	       "timeout: %.0f s\n",
	       o->warmup, o->iters, eb_size_format(r->chunk, chunk, sizeof(chunk)), r->window,
	       o->check ? "yes" : "no", o->fab.timeout_s);
	printf("# %s\n", b->metric);
	printf("# Gbps = 8*Size/t/1e9; BusBW (%%) = 100*Gbps/(link Gbps * channels used); "
	       "Lat (us) = t*1e6; #wrong = wrong 8-byte words\n");
	printf("#\n|  Size |     Count |");
	for (v = 0; v < b->nvariants; v++)
		printf(" %10s | BusBW (%%) | Lat (us) |", b->variants[v]);
	printf(" #wrong |\n|------:|----------:|");
	for (v = 0; v < b->nvariants; v++)
		printf("-----------:|----------:|---------:|");
	printf("-------:|\n");
	fflush(stdout);
}

void eb_report_row(const struct eb_report *r, int s)
{
	const struct eb_result *res = &r->res[s * r->b->nvariants];
	uint64_t wrong = 0;
	char size[24], busbw[16];
	int v;

	printf("| %5s | %9llu |", eb_size_format(res[0].size, size, sizeof(size)),
	       (unsigned long long)(res[0].size / 4));
	for (v = 0; v < r->b->nvariants; v++) {
		cell_busbw(busbw, sizeof(busbw), res[v].busbw);
		printf(" %10.2f | %9s | %8.2f |", res[v].gbps, busbw, res[v].t_s * 1e6);
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

static FILE *open_out(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		eb_err("cannot write %s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
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
	FILE *f = open_out(path);
	int i, n = o->nsizes * r->b->nvariants;

	if (f == NULL)
		return EB_ESYS;
	fprintf(f, "bench,variant,size,count,ranks,provider,channels,link_gbps,warmup,iters,chunk,"
		   "window,gbps,busbw_pct,lat_us,min_us,p50_us,p99_us,max_us,stddev_us,wrong\n");
	for (i = 0; i < n; i++) {
		const struct eb_result *x = &r->res[i];

		fprintf(f, "%s,%s,%llu,%llu,%d,%s,%d,", r->b->name, r->b->variants[x->variant],
			(unsigned long long)x->size, (unsigned long long)(x->size / 4), r->nranks,
			r->e->prov, r->channels);
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
	return close_out(f, path);
}

static void json_settings(struct eb_json *j, const struct eb_report *r)
{
	const struct eb_opts *o = r->o;
	char ver[32];

	eb_json_obj_begin(j, "settings");
	eb_json_str(j, "bench", r->b->name);
	eb_json_int(j, "ranks", r->nranks);
	eb_json_str(j, "launcher", r->launcher);
	eb_json_str(j, "provider", r->e->prov);
	eb_json_str(j, "nic", r->e->chan[0].nic.domain);
	eb_json_int(j, "channels", r->channels);
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

int eb_report_json(const struct eb_report *r, const char *path)
{
	FILE *f = open_out(path);
	struct eb_json j;
	int i, k, n = r->o->nsizes * r->b->nvariants;

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
		eb_json_str(&j, "variant", r->b->variants[x->variant]);
		eb_json_int(&j, "size", (long long)x->size);
		eb_json_int(&j, "count", (long long)(x->size / 4));
		eb_json_num(&j, "gbps", x->gbps);
		if (x->busbw >= 0)
			eb_json_num(&j, "busbw_pct", x->busbw);
		else
			eb_json_null(&j, "busbw_pct");
		json_stats(&j, &x->all);
		eb_json_int(&j, "samples", (long long)x->all.n);
		eb_json_int(&j, "wrong", (long long)x->wrong);
		json_settings(&j, r);
		eb_json_arr_begin(&j, "pairs");
		for (k = 1; k < r->nranks; k++) {
			const struct eb_stats *p = &x->pairs[k - 1];

			eb_json_obj_begin(&j, NULL);
			eb_json_int(&j, "src", 0);
			eb_json_int(&j, "dst", k);
			eb_json_num(&j, "gbps",
				    p->mean > 0 ? 8.0 * (double)x->size / p->mean / 1e9 : 0.0);
			json_stats(&j, p);
			eb_json_obj_end(&j);
		}
		eb_json_arr_end(&j);
		eb_json_obj_end(&j);
	}
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	return close_out(f, path);
}
