#include "out.h"
#include "sheet.h"
#include "efabench/size.h"
#include "efabench/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int eb_sheet_begin(struct eb_sheet *s, const char *bench, const char *csv, const char *json,
		   const char *md)
{
	memset(s, 0, sizeof(*s));
	s->csv = csv;
	s->json = json;
	if (bench != NULL)
		eb_rec_str(&s->doc.head, "bench", bench);
	return eb_out_md(md);
}

/* ---- facts ---- */

void eb_fact_int(struct eb_sheet *s, const char *key, const char *label, long long v)
{
	eb_rec_int(&s->doc.head, key, v);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%lld", v);
}

void eb_fact_num(struct eb_sheet *s, const char *key, const char *label, double v, const char *fmt)
{
	char shown[64];

	eb_rec_num(&s->doc.head, key, v);
	if (label == NULL)
		return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(shown, sizeof(shown), fmt != NULL ? fmt : "%g", v);
#pragma GCC diagnostic pop
	eb_head_fact(&s->head, label, "%s", shown);
}

void eb_fact_str(struct eb_sheet *s, const char *key, const char *label, const char *v)
{
	eb_rec_str(&s->doc.head, key, v);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%s", v);
}

void eb_fact_size(struct eb_sheet *s, const char *key, const char *label, uint64_t v)
{
	char shown[24];

	eb_rec_int(&s->doc.head, key, (long long)v);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%s", eb_size_format(v, shown, sizeof(shown)));
}

void eb_fact_bool(struct eb_sheet *s, const char *key, const char *label, int v)
{
	eb_rec_bool(&s->doc.head, key, v);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%s", v ? "yes" : "no");
}

void eb_fact_null(struct eb_sheet *s, const char *key, const char *label, const char *shown)
{
	eb_rec_null(&s->doc.head, key);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%s", shown);
}

void eb_fact_strs(struct eb_sheet *s, const char *key, const char *label, const char *const *v,
		  int n)
{
	char shown[320] = "";
	size_t used = 0;
	int i;

	for (i = 0; i < n; i++) {
		eb_rec_strs(&s->doc.head, key, v[i]);
		if (used < sizeof(shown))
			used += (size_t)snprintf(shown + used, sizeof(shown) - used, "%s%s",
						 i ? " " : "", v[i]);
	}
	if (n == 0)
		eb_rec_null(&s->doc.head, key);
	if (label != NULL)
		eb_head_fact(&s->head, label, "%s", n > 0 ? shown : "none");
}

void eb_fact_obj(struct eb_sheet *s, const char *key)
{
	eb_rec_obj(&s->doc.head, key);
}

void eb_fact_end(struct eb_sheet *s)
{
	eb_rec_end(&s->doc.head);
}

void eb_fact_to(struct eb_sheet *s, unsigned flags)
{
	eb_rec_to(&s->doc.head, flags);
}

void eb_fact_say(struct eb_sheet *s, const char *label, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	eb_head_break(&s->head);
	eb_head_fact(&s->head, label, "%s", text);
	eb_head_break(&s->head);
}

void eb_fact_break(struct eb_sheet *s)
{
	eb_head_break(&s->head);
}

/* A listed fact through the call of its kind; one without a key is the header's alone (an
 * integer or a text). */
static void list_one(struct eb_sheet *s, const struct eb_fact_item *f)
{
	switch (f->key == NULL && f->kind != EB_FACT_BREAK && f->kind != EB_FACT_SAY
		    ? -1
		    : (int)f->kind) {
	case -1:
		if (f->kind == EB_FACT_INT)
			eb_head_fact(&s->head, f->label, "%lld", f->i);
		else
			eb_head_fact(&s->head, f->label, "%s", f->s != NULL ? f->s : "");
		break;
	case EB_FACT_BREAK:
		eb_fact_break(s);
		break;
	case EB_FACT_INT:
		eb_fact_int(s, f->key, f->label, f->i);
		break;
	case EB_FACT_NUM:
		eb_fact_num(s, f->key, f->label, f->d, f->s);
		break;
	case EB_FACT_STR:
		eb_fact_str(s, f->key, f->label, f->s);
		break;
	case EB_FACT_SIZE:
		eb_fact_size(s, f->key, f->label, (uint64_t)f->i);
		break;
	case EB_FACT_BOOL:
		eb_fact_bool(s, f->key, f->label, (int)f->i);
		break;
	case EB_FACT_STRS:
		eb_fact_strs(s, f->key, f->label, f->v, (int)f->i);
		break;
	case EB_FACT_SAY:
		eb_fact_say(s, f->label, "%s", f->s);
		break;
	}
}

