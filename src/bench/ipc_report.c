/* efabench ipc output: the summary table per direction (seed shape: Size, Count, then the
 * copy engine and the best kernel), the full sweep per direction, CSV and JSON. */
#include "ipc_report.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "../core/json.h"

#include <stdio.h>

static const char *const pairs_name[] = {"first", "each", "all"};
static const char *const method_name[] = {"ce", "st", "tma"};

static void pct(char *buf, size_t len, double num, double den)
{
	if (den > 0 && num > 0)
		snprintf(buf, len, "%.1f", 100.0 * num / den);
	else
		snprintf(buf, len, "-");
}

void eb_ipc_print_header(const struct eb_ireport *r)
{
	const struct eb_iopts *io = r->io;

	printf("# efabench ipc: %d ranks, one GPU each (%s, %d SMs), launcher %s; pairs %s "
	       "(%s)\n",
	       r->nranks, r->gpu_name, r->sms, r->launcher, pairs_name[io->pairs],
	       io->pairs == EB_IPC_FIRST  ? "GPU 0 -> GPU 1"
	       : io->pairs == EB_IPC_EACH ? "every ordered pair, one at a time, averaged"
					  : "every GPU to every other at once, per GPU");
	if (r->peak_gbs > 0 && r->links > 0)
		printf(
		    "# NVLink peak per GPU per direction: %.1f GB/s = %.0f Gbps (NVML: %d active "
		    "links x %.3f GB/s)\n",
		    r->peak_gbs, r->peak_gbs * 8, r->links, r->link_gbs);
	else if (r->peak_gbs > 0)
		printf("# NVLink peak per GPU per direction: %.1f GB/s (from --link-gbps)\n",
		       r->peak_gbs);
	else
		printf("# NVLink peak unknown (no NVML link speeds): NVL%% shows '-'; give "
		       "--link-gbps\n");
	printf("# launch floor: %.2f us per launch (empty kernels timed as the copies are)\n",
	       r->floor_us);
	printf("# copy engine: %s; st GxB: G blocks of B threads, 16-byte loads and stores, "
	       "grid-stride;\n# tma G: G blocks, one thread each streaming %llu-byte bulk "
	       "copies through %d shared-memory buffers\n",
	       r->ce_api, (unsigned long long)io->tma_chunk, io->tma_stages);
	printf("# t = mean seconds per copy on the initiating GPU: CUDA events between "
	       "back-to-back launches, queued behind a gate\n"
	       "# GB/s = bytes moved per copy / t / 1e9; Gbps = 8 x GB/s; NVL%% = of the "
	       "NVLink peak; %%CE = of the copy engine, same size\n"
	       "# Best = the fastest kernel shape of the sweep, measured again right after a "
	       "fresh CE run; #wrong counts every measurement\n");
	fflush(stdout);
}

void eb_ipc_print_dir(const struct eb_ireport *r, int dir)
{
	printf("#\n## %s: %s\n", eb_ipc_dir_name(dir),
	       dir == EB_IPC_WRITE ? "the initiating GPU stores into the peer's memory"
				   : "the initiating GPU loads the peer's memory into its own");
	printf("| %9s | %11s | %8s | %8s | %6s | %9s | %-11s | %8s | %8s | %6s | %6s | %9s | "
	       "%6s |\n",
	       "Size", "Count", "CE GB/s", "CE Gbps", "NVL%", "CE us", "Best", "GB/s", "Gbps",
	       "NVL%", "%CE", "us", "#wrong");
	printf("|----------:|------------:|---------:|---------:|-------:|----------:|:---------"
	       "---|---------:|---------:|-------:|-------:|----------:|-------:|\n");
	fflush(stdout);
}

void eb_ipc_print_row(const struct eb_ireport *r, int dir, int si)
{
	const struct eb_isum *s = eb_ireport_sum(r, dir, si);
	const struct eb_imeas *ce = &s->ce, *best = &s->best;
	char size[24], nvl_ce[16], nvl_b[16], of_ce[16];
	uint64_t bad = s->ce.wrong + s->best.wrong;
	int sh;

	for (sh = 0; sh < r->nshapes; sh++)
		bad += eb_ireport_sweep(r, dir, si, sh)->wrong;
	eb_size_format(r->o->sizes[si], size, sizeof(size));
	pct(nvl_ce, sizeof(nvl_ce), ce->gbs, r->peak_gbs);
	pct(nvl_b, sizeof(nvl_b), best->gbs, r->peak_gbs);
	pct(of_ce, sizeof(of_ce), best->gbs, ce->gbs);
	printf("| %9s | %11llu |", size, (unsigned long long)(r->o->sizes[si] / 4));
	if (ce->valid)
		printf(" %8.1f | %8.1f | %6s | %9.2f |", ce->gbs, ce->gbs * 8, nvl_ce, ce->t * 1e6);
	else
		printf(" %8s | %8s | %6s | %9s |", "-", "-", "-", "-");
	if (best->valid)
		printf(" %-11s | %8.1f | %8.1f | %6s | %6s | %9.2f |",
		       r->shapes[s->best_shape].name, best->gbs, best->gbs * 8, nvl_b, of_ce,
		       best->t * 1e6);
	else
		printf(" %-11s | %8s | %8s | %6s | %6s | %9s |", "-", "-", "-", "-", "-", "-");
	printf(" %6llu |\n", (unsigned long long)bad);
	fflush(stdout);
}

