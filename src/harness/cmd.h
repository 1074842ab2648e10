/* A subcommand is one descriptor: its name, help, its own options and how it runs. The CLI
 * (src/cli) holds the table of descriptors, parses the common options once and the
 * subcommand's own into its struct, then launches it. Adding a subcommand is one file that
 * defines a descriptor, and one line in that table. */
#ifndef EB_BENCH_CMD_H
#define EB_BENCH_CMD_H

#include "efabench/boot.h"
#include "efabench/fabric.h"
#include "core/opt.h"

#include <stddef.h>
#include <stdint.h>

#define EB_MAX_SIZES 64

/* Groups of common options a subcommand takes (--timeout and -v go with every one). */
enum {
	EB_G_SIZES = 1u << 0,	/* -b -e -f */
	EB_G_FABRIC = 1u << 1,	/* --provider --nics --channels --link-gbps --chunk --window */
	EB_G_LAYOUT = 1u << 2,	/* --layout */
	EB_G_RANKS = 1u << 3,	/* --np, and the rendezvous: --root --rank --ranks */
	EB_G_OUTPUT = 1u << 4,	/* --csv --json */
	EB_G_TESTING = 1u << 5, /* --corrupt-at --corrupt-key */
	EB_G_MEM = 1u << 6,	/* --mem --gpu --staged --stage-serial */
	EB_G_ITERS = 1u << 7,	/* -w -n --check --dry-run */
	EB_G_ROUNDS = 1u << 8,	/* --rounds: a size's variants take turns */
	EB_G_PHASES = 1u << 9,	/* --phases: variants timed by the phase */
	EB_G_STAGES = 1u << 10, /* --stages --trace: where sampled operations spend their time */
};

/* What a fabric benchmark on the harness takes. */
#define EB_G_FABRIC_BENCH                                                                          \
	(EB_G_SIZES | EB_G_ITERS | EB_G_ROUNDS | EB_G_FABRIC | EB_G_LAYOUT | EB_G_RANKS |          \
	 EB_G_OUTPUT | EB_G_TESTING | EB_G_MEM)

/* A subcommand's defaults for the sweep's options in one of its modes: the options take them
 * where the command line gives none, and --help prints them; 0: the common default. */
struct eb_run_dflt {
	const char *mode; /* the value of the option that picks the row (eb_cmd.dflt_by) */
	uint64_t begin, end;
	long warmup, iters, rounds;
};

struct eb_cmd;
struct eb_json;

/* --mem auto: decided before the ranks run (eb_harness_mem_auto), never a payload's kind. */
#define EB_MEM_AUTO 3

/* The common options, parsed once for every subcommand. */
struct eb_opts {
	const struct eb_cmd *cmd;
	const void *own; /* the subcommand's own options (its descriptor's own_size bytes) */
	int np;		 /* 0: not given */
	uint64_t begin, end;
	long factor;
	long warmup, iters;
	long phases; /* timed phases of a variant that times whole phases (EB_PHASE_TIMED) */
	long rounds; /* a size's variants take turns this many times (their timed phases) */
	int check;
	uint64_t chunk;	  /* 0: chosen per provider (eb_harness_tune) */
	long window;	  /* 0: likewise */
	unsigned layouts; /* bit (1 << enum eb_layout) per layout to run; 0: all */
	struct eb_fabric_opts fab;
	int mem;	   /* enum eb_mem_kind of the payloads; EB_MEM_AUTO until decided */
	char mem_why[384]; /* --mem auto: what it chose and why ("" when --mem was given) */
	int staged;	   /* device payloads through pinned bounce buffers */
	int serial;	   /* staged without overlap: copy all, then send; receive all, then copy */
	int gpu;	   /* -1: local rank modulo the GPUs CUDA sees */
	const char *want_gpu;	/* the option that needs a GPU whatever the memory (NULL: none) */
	struct eb_rdv_opts rdv; /* --root/--rank/--ranks, else EFABENCH_* */
	const char *cpu_map;	/* --cpu-map: local rank i runs on entry i (NULL: left alone) */
	const char *csv, *json, *md;
	int verbose;
	int quiet;	     /* no progress line on stderr */
	long corrupt_at;     /* < 0: off; else the receiver flips this byte after each arrival */
	int corrupt_key;     /* testing aid: rank 0 writes with wrong keys (CQ error path) */
	long misplace_chunk; /* testing aid: 0 off; else chunk K lands at chunk K-1's offset */
	int stop_rank;	     /* testing aid: < 0 off; else that rank stops itself (SIGSTOP) */
	long stages_every;   /* stamp 1 in N operations' stages (1: all; 0: none) */
	const char *trace;   /* --trace: the stamped stages as a Chrome trace (NULL: not asked) */
	/* -b/-e, -n, --rounds, --phases on the command line: a subcommand's finish may refuse
	 * them (its defaults come from its eb_run_dflt rows) */
	int sizes_given, iters_given, rounds_given, phases_given;
	int dry_run; /* print the settings a run would take, and exit */
	int argc;    /* the command line, for the files' stamp */
	char *const *argv;
	uint64_t sizes[EB_MAX_SIZES];
	int nsizes;
};

