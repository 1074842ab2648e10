#include "out.h"
#include "table.h"
#include "efabench/size.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void eb_table_col(struct eb_table *t, const char *head, int width, int left)
{
	struct eb_col *c;
	int n = (int)strlen(head);

	if (t->ncols == EB_TABLE_COLS)
		return;
	c = &t->col[t->ncols++];
	snprintf(c->head, sizeof(c->head), "%s", head);
	c->width = width > n ? width : n;
	c->left = left;
}

void eb_table_head(const struct eb_table *t)
{
	int c;

	eb_outf("|");
	for (c = 0; c < t->ncols; c++)
		eb_outf(t->col[c].left ? " %-*s |" : " %*s |", t->col[c].width, t->col[c].head);
	eb_outf("\n|");
	for (c = 0; c < t->ncols; c++) {
		int w = t->col[c].width + 1;

		eb_outf("%s", t->col[c].left ? ":" : "");
		while (w-- > 0)
			eb_outf("-");
		eb_outf("%s|", t->col[c].left ? "" : ":");
	}
	eb_outf("\n");
	eb_out_flush();
}

void eb_table_cell(struct eb_table *t, const char *fmt, ...)
{
	va_list ap;

	if (t->ncells == EB_TABLE_COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->cell[t->ncells++], sizeof(t->cell[0]), fmt, ap);
	va_end(ap);
}

void eb_table_row(struct eb_table *t)
{
	int c;

	eb_outf("|");
	for (c = 0; c < t->ncols; c++)
		eb_outf(t->col[c].left ? " %-*s |" : " %*s |", t->col[c].width,
			c < t->ncells ? t->cell[c] : "");
	eb_outf("\n");
	eb_out_flush();
	t->ncells = 0;
}

void eb_table_footer(uint64_t wrong)
{
	eb_outf("#\n# Out of bounds values : %llu %s\n", (unsigned long long)wrong,
		wrong ? "FAILED" : "OK");
	eb_out_flush();
}