void eb_ipc_print_sweep(const struct eb_ireport *r, int dir)
{
	int si, sh;

	printf("#\n## %s sweep: GB/s per launch shape and size (%%CE in JSON and CSV)\n",
	       eb_ipc_dir_name(dir));
	printf("| %-11s |", "Shape");
	for (si = 0; si < r->o->nsizes; si++) {
		char size[24];

		printf(" %8s |", eb_size_format(r->o->sizes[si], size, sizeof(size)));
	}
	printf("\n|:------------|");
	for (si = 0; si < r->o->nsizes; si++)
		printf("---------:|");
	printf("\n");
	for (sh = 0; sh < r->nshapes; sh++) {
		printf("| %-11s |", r->shapes[sh].name);
		for (si = 0; si < r->o->nsizes; si++)
			printf(" %8.1f |", eb_ireport_sweep(r, dir, si, sh)->gbs);
		printf("\n");
	}
	fflush(stdout);
}

void eb_ipc_print_footer(uint64_t wrong)
{
	printf("#\n# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
	       wrong ? "FAILED" : "OK");
	fflush(stdout);
}

/* The copy engine's figure for a (direction, size): the sweep's CE for sweep rows. */
static double ce_gbs(const struct eb_ireport *r, int dir, int si)
{
	int sh;

	for (sh = 0; sh < r->nshapes; sh++)
		if (r->shapes[sh].method == 0)
			return eb_ireport_sweep(r, dir, si, sh)->gbs;
	return 0;
}

struct row {
	int dir, si;
	const char *kind; /* sweep, ce, best */
	const struct eb_ishape *shape;
	const struct eb_imeas *m;
	double ce_gbs;
};

/* Calls fn for every measurement, in output order. */
static int each_row(const struct eb_ireport *r,
		    int (*fn)(const struct eb_ireport *, const struct row *, void *), void *arg)
{
	int dir, si, sh, rc = EB_OK;

	for (dir = 0; dir < EB_IPC_NDIRS; dir++) {
		if (!(r->io->dirs & (1u << dir)))
			continue;
		for (si = 0; si < r->o->nsizes; si++) {
			const struct eb_isum *s = eb_ireport_sum(r, dir, si);
			struct row x = {.dir = dir, .si = si};

			for (sh = 0; sh < r->nshapes && rc == EB_OK; sh++) {
				x.kind = "sweep";
				x.shape = &r->shapes[sh];
				x.m = eb_ireport_sweep(r, dir, si, sh);
				x.ce_gbs = ce_gbs(r, dir, si);
				rc = fn(r, &x, arg);
			}
			if (rc == EB_OK && s->ce.valid) {
				x.kind = "ce";
				x.shape = &r->shapes[0];
				x.m = &s->ce;
				x.ce_gbs = s->ce.gbs;
				rc = fn(r, &x, arg);
			}
			if (rc == EB_OK && s->best.valid) {
				x.kind = "best";
				x.shape = &r->shapes[s->best_shape];
				x.m = &s->best;
				x.ce_gbs = s->ce.valid ? s->ce.gbs : 0;
				rc = fn(r, &x, arg);
			}
		}
	}
	return rc;
}

static int csv_row(const struct eb_ireport *r, const struct row *x, void *arg)
{
	FILE *f = arg;
	uint64_t size = r->o->sizes[x->si];

	fprintf(f, "ipc,%s,%s,%s,%s,%d,%d,%llu,%llu,%.9g,%.6g,%.6g,", eb_ipc_dir_name(x->dir),
		x->kind, method_name[x->shape->method], x->shape->name, x->shape->grid,
		x->shape->block, (unsigned long long)size, (unsigned long long)(size / 4), x->m->t,
		x->m->gbs, x->m->gbs * 8);
	if (r->peak_gbs > 0)
		fprintf(f, "%.4g", 100 * x->m->gbs / r->peak_gbs);
	fprintf(f, ",");
	if (x->ce_gbs > 0)
		fprintf(f, "%.4g", 100 * x->m->gbs / x->ce_gbs);
	fprintf(f, ",%llu\n", (unsigned long long)x->m->wrong);
	return EB_OK;
}

