/* The harness: one run of a benchmark on this rank. It opens what the benchmark uses (its
 * GPU, the engine), sets it up, runs its points row by row through the schedule (sched.h)
 * and hands rank 0's records and facts to src/report. */
#include "harness.h"
#include "sched.h"
#include "nics.h"
#include "stages.h"
#include "steal.h"
#include "verdict.h"
#include "sweep.h"
#include "efabench/status.h"
#include "core/log.h"
#include "core/ticks.h"
#include "report/progress.h"

#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 1024 /* in one row */

/* Rank 0: the last row's points (their NIC lines), for the table after the benchmark's. */
struct last_row {
	struct eb_pt *pt;
	struct eb_meas *m;
	int n;
	struct eb_steal_tally steal; /* every row's points, not only the last row's */
};

static void forget_row(struct last_row *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		eb_meas_free(&l->m[i]);
	free(l->pt);
	free(l->m);
	l->pt = NULL;
	l->m = NULL;
	l->n = 0;
}

/* Keep the row's NIC lines (taken from m), forgetting the row before. */
static void keep_row(struct last_row *l, struct eb_meas *m, int n)
{
	int i, any = 0;

	for (i = 0; i < n; i++)
		any |= m[i].nnic > 0 || m[i].stages.samples > 0 || m[i].bound[0] != '\0';
	if (!any)
		return;
	forget_row(l);
	l->pt = calloc((size_t)n, sizeof(*l->pt));
	l->m = calloc((size_t)n, sizeof(*l->m));
	if (l->pt == NULL || l->m == NULL) {
		forget_row(l);
		return;
	}
	for (i = 0; i < n; i++) {
		l->pt[i] = *m[i].pt; /* the row's points go with it */
		l->m[i].pt = &l->pt[i];
		l->m[i].nic = m[i].nic;
		l->m[i].nnic = m[i].nnic;
		l->m[i].stages = m[i].stages;
		memcpy(l->m[i].bound, m[i].bound, sizeof(m[i].bound));
		memcpy(l->m[i].why, m[i].why, sizeof(m[i].why));
		m[i].nic = NULL;
	}
	l->n = n;
}

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
	if (rc != EB_OK || !(b->uses & EB_USES_FABRIC))
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

/* Rank 0: the header's facts, and the benchmark's table declared (its head goes out with the
 * header, before the first row that is not all header points). */
static int open_sheet(struct eb_ctx *c, struct eb_sheet *s)
{
	const struct eb_bench *b = c->b;
	int rc = eb_sheet_begin(s, c->o->cmd->name, c->o->csv, c->o->json, c->o->md);

	eb_stamp(c, s);
	if (b->uses & EB_USES_HEAD)
		eb_fabric_head(c, s);
	if (b->facts != NULL)
		b->facts(c, s);
	if (b->cols != NULL)
		eb_sheet_table(s, NULL, b->cols, b->ncols);
	return rc;
}

/* Rank 0: a record per point of the row; the table's rows from those that are not the
 * header's; the CPU steal of those with a record tallied. */
static void hand_over(struct eb_ctx *c, struct eb_meas *m, int n, struct eb_sheet *s,
		      struct eb_steal_tally *steal)
{
	const struct eb_bench *b = c->b;
	const struct eb_rec **kept = calloc((size_t)(n > 0 ? n : 1), sizeof(*kept));
	int i, nkept = 0, first = s->doc.nres;

	for (i = 0; i < n && kept != NULL; i++) {
		struct eb_rec *r = eb_sheet_rec(s);

		if (r == NULL)
			break;
		eb_pt_hooks(b, m[i].pt)->record(c, &m[i], s, r);
		if (r->n == 0) /* its figures went to the header */
			eb_doc_pop(&s->doc);
		else
			eb_nics_record(c, &m[i], r);
		if (r->n > 0) {
			eb_steal_record(&m[i].steal, r);
			eb_steal_tally(steal, &m[i]);
			eb_stages_record(c, &m[i], r);
			eb_verdict(c, &m[i], r);
			eb_verdict_record(&m[i], r);
		}
	}
	/* the records may have moved as the document grew */
	for (i = first; kept != NULL && i < s->doc.nres; i++)
		kept[nkept++] = &s->doc.res[i];
	if (nkept > 0 && b->row != NULL)
		b->row(c, s, kept, nkept);
	for (i = 0;
	     nkept > 0 && b->row == NULL && b->cols != NULL && s->cols == b->cols && i < nkept; i++)
		eb_sheet_show(s, kept[i]);
	free(kept);
}

/* Whether a row shows rows of the table (the header must be out before it): a point that is
 * not a header point, of a benchmark whose rows show as they come. */
static int shows_rows(const struct eb_bench *b, const struct eb_pt *pts, int n)
{
	int i;

	for (i = 0; (b->cols != NULL || b->row != NULL) && i < n; i++)
		if (!(pts[i].flags & EB_PT_HEAD))
			return 1;
	return 0;
}

