#include "doc.h"
#include "efabench/status.h"
#include "core/json.h"
#include "core/log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct eb_rec *eb_doc_add(struct eb_doc *d)
{
	if (d->nres == d->cap) {
		int cap = d->cap ? 2 * d->cap : 32;
		struct eb_rec *grown = realloc(d->res, sizeof(*grown) * (size_t)cap);

		if (grown == NULL) {
			d->oom = 1;
			eb_err("out of memory for result records");
			return NULL;
		}
		d->res = grown;
		d->cap = cap;
	}
	memset(&d->res[d->nres], 0, sizeof(*d->res));
	return &d->res[d->nres++];
}

void eb_doc_pop(struct eb_doc *d)
{
	if (d->nres > 0)
		eb_rec_free(&d->res[--d->nres]);
}

void eb_doc_free(struct eb_doc *d)
{
	int i;

	eb_rec_free(&d->head);
	for (i = 0; i < d->nres; i++)
		eb_rec_free(&d->res[i]);
	free(d->res);
	memset(d, 0, sizeof(*d));
}

FILE *eb_out_open(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");

	if (f == NULL)
		eb_err("cannot write %s: %s", path, strerror(errno));
	return f;
}

int eb_out_close(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (f == stdout) /* "-": flushed, left open for what else goes there */
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	if (bad) {
		eb_err("writing %s failed", path);
		return EB_ESYS;
	}
	return EB_OK;
}

/* ---- JSON ---- */

static void json_fields(struct eb_json *j, const struct eb_rec *r);

static void json_rec(struct eb_json *j, const char *key, const struct eb_rec *r)
{
	eb_json_obj_begin(j, key);
	json_fields(j, r);
	eb_json_obj_end(j);
}

static void json_fields(struct eb_json *j, const struct eb_rec *r)
{
	int i, k;

	for (i = 0; i < r->n; i++) {
		const struct eb_field *f = &r->f[i];
		const char *key = f->key;

		if (f->flags & EB_NOT_JSON)
			continue;
		switch (f->kind) {
		case EB_V_NUM:
			eb_json_num(j, key, f->d);
			break;
		case EB_V_INT:
			eb_json_int(j, key, f->i);
			break;
		case EB_V_STR:
			eb_json_str(j, key, f->s);
			break;
		case EB_V_BOOL:
			eb_json_bool(j, key, (int)f->i);
			break;
		case EB_V_NULL:
			eb_json_null(j, key);
			break;
		case EB_V_OBJ:
			eb_json_obj_begin(j, key);
			break;
		case EB_V_END:
			eb_json_obj_end(j);
			break;
		case EB_V_RECS:
			eb_json_arr_begin(j, key);
			for (k = 0; k < f->n; k++)
				json_rec(j, NULL, &f->recs[k]);
			eb_json_arr_end(j);
			break;
		case EB_V_STRS:
			eb_json_arr_begin(j, key);
			for (k = 0; k < f->n; k++)
				eb_json_str(j, NULL, f->strs[k]);
			eb_json_arr_end(j);
			break;
		}
	}
}

static int write_json(const struct eb_doc *d, const char *path)
{
	FILE *f = eb_out_open(path);
	struct eb_json j;
	int i;

	if (f == NULL)
		return EB_ESYS;
	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	json_fields(&j, &d->head);
	eb_json_arr_begin(&j, "results");
	for (i = 0; i < d->nres; i++)
		json_rec(&j, NULL, &d->res[i]);
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	return eb_out_close(f, path);
}

/* ---- CSV ---- */

static int is_scalar(enum eb_val k)
{
	return k == EB_V_NUM || k == EB_V_INT || k == EB_V_STR || k == EB_V_BOOL || k == EB_V_NULL;
}

static int to_csv(const struct eb_field *f)
{
	return is_scalar(f->kind) && !(f->flags & EB_NOT_CSV);
}

/* The columns: every CSV field of every record, in the order first seen. */
static int columns(const struct eb_doc *d, const char ***cols, int *ncols)
{
	int r, i, c, n = 0, cap = 0;
	const char **out = NULL;

	for (r = 0; r < d->nres; r++)
		for (i = 0; i < d->res[r].n; i++) {
			const struct eb_field *f = &d->res[r].f[i];

			if (!to_csv(f))
				continue;
			for (c = 0; c < n && strcmp(out[c], f->key) != 0; c++)
				;
			if (c < n)
				continue;
			if (n == cap) {
				const char **grown;

				cap = cap ? 2 * cap : 32;
				grown = realloc(out, sizeof(*grown) * (size_t)cap);
				if (grown == NULL) {
					free(out);
					return EB_ENOMEM;
				}
				out = grown;
			}
			out[n++] = f->key;
		}
	*cols = out;
	*ncols = n;
	return EB_OK;
}

static void csv_value(FILE *f, const struct eb_field *x)
{
	switch (x->kind) {
	case EB_V_NUM:
		if (isfinite(x->d))
			fprintf(f, "%.10g", x->d);
		break;
	case EB_V_INT:
	case EB_V_BOOL:
		fprintf(f, "%lld", x->i);
		break;
	case EB_V_STR:
		/* Quote values that would break the row. */
		if (strpbrk(x->s, ",\"\n") != NULL) {
			const char *p;

			fputc('"', f);
			for (p = x->s; *p; p++)
				fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
			fputc('"', f);
		} else {
			fputs(x->s, f);
		}
		break;
	default:
		break;
	}
}

static int write_csv(const struct eb_doc *d, const char *path)
{
	const char **cols;
	int ncols, r, c, i, rc;
	FILE *f;

	rc = columns(d, &cols, &ncols);
	if (rc != EB_OK) {
		eb_err("out of memory writing %s", path);
		return EB_ESYS;
	}
	f = eb_out_open(path);
	if (f == NULL) {
		free(cols);
		return EB_ESYS;
	}
	for (c = 0; c < ncols; c++)
		fprintf(f, "%s%s", c ? "," : "", cols[c]);
	fputc('\n', f);
	for (r = 0; r < d->nres; r++) {
		const struct eb_rec *x = &d->res[r];

		for (c = 0; c < ncols; c++) {
			if (c > 0)
				fputc(',', f);
			for (i = 0; i < x->n; i++)
				if (to_csv(&x->f[i]) && strcmp(x->f[i].key, cols[c]) == 0) {
					csv_value(f, &x->f[i]);
					break;
				}
		}
		fputc('\n', f);
	}
	free(cols);
	return eb_out_close(f, path);
}

int eb_doc_write(const struct eb_doc *d, const char *csv_path, const char *json_path)
{
	int rc = EB_OK, i;

	for (i = 0; i < d->nres && !d->head.oom; i++)
		if (d->res[i].oom)
			break;
	if (d->oom || d->head.oom || i < d->nres) {
		eb_err("out of memory while recording results: no CSV or JSON written");
		return EB_ESYS;
	}
	if (csv_path != NULL && write_csv(d, csv_path) != EB_OK)
		rc = EB_ESYS;
	if (json_path != NULL && write_json(d, json_path) != EB_OK)
		rc = EB_ESYS;
	return rc;
}
