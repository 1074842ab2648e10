/* efabench ipc output: the summary table per direction (seed shape: Size, Count, then the
 * copy engine and the best kernel), the full sweep per direction, and a record per
 * measurement for the CSV and JSON files. */
#include "ipc_view.h"
#include "doc.h"
#include "efabench/size.h"
#include "efabench/status.h"

#include <stdio.h>

static const char *const pairs_name[] = {"first", "each", "all"};
static const char *const method_name[] = {"ce", "st", "tma"};

const char *ipc_dir_name(int dir)
{
	return dir == IPC_WRITE ? "write" : "read";
}

void ipc_print_header(const struct ipc_report *r)
{
	printf("# efabench ipc: %d ranks, one GPU each (%s, %d SMs), launcher %s; pairs %s "
	       "(%s)\n",
	       r->nranks, r->gpu_name, r->sms, r->launcher, pairs_name[r->pairs],
	       r->pairs == IPC_FIRST  ? "GPU 0 -> GPU 1"
	       : r->pairs == IPC_EACH ? "every ordered pair, one at a time, averaged"
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
	       r->ce_api, (unsigned long long)r->tma_chunk, r->tma_stages);
	printf("# t = mean seconds per copy on the initiating GPU: CUDA events between "
	       "back-to-back launches, %s\n"
	       "# GB/s = bytes moved per copy / t / 1e9; Gbps = 8 x GB/s; NVL%% = of the "
	       "NVLink peak; %%CE = of the copy engine, same size\n"
	       "# Best = the fastest kernel shape of the sweep, measured again right after a "
	       "fresh CE run; #wrong counts every measurement\n",
	       r->no_gate ? "queued without a gate (--no-gate: launch cost included)"
			  : "queued behind a gate");
	fflush(stdout);
}

void ipc_print_dir(struct ipc_report *r, int dir)
{
	static const char *const heads[] = {"CE GB/s", "CE Gbps", "NVL%", "CE us", "Best",
					    "GB/s",    "Gbps",	  "NVL%", "%CE",   "us"};
	static const int widths[] = {8, 8, 6, 9, 11, 8, 8, 6, 6, 9};
	int c;

	printf("#\n## %s: %s\n", ipc_dir_name(dir),
	       dir == IPC_WRITE ? "the initiating GPU stores into the peer's memory"
				: "the initiating GPU loads the peer's memory into its own");
	r->table.ncols = 0;
	eb_table_col(&r->table, "Size", 9, 0);
	eb_table_col(&r->table, "Count", 11, 0);
	for (c = 0; c < 10; c++)
		eb_table_col(&r->table, heads[c], widths[c], c == 4);
	eb_table_col(&r->table, "#wrong", 6, 0);
	eb_table_head(&r->table);
}

/* GB/s, Gbps, NVL% (and %CE for kernels) and us of one measurement, or dashes. */
static void meas_cells(struct ipc_report *r, const struct ipc_meas *m, const struct ipc_meas *ce)
{
	int n = ce != NULL ? 5 : 4;

	if (!m->valid) {
		while (n-- > 0)
			eb_table_cell(&r->table, "-");
		return;
	}
	eb_table_cell(&r->table, "%.1f", m->gbs);
	eb_table_cell(&r->table, "%.1f", m->gbs * 8);
	eb_table_pct(&r->table, m->gbs, r->peak_gbs);
	if (ce != NULL)
		eb_table_pct(&r->table, m->gbs, ce->valid ? ce->gbs : 0);
	eb_table_cell(&r->table, "%.2f", m->t * 1e6);
}

void ipc_print_row(struct ipc_report *r, int dir, int si)
{
	const struct ipc_sum *s = ipc_sum_at(r, dir, si);
	uint64_t bad = s->ce.wrong + s->best.wrong;
	int sh;

	for (sh = 0; sh < r->nshapes; sh++)
		bad += ipc_sweep_at(r, dir, si, sh)->wrong;
	eb_table_size(&r->table, r->sizes[si]);
	meas_cells(r, &s->ce, NULL);
	eb_table_cell(&r->table, "%s", s->best.valid ? r->shapes[s->best_shape].name : "-");
	meas_cells(r, &s->best, &s->ce);
	eb_table_cell(&r->table, "%llu", (unsigned long long)bad);
	eb_table_row(&r->table);
}

static void print_sweep(struct ipc_report *r, int dir)
{
	char size[24];
	int si, sh;

	printf("#\n## %s sweep: GB/s per launch shape and size (%%CE in JSON and CSV)\n",
	       ipc_dir_name(dir));
	r->table.ncols = 0;
	eb_table_col(&r->table, "Shape", 11, 1);
	for (si = 0; si < r->nsizes; si++)
		eb_table_col(&r->table, eb_size_format(r->sizes[si], size, sizeof(size)), 8, 0);
	eb_table_head(&r->table);
	for (sh = 0; sh < r->nshapes; sh++) {
		eb_table_cell(&r->table, "%s", r->shapes[sh].name);
		for (si = 0; si < r->nsizes; si++)
			eb_table_cell(&r->table, "%.1f", ipc_sweep_at(r, dir, si, sh)->gbs);
		eb_table_row(&r->table);
	}
}

/* The copy engine's figure for a (direction, size): the sweep's CE for sweep rows. */
static double ce_gbs(const struct ipc_report *r, int dir, int si)
{
	int sh;

	for (sh = 0; sh < r->nshapes; sh++)
		if (r->shapes[sh].method == IPC_CE)
			return ipc_sweep_at(r, dir, si, sh)->gbs;
	return 0;
}

