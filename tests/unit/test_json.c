/* The streaming JSON writer: nesting, commas, escapes, non-finite numbers, empty scopes.
 * The output is validated by python3's json module when available, by a small structural
 * scan otherwise, and searched for the exact spellings it must contain. */
#include "check.h"
#include "core/json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_doc(FILE *f)
{
	struct eb_json j;
	int i;

	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "name", "efabench");
	eb_json_str(&j, "quote", "say \"hi\"");
	eb_json_str(&j, "backslash", "C:\\path\\");
	eb_json_str(&j, "newline", "line1\nline2\r\ttab");
	eb_json_str(&j, "control", "a\001b\037c");
	eb_json_str(&j, "key \"with\" quotes\\", "v");
	eb_json_str(&j, "empty_string", "");
	eb_json_str(&j, "null_string", NULL);
	eb_json_int(&j, "zero", 0);
	eb_json_int(&j, "llong_min", LLONG_MIN);
	eb_json_int(&j, "llong_max", LLONG_MAX);
	eb_json_num(&j, "pi", 3.14159265358979);
	eb_json_num(&j, "tiny", 1e-300);
	eb_json_num(&j, "huge", -1e300);
	eb_json_num(&j, "negzero", -0.0);
	eb_json_num(&j, "nan", NAN);
	eb_json_num(&j, "inf", INFINITY);
	eb_json_num(&j, "ninf", -INFINITY);
	eb_json_bool(&j, "yes", 1);
	eb_json_bool(&j, "no", 0);
	eb_json_null(&j, "nothing");
	eb_json_obj_begin(&j, "empty_obj");
	eb_json_obj_end(&j);
	eb_json_arr_begin(&j, "empty_arr");
	eb_json_arr_end(&j);
	eb_json_arr_begin(&j, "results");
	for (i = 0; i < 3; i++) {
		eb_json_obj_begin(&j, NULL);
		eb_json_int(&j, "bytes", 4096LL << i);
		eb_json_num(&j, "gbps", i == 1 ? NAN : 1.5 * i);
		eb_json_arr_begin(&j, "samples");
		eb_json_num(&j, NULL, 1.0);
		eb_json_num(&j, NULL, INFINITY);
		eb_json_int(&j, NULL, -2);
		eb_json_arr_begin(&j, NULL);
		eb_json_arr_end(&j);
		eb_json_obj_begin(&j, NULL);
		eb_json_obj_end(&j);
		eb_json_str(&j, NULL, "\"\\\n");
		eb_json_arr_end(&j);
		eb_json_obj_end(&j);
	}
	eb_json_arr_end(&j);
	eb_json_obj_begin(&j, "deep");
	eb_json_arr_begin(&j, "a");
	eb_json_arr_begin(&j, NULL);
	eb_json_obj_begin(&j, NULL);
	eb_json_arr_begin(&j, "b");
	eb_json_bool(&j, NULL, 1);
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	eb_json_arr_end(&j);
	eb_json_arr_end(&j);
	eb_json_obj_end(&j);
	eb_json_obj_end(&j);
}

/* A minimal structural check: balanced brackets outside strings, every string closed, no
 * raw control characters inside strings, nothing but whitespace after the top value. */
static int balanced(const char *s)
{
	char stack[64];
	int depth = 0, in_str = 0, seen_top = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (in_str) {
			if (c < 0x20)
				return 0;
			if (c == '\\') {
				if (s[1] == '\0')
					return 0;
				s++;
			} else if (c == '"') {
				in_str = 0;
			}
			continue;
		}
		if (depth == 0 && seen_top && c != ' ' && c != '\n' && c != '\t' && c != '\r')
			return 0;
		switch (c) {
		case '"':
			in_str = 1;
			break;
		case '{':
		case '[':
			if (depth == (int)sizeof(stack))
				return 0;
			stack[depth++] = (char)c;
			break;
		case '}':
		case ']':
			if (depth == 0 || stack[depth - 1] != (c == '}' ? '{' : '['))
				return 0;
			if (--depth == 0)
				seen_top = 1;
			break;
		default:
			break;
		}
	}
	return depth == 0 && !in_str && seen_top;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf != NULL)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static int have_python(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

static int python_ok(const char *program, const char *path)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s'", program, path);
	return system(cmd) == 0;
}

