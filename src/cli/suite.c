/* efabench report: run a set of benchmarks with this binary, keep each one's table (as
 * Markdown), JSON and figures in one folder, and write an index.md saying on which machine,
 * with which libfabric, provider, GPUs and NICs, and by which exact command lines. */
#include "suite.h"
#include "opts.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 16
#define LINE	 EB_RLINE

extern const struct eb_cmd eb_cmd_report;

#define DEFAULT_MIN "4K"
#define DEFAULT_MAX "16M"

/* The sweep every benchmark that takes sizes gets: -b alone above the default largest size (or
 * -e alone below the default smallest) moves the other end to it. EB_EINVAL after one line. */
static int check_sizes(struct ropts *ro)
{
	uint64_t lo, hi;

	if (eb_size_parse(ro->begin ? ro->begin : DEFAULT_MIN, &lo) != EB_OK ||
	    eb_size_parse(ro->end ? ro->end : DEFAULT_MAX, &hi) != EB_OK || lo <= hi)
		return EB_OK;
	if (ro->end == NULL) {
		ro->end = ro->begin;
	} else if (ro->begin == NULL) {
		ro->begin = ro->end;
	} else {
		eb_err("smallest size is larger than the largest (-b %s > -e %s)", ro->begin,
		       ro->end);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* Keep -b/-e/-n as typed (they go to every benchmark that takes them), checked now: a size
 * (value "S") as sizes are, a count (value "N") as counts are. */
static int parse_as_typed(const struct eb_opt *o, const char *arg, void *field, char *want,
			  size_t len)
{
	uint64_t size;
	long count;
	int rc = strcmp(o->arg, "S") == 0 ? eb_opt_size(o, arg, &size, want, len)
					  : eb_opt_lng(o, arg, &count, want, len);

	if (rc == EB_OK)
		*(const char **)field = arg;
	return rc;
}

#define R(field) EB_AT(struct ropts, field)

static const char *const mems[] = {"host", "pinned", "device", NULL};

static const struct eb_opt suite_opts[] = {
    {"output", 'o', "DIR", eb_opt_str, R(out), 0, 0,
     "folder for the tables, JSON, figures and index.md (created where missing)"},
    {"np", 0, "N", eb_opt_num, R(np), 2, 64, "ranks of the benchmarks that take them (default 2)"},
    {"provider", 0, "P", eb_opt_str, R(provider), 0, 0,
     "libfabric provider (default: efabench's own choice)"},
    {"minbytes", 'b', "S", parse_as_typed, R(begin), 1, (double)(1ull << 40),
     "smallest size of the sweeps (default " DEFAULT_MIN ")"},
    {"maxbytes", 'e', "S", parse_as_typed, R(end), 1, (double)(1ull << 40),
     "largest size of the sweeps (default " DEFAULT_MAX ")"},
    {"iters", 'n', "N", parse_as_typed, R(iters), 1, 1e9,
     "timed iterations per size (default: each benchmark's own)"},
    {"mem", 0, "KIND", eb_opt_choice, R(mem), 0, 0,
     "memory of the benchmarks that take --mem (host, pinned,\n"
     "device; default each one's own)",
     mems},
};

/* argv as one shell line, quoting what the shell would split or expand. */
static void join_cmd(char *buf, size_t len, char *const argv[])
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && used + 4 < len; i++) {
		const char *a = argv[i], *p;
		int plain =
		    a[0] != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789_./:=,+-@%") == strlen(a);

		if (i > 0)
			buf[used++] = ' ';
		if (plain) {
			used += (size_t)snprintf(buf + used, len - used, "%s", a);
			continue;
		}
		buf[used++] = '\'';
		for (p = a; *p != '\0' && used + 6 < len; p++) {
			if (*p == '\'') {
				memcpy(buf + used, "'\\''", 4);
				used += 4;
			} else {
				buf[used++] = *p;
			}
		}
		buf[used++] = '\'';
		buf[used] = '\0';
	}
	if (used >= len)
		buf[len - 1] = '\0';
}

