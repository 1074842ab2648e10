/* efabench ipc's figures (rank 0): the header's facts, a record per measurement, the summary
 * table per direction (the seeds' shape: Size, Count, then the copy engine and the best
 * kernel) and, after the last, the sweep per direction. */
#include "ipc_links.h"

#ifdef EB_HAVE_CUDA
#include "gpu/nvlink.h"
#include "efabench/size.h"

#include <stdio.h>
#include <string.h>

static const char *const pairs_name[] = {"first", "each", "all"};
static const char *const method_name[] = {"ce", "st", "tma"};
static const char *const kind_name[] = {"floor", "sweep", "ce", "best"};

/* NVML's link count and speed, else --link-gbps: what NVL% is of. */
void ipc_peak(struct ipc_ctx *ic)
{
	int links = 0;
	double gbs = 0;

	if (eb_nvlink_peak(ic->gpu.pci, &links, &gbs) == EB_OK && links > 0) {
		ic->links = links;
		ic->link_gbs = gbs;
		ic->peak_gbs = links * gbs;
		ic->peak_from = "NVML";
	} else if (ic->io->link_gbps > 0) {
		ic->peak_gbs = ic->io->link_gbps / 8;
		ic->peak_from = "--link-gbps";
	}
}

static void nvlink_facts(const struct ipc_ctx *ic, struct eb_sheet *s)
{
	eb_fact_obj(s, "nvlink");
	eb_fact_int(s, "links", NULL, ic->links);
	eb_fact_num(s, "link_gbytes_per_s", NULL, ic->link_gbs, NULL);
	if (ic->peak_gbs > 0)
		eb_fact_num(s, "peak_gbytes_per_s", NULL, ic->peak_gbs, NULL);
	else
		eb_fact_null(s, "peak_gbytes_per_s", NULL, NULL);
	if (ic->peak_from != NULL)
		eb_fact_str(s, "from", NULL, ic->peak_from);
	else
		eb_fact_null(s, "from", NULL, NULL);
	eb_fact_end(s);
	if (ic->peak_gbs > 0 && ic->links > 0)
		eb_fact_say(s, "NVLink peak per GPU per direction",
			    "%.1f GB/s = %.0f Gbps (NVML: %d active links x %.3f GB/s)",
			    ic->peak_gbs, ic->peak_gbs * 8, ic->links, ic->link_gbs);
	else if (ic->peak_gbs > 0)
		eb_fact_say(s, "NVLink peak per GPU per direction", "%.1f GB/s (from --link-gbps)",
			    ic->peak_gbs);
	else
		eb_fact_say(s, NULL,
			    "NVLink peak unknown (no NVML link speeds): NVL%% shows '-'; "
			    "give --link-gbps");
}

void ipc_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct ipc_ctx *ic = c->priv;
	const struct ipc_opts *io = ic->io;

	eb_head_fact(&s->head, NULL, "efabench ipc: %s", c->o->cmd->summary);
	eb_fact_break(s);
	eb_fact_int(s, "ranks", "ranks, one GPU each", ic->n);
	eb_fact_str(s, "gpu", "GPU", ic->gpu.name);
	eb_fact_int(s, "sms", "SMs", ic->gpu.sms);
	eb_fact_str(s, "launcher", "launcher", c->boot->ops->name);
	/* the JSON's word, the header's meaning */
	eb_fact_str(s, "pairs", NULL, pairs_name[io->pairs]);
	eb_head_fact(&s->head, "pairs", "%s (%s)", pairs_name[io->pairs],
		     io->pairs == IPC_FIRST  ? "GPU 0 -> GPU 1"
		     : io->pairs == IPC_EACH ? "every ordered pair, one at a time, averaged"
					     : "every GPU to every other at once, per GPU");
	nvlink_facts(ic, s);
	eb_fact_break(s);
	eb_fact_size(s, "tma_chunk", "tma chunk", io->tma_chunk);
	eb_fact_int(s, "tma_stages", "tma stages", io->tma_stages);
	eb_fact_int(s, "copies_per_launch", "copies per launch", io->copies);
	eb_fact_bool(s, "gate", "launches behind a gate", !io->no_gate);
	eb_fact_int(s, "warmup", "warmup", c->o->warmup);
	eb_fact_int(s, "iters", "iters", c->o->iters);
	eb_fact_bool(s, "check_every_iteration", "check every iteration", c->o->check);
	eb_fact_say(s, "copy engine",
		    "%s; st GxB: G blocks of B threads, 16-byte loads and stores, grid-stride; tma "
		    "G: G blocks, one thread each streaming %llu-byte bulk copies through %d "
		    "shared-memory buffers",
		    eb_ik_ce_api(), (unsigned long long)io->tma_chunk, io->tma_stages);
	eb_fact_say(s, NULL,
		    "t = mean seconds per copy on the initiating GPU: CUDA events between "
		    "back-to-back launches, %s%s",
		    io->no_gate ? "queued without a gate (--no-gate: launch cost included)"
				: "queued behind a gate",
		    io->copies > 1 ? "; each launch copies the buffer --copies times, t = the "
				     "launch / copies"
				   : "");
	eb_fact_say(s, NULL,
		    "GB/s = bytes moved per copy / t / 1e9; Gbps = 8 x GB/s; NVL%% = of "
		    "the NVLink peak; %%CE = of the copy engine, same size");
	eb_fact_say(s, NULL,
		    "Best = the fastest kernel shape of the sweep, measured again right "
		    "after a fresh CE run; #wrong counts every measurement");
}

