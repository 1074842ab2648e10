#include "sheet.h"
#include "efabench/status.h"

#include <stdio.h>
#include <string.h>

void eb_sheet_begin(struct eb_sheet *s, const char *bench, const char *csv, const char *json)
{
	memset(s, 0, sizeof(*s));
	s->csv = csv;
	s->json = json;
	eb_rec_str(&s->doc.head, "bench", bench);
}

void eb_sheet_print_head(struct eb_sheet *s)
{
	eb_head_print(&s->head);
	memset(&s->head, 0, sizeof(s->head));
}

void eb_sheet_table(struct eb_sheet *s, const char *title, const struct eb_colspec *cols, int n)
{
	int c;

	memset(&s->table, 0, sizeof(s->table));
	s->cols = cols;
	s->ncols = n;
	if (title != NULL)
		printf("#\n## %s\n", title);
	for (c = 0; c < n; c++)
		eb_table_col(&s->table, cols[c].head, cols[c].width, cols[c].left);
	eb_table_head(&s->table);
}

struct eb_rec *eb_sheet_rec(struct eb_sheet *s)
{
	return eb_doc_add(&s->doc);
}

static const struct eb_field *field(const struct eb_rec *r, const char *key)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->f[i].key, key) == 0)
			return &r->f[i];
	return NULL;
}

void eb_sheet_show(struct eb_sheet *s, const struct eb_rec *r)
{
	int c;

	for (c = 0; c < s->ncols; c++) {
		const struct eb_field *f = field(r, s->cols[c].key);

		if (f == NULL || f->kind == EB_V_NULL)
			eb_table_cell(&s->table, "-");
		else if (f->kind == EB_V_NUM)
			eb_table_cell(&s->table, "%.*f", s->cols[c].decimals, f->d);
		else if (f->kind == EB_V_INT)
			eb_table_cell(&s->table, "%lld", f->i);
		else if (f->kind == EB_V_BOOL)
			eb_table_cell(&s->table, "%s", f->i ? "yes" : "no");
		else
			eb_table_cell(&s->table, "%s", f->s != NULL ? f->s : "");
	}
	eb_table_row(&s->table);
}

int eb_sheet_end(struct eb_sheet *s, uint64_t wrong)
{
	int rc = s->doc.oom ? EB_ENOMEM : EB_OK;

	eb_table_footer(wrong);
	if (rc == EB_OK)
		rc = eb_doc_write(&s->doc, s->csv, s->json);
	eb_doc_free(&s->doc);
	return rc;
}