static int cmd_takes(const struct eb_cmd *c, unsigned group)
{
	return (c->groups & group) != 0;
}

/* The command line of one benchmark into argv: this binary, the options the report passes on
 * that it takes, and where its JSON and Markdown go. */
static void bench_argv(const struct suite_run *r, const struct ropts *ro,
		       const struct suite_machine *m, const char *part, char *np, char **argv)
{
	const struct eb_cmd *c = r->cmd;
	int n = 0;

	argv[n++] = (char *)m->self;
	argv[n++] = (char *)c->name;
	if (cmd_takes(c, EB_G_RANKS)) {
		argv[n++] = "--np";
		argv[n++] = np;
	}
	if (cmd_takes(c, EB_G_FABRIC) && ro->provider != NULL) {
		argv[n++] = "--provider";
		argv[n++] = (char *)ro->provider;
	}
	if (cmd_takes(c, EB_G_SIZES)) {
		argv[n++] = "-b";
		argv[n++] = (char *)(ro->begin ? ro->begin : DEFAULT_MIN);
		argv[n++] = "-e";
		argv[n++] = (char *)(ro->end ? ro->end : DEFAULT_MAX);
		if (ro->iters != NULL) {
			argv[n++] = "-n";
			argv[n++] = (char *)ro->iters;
		}
	}
	if (cmd_takes(c, EB_G_MEM) && ro->mem >= 0) {
		argv[n++] = "--mem";
		argv[n++] = (char *)mems[ro->mem];
	}
	if ((strcmp(c->name, "queue") == 0 || strcmp(c->name, "proxy") == 0) && m->gpus == 0) {
		argv[n++] = "--producers-on";
		argv[n++] = "cpu";
	}
	argv[n++] = "--json";
	argv[n++] = (char *)r->json;
	argv[n++] = "--md";
	argv[n++] = (char *)part;
	argv[n] = NULL;
}

/* Run one benchmark: DIR/NAME.json, and DIR/NAME.md from the Markdown it writes. */
static void run_bench(struct suite_run *r, const struct ropts *ro, struct suite_machine *m)
{
	char out[EB_TOOL_PATH], err[EB_TOOL_PATH], md[EB_TOOL_PATH], part[EB_TOOL_PATH], np[16];
	char *argv[32];
	uint64_t t0;

	snprintf(r->json, sizeof(r->json), "%s/%s.json", ro->out, r->cmd->name);
	snprintf(out, sizeof(out), "%s/%s.out", ro->out, r->cmd->name);
	snprintf(err, sizeof(err), "%s/%s.err", ro->out, r->cmd->name);
	snprintf(md, sizeof(md), "%s/%s.md", ro->out, r->cmd->name);
	snprintf(part, sizeof(part), "%s/%s.md.part", ro->out, r->cmd->name);
	snprintf(np, sizeof(np), "%d", ro->np);
	bench_argv(r, ro, m, part, np, argv);
	join_cmd(r->cmdline, sizeof(r->cmdline), argv);
	printf("efabench report: %s\n", r->cmdline);
	remove(r->json);
	t0 = eb_now_ns();
	r->code = eb_tool_run(argv, out, err);
	r->secs = (double)(eb_now_ns() - t0) / 1e9;
	if (r->code != 0)
		eb_warn("efabench %s exited %d (see %s)", r->cmd->name, r->code, md);
	eb_suite_run_facts(m, r->json);
	eb_suite_md(md, r, part, err);
	remove(part);
	remove(out);
	remove(err);
}

/* Whether report can run cmd, and whether it does without being named. */
static int can_run(const struct eb_cmd *cmd)
{
	return cmd->report != EB_REPORT_NEVER;
}