/* A measurement's mean over its groups, and what an initiating GPU moves per launch. */
static double mean_t(const struct eb_meas *m)
{
	double sum = 0;
	int g;

	for (g = 0; g < m->ngroups; g++)
		sum += m->groups[g].st.mean;
	return m->ngroups > 0 ? sum / m->ngroups : 0;
}

static void groups(struct eb_rec *x, const struct eb_meas *m)
{
	int g;

	eb_rec_items(x, "groups");
	for (g = 0; g < m->ngroups; g++) {
		struct eb_rec *y = eb_rec_item(x, "groups");

		if (y == NULL)
			return;
		eb_rec_int(y, "initiator", m->groups[g].rank);
		eb_rec_int(y, "peer", m->groups[g].peer);
		eb_rec_int(y, "samples", (long long)m->groups[g].st.n);
		eb_rec_stats(y, &m->groups[g].st, "mean_s", "s", 1.0);
	}
}

/* GB/s, Gbps, NVL% (and %CE for kernels) and us of a measurement, into the summary row. */
static void cells(struct eb_rec *row, const char *p, double gbs, double t, double peak, double ce)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_gbs", p);
	eb_rec_num_or_null(row, key, gbs, t > 0);
	snprintf(key, sizeof(key), "%s_gbps", p);
	eb_rec_num_or_null(row, key, gbs * 8, t > 0);
	snprintf(key, sizeof(key), "%s_nvl", p);
	eb_rec_num_or_null(row, key, 100 * gbs / peak, t > 0 && peak > 0);
	snprintf(key, sizeof(key), "%s_ce", p);
	eb_rec_num_or_null(row, key, 100 * gbs / ce, t > 0 && ce > 0);
	snprintf(key, sizeof(key), "%s_us", p);
	eb_rec_num_or_null(row, key, t * 1e6, t > 0);
}

static const struct eb_colspec summary_cols[] = {
    {"Size", "size_shown", 9, 0, 0, NULL}, {"Count", "count", 11, 0, 0, NULL},
    {"CE GB/s", "ce_gbs", 8, 1, 0, NULL},  {"CE Gbps", "ce_gbps", 8, 1, 0, NULL},
    {"NVL%", "ce_nvl", 6, 1, 0, NULL},	   {"CE us", "ce_us", 9, 2, 0, NULL},
    {"Best", "best", 11, 0, 1, NULL},	   {"GB/s", "best_gbs", 8, 1, 0, NULL},
    {"Gbps", "best_gbps", 8, 1, 0, NULL},  {"NVL%", "best_nvl", 6, 1, 0, NULL},
    {"%CE", "best_ce", 6, 1, 0, NULL},	   {"us", "best_us", 9, 2, 0, NULL},
    {"#wrong", "wrong", 6, 0, 0, NULL},
};

/* The summary table's row of a (direction, size), once its last summary point is in. */
static void summary_row(const struct eb_ctx *c, struct ipc_ctx *ic, const struct eb_meas *m,
			double gbs, double t, struct eb_sheet *s)
{
	int dir = m->pt->step % 2, kind = m->pt->step / 2;
	char size[24];

	if (ic->row.n == 0) {
		eb_rec_str(&ic->row, "size_shown", eb_size_format(m->pt->size, size, sizeof(size)));
		eb_rec_int(&ic->row, "count", (long long)(m->pt->size / 4));
	}
	if (kind == IPC_CE_AGAIN) {
		cells(&ic->row, "ce", gbs, t, ic->peak_gbs, 0);
		ic->ce_gbs = gbs;
	} else {
		eb_rec_str(&ic->row, "best", ic->shapes[m->pt->var].name);
		cells(&ic->row, "best", gbs, t, ic->peak_gbs, ic->ce_gbs);
	}
	if (--ic->summary_left > 0)
		return;
	eb_rec_int(&ic->row, "wrong", (long long)ic->wrong);
	if (ic->table_dir != dir) {
		eb_sheet_table(
		    s,
		    dir == IPC_WRITE
			? "write: the initiating GPU stores into the peer's memory"
			: "read: the initiating GPU loads the peer's memory into its own",
		    summary_cols, (int)(sizeof(summary_cols) / sizeof(summary_cols[0])));
		ic->table_dir = dir;
	}
	eb_sheet_show(s, &ic->row);
	eb_rec_free(&ic->row);
	(void)c;
}

