/* The report layer's writers: a document with nested objects, arrays of records, nulls and
 * awkward strings, written as JSON (read back by python3) and as CSV (columns in first-seen
 * order, quoting, CSV-only and JSON-only routing, missing cells left empty); and a list of
 * facts stated as the calls of each kind state them. */
#include "check.h"
#include "efabench/status.h"
#include "report/doc.h"
#include "report/sheet.h"
#include "harness/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A table cell is flagged when stalls moved its mean: the main job's 2-core run once showed
 * 2,015 us mean between 40 us iterations. Iterations timed one by one only. */
static void skew(void)
{
	struct eb_stats all = {.n = 20, .mean = 2015e-6, .p50 = 40e-6, .max = 39e-3};

	CHECK(eb_sweep_skewed(&all, 0));
	all.mean = 1.4 * all.p50; /* ordinary spread */
	CHECK(!eb_sweep_skewed(&all, 0));
	all.mean = 2015e-6;
	/* timed by the phase: no median of iterations to hold it to */
	CHECK(!eb_sweep_skewed(&all, 5));
	all.n = 2;
	CHECK(!eb_sweep_skewed(&all, 0));
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The same facts through eb_fact_list and through a call each: the same header lines and the
 * same JSON head. */
static void fact_list(const char *dir)
{
	static const char *const two[] = {"a", "b"};
	const struct eb_fact_item f[] = {
	    EB_F_BREAK,
	    EB_F_INT("n", "n", 3),
	    EB_F_NUM("t", "timeout", 1.5, "%g s"),
	    EB_F_NUM("plain", "plain", 0.25, NULL),
	    EB_F_STR("s", NULL, "json only"),
	    EB_F_STR(NULL, "only", "the header"),
	    EB_F_STR(NULL, NULL, "(after it)"),
	    EB_F_SIZE("piece", "piece", 262144),
	    EB_F_BOOL("ok", "ok", 1),
	    EB_F_STRS("inits", "initiators", two, 2),
	    EB_F_STRS("none", "none", two, 0),
	    EB_F_SAY("note", "said alone"),
	    EB_F_INT("after", "after", -1),
	};
	struct eb_sheet x, y;
	char a[96], b[96];
	char *ta, *tb;
	int i;

	CHECK(eb_sheet_begin(&x, "toy", NULL, NULL, NULL) == EB_OK);
	CHECK(eb_sheet_begin(&y, "toy", NULL, NULL, NULL) == EB_OK);
	eb_fact_list(&x, f, (int)(sizeof(f) / sizeof(f[0])));
	eb_fact_break(&y);
	eb_fact_int(&y, "n", "n", 3);
	eb_fact_num(&y, "t", "timeout", 1.5, "%g s");
	eb_fact_num(&y, "plain", "plain", 0.25, NULL);
	eb_fact_str(&y, "s", NULL, "json only");
	eb_head_fact(&y.head, "only", "%s", "the header");
	eb_head_fact(&y.head, NULL, "%s", "(after it)");
	eb_fact_size(&y, "piece", "piece", 262144);
	eb_fact_bool(&y, "ok", "ok", 1);
	eb_fact_strs(&y, "inits", "initiators", two, 2);
	eb_fact_strs(&y, "none", "none", two, 0);
	eb_fact_say(&y, "note", "%s", "said alone");
	eb_fact_int(&y, "after", "after", -1);
	CHECK(x.head.n == y.head.n && x.head.n == 11);
	for (i = 0; i < x.head.n && i < y.head.n; i++)
		CHECK(strcmp(x.head.f[i].label, y.head.f[i].label) == 0 &&
		      strcmp(x.head.f[i].value, y.head.f[i].value) == 0 &&
		      x.head.f[i].brk == y.head.f[i].brk);
	snprintf(a, sizeof(a), "%s/list.json", dir);
	snprintf(b, sizeof(b), "%s/calls.json", dir);
	CHECK(eb_doc_write(&x.doc, NULL, a) == EB_OK && eb_doc_write(&y.doc, NULL, b) == EB_OK);
	ta = strdup(slurp(a)); /* slurp's buffer is one */
	tb = strdup(slurp(b));
	CHECK(ta != NULL && tb != NULL && strcmp(ta, tb) == 0);
	CHECK(ta != NULL && strstr(ta, "\"inits\"") != NULL && strstr(ta, "\"b\"") != NULL);
	CHECK(ta != NULL && strstr(ta, "\"none\": null") != NULL);
	CHECK(ta != NULL && strstr(ta, "the header") == NULL);
	free(ta);
	free(tb);
	eb_sheet_drop(&x);
	eb_sheet_drop(&y);
	unlink(a);
	unlink(b);
}

int main(void)
{
	char dir[] = "/tmp/eb-report-XXXXXX", csv[64], json[64], cmd[512];
	struct eb_doc d = {0};
	struct eb_rec *r, *g;
	const char *text;
	struct eb_stats st = {.n = 3,
			      .mean = 2e-6,
			      .min = 1e-6,
			      .p50 = 2e-6,
			      .p99 = 3e-6,
			      .max = 3e-6,
			      .stddev = 1e-6};

	CHECK(mkdtemp(dir) != NULL);
	snprintf(csv, sizeof(csv), "%s/out.csv", dir);
	snprintf(json, sizeof(json), "%s/out.json", dir);
	eb_rec_str(&d.head, "bench", "toy");
	eb_rec_obj(&d.head, "settings");
	eb_rec_int(&d.head, "ranks", 2);
	eb_rec_strs(&d.head, "nics", "a");
	eb_rec_strs(&d.head, "nics", "b");
	eb_rec_end(&d.head);
	r = eb_doc_add(&d);
	eb_rec_str(r, "name", "with,comma \"quoted\"");
	eb_rec_num(r, "gbps", 1.5);
	eb_rec_num_or_null(r, "busbw_pct", 0, 0);
	eb_rec_num(r, "nan", NAN);
	eb_rec_int(r, "csv_only", 7);
	eb_rec_to(r, EB_NOT_JSON);
	eb_rec_stats(r, &st, "lat_us", "us", 1e6);
	eb_rec_obj(r, "settings");
	eb_rec_str(r, "provider", "shm");
	eb_rec_to(r, EB_TO_CSV);
	eb_rec_str(r, "hidden", "json only");
	eb_rec_end(r);
	g = eb_rec_item(r, "groups");
	eb_rec_int(g, "rank", 0);
	g = eb_rec_item(r, "groups");
	eb_rec_int(g, "rank", 1);
	r = eb_doc_add(&d);
	eb_rec_str(r, "name", "second");
	eb_rec_bool(r, "extra", 1);
	eb_rec_items(r, "groups");
	CHECK(eb_doc_write(&d, csv, json) == EB_OK);

	text = slurp(csv);
	CHECK(strncmp(text,
		      "name,gbps,busbw_pct,nan,csv_only,lat_us,min_us,p50_us,p99_us,max_us,"
		      "stddev_us,provider,extra\n",
		      strlen("name,gbps,busbw_pct,nan,csv_only,lat_us,min_us,p50_us,p99_us,max_"
			     "us,stddev_us,provider,extra\n")) == 0);
	CHECK(strstr(text, "\"with,comma \"\"quoted\"\"\",1.5,,,7,2,1,2,3,3,1,shm,\n") != NULL);
	CHECK(strstr(text, "second,,,,,,,,,,,,1\n") != NULL);
	CHECK(strstr(text, "hidden") == NULL);

	text = slurp(json);
	CHECK(strstr(text, "csv_only") == NULL);
	CHECK(strstr(text, "\"busbw_pct\": null") != NULL);
	CHECK(strstr(text, "\"nan\": null") != NULL);
	CHECK(strstr(text, "\"hidden\": \"json only\"") != NULL);
	if (system("python3 -c 'pass' 2>/dev/null") == 0) {
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
			 "r=d[\"results\"]; assert d[\"settings\"][\"nics\"]==[\"a\",\"b\"]; "
			 "assert [g[\"rank\"] for g in r[0][\"groups\"]]==[0,1]; "
			 "assert r[1][\"groups\"]==[] and r[1][\"extra\"] is True; "
			 "assert r[0][\"p99_us\"]==3' %s",
			 json);
		CHECK(system(cmd) == 0);
	}
	eb_doc_free(&d);
	unlink(csv);
	unlink(json);
	fact_list(dir);
	rmdir(dir);
	skew();
	return check_done();
}
