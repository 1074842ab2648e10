/* The report layer's writers: a document with nested objects, arrays of records, nulls and
 * awkward strings, written as JSON (read back by python3) and as CSV (columns in first-seen
 * order, quoting, CSV-only and JSON-only routing, missing cells left empty). */
#include "check.h"
#include "efabench/status.h"
#include "report/doc.h"
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
	rmdir(dir);
	skew();
	return check_done();
}
