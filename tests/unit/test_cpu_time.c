/* /proc/stat's CPU time and steal (efabench/cpu_time.h), and what the harness makes of a
 * point's steal (harness/steal.h): the words, the tally over rows, the verdict's addition. */
#include "check.h"
#include "efabench/cpu_time.h"
#include "efabench/status.h"
#include "harness/steal.h"
#include "harness/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_parse(void)
{
	struct eb_cpu_time t;

	CHECK(eb_cpu_time_parse("cpu  10 1 20 300 4 0 5 7 0 0\ncpu0 5 0 10 150 2 0 2 3 0 0\n",
				&t) == EB_OK);
	CHECK(t.total == 347 && t.steal == 7);
	/* tabs, and the line of all CPUs after another */
	CHECK(eb_cpu_time_parse("intr 5\ncpu\t1\t2\t3\t4\t5\t6\t7\t8\n", &t) == EB_OK);
	CHECK(t.total == 36 && t.steal == 8);
	/* guest columns are already in user: not counted twice */
	CHECK(eb_cpu_time_parse("cpu 1 1 1 1 1 1 1 1 50 50\n", &t) == EB_OK && t.total == 8);
	/* no steal column (kernels before 2.6.11), no line of all CPUs, not numbers */
	CHECK(eb_cpu_time_parse("cpu  10 1 20 300 4 0 5\n", &t) == EB_EINVAL);
	CHECK(eb_cpu_time_parse("cpu0 10 1 20 300 4 0 5 7\n", &t) == EB_EINVAL);
	CHECK(eb_cpu_time_parse("cpu  10 x 20 300 4 0 5 7\n", &t) == EB_EINVAL);
	CHECK(eb_cpu_time_parse("", &t) == EB_EINVAL);
}

static void test_read(void)
{
	char root[] = "/tmp/eb-cpu-time-XXXXXX", dir[64], path[96];
	struct eb_cpu_time t;
	FILE *f;

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/proc", root);
	snprintf(path, sizeof(path), "%s/stat", dir);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(setenv("EB_PROCFS_ROOT", root, 1) == 0);
	CHECK(eb_cpu_time_read(&t) == EB_ENOTSUP); /* no file */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs("cpu  100 0 50 1000 0 0 0 25 0 0\n", f);
		fclose(f);
	}
	CHECK(eb_cpu_time_read(&t) == EB_OK && t.total == 1175 && t.steal == 25);
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("cpu  100 0 50 1000 0 0 0\n", f);
		fclose(f);
	}
	CHECK(eb_cpu_time_read(&t) == EB_ENOTSUP);
	unlink(path);
	rmdir(dir);
	rmdir(root);
	CHECK(unsetenv("EB_PROCFS_ROOT") == 0);
	/* this host's own (Linux since 2.6.11 has the steal column) */
	CHECK(eb_cpu_time_read(&t) == EB_OK && t.total > 0 && t.steal <= t.total);
	CHECK(eb_cpu_tick_s() > 0 && eb_cpu_tick_s() <= 0.01);
}

static struct eb_meas point(const struct eb_pt *pt, int read, double secs, const char *host)
{
	struct eb_meas m;

	memset(&m, 0, sizeof(m));
	m.pt = pt;
	m.steal.read = read;
	m.steal.secs = secs;
	m.steal.pct = secs / 1.6;
	snprintf(m.steal.host, sizeof(m.steal.host), "%s", host);
	return m;
}

static void test_tally(void)
{
	struct eb_pt a = {.name = "8M"}, b = {.name = "16M"}, c = {.name = "32M"};
	struct eb_meas m1 = point(&a, 1, 0.25, "h0"), m2 = point(&b, 1, 1.5, "h2"),
		       m3 = point(&c, 1, 0, "h0"), m4 = point(&c, 0, 0, "");
	struct eb_steal_tally t;
	char w[160];

	memset(&t, 0, sizeof(t));
	eb_steal_tally(&t, &m1);
	eb_steal_tally(&t, &m2);
	eb_steal_tally(&t, &m3);
	eb_steal_tally(&t, &m4);
	CHECK(t.points == 4 && t.read == 3 && t.stolen == 2);
	CHECK(t.secs == 1.5 && strcmp(t.host, "h2") == 0 && strcmp(t.point, "16M") == 0);
	CHECK(eb_steal_words(&m2, w, sizeof(w)) == 1);
	CHECK(strcmp(w, "1.50 s of CPU time from host h2 (0.94 % of its CPUs' time)") == 0);
	CHECK(eb_steal_words(&m1, w, sizeof(w)) == 1);
	CHECK(strcmp(w, "250 ms of CPU time from host h0 (0.16 % of its CPUs' time)") == 0);
	CHECK(eb_steal_words(&m3, w, sizeof(w)) == 0); /* none taken */
	CHECK(eb_steal_words(&m4, w, sizeof(w)) == 0); /* not read */
}

/* The verdict names the steal below the link, not at it. */
static void test_verdict(void)
{
	struct eb_bench b;
	struct eb_ctx c;
	struct eb_pt pt = {.name = "8M"};
	struct eb_meas m = point(&pt, 1, 1.5, "h2");
	struct eb_rec r = {0};

	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	c.b = &b;
	eb_rec_num(&r, "busbw_pct", 80.0);
	eb_verdict(&c, &m, &r);
	CHECK(strcmp(m.bound, "not the link") == 0);
	CHECK(strcmp(m.why, "BusBW 80.0 %; a hypervisor took 1.50 s of CPU time from host h2 "
			    "(0.94 % of its CPUs' time)") == 0);
	eb_rec_free(&r);
	memset(&r, 0, sizeof(r));
	m = point(&pt, 1, 1.5, "h2");
	eb_rec_num(&r, "busbw_pct", 95.0);
	eb_verdict(&c, &m, &r);
	CHECK(strcmp(m.bound, "link") == 0 && strstr(m.why, "hypervisor") == NULL);
	eb_rec_free(&r);
}

int main(void)
{
	test_parse();
	test_read();
	test_tally();
	test_verdict();
	return check_done();
}
