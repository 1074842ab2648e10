/* A result record: named values in order, nested objects and arrays of records. Every
 * subcommand describes its results this way; one JSON writer and one CSV writer (doc.h) turn
 * them into files, so no subcommand writes a file format itself. */
#ifndef EB_REPORT_REC_H
#define EB_REPORT_REC_H

#include "efabench/stats.h"

#include <stdint.h>

enum eb_val {
	EB_V_NUM,
	EB_V_INT,
	EB_V_STR,
	EB_V_BOOL,
	EB_V_NULL,
	EB_V_OBJ,  /* the fields up to the matching EB_V_END form an object */
	EB_V_END,  /* closes the innermost object */
	EB_V_RECS, /* an array of records */
	EB_V_STRS, /* an array of strings */
};

/* Where a field goes. Top-level scalars go to JSON and CSV unless told otherwise; fields
 * inside objects go to JSON only, unless marked EB_TO_CSV. */
#define EB_TO_CSV   1u /* also a CSV column */
#define EB_NOT_CSV  2u
#define EB_NOT_JSON 4u /* CSV only */

struct eb_rec;

struct eb_field {
	char key[32];
	enum eb_val kind;
	unsigned flags;
	double d;
	long long i;
	char *s;	     /* STR: owned copy */
	struct eb_rec *recs; /* RECS: owned array */
	char **strs;	     /* STRS: owned copies */
	int n;		     /* RECS / STRS: elements */
};

struct eb_rec {
	struct eb_field *f;
	int n, cap;
	int depth; /* objects open */
	int oom;   /* an allocation failed: writers refuse the record */
};

void eb_rec_num(struct eb_rec *r, const char *key, double v);
/* v, or null where ok is 0 (a figure that does not exist, such as BusBW without a link). */
void eb_rec_num_or_null(struct eb_rec *r, const char *key, double v, int ok);
void eb_rec_int(struct eb_rec *r, const char *key, long long v);
void eb_rec_str(struct eb_rec *r, const char *key, const char *v);
void eb_rec_bool(struct eb_rec *r, const char *key, int v);
void eb_rec_null(struct eb_rec *r, const char *key);
void eb_rec_obj(struct eb_rec *r, const char *key);
void eb_rec_end(struct eb_rec *r);
/* Append a string to the string array key (created when the last field is not it). */
void eb_rec_strs(struct eb_rec *r, const char *key, const char *v);
/* Append a record to the array key (created when the last field is not it); fill the record
 * returned. NULL when out of memory (the parent is marked). */
struct eb_rec *eb_rec_item(struct eb_rec *r, const char *key);
/* An empty array of records. */
void eb_rec_items(struct eb_rec *r, const char *key);
/* Route the last field added (EB_TO_CSV, EB_NOT_CSV, EB_NOT_JSON). */
void eb_rec_to(struct eb_rec *r, unsigned flags);

/* Statistics of seconds as <prefix>_us keys (mean first under mean_key): min, p50, p99, max,
 * stddev. scale turns seconds into the unit (1e6 for us). */
void eb_rec_stats(struct eb_rec *r, const struct eb_stats *s, const char *mean_key,
		  const char *unit, double scale);

/* Append a deep copy of every field of from (a benchmark's own figures kept for later). */
void eb_rec_append(struct eb_rec *r, const struct eb_rec *from);

/* Append a deep copy of the object key of from (its fields and the object itself), each
 * field's flags ORed with flags (EB_NOT_JSON: for the CSV's columns only). */
void eb_rec_append_obj(struct eb_rec *r, const struct eb_rec *from, const char *key,
		       unsigned flags);

void eb_rec_free(struct eb_rec *r);

#endif
