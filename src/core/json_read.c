#include "json_read.h"
#include "log.h"
#include "efabench/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_FILE  (64L << 20)

struct parser {
	const char *start, *p, *end;
	int depth;
	char *err;
	size_t errlen;
	int oom;
};

/* EB_EINVAL with "line L column C: what" in err (the first failure wins). */
static int fail(struct parser *ps, const char *what)
{
	const char *q;
	int line = 1, col = 1;

	for (q = ps->start; q < ps->p; q++, col++)
		if (*q == '\n') {
			line++;
			col = 0;
		}
	if (ps->err[0] == '\0')
		snprintf(ps->err, ps->errlen, "line %d column %d: %s", line, col, what);
	return EB_EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static struct eb_jv *node(struct parser *ps, enum eb_jtype t)
{
	struct eb_jv *v = calloc(1, sizeof(*v));

	if (v == NULL)
		ps->oom = 1;
	else
		v->type = t;
	return v;
}

static int hex4(const char *p, unsigned *out)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (*out = 0, i = 0; i < 4; i++) {
		const char *d = (unsigned char)p[i] > ' ' ? strchr(hex, p[i] | 0x20) : NULL;

		if (d == NULL)
			return -1;
		*out = *out << 4 | (unsigned)(d - hex);
	}
	return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* One \uXXXX escape (a surrogate pair as one code point) at ps->p, past the backslash-u. */
static int unicode(struct parser *ps, unsigned *cp)
{
	unsigned lo;

	if (ps->end - ps->p < 4 || hex4(ps->p, cp) != 0)
		return fail(ps, "\\u needs four hex digits");
	ps->p += 4;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return fail(ps, "a low surrogate without a high one");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return *cp == 0 ? fail(ps, "\\u0000 is not supported") : EB_OK;
	if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
	    hex4(ps->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
		return fail(ps, "a high surrogate without a low one");
	ps->p += 6;
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return EB_OK;
}

/* A string at ps->p (on its opening quote), decoded into *out. */
static int string(struct parser *ps, char **out)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	const char *q = ps->p + 1;
	char *o;

	while (q < ps->end && *q != '"') /* the decoded text is never longer than the raw */
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	if (q >= ps->end)
		return fail(ps, "a string without its closing quote");
	*out = o = malloc((size_t)(q - ps->p));
	if (o == NULL) {
		ps->oom = 1;
		return EB_ENOMEM;
	}
	for (ps->p++; *ps->p != '"';) {
		unsigned char c = (unsigned char)*ps->p;
		const char *e;
		unsigned cp;

		if (c < 0x20)
			return fail(ps, "a control character inside a string");
		ps->p++;
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		e = strchr(esc_in, *ps->p);
		if (*ps->p == 'u') {
			ps->p++;
			if (unicode(ps, &cp) != EB_OK)
				return EB_EINVAL;
			o = put_utf8(o, cp);
		} else if (*ps->p != '\0' && e != NULL) {
			*o++ = esc_out[e - esc_in];
			ps->p++;
		} else {
			return fail(ps, "an unknown escape in a string");
		}
	}
	*o = '\0';
	ps->p++;
	return EB_OK;
}

static int digits(struct parser *ps)
{
	const char *s = ps->p;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return ps->p > s;
}

static int number(struct parser *ps, double *out)
{
	const char *s = ps->p;
	char buf[64];

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0')
		ps->p++;
	else if (!digits(ps))
		return fail(ps, "a value was expected");
	if (ps->p < ps->end && *ps->p == '.' && (ps->p++, !digits(ps)))
		return fail(ps, "digits must follow a decimal point");
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!digits(ps))
			return fail(ps, "digits must follow an exponent");
	}
	if ((size_t)(ps->p - s) >= sizeof(buf))
		return fail(ps, "a number too long");
	memcpy(buf, s, (size_t)(ps->p - s));
	buf[ps->p - s] = '\0';
	*out = strtod(buf, NULL);
	return EB_OK;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, "a value was expected");
	ps->p += n;
	return EB_OK;
}

static int value(struct parser *ps, struct eb_jv **out);

