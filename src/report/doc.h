/* A report document: header fields and result records, written as JSON ({header...,
 * "results": [records]}) and as CSV (one row per record, one column per field that goes to
 * CSV, in the order first seen). */
#ifndef EB_REPORT_DOC_H
#define EB_REPORT_DOC_H

#include "rec.h"

#include <stdio.h>

struct eb_doc {
	struct eb_rec head;
	struct eb_rec *res;
	int nres, cap;
	int oom;
};

/* A new, empty record at the end of the results; NULL when out of memory (printed). */
struct eb_rec *eb_doc_add(struct eb_doc *d);
void eb_doc_free(struct eb_doc *d);
/* Drop the last record. */
void eb_doc_pop(struct eb_doc *d);

/* Write the files asked for (NULL: not asked). EB_OK or EB_ESYS after one line per file. */
int eb_doc_write(const struct eb_doc *d, const char *csv_path, const char *json_path);

/* An output file, with one error line on failure (NULL / EB_ESYS); "-" is stdout. */
FILE *eb_out_open(const char *path);
int eb_out_close(FILE *f, const char *path);

#endif
