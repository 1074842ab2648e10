/* Tables on stdout in the seeds' Markdown shape: a header row, an alignment row, then rows
 * printed as they are measured, and the footer that states the verification. */
#ifndef EB_REPORT_TABLE_H
#define EB_REPORT_TABLE_H

#include <stdint.h>

#define EB_TABLE_COLS 64

struct eb_col {
	char head[32];
	int width;
	int left; /* left-aligned (names); numbers are right-aligned */
};

struct eb_table {
	struct eb_col col[EB_TABLE_COLS];
	int ncols;
	char cell[EB_TABLE_COLS][40]; /* the row being built */
	int ncells;
};

/* Add a column; the width grows to fit the head. */
void eb_table_col(struct eb_table *t, const char *head, int width, int left);

void eb_table_head(const struct eb_table *t);

/* Cells of the row being built, left to right, printf-style; eb_table_row prints it. */
void eb_table_cell(struct eb_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void eb_table_row(struct eb_table *t);

/* "# Out of bounds values : N OK|FAILED", as nccl-tests ends. */
void eb_table_footer(uint64_t wrong);

#endif