static void record(struct eb_doc *d, const struct ipc_report *r, int dir, int si, const char *kind,
		   const struct ipc_shape *shape, const struct ipc_meas *m, double ce)
{
	struct eb_rec *x = eb_doc_add(d);
	uint64_t size = r->sizes[si];
	int g;

	if (x == NULL)
		return;
	eb_rec_str(x, "bench", "ipc");
	eb_rec_to(x, EB_NOT_JSON);
	eb_rec_str(x, "dir", ipc_dir_name(dir));
	eb_rec_str(x, "kind", kind);
	eb_rec_str(x, "method", method_name[shape->method]);
	eb_rec_str(x, "shape", shape->name);
	eb_rec_int(x, "grid", shape->grid);
	eb_rec_int(x, "block", shape->block);
	eb_rec_int(x, "size", (long long)size);
	eb_rec_int(x, "count", (long long)(size / 4));
	eb_rec_to(x, EB_NOT_JSON);
	eb_rec_num(x, "bytes_per_copy", m->bytes);
	eb_rec_num(x, "t_s", m->t);
	eb_rec_num(x, "gbytes_per_s", m->gbs);
	eb_rec_num(x, "gbps", m->gbs * 8);
	eb_rec_num_or_null(x, "nvl_pct", 100 * m->gbs / r->peak_gbs, r->peak_gbs > 0);
	eb_rec_num_or_null(x, "ce_pct", 100 * m->gbs / ce, ce > 0);
	eb_rec_int(x, "wrong", (long long)m->wrong);
	eb_rec_items(x, "groups");
	for (g = 0; g < m->ngroups; g++) {
		struct eb_rec *y = eb_rec_item(x, "groups");

		if (y == NULL)
			return;
		eb_rec_int(y, "initiator", m->groups[g].initiator);
		eb_rec_int(y, "peer", m->groups[g].peer);
		eb_rec_int(y, "samples", (long long)m->groups[g].st.n);
		eb_rec_stats(y, &m->groups[g].st, "mean_s", "s", 1.0);
	}
}

/* Every measurement, in output order: the sweep, then the summary's CE and best. */
static void records(struct eb_doc *d, const struct ipc_report *r)
{
	int dir, si, sh;

	for (dir = 0; dir < IPC_NDIRS; dir++) {
		if (!(r->dirs & (1u << dir)))
			continue;
		for (si = 0; si < r->nsizes; si++) {
			const struct ipc_sum *s = ipc_sum_at(r, dir, si);

			for (sh = 0; sh < r->nshapes; sh++)
				record(d, r, dir, si, "sweep", &r->shapes[sh],
				       ipc_sweep_at(r, dir, si, sh), ce_gbs(r, dir, si));
			if (s->ce.valid)
				record(d, r, dir, si, "ce", &r->shapes[0], &s->ce, s->ce.gbs);
			if (s->best.valid)
				record(d, r, dir, si, "best", &r->shapes[s->best_shape], &s->best,
				       s->ce.valid ? s->ce.gbs : 0);
		}
	}
}

static void head(struct eb_doc *d, const struct ipc_report *r)
{
	struct eb_rec *h = &d->head;

	eb_rec_str(h, "bench", "ipc");
	eb_rec_str(h, "launcher", r->launcher);
	eb_rec_int(h, "ranks", r->nranks);
	eb_rec_str(h, "pairs", pairs_name[r->pairs]);
	eb_rec_str(h, "gpu", r->gpu_name);
	eb_rec_bool(h, "gate", !r->no_gate);
	eb_rec_int(h, "sms", r->sms);
	eb_rec_obj(h, "nvlink");
	eb_rec_int(h, "links", r->links);
	eb_rec_num(h, "link_gbytes_per_s", r->link_gbs);
	eb_rec_num_or_null(h, "peak_gbytes_per_s", r->peak_gbs, r->peak_gbs > 0);
	if (r->peak_from != NULL)
		eb_rec_str(h, "from", r->peak_from);
	else
		eb_rec_null(h, "from");
	eb_rec_end(h);
	eb_rec_num(h, "launch_floor_us", r->floor_us);
	eb_rec_str(h, "ce_api", r->ce_api);
	eb_rec_int(h, "tma_chunk", (long long)r->tma_chunk);
	eb_rec_int(h, "tma_stages", r->tma_stages);
	eb_rec_int(h, "warmup", r->warmup);
	eb_rec_int(h, "iters", r->iters);
	eb_rec_bool(h, "check_every_iteration", r->check);
}

int ipc_finish(struct ipc_report *r)
{
	struct eb_doc d = {0};
	uint64_t wrong = 0;
	int dir, si, s, rc;

	for (dir = 0; dir < IPC_NDIRS; dir++) {
		if (!(r->dirs & (1u << dir)))
			continue;
		print_sweep(r, dir);
		for (si = 0; si < r->nsizes; si++) {
			const struct ipc_sum *sum = ipc_sum_at(r, dir, si);

			wrong += sum->ce.wrong + sum->best.wrong;
			for (s = 0; s < r->nshapes; s++)
				wrong += ipc_sweep_at(r, dir, si, s)->wrong;
		}
	}
	eb_table_footer(wrong);
	head(&d, r);
	records(&d, r);
	rc = eb_doc_write(&d, r->csv, r->json);
	eb_doc_free(&d);
	return rc == EB_OK && wrong > 0 ? EB_EVERIFY : rc;
}