static int by_default(const struct eb_cmd *cmd, const struct suite_machine *m)
{
	return cmd->report == EB_REPORT_DEFAULT ||
	       (cmd->report == EB_REPORT_TWO_GPUS && m->gpus >= 2);
}

/* The benchmarks to run, in `efabench --help` order: those named, or the default set. */
static int choose_runs(char **names, int nnames, const struct suite_machine *m,
		       struct suite_run *runs)
{
	int i, k, n = 0, ncmds;
	const struct eb_cmd *const *cmds = eb_cli_cmds(&ncmds);
	char known[256] = "";

	for (k = 0; k < ncmds; k++) {
		int want = nnames == 0 && by_default(cmds[k], m);

		for (i = 0; i < nnames && can_run(cmds[k]); i++)
			want |= strcmp(names[i], cmds[k]->name) == 0;
		if (can_run(cmds[k]))
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 known[0] ? ", " : "", cmds[k]->name);
		if (!want || n == MAX_RUNS)
			continue;
		memset(&runs[n], 0, sizeof(runs[n]));
		runs[n].cmd = cmds[k];
		if (cmds[k]->report == EB_REPORT_TWO_GPUS && m->gpus < 2)
			snprintf(runs[n].skipped, sizeof(runs[n].skipped),
				 "needs two GPUs (CUDA sees %d)", m->gpus);
		n++;
	}
	for (i = 0; i < nnames; i++) {
		for (k = 0;
		     k < ncmds && !(can_run(cmds[k]) && strcmp(names[i], cmds[k]->name) == 0); k++)
			;
		if (k == ncmds) {
			eb_err("efabench report runs %s, not '%s'", known, names[i]);
			return EB_EINVAL;
		}
	}
	return n;
}

/* efabench info first: what the machine offers decides the set (GPUs). */
static void run_info(const struct ropts *ro, struct suite_machine *m, char *cmd, size_t len,
		     char *json, size_t json_len)
{
	char path[EB_TOOL_PATH], log[EB_TOOL_PATH], *argv[5];

	snprintf(path, sizeof(path), "%s/info.txt", ro->out);
	snprintf(json, json_len, "%s/info.json", ro->out);
	snprintf(log, sizeof(log), "%s/info.err", ro->out);
	argv[0] = m->self;
	argv[1] = "info";
	argv[2] = "--json";
	argv[3] = json;
	argv[4] = NULL;
	join_cmd(cmd, len, argv);
	if (eb_tool_run(argv, path, log) != 0)
		eb_warn("efabench info failed: the machine stamp is incomplete");
	remove(log);
	if (ro->provider != NULL)
		snprintf(m->provider, sizeof(m->provider), "%s", ro->provider);
	eb_suite_machine_info(m, json);
}

/* The figures of every JSON the runs left, stamped with this machine and date; the plot's
 * exit status (-1: nothing to draw). */
static int run_plot(const struct ropts *ro, struct suite_machine *m, const struct suite_run *runs,
		    int nruns, char *cmd, size_t len)
{
	char list[EB_TOOL_PATH], log[EB_TOOL_PATH], *argv[MAX_RUNS + 16];
	int i, n = 0, code;

	argv[n++] = m->self;
	argv[n++] = "plot";
	for (i = 0; i < nruns; i++)
		if (runs[i].skipped[0] == '\0' && access(runs[i].json, R_OK) == 0)
			argv[n++] = (char *)runs[i].json;
	if (n == 2)
		return -1;
	snprintf(list, sizeof(list), "%s/plot.out", ro->out);
	snprintf(log, sizeof(log), "%s/plot.log", ro->out);
	argv[n++] = "-o";
	argv[n++] = (char *)ro->out;
	argv[n++] = "--host";
	argv[n++] = m->host;
	argv[n++] = "--date";
	argv[n++] = m->date;
	if (m->provider[0] != '\0') {
		argv[n++] = "--provider";
		argv[n++] = m->provider;
	}
	argv[n] = NULL;
	join_cmd(cmd, len, argv);
	printf("efabench report: %s\n", cmd);
	code = eb_tool_run(argv, list, log);
	if (code != 0)
		eb_warn("no figures: efabench plot exited %d (see %s)", code, log);
	else
		remove(log);
	return code;
}