void eb_fact_list(struct eb_sheet *s, const struct eb_fact_item *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		list_one(s, &f[i]);
}

static void title(const char *t);

void eb_sheet_print_head(struct eb_sheet *s)
{
	s->started = 1;
	eb_head_print(&s->head);
	eb_head_free(&s->head);
	if (s->pending) { /* a table declared before the header went out */
		s->pending = 0;
		title(s->title);
		eb_table_head(&s->table);
	}
}

/* ---- tables ---- */

const struct eb_field *eb_rec_field(const struct eb_rec *r, const char *key)
{
	int i;

	for (i = 0; r != NULL && i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0)
			return &r->f[i];
	return NULL;
}

static void cell(struct eb_table *t, const struct eb_colspec *c, const struct eb_rec *r)
{
	const struct eb_field *f = eb_rec_field(r, c->key);
	const struct eb_field *m = c->mark != NULL ? eb_rec_field(r, c->mark) : NULL;
	const char *bang = m != NULL && m->i ? "!" : "";

	if (f == NULL || f->kind == EB_V_NULL)
		eb_table_cell(t, "-");
	else if (f->kind == EB_V_NUM)
		eb_table_cell(t, "%.*f%s", c->decimals, f->d, bang);
	else if (f->kind == EB_V_INT)
		eb_table_cell(t, "%lld%s", f->i, bang);
	else if (f->kind == EB_V_BOOL)
		eb_table_cell(t, "%s", f->i ? "yes" : "no");
	else
		eb_table_cell(t, "%s", f->s != NULL ? f->s : "");
}

static void title(const char *t)
{
	if (t != NULL)
		eb_outf("#\n## %s\n", t);
}

void eb_sheet_title(struct eb_sheet *s, const char *t)
{
	if (!s->started)
		eb_sheet_print_head(s);
	title(t);
}

/* A table's head now, or with the header where that is still to come. */
static void table_head(struct eb_sheet *s, const char *t)
{
	s->title = t;
	s->pending = !s->started;
	if (s->started) {
		title(t);
		eb_table_head(&s->table);
	}
}

void eb_sheet_table(struct eb_sheet *s, const char *t, const struct eb_colspec *cols, int n)
{
	int c;

	memset(&s->table, 0, sizeof(s->table));
	s->cols = cols;
	s->ncols = n;
	for (c = 0; c < n; c++)
		eb_table_col(&s->table, cols[c].head, cols[c].width, cols[c].left);
	table_head(s, t);
}

void eb_sheet_pivot(struct eb_sheet *s, const struct eb_pivot *p)
{
	int c, g;

	memset(&s->table, 0, sizeof(s->table));
	s->pivot = *p;
	for (c = 0; c < p->nlead; c++)
		eb_table_col(&s->table, p->lead[c].head, p->lead[c].width, p->lead[c].left);
	for (g = 0; g < p->ngroups; g++)
		for (c = 0; c < p->neach; c++)
			eb_table_col(&s->table,
				     p->each[c].head != NULL ? p->each[c].head : p->groups[g],
				     p->each[c].width, p->each[c].left);
	for (c = 0; c < p->ntail; c++)
		eb_table_col(&s->table, p->tail[c].head, p->tail[c].width, p->tail[c].left);
	table_head(s, NULL);
}

void eb_sheet_pivot_row(struct eb_sheet *s, const struct eb_rec *const *recs)
{
	const struct eb_pivot *p = &s->pivot;
	int c, g;

	if (!s->started)
		eb_sheet_print_head(s);
	for (c = 0; c < p->nlead; c++)
		cell(&s->table, &p->lead[c], recs[0]);
	for (g = 0; g < p->ngroups; g++)
		for (c = 0; c < p->neach; c++)
			cell(&s->table, &p->each[c], recs[g]);
	for (c = 0; c < p->ntail; c++) {
		long long sum = 0;

		for (g = 0; g < p->ngroups; g++) {
			const struct eb_field *f = eb_rec_field(recs[g], p->tail[c].key);

			sum += f != NULL && f->kind == EB_V_INT ? f->i : 0;
		}
		eb_table_cell(&s->table, "%lld", sum);
	}
	eb_table_row(&s->table);
}