/* The elements of an array or the members of an object, ps->p past its opening bracket. */
static int members(struct parser *ps, struct eb_jv *v, char close)
{
	struct eb_jv **tail = &v->kid;
	int rc;

	if (++ps->depth > MAX_DEPTH)
		return fail(ps, "nested too deep");
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return EB_OK;
	}
	for (;;) {
		char *key = NULL;

		skip_ws(ps);
		if (close == '}') {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "a member name (a string) was expected");
			if ((rc = string(ps, &key)) != EB_OK)
				goto free_key;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				rc = fail(ps, "':' was expected after a member name");
				goto free_key;
			}
			ps->p++;
		}
		if ((rc = value(ps, tail)) != EB_OK)
			goto free_key;
		(*tail)->key = key;
		tail = &(*tail)->next;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return EB_OK;
		}
		return fail(ps,
			    close == '}' ? "',' or '}' was expected" : "',' or ']' was expected");
	free_key:
		free(key);
		return rc;
	}
}

static int value(struct parser *ps, struct eb_jv **out)
{
	struct eb_jv *v;
	char c;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "a value was expected");
	c = *ps->p;
	v = node(ps, c == '{'		    ? EB_J_OBJ
		     : c == '['		    ? EB_J_ARR
		     : c == '"'		    ? EB_J_STR
		     : c == 't' || c == 'f' ? EB_J_BOOL
		     : c == 'n'		    ? EB_J_NULL
					    : EB_J_NUM);
	if (v == NULL)
		return EB_ENOMEM;
	*out = v;
	if (c == '{' || c == '[') {
		ps->p++;
		return members(ps, v, c == '{' ? '}' : ']');
	}
	if (c == '"')
		return string(ps, &v->str);
	if (c == 't' || c == 'f') {
		v->num = c == 't';
		return literal(ps, c == 't' ? "true" : "false");
	}
	if (c == 'n')
		return literal(ps, "null");
	return number(ps, &v->num);
}

int eb_json_parse(const char *text, size_t len, struct eb_jv **root, char *err, size_t errlen)
{
	struct parser ps = {text, text, text + len, 0, err, errlen, 0};
	int rc;

	err[0] = '\0';
	*root = NULL;
	rc = value(&ps, root);
	skip_ws(&ps);
	if (rc == EB_OK && ps.p != ps.end)
		rc = fail(&ps, "text after the value");
	if (ps.oom) {
		snprintf(err, errlen, "out of memory");
		rc = EB_ENOMEM;
	}
	if (rc != EB_OK) {
		eb_jv_free(*root);
		*root = NULL;
	}
	return rc;
}

int eb_json_load(const char *path, struct eb_jv **root)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL, err[160];
	long size = -1;
	size_t len;
	int rc;

	*root = NULL;
	if (f == NULL) {
		eb_err("cannot read %s: %s", path, strerror(errno));
		return EB_ESYS;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    size > MAX_FILE) {
		eb_err("cannot read %s: %s", path,
		       size > MAX_FILE ? "larger than 64 MiB" : "not a file");
		rc = EB_ESYS;
		goto close_file;
	}
	text = malloc((size_t)size + 1);
	if (text == NULL) {
		eb_err("out of memory reading %s", path);
		rc = EB_ENOMEM;
		goto close_file;
	}
	len = fread(text, 1, (size_t)size, f);
	if (len != (size_t)size) {
		eb_err("cannot read %s: short read", path);
		rc = EB_ESYS;
		goto free_text;
	}
	rc = eb_json_parse(text, len, root, err, sizeof(err));
	if (rc != EB_OK)
		eb_err("%s is not valid JSON: %s", path, err);
free_text:
	free(text);
close_file:
	fclose(f);
	return rc;
}

void eb_jv_free(struct eb_jv *v)
{
	while (v != NULL) {
		struct eb_jv *next = v->next;

		eb_jv_free(v->kid);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

const struct eb_jv *eb_jv_get(const struct eb_jv *v, const char *key)
{
	const struct eb_jv *k;

	if (v == NULL || v->type != EB_J_OBJ)
		return NULL;
	for (k = v->kid; k != NULL; k = k->next)
		if (strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

const char *eb_jv_str(const struct eb_jv *v, const char *key, const char *def)
{
	const struct eb_jv *k = eb_jv_get(v, key);

	return k != NULL && k->type == EB_J_STR ? k->str : def;
}

double eb_jv_num(const struct eb_jv *v, const char *key, double def)
{
	const struct eb_jv *k = eb_jv_get(v, key);

	return k != NULL && k->type == EB_J_NUM ? k->num : def;
}

int eb_jv_bool(const struct eb_jv *v, const char *key, int def)
{
	const struct eb_jv *k = eb_jv_get(v, key);

	return k != NULL && k->type == EB_J_BOOL ? (int)k->num : def;
}
