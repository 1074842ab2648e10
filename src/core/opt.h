/* Table-driven command-line options. An option is one row: its names, what it parses, where
 * the value goes and its help. Rows come in groups (the sizes, the fabric, a subcommand's own);
 * one parser reads every group a subcommand takes and one printer writes their help, so a new
 * subcommand adds a table instead of cases to a shared switch. */
#ifndef EB_CORE_OPT_H
#define EB_CORE_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct eb_opt;

/* Parse arg into field; on a bad value return EB_EINVAL with what a good value looks like in
 * want ("an integer from 1 to 64"). */
typedef int (*eb_opt_fn)(const struct eb_opt *o, const char *arg, void *field, char *want,
			 size_t len);

struct eb_opt {
	const char *name; /* long name, without the dashes */
	int key;	  /* short letter, or 0 */
	const char *arg;  /* the value's name in --help ("S", "N", "LIST"); NULL for a flag */
	eb_opt_fn parse;
	size_t off;		  /* the field, at this offset in the group's struct */
	double lo, hi;		  /* accepted range of numbers (lists: of each element) */
	const char *help;	  /* '\n' starts a continuation line */
	const char *const *names; /* choice and mask: the words, NULL-terminated; lists: the
				     word that stands for 0 ("all"), or NULL */
};

/* Parsers. flag: int = 1. str: const char *. size: uint64_t with K/M/G/T suffixes. lng: long.
 * num: int. dbl: double in (lo, hi]. choice: int, the index of the word in names. mask:
 * unsigned, bit i for names[i], a comma list. list: struct eb_opt_list. pow2: int, log2 of a
 * power of two in [lo, hi]. */
int eb_opt_flag(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_str(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_size(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_lng(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_num(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_dbl(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_choice(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_mask(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_list(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
int eb_opt_pow2(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);
/* cpu: int, a CPU this process may run on, or auto / none (below). */
int eb_opt_cpu(const struct eb_opt *o, const char *arg, void *field, char *want, size_t len);

/* A helper thread's CPU besides a number: none (unpinned), auto (the benchmark's choice). */
enum { EB_CPU_NONE = -2, EB_CPU_AUTO = -1 };

#define EB_OPT_LIST_MAX 16

struct eb_opt_list {
	int v[EB_OPT_LIST_MAX];
	int n;
};

/* A row's offset into a struct, for tables: EB_AT(struct eb_opts, begin). */
#define EB_AT(type, field) offsetof(type, field)

struct eb_opt_group {
	const char *title; /* heading in --help */
	const struct eb_opt *opts;
	int nopts;
	void *base; /* where the values go; NULL when only printing help */
};

/* Parse argv[first..argc) against the groups. EB_OK, or EB_EINVAL after one line naming the
 * bad option ("see efabench <cmd> --help"). *help is set for -h / --help. */
int eb_opt_parse(int argc, char **argv, int first, const struct eb_opt_group *groups, int ngroups,
		 const char *cmd, int *help);

/* The groups' options, aligned, one group per heading. */
void eb_opt_help(FILE *f, const struct eb_opt_group *groups, int ngroups);

/* Split a comma list: calls fn on each element (a copy, NUL-terminated); EB_EINVAL for an empty
 * list, an empty element or one longer than 63 bytes, or the first error fn returns. */
int eb_opt_each(const char *list, int (*fn)(const char *item, void *arg), void *arg);

#endif
