/* efabench report's parts: what it runs, the machine it stamps (read from efabench info
 * --json and each benchmark's --json, never from printed text) and the files it writes. */
#ifndef EB_CLI_SUITE_H
#define EB_CLI_SUITE_H

#include "tool.h"

#define EB_RLINE 1024

struct ropts {
	const char *out, *begin, *end, *iters, *provider;
	int np;
	int mem; /* index into report.c's mems[]; -1: each benchmark's own */
};

struct suite_run {
	const struct eb_cmd *cmd;
	char json[EB_TOOL_PATH];
	char cmdline[EB_RLINE * 2];
	char skipped[128]; /* why it did not run; "" when it ran */
	int code;
	double secs;
};

struct suite_machine {
	char host[256], cpu[256], kernel[600], date[64], self[EB_TOOL_PATH];
	char libfabric[EB_RLINE], cuda[EB_RLINE], gpus_text[EB_RLINE * 4];
	char provider[64], nics_used[EB_RLINE], nics_info[EB_RLINE * 2];
	long cpus;
	int gpus;
};

/* Drop trailing newlines and spaces. */
void eb_suite_chomp(char *s);

/* The machine: /proc/cpuinfo, uname and the clock. */
void eb_suite_machine(struct suite_machine *m);
/* What `efabench info --json` (saved at path) says: libfabric, CUDA and its GPUs, and the
 * NICs of m->provider (every provider's while it is not known) with their link speeds. */
void eb_suite_machine_info(struct suite_machine *m, const char *path);
/* The provider and NICs a benchmark ran on, from its --json file's settings (those not known
 * yet). */
void eb_suite_run_facts(struct suite_machine *m, const char *path);

/* A benchmark's page at md: its command line, exit status and time, the Markdown it wrote of
 * its output (part, from --md), then its stderr (err), if any. EB_OK or EB_ESYS. */
int eb_suite_md(const char *md, const struct suite_run *r, const char *part, const char *err);
/* DIR/index.md: the machine, a row per run, the figures plot listed in DIR/plot.out, the
 * command lines. EB_OK or EB_ESYS after one line. */
int eb_suite_index(const struct ropts *ro, const struct suite_machine *m,
		   const struct suite_run *runs, int nruns, const char *info_cmd,
		   const char *plot_cmd, int plot_code);

#endif