static int suite_tool(int argc, char **argv)
{
	struct ropts ro = {.np = 2, .mem = -1};
	struct eb_opt_group g = {"Options of efabench report", suite_opts,
				 (int)(sizeof(suite_opts) / sizeof(suite_opts[0])), &ro};
	struct suite_run *runs = calloc(MAX_RUNS, sizeof(*runs));
	struct suite_machine *m = calloc(1, sizeof(*m));
	char **names = calloc((size_t)argc, sizeof(*names));
	char info_json[EB_TOOL_PATH], info_cmd[LINE], plot_cmd[LINE * 4] = "", list[EB_TOOL_PATH];
	int nnames, nruns, help, i, failed = 0, plot_code, code = 2;

	if (runs == NULL || m == NULL || names == NULL) {
		eb_err("out of memory");
		goto cleanup;
	}
	if (eb_tool_parse(argc, argv, &g, "report", names, &nnames, &help) != EB_OK)
		goto cleanup;
	if (help) {
		eb_tool_help(&eb_cmd_report, "-o DIR [benchmark ...]", &g);
		code = 0;
		goto cleanup;
	}
	if (ro.out == NULL) {
		eb_err("efabench report needs -o DIR (where the report goes)");
		goto cleanup;
	}
	if (check_sizes(&ro) != EB_OK)
		goto cleanup;
	eb_suite_machine(m);
	/* The names are checked before anything runs or is created. */
	if (choose_runs(names, nnames, m, runs) < 0 || eb_tool_outdir(ro.out) != EB_OK ||
	    eb_tool_self(m->self, sizeof(m->self)) != EB_OK)
		goto cleanup;
	run_info(&ro, m, info_cmd, sizeof(info_cmd), info_json, sizeof(info_json));
	nruns = choose_runs(names, nnames, m, runs);
	for (i = 0; i < nruns; i++) {
		if (runs[i].skipped[0] != '\0')
			continue;
		run_bench(&runs[i], &ro, m);
		failed |= runs[i].code != 0;
	}
	if (ro.provider == NULL) /* the provider the benchmarks chose, and its NICs */
		eb_suite_machine_info(m, info_json);
	plot_code = run_plot(&ro, m, runs, nruns, plot_cmd, sizeof(plot_cmd));
	code = eb_suite_index(&ro, m, runs, nruns, info_cmd, plot_cmd,
			      plot_code > 0 ? plot_code : 0) != EB_OK ||
	       failed;
	snprintf(list, sizeof(list), "%s/plot.out", ro.out);
	remove(list);
cleanup:
	free(runs);
	free(names);
	free(m);
	return code;
}

const struct eb_cmd eb_cmd_report = {
    .name = "report",
    .summary = "run a set of benchmarks; tables, JSON, figures and index.md in one folder",
    .help = "  efabench report -o DIR [benchmark ...] runs the benchmarks named (default:\n"
	    "  write, sendrecv, alltoall, queue and proxy, queue and proxy with CPU producers\n"
	    "  where no GPU is, and ipc where two GPUs are; matrix when named) with this\n"
	    "  binary, --np 2 and sizes 4K to 16M unless given. Each leaves DIR/NAME.json and\n"
	    "  its table as DIR/NAME.md; efabench plot then draws the figures into DIR (where\n"
	    "  python3-matplotlib is installed), and DIR/index.md names the machine (CPU,\n"
	    "  cores, kernel), libfabric, provider, CUDA and GPUs, NICs and every command line\n"
	    "  run, linking each table and figure. tools/compare DIR_A DIR_B sets two reports\n"
	    "  side by side with B/A ratios",
    .tool = suite_tool,
};
