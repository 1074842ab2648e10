#include "rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct eb_field *add(struct eb_rec *r, const char *key, enum eb_val kind)
{
	struct eb_field *f;

	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 16;
		struct eb_field *grown = realloc(r->f, sizeof(*grown) * (size_t)cap);

		if (grown == NULL) {
			r->oom = 1;
			return NULL;
		}
		r->f = grown;
		r->cap = cap;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->key, sizeof(f->key), "%s", key ? key : "");
	f->kind = kind;
	if (r->depth > 0)
		f->flags = EB_NOT_CSV; /* nested fields are JSON-only until routed */
	return f;
}

void eb_rec_num(struct eb_rec *r, const char *key, double v)
{
	struct eb_field *f = add(r, key, EB_V_NUM);

	if (f != NULL)
		f->d = v;
}

void eb_rec_num_or_null(struct eb_rec *r, const char *key, double v, int ok)
{
	if (ok)
		eb_rec_num(r, key, v);
	else
		eb_rec_null(r, key);
}

void eb_rec_int(struct eb_rec *r, const char *key, long long v)
{
	struct eb_field *f = add(r, key, EB_V_INT);

	if (f != NULL)
		f->i = v;
}

void eb_rec_str(struct eb_rec *r, const char *key, const char *v)
{
	struct eb_field *f = add(r, key, EB_V_STR);

	if (f == NULL)
		return;
	f->s = strdup(v ? v : "");
	if (f->s == NULL)
		r->oom = 1;
}

void eb_rec_bool(struct eb_rec *r, const char *key, int v)
{
	struct eb_field *f = add(r, key, EB_V_BOOL);

	if (f != NULL)
		f->i = v != 0;
}

void eb_rec_null(struct eb_rec *r, const char *key)
{
	add(r, key, EB_V_NULL);
}

void eb_rec_obj(struct eb_rec *r, const char *key)
{
	if (add(r, key, EB_V_OBJ) != NULL)
		r->depth++;
}

void eb_rec_end(struct eb_rec *r)
{
	if (add(r, NULL, EB_V_END) != NULL)
		r->depth--;
}

void eb_rec_to(struct eb_rec *r, unsigned flags)
{
	if (r->n > 0)
		r->f[r->n - 1].flags = flags;
}

static struct eb_field *array(struct eb_rec *r, const char *key, enum eb_val kind)
{
	struct eb_field *last = r->n > 0 ? &r->f[r->n - 1] : NULL;

	if (last != NULL && last->kind == kind && strcmp(last->key, key) == 0)
		return last;
	return add(r, key, kind);
}

void eb_rec_strs(struct eb_rec *r, const char *key, const char *v)
{
	struct eb_field *f = array(r, key, EB_V_STRS);
	char **grown;

	if (f == NULL)
		return;
	grown = realloc(f->strs, sizeof(*grown) * (size_t)(f->n + 1));
	if (grown == NULL || (grown[f->n] = strdup(v)) == NULL) {
		if (grown != NULL)
			f->strs = grown;
		r->oom = 1;
		return;
	}
	f->strs = grown;
	f->n++;
}

void eb_rec_items(struct eb_rec *r, const char *key)
{
	array(r, key, EB_V_RECS);
}

struct eb_rec *eb_rec_item(struct eb_rec *r, const char *key)
{
	struct eb_field *f = array(r, key, EB_V_RECS);
	struct eb_rec *grown;

	if (f == NULL)
		return NULL;
	grown = realloc(f->recs, sizeof(*grown) * (size_t)(f->n + 1));
	if (grown == NULL) {
		r->oom = 1;
		return NULL;
	}
	f->recs = grown;
	memset(&f->recs[f->n], 0, sizeof(*grown));
	return &f->recs[f->n++];
}

void eb_rec_stats(struct eb_rec *r, const struct eb_stats *s, const char *mean_key,
		  const char *unit, double scale)
{
	char key[32];

	eb_rec_num(r, mean_key, s->mean * scale);
	snprintf(key, sizeof(key), "min_%s", unit);
	eb_rec_num(r, key, s->min * scale);
	snprintf(key, sizeof(key), "p50_%s", unit);
	eb_rec_num(r, key, s->p50 * scale);
	snprintf(key, sizeof(key), "p99_%s", unit);
	eb_rec_num(r, key, s->p99 * scale);
	snprintf(key, sizeof(key), "max_%s", unit);
	eb_rec_num(r, key, s->max * scale);
	snprintf(key, sizeof(key), "stddev_%s", unit);
	eb_rec_num(r, key, s->stddev * scale);
}

/* A deep copy of field f into a fresh field of r (NULL: out of memory, r->oom set). */
static struct eb_field *copy_field(struct eb_rec *r, const struct eb_field *f)
{
	struct eb_field *t = add(r, f->key, f->kind);
	int k;

	if (t == NULL)
		return NULL;
	t->flags = f->flags;
	t->d = f->d;
	t->i = f->i;
	if (f->s != NULL && (t->s = strdup(f->s)) == NULL)
		r->oom = 1;
	for (k = 0; f->kind == EB_V_STRS && k < f->n; k++) {
		t->strs = k == 0 ? calloc((size_t)f->n, sizeof(*t->strs)) : t->strs;
		if (t->strs == NULL || (t->strs[k] = strdup(f->strs[k])) == NULL) {
			r->oom = 1;
			return t;
		}
		t->n = k + 1;
	}
	for (k = 0; f->kind == EB_V_RECS && k < f->n; k++) {
		t->recs = k == 0 ? calloc((size_t)f->n, sizeof(*t->recs)) : t->recs;
		if (t->recs == NULL) {
			r->oom = 1;
			return t;
		}
		eb_rec_append(&t->recs[k], &f->recs[k]);
		t->n = k + 1;
		r->oom |= t->recs[k].oom;
	}
	return t;
}

void eb_rec_append(struct eb_rec *r, const struct eb_rec *from)
{
	int i;

	for (i = 0; i < from->n; i++)
		copy_field(r, &from->f[i]);
	r->oom |= from->oom;
}

void eb_rec_append_obj(struct eb_rec *r, const struct eb_rec *from, const char *key, unsigned flags)
{
	struct eb_field *t;
	int i, depth = 0;

	for (i = 0; i < from->n; i++) {
		const struct eb_field *f = &from->f[i];

		if (depth == 0 && !(f->kind == EB_V_OBJ && strcmp(f->key, key) == 0))
			continue;
		t = copy_field(r, f);
		if (t != NULL)
			t->flags |= flags;
		depth += f->kind == EB_V_OBJ ? 1 : f->kind == EB_V_END ? -1 : 0;
		if (depth == 0)
			return;
	}
}

void eb_rec_free(struct eb_rec *r)
{
	int i, k;

	for (i = 0; i < r->n; i++) {
		struct eb_field *f = &r->f[i];

		free(f->s);
		for (k = 0; f->kind == EB_V_RECS && k < f->n; k++)
			eb_rec_free(&f->recs[k]);
		for (k = 0; f->kind == EB_V_STRS && k < f->n; k++)
			free(f->strs[k]);
		free(f->recs);
		free(f->strs);
	}
	free(r->f);
	memset(r, 0, sizeof(*r));
}
