#include "json.h"

#include <math.h>

void eb_json_init(struct eb_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Comma, newline and indentation before a value, then its key when inside an object. */
static void prefix(struct eb_json *j, const char *key)
{
	int i;

	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0)
		fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
	j->need_comma[j->depth] = 1;
	if (key != NULL) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_scope(struct eb_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	/* Deeper nesting than the comma table holds is a caller bug: stay in bounds. */
	if (j->depth < 31)
		j->depth++;
	j->need_comma[j->depth] = 0;
}

static void close_scope(struct eb_json *j, char c)
{
	int i, had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had) {
		fputc('\n', j->f);
		for (i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void eb_json_obj_begin(struct eb_json *j, const char *key)
{
	open_scope(j, key, '{');
}

void eb_json_obj_end(struct eb_json *j)
{
	close_scope(j, '}');
}

void eb_json_arr_begin(struct eb_json *j, const char *key)
{
	open_scope(j, key, '[');
}

void eb_json_arr_end(struct eb_json *j)
{
	close_scope(j, ']');
}

void eb_json_str(struct eb_json *j, const char *key, const char *value)
{
	prefix(j, key);
	if (value == NULL)
		fputs("null", j->f);
	else
		put_string(j->f, value);
}

void eb_json_int(struct eb_json *j, const char *key, long long value)
{
	prefix(j, key);
	fprintf(j->f, "%lld", value);
}

void eb_json_num(struct eb_json *j, const char *key, double value)
{
	prefix(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.10g", value);
	else
		fputs("null", j->f);
}

void eb_json_bool(struct eb_json *j, const char *key, int value)
{
	prefix(j, key);
	fputs(value ? "true" : "false", j->f);
}

void eb_json_null(struct eb_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}
