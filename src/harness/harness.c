/* The harness: one run of a benchmark on this rank. It opens what the benchmark uses (its
 * GPU, the engine), sets it up, runs its points row by row through the schedule (sched.h)
 * and hands rank 0's records and facts to src/report; the sweep (sweep.h) gives the points
 * and records of benchmarks that name none of their own. */
#include "harness.h"
#include "sched.h"
#include "sweep.h"
#include "efabench/status.h"
#include "core/log.h"
#include "core/ticks.h"
#include "report/progress.h"

#include <stdlib.h>

#define MAX_POINTS 1024 /* in one row */

/* This rank's context: its GPU, the engine where the benchmark uses the fabric. */
static int open_ctx(struct eb_ctx *c, const struct eb_bench *b, const struct eb_opts *o,
		    struct eb_boot *boot, struct eb_engine *e)
{
	struct eb_fabric_opts fab = o->fab;
	int rc;

	*c = (struct eb_ctx){.b = b,
			     .o = o,
			     .own = o->own,
			     .boot = boot,
			     .rank = boot != NULL ? boot->rank : 0,
			     .nranks = boot != NULL ? boot->size : 1,
			     .peer = -1};
	rc = eb_harness_pick_gpu(c, boot);
	/* the sweep moves its bytes over the fabric */
	if (rc != EB_OK || !((b->uses & EB_USES_FABRIC) || (b->plan == NULL && b->drive == NULL)))
		return rc;
	(void)eb_ticks_init();
	fab.near_pci = c->gpu_pci[0] ? c->gpu_pci : NULL;
	fab.window = (int)o->window;
	rc = eb_engine_open(e, boot, &fab);
	if (rc != EB_OK)
		return rc;
	c->e = e;
	e->misplace_chunk = (size_t)o->misplace_chunk;
	eb_harness_tune(o, e->prov, &c->chunk, &c->window);
	if (c->chunk > e->lim.max_rma) { /* one write carries at most this */
		c->chunk_asked = c->chunk;
		c->chunk = e->lim.max_rma;
	}
	if (b->fits != NULL)
		rc = b->fits(o, &e->lim, &e->chan[0].nic, c->rank == 0);
	return rc;
}

/* The harness's engine (a benchmark that opens its own closes it). */
static void close_ctx(struct eb_ctx *c, struct eb_engine *e, int failed)
{
	if (c->e != e)
		return;
	if (failed)
		eb_engine_abandon(e);
	eb_engine_close(e);
}

/* The points of a row, from the benchmark or the sweep. */
static int plan(struct eb_ctx *c, const struct eb_sweep *w, int row, struct eb_pt *pts)
{
	if (c->b->plan != NULL)
		return c->b->plan(c, row, pts, MAX_POINTS);
	return eb_sweep_plan(c, w, row, pts);
}

/* Rank 0: the benchmark's table, opened before its first row (rows may add facts to the
 * header first, which the report prints before the first table). */
static void start(const struct eb_ctx *c, struct eb_sheet *s)
{
	if (c->b->plan != NULL && c->b->cols != NULL && s->cols != c->b->cols)
		eb_sheet_table(s, NULL, c->b->cols, c->b->ncols);
}

/* Rank 0: the header, then the table's head. */
static int open_sheet(struct eb_ctx *c, const struct eb_sweep *w, struct eb_sheet *s)
{
	const struct eb_bench *b = c->b;
	const struct eb_opts *o = c->o;
	int rc = eb_sheet_begin(s, b->plan != NULL ? o->cmd->name : NULL, o->csv, o->json, o->md);

	eb_stamp(c, s);
	if (b->plan == NULL)
		eb_sweep_facts(c, w, s);
	else if (b->facts != NULL)
		b->facts(c, s);
	if (b->plan != NULL && !b->head_waits)
		start(c, s);
	return rc;
}

/* Rank 0: a record per point of the row, and its rows of the table. */
static void hand_over(struct eb_ctx *c, struct eb_sweep *w, const struct eb_meas *m, int n,
		      struct eb_sheet *s)
{
	const struct eb_rec *row[EB_MAX_VARIANTS];
	int first = s->doc.nres, i;

	for (i = 0; i < n; i++) {
		struct eb_rec *r = eb_sheet_rec(s);

		if (r == NULL)
			return;
		if (c->b->plan == NULL) {
			eb_sweep_record(c, w, &m[i], s, r);
			continue;
		}
		c->b->record(c, &m[i], s, r);
		if (r->n == 0) { /* its figures went to the header */
			eb_doc_pop(&s->doc);
			continue;
		}
		start(c, s);
		if (c->b->cols != NULL && s->cols == c->b->cols)
			eb_sheet_show(s, r);
	}
	if (c->b->plan != NULL)
		return;
	for (i = 0; i < n && i < EB_MAX_VARIANTS; i++)
		row[i] = &s->doc.res[first + i];
	eb_sweep_row(w, s, row);
}