int eb_ipc_csv(const struct eb_ireport *r, const char *path)
{
	FILE *f = eb_report_open(path);

	if (f == NULL)
		return EB_ESYS;
	fprintf(f, "bench,dir,kind,method,shape,grid,block,size,count,t_s,gbytes_per_s,gbps,"
		   "nvl_pct,ce_pct,wrong\n");
	each_row(r, csv_row, f);
	return eb_report_close(f, path);
}

static int json_row(const struct eb_ireport *r, const struct row *x, void *arg)
{
	struct eb_json *j = arg;
	int g;

	eb_json_obj_begin(j, NULL);
	eb_json_str(j, "dir", eb_ipc_dir_name(x->dir));
	eb_json_str(j, "kind", x->kind);
	eb_json_str(j, "method", method_name[x->shape->method]);
	eb_json_str(j, "shape", x->shape->name);
	eb_json_int(j, "grid", x->shape->grid);
	eb_json_int(j, "block", x->shape->block);
	eb_json_int(j, "size", (long long)r->o->sizes[x->si]);
	eb_json_num(j, "bytes_per_copy", x->m->bytes);
	eb_json_num(j, "t_s", x->m->t);
	eb_json_num(j, "gbytes_per_s", x->m->gbs);
	eb_json_num(j, "gbps", x->m->gbs * 8);
	if (r->peak_gbs > 0)
		eb_json_num(j, "nvl_pct", 100 * x->m->gbs / r->peak_gbs);
	else
		eb_json_null(j, "nvl_pct");
	if (x->ce_gbs > 0)
		eb_json_num(j, "ce_pct", 100 * x->m->gbs / x->ce_gbs);
	else
		eb_json_null(j, "ce_pct");
	eb_json_int(j, "wrong", (long long)x->m->wrong);
	eb_json_arr_begin(j, "groups");
	for (g = 0; g < x->m->ngroups; g++) {
		const struct eb_igroup *gr = &x->m->groups[g];

		eb_json_obj_begin(j, NULL);
		eb_json_int(j, "initiator", gr->initiator);
		eb_json_int(j, "peer", gr->peer);
		eb_json_int(j, "samples", (long long)gr->st.n);
		eb_json_num(j, "mean_s", gr->st.mean);
		eb_json_num(j, "min_s", gr->st.min);
		eb_json_num(j, "p50_s", gr->st.p50);
		eb_json_num(j, "p99_s", gr->st.p99);
		eb_json_num(j, "max_s", gr->st.max);
		eb_json_num(j, "stddev_s", gr->st.stddev);
		eb_json_obj_end(j);
	}
	eb_json_arr_end(j);
	eb_json_obj_end(j);
	return EB_OK;
}

int eb_ipc_json(const struct eb_ireport *r, const char *path)
{
	FILE *f = eb_report_open(path);
	struct eb_json j;

	if (f == NULL)
		return EB_ESYS;
	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "bench", "ipc");
	eb_json_str(&j, "launcher", r->launcher);
	eb_json_int(&j, "ranks", r->nranks);
	eb_json_str(&j, "pairs", pairs_name[r->io->pairs]);
	eb_json_str(&j, "gpu", r->gpu_name);
	eb_json_int(&j, "sms", r->sms);
	eb_json_obj_begin(&j, "nvlink");
	eb_json_int(&j, "links", r->links);
	eb_json_num(&j, "link_gbytes_per_s", r->link_gbs);
	if (r->peak_gbs > 0)
		eb_json_num(&j, "peak_gbytes_per_s", r->peak_gbs);
	else
		eb_json_null(&j, "peak_gbytes_per_s");
	if (r->peak_from != NULL)
		eb_json_str(&j, "from", r->peak_from);
	else
		eb_json_null(&j, "from");
	eb_json_obj_end(&j);
	eb_json_num(&j, "launch_floor_us", r->floor_us);
	eb_json_str(&j, "ce_api", r->ce_api);
	eb_json_int(&j, "tma_chunk", (long long)r->io->tma_chunk);
	eb_json_int(&j, "tma_stages", r->io->tma_stages);
	eb_json_int(&j, "warmup", r->o->warmup);
	eb_json_int(&j, "iters", r->o->iters);
	eb_json_bool(&j, "check_every_iteration", r->o->check);
	eb_json_arr_begin(&j, "results");
	each_row(r, json_row, &j);
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	fputc('\n', f);
	return eb_report_close(f, path);
}
