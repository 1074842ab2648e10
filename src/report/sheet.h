/* The one hand-over from a subcommand to the report layer: facts, records and how tables show
 * them. A fact is one datum stated once: its JSON key, its header label and its value; the
 * header line and the JSON field both come from that call. A record is a measurement's fields
 * (rec.h); tables name the fields their columns show. This layer alone formats and prints,
 * and writes the files. */
#ifndef EB_REPORT_SHEET_H
#define EB_REPORT_SHEET_H

#include "doc.h"
#include "head.h"
#include "table.h"

#include <stdint.h>

/* A column: its head, the record field it shows (numbers with `decimals` places), and, for
 * a numeric field, a boolean field whose truth adds "!" after the value (mark). In a pivot
 * group a NULL head takes the group's name. */
struct eb_colspec {
	const char *head;
	const char *key;
	int width, decimals, left;
	const char *mark;
};

/* A pivot table: lead columns from the row's first record, `each` columns for every group
 * (heads NULL take the group's name), tail columns summing the row's records. */
struct eb_pivot {
	const struct eb_colspec *lead, *each, *tail;
	int nlead, neach, ntail;
	const char *const *groups;
	int ngroups;
};

struct eb_sheet {
	struct eb_doc doc;   /* head: the facts for the files; res: the records */
	struct eb_head head; /* the header lines, printed by eb_sheet_print_head */
	struct eb_table table;
	const struct eb_colspec *cols;
	int ncols;
	struct eb_pivot pivot; /* the current pivot table */
	const char *csv, *json;
	int started;	   /* the header and the current table's head are out */
	int pending;	   /* a table declared before the header: its head goes out with it */
	const char *title; /* the current table's */
	int plan_only;	   /* a dry run: no footer, no files */
	int no_footer;	   /* the verdict is the subcommand's own lines */
};

/* Name the subcommand in the files ("bench"), keep where they go (NULL: not asked) and start
 * the Markdown copy of the output (md; EB_OK or EB_ESYS after one line). */
int eb_sheet_begin(struct eb_sheet *s, const char *bench, const char *csv, const char *json,
		   const char *md);

/* ---- facts: a JSON field of the head and a labelled value in the header, from one call.
 * A NULL label keeps the fact out of the header. */
void eb_fact_int(struct eb_sheet *s, const char *key, const char *label, long long v);
/* The header shows v with fmt (printf for one double, "%.1f Gbps"); NULL: "%g". */
void eb_fact_num(struct eb_sheet *s, const char *key, const char *label, double v, const char *fmt);
void eb_fact_str(struct eb_sheet *s, const char *key, const char *label, const char *v);
/* Bytes: an integer in JSON, "256K" in the header. */
void eb_fact_size(struct eb_sheet *s, const char *key, const char *label, uint64_t v);
void eb_fact_bool(struct eb_sheet *s, const char *key, const char *label, int v);
/* null in JSON; the header shows `shown` (why there is no value). */
void eb_fact_null(struct eb_sheet *s, const char *key, const char *label, const char *shown);
/* An array of strings, joined by spaces in the header. */
void eb_fact_strs(struct eb_sheet *s, const char *key, const char *label, const char *const *v,
		  int n);
