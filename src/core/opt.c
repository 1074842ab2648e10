#define _GNU_SOURCE /* cpu_set_t, sched_getaffinity */
#include "opt.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "log.h"

#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 96

int eb_opt_each(const char *list, int (*fn)(const char *item, void *arg), void *arg)
{
	const char *p = list;
	char item[64];
	int rc;

	if (*p == '\0')
		return EB_EINVAL;
	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof(item))
			return EB_EINVAL;
		memcpy(item, p, n);
		item[n] = '\0';
		rc = fn(item, arg);
		if (rc != EB_OK)
			return rc;
		p += n;
		if (*p == '\0')
			return EB_OK;
		p++; /* the comma; an empty element after it fails above */
	}
}

int eb_opt_flag(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	*(int *)field = 1;
	return EB_OK;
}

int eb_opt_str(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	if (*arg == '\0') {
		snprintf(want, len, "a non-empty value");
		return EB_EINVAL;
	}
	*(const char **)field = arg;
	return EB_OK;
}

int eb_opt_size(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	char lo[24], hi[24];
	uint64_t v;

	if (eb_size_parse(arg, &v) == EB_OK && (double)v >= o->lo && (double)v <= o->hi) {
		*(uint64_t *)field = v;
		return EB_OK;
	}
	snprintf(want, len, "a size from %s to %s (a number with an optional K, M, G or T suffix)",
		 eb_size_format((uint64_t)o->lo, lo, sizeof(lo)),
		 eb_size_format((uint64_t)o->hi, hi, sizeof(hi)));
	return EB_EINVAL;
}

static int integer(const struct eb_opt *o, const char *arg, long *v, char *want, size_t len)
{
	char *end;

	*v = strtol(arg, &end, 10);
	if (*arg != '\0' && *end == '\0' && (double)*v >= o->lo && (double)*v <= o->hi)
		return EB_OK;
	if (want != NULL)
		snprintf(want, len, "an integer from %.0f to %.0f", o->lo, o->hi);
	return EB_EINVAL;
}

int eb_opt_lng(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	return integer(o, arg, (long *)field, want, len);
}

int eb_opt_num(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	long v;
	int rc = integer(o, arg, &v, want, len);

	if (rc == EB_OK)
		*(int *)field = (int)v;
	return rc;
}

int eb_opt_cpu(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	cpu_set_t mask;
	char *end;
	long v;

	(void)o;
	if (strcmp(arg, "auto") == 0 || strcmp(arg, "none") == 0) {
		*(int *)field = arg[0] == 'a' ? EB_CPU_AUTO : EB_CPU_NONE;
		return EB_OK;
	}
	v = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || v < 0 || v >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(mask), &mask) != 0 || !CPU_ISSET((int)v, &mask)) {
		snprintf(want, len, "auto, none or a CPU this process may run on");
		return EB_EINVAL;
	}
	*(int *)field = (int)v;
	return EB_OK;
}

int eb_opt_pow2(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	long v;
	int log2n = 0;

	if (integer(o, arg, &v, want, len) != EB_OK || (v & (v - 1)) != 0) {
		snprintf(want, len, "a power of two from %.0f to %.0f", o->lo, o->hi);
		return EB_EINVAL;
	}
	while ((1l << log2n) < v)
		log2n++;
	*(int *)field = log2n;
	return EB_OK;
}

int eb_opt_dbl(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	char *end;
	double v = strtod(arg, &end);

	if (end != arg && *end == '\0' && v > o->lo && v <= o->hi) {
		*(double *)field = v;
		return EB_OK;
	}
	snprintf(want, len, "a number above %g, at most %g", o->lo, o->hi);
	return EB_EINVAL;
}

/* "a, b or c" from the words, for error lines. */
static void words(const char *const *names, const char *last, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; names[i] != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0			? ""
					 : names[i + 1] == NULL ? last
								: ", ",
					 names[i]);
}

static int word_index(const char *const *names, const char *w)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], w) == 0)
			return i;
	return -1;
}

int eb_opt_choice(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	int i = word_index(o->names, arg);
	char w[160];

	if (i >= 0) {
		*(int *)field = i;
		return EB_OK;
	}
	words(o->names, " or ", w, sizeof(w));
	snprintf(want, len, "%s", w);
	return EB_EINVAL;
}

struct mask_arg {
	const char *const *names;
	unsigned mask;
};

static int mask_item(const char *item, void *arg)
{
	struct mask_arg *m = arg;
	int i = word_index(m->names, item);

	if (i < 0)
		return EB_EINVAL;
	m->mask |= 1u << i;
	return EB_OK;
}

int eb_opt_mask(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	struct mask_arg m = {o->names, 0};
	char w[160];

	if (eb_opt_each(arg, mask_item, &m) == EB_OK) {
		*(unsigned *)field = m.mask;
		return EB_OK;
	}
	words(o->names, " and/or ", w, sizeof(w));
	snprintf(want, len, "a comma list of %s", w);
	return EB_EINVAL;
}

struct list_arg {
	const struct eb_opt *o;
	struct eb_opt_list l;
};