/* Loads the document and checks that values survived the round trip. */
static const char *const python_values =
    "import json,sys\n"
    "d = json.load(open(sys.argv[1]))\n"
    "assert d[\"quote\"] == \"say \\\"hi\\\"\", d[\"quote\"]\n"
    "assert d[\"backslash\"] == \"C:\\\\path\\\\\"\n"
    "assert d[\"newline\"] == \"line1\\nline2\\r\\ttab\"\n"
    "assert d[\"control\"] == \"a\\x01b\\x1fc\"\n"
    "assert d[\"key \\\"with\\\" quotes\\\\\"] == \"v\"\n"
    "assert d[\"empty_string\"] == \"\" and d[\"null_string\"] is None\n"
    "assert d[\"llong_min\"] == -2**63 and d[\"llong_max\"] == 2**63 - 1\n"
    "assert abs(d[\"pi\"] - 3.14159265358979) < 1e-9\n"
    "assert d[\"huge\"] == -1e300 and d[\"tiny\"] > 0\n"
    "assert d[\"nan\"] is None and d[\"inf\"] is None and d[\"ninf\"] is None\n"
    "assert d[\"yes\"] is True and d[\"no\"] is False and d[\"nothing\"] is None\n"
    "assert d[\"empty_obj\"] == {} and d[\"empty_arr\"] == []\n"
    "r = d[\"results\"]\n"
    "assert [x[\"bytes\"] for x in r] == [4096, 8192, 16384]\n"
    "assert r[0][\"gbps\"] == 0 and r[1][\"gbps\"] is None and r[2][\"gbps\"] == 3\n"
    "assert all(x[\"samples\"] == [1, None, -2, [], {}, \"\\\"\\\\\\n\"] for x in r)\n"
    "assert d[\"deep\"] == {\"a\": [[{\"b\": [True]}]]}\n"
    "assert len(d) == 25, len(d)\n";

static void test_document(void)
{
	char path[] = "/tmp/eb_test_json_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char *text;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	CHECK(f != NULL);
	if (f == NULL) {
		close(fd);
		unlink(path);
		return;
	}
	write_doc(f);
	CHECK(fclose(f) == 0);

	text = slurp(path);
	CHECK(text != NULL);
	if (text != NULL) {
		CHECK(balanced(text));
		CHECK(strstr(text, "\"say \\\"hi\\\"\"") != NULL);
		CHECK(strstr(text, "\"C:\\\\path\\\\\"") != NULL);
		CHECK(strstr(text, "\"line1\\u000aline2\\u000d\\u0009tab\"") != NULL ||
		      strstr(text, "\"line1\\nline2\\r\\ttab\"") != NULL);
		CHECK(strstr(text, "\"a\\u0001b\\u001fc\"") != NULL);
		CHECK(strstr(text, "\"nan\": null") != NULL);
		CHECK(strstr(text, "\"inf\": null") != NULL);
		CHECK(strstr(text, "\"ninf\": null") != NULL);
		CHECK(strstr(text, "\"empty_obj\": {}") != NULL);
		CHECK(strstr(text, "\"empty_arr\": []") != NULL);
		CHECK(strstr(text, "nan,") == NULL && strstr(text, "inf,") == NULL);
		CHECK(text[strlen(text) - 1] == '\n');
		free(text);
	}
	if (have_python()) {
		CHECK(python_ok("import json,sys; json.load(open(sys.argv[1]))", path));
		CHECK(python_ok(python_values, path));
	} else {
		printf("python3 not found: structural check only\n");
	}
	unlink(path);
}

/* A top-level array, and empty top-level scopes, are complete documents on their own. */
static void test_small_docs(void)
{
	static const char *const want[] = {"[\n  1,\n  \"x\"\n]\n", "{}\n", "[]\n"};
	int k;

	for (k = 0; k < 3; k++) {
		char path[] = "/tmp/eb_test_json_XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		struct eb_json j;
		char *text;

		CHECK(f != NULL);
		if (f == NULL) {
			if (fd >= 0) {
				close(fd);
				unlink(path);
			}
			continue;
		}
		eb_json_init(&j, f);
		if (k == 0) {
			eb_json_arr_begin(&j, NULL);
			eb_json_int(&j, NULL, 1);
			eb_json_str(&j, NULL, "x");
			eb_json_arr_end(&j);
		} else if (k == 1) {
			eb_json_obj_begin(&j, NULL);
			eb_json_obj_end(&j);
		} else {
			eb_json_arr_begin(&j, NULL);
			eb_json_arr_end(&j);
		}
		CHECK(j.depth == 0);
		fclose(f);
		text = slurp(path);
		CHECK(text != NULL && strcmp(text, want[k]) == 0);
		if (text != NULL && strcmp(text, want[k]) != 0)
			fprintf(stderr, "  got <<%s>> want <<%s>>\n", text, want[k]);
		free(text);
		unlink(path);
	}
}

int main(void)
{
	CHECK(balanced("{\"a\": [1, {\"b\": \"]\"}]}\n"));
	CHECK(!balanced("{\"a\": [1}"));
	CHECK(!balanced("{\"a\": \"x}"));
	CHECK(!balanced("{} {}"));
	test_document();
	test_small_docs();
	return check_done();
}