/* JSON nesting of the facts that follow (the header does not show it). */
void eb_fact_obj(struct eb_sheet *s, const char *key);
void eb_fact_end(struct eb_sheet *s);
/* Route the last fact's JSON field (EB_TO_CSV, ...: rec.h). */
void eb_fact_to(struct eb_sheet *s, unsigned flags);
/* Header only: what a figure means, a note (label NULL: the text alone). */
void eb_fact_say(struct eb_sheet *s, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The facts that follow start a new header line. */
void eb_fact_break(struct eb_sheet *s);

/* ---- facts as data: a list stated in order, each through the call of its kind above (one
 * without a key, an integer or a text, goes to the header alone). */
enum eb_fact_kind {
	EB_FACT_BREAK, /* eb_fact_break */
	EB_FACT_INT,   /* i */
	EB_FACT_NUM,   /* d, shown with the format in s (NULL: "%g") */
	EB_FACT_STR,   /* s */
	EB_FACT_SIZE,  /* i bytes */
	EB_FACT_BOOL,  /* i */
	EB_FACT_STRS,  /* i strings of v */
	EB_FACT_SAY,   /* s: a line of the header alone (eb_fact_say) */
};
struct eb_fact_item {
	enum eb_fact_kind kind;
	const char *key;   /* NULL: the header's alone (INT or STR) */
	const char *label; /* NULL: JSON's alone (with no key: the value after the last fact) */
	long long i;
	double d;
	const char *s;
	const char *const *v;
};
#define EB_F_BREAK		((struct eb_fact_item){EB_FACT_BREAK, NULL, NULL, 0, 0, NULL, NULL})
#define EB_F_INT(key, label, v) ((struct eb_fact_item){EB_FACT_INT, key, label, (v), 0, NULL, NULL})
#define EB_F_NUM(key, label, v, fmt)                                                               \
	((struct eb_fact_item){EB_FACT_NUM, key, label, 0, (v), fmt, NULL})
#define EB_F_STR(key, label, v) ((struct eb_fact_item){EB_FACT_STR, key, label, 0, 0, (v), NULL})
#define EB_F_SIZE(key, label, v)                                                                   \
	((struct eb_fact_item){EB_FACT_SIZE, key, label, (long long)(v), 0, NULL, NULL})
#define EB_F_BOOL(key, label, v)                                                                   \
	((struct eb_fact_item){EB_FACT_BOOL, key, label, (v) != 0, 0, NULL, NULL})
#define EB_F_STRS(key, label, v, n)                                                                \
	((struct eb_fact_item){EB_FACT_STRS, key, label, (n), 0, NULL, (v)})
#define EB_F_SAY(label, text) ((struct eb_fact_item){EB_FACT_SAY, NULL, label, 0, 0, (text), NULL})
void eb_fact_list(struct eb_sheet *s, const struct eb_fact_item *f, int n);

/* Print the header lines gathered so far, then forget them; and the head of a table declared
 * before them. */
void eb_sheet_print_head(struct eb_sheet *s);

/* ---- tables: declared before the header is out, a table's head follows the header */
/* A flat table: a title line when title is not NULL, then its head; a row per record shown. */
void eb_sheet_table(struct eb_sheet *s, const char *title, const struct eb_colspec *cols, int n);
/* Start a pivot table; a row of it from the records of each group. */
void eb_sheet_pivot(struct eb_sheet *s, const struct eb_pivot *p);
void eb_sheet_pivot_row(struct eb_sheet *s, const struct eb_rec *const *recs);
/* A grid over the records whose field `where` equals `is` (where NULL: every record): a row
 * per value of row_key and a column per value of col_key (both integers, as rows[] and
 * cols[] list them, headed by their names where given), each cell val_key with `decimals`
 * places, or "-". */
struct eb_grid {
	const char *title, *corner;
	const char *row_key, *col_key, *val_key;
	const long long *rows, *cols;
	const char *const *row_names, *const *col_names; /* NULL: the values */
	int nrows, ncols, decimals;
	const char *where;
	long long is;
};
void eb_sheet_grid(struct eb_sheet *s, const struct eb_grid *g);

/* A line as it is (a verdict line a script reads from the start). */
void eb_sheet_text(struct eb_sheet *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A section's title ("#", then "## title"). */
void eb_sheet_title(struct eb_sheet *s, const char *title);
/* A line of text between or after tables ("# text"; NULL fmt: a lone "#"). */
void eb_sheet_say(struct eb_sheet *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new record for the files; eb_sheet_show prints it as a row of the current flat table. */
struct eb_rec *eb_sheet_rec(struct eb_sheet *s);
void eb_sheet_show(struct eb_sheet *s, const struct eb_rec *r);
/* A record's field, NULL when it has none. */
const struct eb_field *eb_rec_field(const struct eb_rec *r, const char *key);

/* The footer, the files asked for and the document freed: EB_OK, EB_ESYS or EB_ENOMEM. */
int eb_sheet_end(struct eb_sheet *s, uint64_t wrong);
/* The document freed without a footer or files (after a failure). */
void eb_sheet_drop(struct eb_sheet *s);

#endif
