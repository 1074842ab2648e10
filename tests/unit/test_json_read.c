/* The strict JSON reader: values of every type, escapes and surrogate pairs, a round trip
 * through the writer (core/json.h), and malformed input rejected with a line and column. */
#include "check.h"
#include "core/json.h"
#include "core/json_read.h"
#include "efabench/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct eb_jv *parse(const char *text, char *err, size_t len)
{
	struct eb_jv *v = NULL;

	if (eb_json_parse(text, strlen(text), &v, err, len) != EB_OK)
		return NULL;
	return v;
}

static void values(void)
{
	char err[160];
	struct eb_jv *v =
	    parse(" {\"a\": 1, \"b\": [true, false, null, -0.5e2, \"x\"],\n"
		  "  \"c\": {\"d\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}, \"e\": {}, \"f\": [] } ",
		  err, sizeof(err));
	const struct eb_jv *b, *k;

	CHECK(v != NULL && v->type == EB_J_OBJ);
	CHECK(eb_jv_num(v, "a", 0) == 1);
	b = eb_jv_get(v, "b");
	CHECK(b != NULL && b->type == EB_J_ARR);
	k = b != NULL ? b->kid : NULL;
	CHECK(k != NULL && k->type == EB_J_BOOL && k->num == 1);
	CHECK(k != NULL && k->next != NULL && k->next->type == EB_J_BOOL && k->next->num == 0);
	CHECK(k != NULL && k->next->next->type == EB_J_NULL);
	CHECK(k != NULL && k->next->next->next->num == -50);
	CHECK(k != NULL && strcmp(k->next->next->next->next->str, "x") == 0);
	CHECK(strcmp(eb_jv_str(eb_jv_get(v, "c"), "d", ""), "\"\\/\b\f\n\r\t") == 0);
	CHECK(eb_jv_get(v, "e") != NULL && eb_jv_get(v, "e")->kid == NULL);
	CHECK(eb_jv_get(v, "f") != NULL && eb_jv_get(v, "f")->type == EB_J_ARR);
	CHECK(eb_jv_get(v, "missing") == NULL);
	CHECK(strcmp(eb_jv_str(v, "a", "def"), "def") == 0); /* a number, not a string */
	CHECK(eb_jv_bool(v, "a", -1) == -1);
	eb_jv_free(v);

	/* \u escapes: 2- and 3-byte UTF-8, and a surrogate pair as one 4-byte character. */
	v = parse("\"\\u00e9\\u20AC\\ud83d\\ude00\"", err, sizeof(err));
	CHECK(v != NULL && strcmp(v->str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0);
	eb_jv_free(v);
	v = parse("12345678901234567890", err, sizeof(err));
	CHECK(v != NULL && v->num > 1.2e19 && v->num < 1.3e19);
	eb_jv_free(v);
}

/* What the writer writes, the reader reads back. */
static void round_trip(void)
{
	char *buf = NULL, err[160];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct eb_json j;
	struct eb_jv *v = NULL;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "s", "tab\there \"q\" \001");
	eb_json_num(&j, "pi", 3.25);
	eb_json_num(&j, "nan", NAN);
	eb_json_arr_begin(&j, "nics");
	eb_json_str(&j, NULL, "rdmap0s6");
	eb_json_str(&j, NULL, "rdmap0s7");
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	fclose(f);
	CHECK(eb_json_parse(buf, len, &v, err, sizeof(err)) == EB_OK);
	CHECK(strcmp(eb_jv_str(v, "s", ""), "tab\there \"q\" \001") == 0);
	CHECK(eb_jv_num(v, "pi", 0) == 3.25);
	CHECK(eb_jv_get(v, "nan") != NULL && eb_jv_get(v, "nan")->type == EB_J_NULL);
	CHECK(eb_jv_get(v, "nics") != NULL &&
	      strcmp(eb_jv_get(v, "nics")->kid->next->str, "rdmap0s7") == 0);
	eb_jv_free(v);
	free(buf);
}

static void malformed(void)
{
	static const char *const bad[] = {"",
					  "   ",
					  "{",
					  "}",
					  "[1,]",
					  "{\"a\":1,}",
					  "{\"a\" 1}",
					  "{a:1}",
					  "{'a':1}",
					  "[1 2]",
					  "01",
					  "-",
					  "1.",
					  ".5",
					  "1e",
					  "+1",
					  "tru",
					  "nul",
					  "True",
					  "\"abc",
					  "\"a\\x\"",
					  "\"\\u12\"",
					  "\"\\ud800\"",
					  "\"\\udc00\"",
					  "\"\\u0000\"",
					  "\"a\tb\"",
					  "[1] [2]",
					  "{\"a\":1}x",
					  "NaN",
					  "[\"a\",]",
					  "\"\\ud800\\u0041\""};
	char err[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct eb_jv *v = (struct eb_jv *)1;
		int rc = eb_json_parse(bad[i], strlen(bad[i]), &v, err, sizeof(err));

		CHECK(rc == EB_EINVAL && v == NULL && strncmp(err, "line ", 5) == 0);
		if (rc == EB_OK) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			eb_jv_free(v);
		}
	}
	/* The line and column of the fault. */
	CHECK(parse("{\n  \"a\": 1,\n  \"b\": x}", err, sizeof(err)) == NULL);
	CHECK(strncmp(err, "line 3 column 8:", 16) == 0);
	/* Deep nesting is refused, not a stack overflow. */
	{
		char deep[200];

		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		CHECK(eb_json_parse(deep, sizeof(deep), &(struct eb_jv *){NULL}, err,
				    sizeof(err)) == EB_EINVAL);
		CHECK(strstr(err, "deep") != NULL);
	}
	/* A NUL byte inside the text is not whitespace. */
	CHECK(eb_json_parse("1\0", 2, &(struct eb_jv *){NULL}, err, sizeof(err)) == EB_EINVAL);
}

int main(void)
{
	values();
	round_trip();
	malformed();
	return check_done();
}