static void floor_fact(struct ipc_ctx *ic, const struct eb_meas *m, struct eb_sheet *s)
{
	ic->floor_us = m->groups[0].st.mean * 1e6;
	eb_fact_num(s, "launch_floor_us", "launch floor", ic->floor_us,
		    "%.2f us per launch (empty kernels timed as the copies are)");
}

void ipc_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		struct eb_rec *x)
{
	struct ipc_ctx *ic = c->priv;
	const struct ipc_shape *sh = &ic->shapes[m->pt->var];
	int kind = m->pt->step / 2, dir = m->pt->step % 2;
	double t = mean_t(m),
	       bytes = (double)m->pt->size * (ic->io->pairs == IPC_ALL ? ic->n - 1 : 1);
	double gbs = t > 0 ? bytes / t / 1e9 : 0, ce = kind == IPC_SWEEP ? ic->ce_gbs : 0;

	if (kind == IPC_FLOOR) {
		floor_fact(ic, m, s);
		return;
	}
	if (kind == IPC_SWEEP && sh->method == IPC_CE)
		ce = ic->ce_gbs = gbs;
	if (kind == IPC_SWEEP && sh->method != IPC_CE && m->ngroups > 0 &&
	    (ic->best < 0 || gbs > ic->best_gbs)) {
		ic->best = m->pt->var;
		ic->best_gbs = gbs;
	}
	if (kind == IPC_BEST)
		ce = ic->ce_gbs;
	if (kind == IPC_CE_AGAIN)
		ce = gbs;
	ic->wrong += m->wrong;
	eb_rec_str(x, "bench", "ipc");
	eb_rec_to(x, EB_NOT_JSON);
	eb_rec_str(x, "dir", dir == IPC_WRITE ? "write" : "read");
	eb_rec_str(x, "kind", kind_name[kind]);
	eb_rec_str(x, "method", method_name[sh->method]);
	eb_rec_str(x, "shape", sh->name);
	eb_rec_int(x, "shape_index", m->pt->var);
	eb_rec_to(x, EB_NOT_JSON | EB_NOT_CSV);
	eb_rec_int(x, "dir_sweep", kind == IPC_SWEEP ? dir : -1);
	eb_rec_to(x, EB_NOT_JSON | EB_NOT_CSV);
	eb_rec_int(x, "grid", sh->grid);
	eb_rec_int(x, "block", sh->block);
	eb_rec_int(x, "size", (long long)m->pt->size);
	eb_rec_int(x, "count", (long long)(m->pt->size / 4));
	eb_rec_to(x, EB_NOT_JSON);
	eb_rec_num(x, "bytes_per_copy", bytes);
	eb_rec_num(x, "t_s", t);
	eb_rec_num(x, "gbytes_per_s", gbs);
	eb_rec_num(x, "gbps", gbs * 8);
	eb_rec_num_or_null(x, "nvl_pct", 100 * gbs / ic->peak_gbs, ic->peak_gbs > 0);
	eb_rec_num_or_null(x, "ce_pct", 100 * gbs / ce, ce > 0);
	eb_rec_int(x, "wrong", (long long)m->wrong);
	groups(x, m);
	if (kind != IPC_SWEEP)
		summary_row(c, ic, m, gbs, t, s);
}

/* After the last: the sweep of every direction (GB/s per shape and size), and the API the
 * copy engine ended up using. */
int ipc_close(const struct eb_ctx *c, struct eb_sheet *s)
{
	struct ipc_ctx *ic = c->priv;
	long long rows[sizeof(ic->shapes) / sizeof(ic->shapes[0])], cols[EB_MAX_SIZES];
	const char *names[sizeof(ic->shapes) / sizeof(ic->shapes[0])], *sizes[EB_MAX_SIZES];
	char shown[EB_MAX_SIZES][24], title[96];
	int d, k;

	for (k = 0; k < ic->nshapes; k++) {
		rows[k] = k;
		names[k] = ic->shapes[k].name;
	}
	for (k = 0; k < c->o->nsizes; k++) {
		cols[k] = (long long)c->o->sizes[k];
		sizes[k] = eb_size_format(c->o->sizes[k], shown[k], sizeof(shown[k]));
	}
	for (d = 0; d < IPC_NDIRS; d++) {
		struct eb_grid g = {.title = title,
				    .corner = "Shape",
				    .row_key = "shape_index",
				    .col_key = "size",
				    .val_key = "gbytes_per_s",
				    .rows = rows,
				    .cols = cols,
				    .row_names = names,
				    .col_names = sizes,
				    .nrows = ic->nshapes,
				    .ncols = c->o->nsizes,
				    .decimals = 1,
				    .where = "dir_sweep",
				    .is = d};

		if (!(ic->io->dirs & (1u << d)))
			continue;
		snprintf(title, sizeof(title),
			 "%s sweep: GB/s per launch shape and size (%%CE in JSON and CSV)",
			 d == IPC_WRITE ? "write" : "read");
		eb_sheet_grid(s, &g);
	}
	eb_rec_str(&s->doc.head, "ce_api", eb_ik_ce_api());
	return 0;
}

#endif