static long long int_of(const struct eb_rec *r, const char *key, int *ok)
{
	const struct eb_field *f = eb_rec_field(r, key);

	*ok = f != NULL && (f->kind == EB_V_INT || f->kind == EB_V_NUM);
	return !*ok ? 0 : f->kind == EB_V_INT ? f->i : (long long)f->d;
}

/* The record at (row, col) of the grid, or NULL. */
static const struct eb_rec *grid_rec(const struct eb_sheet *s, const struct eb_grid *g,
				     long long row, long long col)
{
	int i, ok1, ok2, ok3;

	for (i = 0; i < s->doc.nres; i++) {
		const struct eb_rec *r = &s->doc.res[i];

		if (g->where != NULL && (int_of(r, g->where, &ok1) != g->is || !ok1))
			continue;
		if (int_of(r, g->row_key, &ok2) == row && int_of(r, g->col_key, &ok3) == col &&
		    ok2 && ok3)
			return r;
	}
	return NULL;
}

void eb_sheet_grid(struct eb_sheet *s, const struct eb_grid *g)
{
	struct eb_table t = {0};
	int r, c;

	if (!s->started)
		eb_sheet_print_head(s);
	title(g->title);
	eb_table_col(&t, g->corner, g->row_names != NULL ? 11 : 7, g->row_names != NULL);
	for (c = 0; c < g->ncols; c++) {
		char head[24];

		snprintf(head, sizeof(head), "%lld", g->cols[c]);
		eb_table_col(&t, g->col_names != NULL ? g->col_names[c] : head, 8, 0);
	}
	eb_table_head(&t);
	for (r = 0; r < g->nrows; r++) {
		if (g->row_names != NULL)
			eb_table_cell(&t, "%s", g->row_names[r]);
		else
			eb_table_cell(&t, "%lld", g->rows[r]);
		for (c = 0; c < g->ncols; c++) {
			const struct eb_rec *x = grid_rec(s, g, g->rows[r], g->cols[c]);
			const struct eb_field *f = eb_rec_field(x, g->val_key);

			if (f != NULL && f->kind == EB_V_NUM)
				eb_table_cell(&t, "%.*f", g->decimals, f->d);
			else
				eb_table_cell(&t, "-");
		}
		eb_table_row(&t);
	}
}

void eb_sheet_text(struct eb_sheet *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->started)
		eb_sheet_print_head(s);
	va_start(ap, fmt);
	eb_voutf(fmt, ap);
	va_end(ap);
	eb_outf("\n");
	eb_out_flush();
}

void eb_sheet_say(struct eb_sheet *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->started)
		eb_sheet_print_head(s);
	eb_outf("#");
	if (fmt != NULL && fmt[0] != '\0') {
		eb_outf(" ");
		va_start(ap, fmt);
		eb_voutf(fmt, ap);
		va_end(ap);
	}
	eb_outf("\n");
	eb_out_flush();
}

struct eb_rec *eb_sheet_rec(struct eb_sheet *s)
{
	return eb_doc_add(&s->doc);
}

void eb_sheet_show(struct eb_sheet *s, const struct eb_rec *r)
{
	int c;

	if (!s->started)
		eb_sheet_print_head(s);
	for (c = 0; c < s->ncols; c++)
		cell(&s->table, &s->cols[c], r);
	eb_table_row(&s->table);
}

void eb_sheet_drop(struct eb_sheet *s)
{
	(void)eb_out_md_close();
	eb_head_free(&s->head);
	eb_doc_free(&s->doc);
}

int eb_sheet_end(struct eb_sheet *s, uint64_t wrong)
{
	int rc = s->doc.oom || s->head.oom ? EB_ENOMEM : EB_OK;

	if (!s->plan_only && !s->no_footer)
		eb_table_footer(wrong);
	if (rc == EB_OK && !s->plan_only)
		rc = eb_doc_write(&s->doc, s->csv, s->json);
	if (eb_out_md_close() != EB_OK && rc == EB_OK)
		rc = EB_ESYS;
	eb_sheet_drop(s);
	return rc;
}