/* Every row, each point measured by the schedule and handed over; *wrong: every rank's. */
static int rows(struct eb_ctx *c, struct eb_sheet *s, struct last_row *last, uint64_t *wrong)
{
	struct eb_pt *pts = calloc(MAX_POINTS, sizeof(*pts));
	struct eb_meas *m = calloc(MAX_POINTS, sizeof(*m));
	struct eb_progress prog;
	int row, n = 0, i, rc = pts != NULL && m != NULL ? EB_OK : EB_ENOMEM;

	eb_progress_start(&prog, c->rank == 0 && !c->o->quiet, c->o->cmd->name, 0);
	/* Rows known before they run: the line can tell the time left. */
	for (row = 0; c->b->ahead && rc == EB_OK && (n = c->b->plan(c, row, pts, MAX_POINTS)) > 0;
	     row++)
		for (i = 0; i < n; i++)
			prog.total += eb_sched_work(c, &pts[i]) * (double)c->o->rounds;
	for (row = 0; rc == EB_OK; row++) {
		n = c->b->plan(c, row, pts, MAX_POINTS);
		if (n <= 0) {
			rc = n;
			break;
		}
		if (c->rank == 0 && !s->started && shows_rows(c->b, pts, n))
			eb_sheet_print_head(s);
		rc = eb_sched_row(c, pts, n, m, &prog);
		if (rc != EB_OK)
			break;
		eb_progress_clear(&prog);
		if (c->rank == 0) {
			hand_over(c, m, n, s, &last->steal);
			keep_row(last, m, n);
		}
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

/* Rank 0, after the last row: the benchmark's closing tables (which may state facts of the
 * header first), the header if nothing printed it yet, the footer and the files. */
static int close_sheet(struct eb_ctx *c, struct eb_sheet *s, const struct last_row *last,
		       uint64_t wrong)
{
	int rc = EB_OK, end;

	if (c->b->close != NULL)
		rc = c->b->close(c, s);
	if (!s->started)
		eb_sheet_print_head(s);
	eb_stages_table(c, s, last->m, last->n);
	eb_nics_table(s, last->m, last->n);
	eb_verdict_lines(s, last->m, last->n);
	eb_steal_line(s, &last->steal);
	if (rc != EB_OK && rc != EB_EVERIFY) {
		eb_sheet_drop(s);
		return rc;
	}
	end = eb_sheet_end(s, wrong);
	return end != EB_OK ? end : rc;
}

/* Set up, run every row, hand over; torn down whatever happened. */
static int measure(struct eb_ctx *c)
{
	const struct eb_bench *b = c->b;
	struct eb_sheet s = {0};
	struct last_row last = {0};
	struct eb_clocks clocks = {0};
	uint64_t wrong = 0;
	int rc = EB_OK, file_rc = EB_OK;

	if (b->priv_size > 0 && (c->priv = calloc(1, b->priv_size)) == NULL)
		rc = EB_ENOMEM;
	if (rc == EB_OK && c->staged)
		rc = eb_stage_create(&c->stage, 64);
	if (rc == EB_OK)
		rc = b->setup != NULL ? b->setup(c) : EB_OK;
	if (rc == EB_OK && b->gather != NULL)
		rc = b->gather(c);
	if (rc == EB_OK && b->nevents > 0)
		rc = eb_clocks_align(c, &clocks);
	c->clocks = &clocks;
	if (rc == EB_OK && c->rank == 0 && b->nevents > 0 && c->o->trace != NULL)
		rc = eb_trace_open(&c->trace, c->o->trace);
	if (rc == EB_OK && c->rank == 0)
		rc = open_sheet(c, &s);
	if (rc == EB_OK)
		rc = rows(c, &s, &last, &wrong);
	if (c->rank == 0 && rc == EB_OK)
		file_rc = close_sheet(c, &s, &last, wrong);
	else if (c->rank == 0)
		eb_sheet_drop(&s);
	forget_row(&last);
	if (c->trace != NULL) {
		int trc = eb_trace_close(c->trace, c);

		file_rc = file_rc == EB_OK ? trc : file_rc;
		c->trace = NULL;
	}
	eb_clocks_free(&clocks);
	c->clocks = NULL;
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
	eb_sweep_free(c->sweep);
	c->sweep = NULL;
	return rc;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c;
	int rc;

	if ((boot != NULL ? boot->size : 1) < b->min_ranks) {
		if (boot == NULL || boot->rank == 0)
			eb_err("%s needs at least %d ranks; got %d", o->cmd->name, b->min_ranks,
			       boot != NULL ? boot->size : 1);
		return EB_EINVAL;
	}
	rc = open_ctx(&c, b, o, boot, &e);
	if (rc != EB_OK) {
		close_ctx(&c, &e, 0);
		return rc;
	}
	rc = measure(&c);
	close_ctx(&c, &e, rc != EB_OK);
	return rc;
}
