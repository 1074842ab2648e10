/* The table-driven option parser: every parser's accepted range and its refusals, short and
 * long names across groups, flags, lists, masks, and the one-line errors of bad input. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "check.h"
#include "core/opt.h"
#include "efabench/status.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct a {
	uint64_t size;
	long count;
	int flag, log2n, pick, cpu;
	unsigned mask;
	double rate;
	const char *name;
	struct eb_opt_list list;
};

struct b {
	int other;
};

static const char *const picks[] = {"red", "green", "blue", NULL};
static const char *const all[] = {"all", NULL};

static const struct eb_opt a_rows[] = {
    {"size", 's', "S", eb_opt_size, EB_AT(struct a, size), 1, 1 << 20, "a size"},
    {"count", 'n', "N", eb_opt_lng, EB_AT(struct a, count), 0, 100, "a count"},
    {"flag", 0, NULL, eb_opt_flag, EB_AT(struct a, flag), 0, 0, "a flag"},
    {"slots", 0, "N", eb_opt_pow2, EB_AT(struct a, log2n), 2, 1024, "a power of two"},
    {"pick", 0, "P", eb_opt_choice, EB_AT(struct a, pick), 0, 0, "a word", picks},
    {"mask", 0, "L", eb_opt_mask, EB_AT(struct a, mask), 0, 0, "words", picks},
    {"rate", 0, "R", eb_opt_dbl, EB_AT(struct a, rate), 0, 10, "a rate"},
    {"name", 0, "X", eb_opt_str, EB_AT(struct a, name), 0, 0, "a name"},
    {"list", 0, "L", eb_opt_list, EB_AT(struct a, list), 1, 64, "numbers", all},
    {"cpu", 0, "C", eb_opt_cpu, EB_AT(struct a, cpu), 0, 0, "a CPU"},
};

static const struct eb_opt b_rows[] = {
    {"other", 'o', "N", eb_opt_num, EB_AT(struct b, other), -5, 5, "in another struct"},
};

static int parse(struct a *va, struct b *vb, int *help, int argc, ...)
{
	struct eb_opt_group g[2] = {{"A", a_rows, (int)(sizeof(a_rows) / sizeof(a_rows[0])), va},
				    {"B", b_rows, 1, vb}};
	char *argv[32] = {"efabench", "toy"};
	va_list ap;
	int i;

	va_start(ap, argc);
	for (i = 0; i < argc; i++)
		argv[2 + i] = va_arg(ap, char *);
	va_end(ap);
	memset(va, 0, sizeof(*va));
	memset(vb, 0, sizeof(*vb));
	return eb_opt_parse(argc + 2, argv, 2, g, 2, "toy", help);
}

int main(void)
{
	struct a va;
	struct b vb;
	int help, cpu;
	char mine[16]; /* the first CPU this process may run on */
	cpu_set_t set;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
		;
	snprintf(mine, sizeof(mine), "%d", cpu);
	CHECK(parse(&va, &vb, &help, 4, "-s", "64K", "--count", "100") == EB_OK);
	CHECK(va.size == 65536 && va.count == 100 && !help);
	CHECK(parse(&va, &vb, &help, 1, "--size=1M") == EB_OK && va.size == 1u << 20);
	CHECK(parse(&va, &vb, &help, 1, "--size=2M") == EB_EINVAL); /* above hi */
	CHECK(parse(&va, &vb, &help, 2, "-n", "101") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "-n", "-1") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "-n", "1x") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "-n", "") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 1, "--flag") == EB_OK && va.flag == 1);
	CHECK(parse(&va, &vb, &help, 1, "--flag=1") == EB_EINVAL); /* flags take no value */
	CHECK(parse(&va, &vb, &help, 2, "--slots", "256") == EB_OK && va.log2n == 8);
	CHECK(parse(&va, &vb, &help, 2, "--slots", "3") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--slots", "2048") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--pick", "blue") == EB_OK && va.pick == 2);
	CHECK(parse(&va, &vb, &help, 2, "--pick", "Blue") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--mask", "red,blue") == EB_OK && va.mask == 5u);
	CHECK(parse(&va, &vb, &help, 2, "--mask", "red,") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--mask", ",red") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--mask", "red,,blue") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--rate", "10") == EB_OK && va.rate == 10.0);
	CHECK(parse(&va, &vb, &help, 2, "--rate", "0") == EB_EINVAL); /* (lo, hi] */
	CHECK(parse(&va, &vb, &help, 2, "--rate", "nan") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--name", "x") == EB_OK && strcmp(va.name, "x") == 0);
	CHECK(parse(&va, &vb, &help, 2, "--list", "1,all,64") == EB_OK);
	CHECK(va.list.n == 3 && va.list.v[0] == 1 && va.list.v[1] == 0 && va.list.v[2] == 64);
	CHECK(parse(&va, &vb, &help, 2, "--list", "65") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--cpu", "auto") == EB_OK && va.cpu == EB_CPU_AUTO);
	CHECK(parse(&va, &vb, &help, 2, "--cpu", "none") == EB_OK && va.cpu == EB_CPU_NONE);
	CHECK(parse(&va, &vb, &help, 2, "--cpu", mine) == EB_OK && va.cpu == atoi(mine));
	CHECK(parse(&va, &vb, &help, 2, "--cpu", "-1") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--cpu", "4096") == EB_EINVAL); /* past CPU_SETSIZE */
	CHECK(parse(&va, &vb, &help, 2, "--cpu", "1x") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "--list", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17") ==
	      EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 2, "-o", "-5") == EB_OK && vb.other == -5);
	CHECK(parse(&va, &vb, &help, 2, "--other", "6") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 1, "--bogus") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 1, "--size") == EB_EINVAL); /* needs a value */
	CHECK(parse(&va, &vb, &help, 1, "stray") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 3, "-n", "3", "--help") == EB_OK && help == 1);
	/* A parse that stops inside a word of short options (-h, or a bad letter) must not leave
	 * getopt there: the next parse reads its own words only (found by tests/fuzz/fuzz_opts). */
	CHECK(parse(&va, &vb, &help, 1, "-hs") == EB_OK && help == 1);
	CHECK(parse(&va, &vb, &help, 2, "-n", "7") == EB_OK && va.count == 7 && !help);
	CHECK(parse(&va, &vb, &help, 1, "-Zs") == EB_EINVAL);
	CHECK(parse(&va, &vb, &help, 1, "--flag") == EB_OK && va.flag == 1);
	return check_done();
}