/* Every row, each point measured by the schedule and handed over; *wrong: every rank's. */
static int rows(struct eb_ctx *c, struct eb_sweep *w, struct eb_sheet *s, uint64_t *wrong)
{
	struct eb_pt *pts = calloc(MAX_POINTS, sizeof(*pts));
	struct eb_meas *m = calloc(MAX_POINTS, sizeof(*m));
	struct eb_progress prog;
	int row, n = 0, i, rc = pts != NULL && m != NULL ? EB_OK : EB_ENOMEM;

	eb_progress_start(&prog, c->rank == 0 && !c->o->quiet, c->o->cmd->name, 0);
	/* The sweep's rows are known before they run: the line can tell the time left. */
	for (row = 0; c->b->plan == NULL && rc == EB_OK && (n = plan(c, w, row, pts)) > 0; row++)
		for (i = 0; i < n; i++)
			prog.total += eb_sched_work(c, &pts[i]) * (double)c->o->rounds;
	for (row = 0; rc == EB_OK; row++) {
		n = plan(c, w, row, pts);
		if (n <= 0) {
			rc = n;
			break;
		}
		rc = eb_sched_row(c, pts, n, m, &prog);
		if (rc != EB_OK)
			break;
		eb_progress_clear(&prog);
		if (c->rank == 0)
			hand_over(c, w, m, n, s);
		for (i = 0; i < n; i++) {
			*wrong += m[i].wrong;
			eb_meas_free(&m[i]);
		}
	}
	eb_progress_clear(&prog);
	free(m);
	free(pts);
	return rc;
}

/* Set up, run every row, hand over; torn down whatever happened. */
static int measure(struct eb_ctx *c)
{
	const struct eb_bench *b = c->b;
	struct eb_sweep w = {0};
	struct eb_sheet s = {0};
	uint64_t wrong = 0;
	int rc = EB_OK, file_rc = EB_OK;

	if (b->plan == NULL)
		eb_sweep_open(c, &w);
	if (b->priv_size > 0 && (c->priv = calloc(1, b->priv_size)) == NULL)
		rc = EB_ENOMEM;
	if (rc == EB_OK && c->staged)
		rc = eb_stage_create(&c->stage, 64);
	if (rc == EB_OK)
		rc = b->setup != NULL ? b->setup(c) : EB_OK;
	if (rc == EB_OK && b->plan == NULL)
		rc = eb_sweep_gather(c, &w);
	if (rc == EB_OK && c->rank == 0)
		rc = open_sheet(c, &w, &s);
	if (rc == EB_OK)
		rc = rows(c, &w, &s, &wrong);
	if (c->rank == 0 && rc == EB_OK) {
		start(c, &s);
		if (b->plan == NULL)
			eb_sweep_notes(c, &w, &s);
		if (b->close != NULL)
			file_rc = b->close(c, &s);
		if (!s.started) /* nothing printed yet: the header alone */
			eb_sheet_print_head(&s);
		if (file_rc == EB_OK || file_rc == EB_EVERIFY) {
			int end = eb_sheet_end(&s, wrong);

			file_rc = end != EB_OK ? end : file_rc;
		} else {
			eb_sheet_drop(&s);
		}
	} else if (c->rank == 0) {
		eb_sheet_drop(&s);
	}
	/* Every rank leaves with rank 0's verdict, and nobody tears down while a peer may still
	 * read its memory. */
	if (rc == EB_OK && c->boot != NULL) {
		int64_t worst;

		rc = eb_boot_allreduce(c->boot, file_rc, EB_MIN, &worst,
				       eb_deadline(c->o->fab.timeout_s));
		file_rc = rc == EB_OK ? (int)worst : file_rc;
	}
	if (rc == EB_OK && wrong > 0)
		rc = EB_EVERIFY;
	if (rc == EB_OK)
		rc = file_rc;
	if (c->e != NULL) {
		if (rc != EB_OK)
			eb_engine_abandon(c->e);
		eb_engine_quiesce(c->e); /* before the buffers and requests posted on it go */
	}
	eb_payload_unland(c);
	c->failed = rc != EB_OK;
	if (b->teardown != NULL && (b->priv_size == 0 || c->priv != NULL))
		b->teardown(c);
	free(c->priv);
	c->priv = NULL;
	eb_stage_destroy(c->stage);
	eb_sweep_close(&w);
	return rc;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c;
	int rc;

	if (b->plan == NULL && b->drive == NULL && (boot == NULL || boot->size < 2)) {
		if (boot == NULL || boot->rank == 0)
			eb_err("%s needs at least 2 ranks; got %d", o->cmd->name,
			       boot != NULL ? boot->size : 1);
		return EB_EINVAL;
	}
	rc = open_ctx(&c, b, o, boot, &e);
	if (rc != EB_OK) {
		close_ctx(&c, &e, 0);
		return rc;
	}
	rc = b->drive != NULL ? b->drive(&c) : measure(&c);
	close_ctx(&c, &e, rc != EB_OK);
	return rc;
}