static int list_item(const char *item, void *arg)
{
	struct list_arg *a = arg;
	long v;

	if (a->l.n == EB_OPT_LIST_MAX)
		return EB_EINVAL;
	if (a->o->names != NULL && strcmp(item, a->o->names[0]) == 0)
		v = 0;
	else if (integer(a->o, item, &v, NULL, 0) /* the list's own message says more */ != EB_OK)
		return EB_EINVAL;
	a->l.v[a->l.n++] = (int)v;
	return EB_OK;
}

int eb_opt_list(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len)
{
	struct list_arg a = {.o = o};

	if (eb_opt_each(arg, list_item, &a) == EB_OK) {
		*(struct eb_opt_list *)field = a.l;
		return EB_OK;
	}
	snprintf(want, len, "a comma list of up to %d integers from %.0f to %.0f%s%s",
		 EB_OPT_LIST_MAX, o->lo, o->hi, o->names ? " or " : "",
		 o->names ? o->names[0] : "");
	return EB_EINVAL;
}

/* Every row of every group, flattened, with the struct its value goes to. */
struct row {
	const struct eb_opt *o;
	void *base;
};

int eb_opt_parse(int argc, char **argv, int first, const struct eb_opt_group *groups, int ngroups,
		 const char *cmd, int *help)
{
	struct option lopts[MAX_OPTS + 2];
	struct row rows[MAX_OPTS];
	/* getopt sees argv[first - 1] as its argv[0]: see optind below. */
	char **av = argv + first - 1;
	int ac = argc - first + 1;
	char shorts[2 * MAX_OPTS + 4] = ":h", want[256];
	int g, i, n = 0, c, rc;
	size_t ns = 2;

	*help = 0;
	for (g = 0; g < ngroups; g++)
		for (i = 0; i < groups[g].nopts && n < MAX_OPTS; i++, n++) {
			const struct eb_opt *o = &groups[g].opts[i];

			rows[n] = (struct row){o, groups[g].base};
			lopts[n] = (struct option){
			    o->name, o->arg ? required_argument : no_argument, NULL, 256 + n};
			if (o->key != 0) {
				shorts[ns++] = (char)o->key;
				if (o->arg != NULL)
					shorts[ns++] = ':';
			}
		}
	shorts[ns] = '\0';
	lopts[n] = (struct option){"help", no_argument, NULL, 'h'};
	lopts[n + 1] = (struct option){NULL, 0, NULL, 0};
	/* 0, not first: glibc's getopt then also forgets where it was inside a word of short
	 * options. A parse that returned early (-h or a bad letter in "-qhv") leaves that position
	 * behind, and the next parse would go on reading the old word, freed or not. */
	optind = 0;
	opterr = 0; /* we print our own single line */
	while ((c = getopt_long(ac, av, shorts, lopts, NULL)) != -1) {
		const struct eb_opt *o = NULL;

		if (c == 'h') {
			*help = 1;
			return EB_OK;
		}
		if (c == ':') {
			eb_err("option '%s' needs a value (see efabench %s --help)", av[optind - 1],
			       cmd);
			return EB_EINVAL;
		}
		for (i = 0; i < n && o == NULL; i++)
			if (c == 256 + i || (c < 256 && c == rows[i].o->key))
				o = rows[i].o;
		if (o == NULL) {
			eb_err("unknown option '%s' for efabench %s (see efabench %s --help)",
			       av[optind - 1], cmd, cmd);
			return EB_EINVAL;
		}
		i--;
		want[0] = '\0';
		rc = o->parse(o, optarg, (char *)rows[i].base + o->off, want, sizeof(want));
		if (rc != EB_OK) {
			eb_err("bad --%s '%s': want %s (see efabench %s --help)", o->name,
			       optarg ? optarg : "", want, cmd);
			return EB_EINVAL;
		}
	}
	if (optind < ac) {
		eb_err("unexpected argument '%s' (see efabench %s --help)", av[optind], cmd);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* Help text lines after the first start under the first one's column. */
static void help_text(FILE *f, const char *text, int col)
{
	const char *p = text;

	for (;;) {
		size_t n = strcspn(p, "\n");

		fprintf(f, "%.*s\n", (int)n, p);
		if (p[n] == '\0')
			return;
		p += n + 1;
		fprintf(f, "%*s", col, "");
	}
}

void eb_opt_help(FILE *f, const struct eb_opt_group *groups, int ngroups)
{
	int g, i;

	for (g = 0; g < ngroups; g++) {
		if (groups[g].nopts == 0)
			continue;
		fprintf(f, "%s:\n", groups[g].title);
		for (i = 0; i < groups[g].nopts; i++) {
			const struct eb_opt *o = &groups[g].opts[i];
			char lhs[64];

			snprintf(lhs, sizeof(lhs), "%c%c%s--%s%s%s", o->key ? '-' : ' ',
				 o->key ? o->key : ' ', o->key ? ", " : "  ", o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
			if (strlen(lhs) > 19)
				fprintf(f, "  %s\n%23s", lhs, "");
			else
				fprintf(f, "  %-20s ", lhs);
			help_text(f, o->help, 23);
		}
	}
}