struct eb_bench;

/* Which runs of `efabench report` take a benchmark: every one, those on a host with two GPUs,
 * or those that name it. */
enum { EB_REPORT_NEVER, EB_REPORT_DEFAULT, EB_REPORT_TWO_GPUS, EB_REPORT_NAMED };

/* A descriptor's own options: their table, the struct they fill, its defaults and the check
 * after parsing. */
#define EB_CMD_OPTS(table, type, defaults_fn, finish_fn)                                           \
	.opts = table, .nopts = (int)(sizeof(table) / sizeof(table[0])), .own_size = sizeof(type), \
	.defaults = defaults_fn, .finish = finish_fn

struct eb_cmd {
	const char *name;
	const char *summary; /* one line for `efabench --help` */
	const char *help;    /* what it measures and how every figure is defined */
	unsigned groups;     /* EB_G_* */
	const struct eb_opt *opts;
	int nopts;
	size_t own_size;
	void (*defaults)(void *own);
	/* After parsing, before the size sweep is built: check combinations and derive values;
	 * EB_EINVAL after one line. */
	int (*finish)(struct eb_opts *o, void *own);
	/* Defaults of -b -e -w -n --rounds per mode (NULL: the common ones), the option that
	 * picks the row, and which row the parsed options pick (NULL: the first). */
	const struct eb_run_dflt *dflts;
	int ndflts;
	const char *dflt_by;
	int (*dflt_of)(const void *own);
	/* Every benchmark: the harness runs it in each rank (in this process when alone). */
	const struct eb_bench *bench;
	int alone; /* one process, no ranks (queue) */
	/* Not a benchmark (info): one process, returns a status. */
	int (*main)(const struct eb_opts *o);
	/* Before the embedded launcher forks (may be NULL): the rank count to start, or minus an
	 * exit status after one line saying why not. May decide what the options leave open
	 * (--mem auto, after its own cheaper checks). */
	int (*probe)(struct eb_opts *o);
	/* --dry-run: the settings of its own the run would take, after the common ones (may be
	 * NULL). */
	void (*dry_run)(struct eb_json *j, const struct eb_opts *o);
	int one_host; /* every rank on this host: the rendezvous is refused */
	int mem_auto; /* --mem auto by default (else host) */
	int report;   /* whether `efabench report` runs it: EB_REPORT_* (0: never) */
	/* A tool rather than a benchmark (plot, report): takes its whole command line, positional
	 * arguments too, parses it itself and returns the exit status (nothing above is used). */
	int (*tool)(int argc, char **argv);
};

/* The CPU steal every measured point's record carries (harness/steal.h), for the help of
 * the benchmarks that have it. */
#define EB_HELP_STEAL                                                                              \
	"  cpu_steal (JSON, each record): the most CPU time a hypervisor took from one\n"          \
	"  host while the point ran (/proc/stat's steal: ms over its CPUs, pct of their\n"         \
	"  time, host); 0 on bare metal, null where unreadable; a line after the tables\n"         \
	"  where any point lost some"

#endif
