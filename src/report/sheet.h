/* A subcommand's output when it is not a sweep of sizes (queue, matrix, doctor): header facts,
 * tables whose cells are fields of result records, the footer and the files. A subcommand
 * fills records and says which fields its columns show; this layer alone formats and prints. */
#ifndef EB_REPORT_SHEET_H
#define EB_REPORT_SHEET_H

#include "doc.h"
#include "head.h"
#include "table.h"

#include <stdint.h>

/* A column: its head, the record field it shows (numbers with `decimals` places). */
struct eb_colspec {
	const char *head;
	const char *key;
	int width, decimals, left;
};

struct eb_sheet {
	struct eb_doc doc;   /* head: the run's facts for the files; res: the records */
	struct eb_head head; /* the header lines */
	struct eb_table table;
	const struct eb_colspec *cols;
	int ncols;
	const char *csv, *json;
};

/* Name the subcommand in the files ("bench") and keep where they go (NULL: not asked). */
void eb_sheet_begin(struct eb_sheet *s, const char *bench, const char *csv, const char *json);
/* Print the header lines gathered in s->head, then forget them. */
void eb_sheet_print_head(struct eb_sheet *s);
/* Start a table: a title line when title is not NULL, then its head. */
void eb_sheet_table(struct eb_sheet *s, const char *title, const struct eb_colspec *cols, int n);
/* A new record for the files; eb_sheet_show prints it as a row of the current table. */
struct eb_rec *eb_sheet_rec(struct eb_sheet *s);
void eb_sheet_show(struct eb_sheet *s, const struct eb_rec *r);
/* The footer, the files asked for and the document freed: EB_OK, EB_ESYS or EB_ENOMEM. */
int eb_sheet_end(struct eb_sheet *s, uint64_t wrong);

#endif
