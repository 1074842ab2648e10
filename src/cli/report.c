/* efabench report: run a set of benchmarks with this binary, keep each one's table (as
 * Markdown), JSON and figures in one folder, and write an index.md saying on which machine,
 * with which libfabric, provider, GPUs and NICs, and by which exact command lines. */
#include "tool.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 16
#define LINE	 1024

extern const struct eb_cmd eb_cmd_report, eb_cmd_write, eb_cmd_sendrecv, eb_cmd_alltoall,
    eb_cmd_queue, eb_cmd_proxy, eb_cmd_ipc, eb_cmd_matrix;

/* What report runs, in this order; the default set is the first five, and ipc where two GPUs
 * are. */
static const struct eb_cmd *const benches[] = {&eb_cmd_write, &eb_cmd_sendrecv, &eb_cmd_alltoall,
					       &eb_cmd_queue, &eb_cmd_proxy,	&eb_cmd_ipc,
					       &eb_cmd_matrix};
#define NBENCHES    ((int)(sizeof(benches) / sizeof(benches[0])))
#define NDEFAULT    5
#define DEFAULT_MIN "4K"
#define DEFAULT_MAX "16M"

struct ropts {
	const char *out, *begin, *end, *iters, *provider;
	int np;
};

struct run {
	const struct eb_cmd *cmd;
	char json[EB_TOOL_PATH];
	char cmdline[LINE * 2];
	char skipped[128]; /* why it did not run; "" when it ran */
	int code;
	double secs;
};

struct machine {
	char host[256], cpu[256], kernel[600], date[64], self[EB_TOOL_PATH];
	char libfabric[LINE], cuda[LINE], gpus_text[LINE * 4];
	char provider[64], nics_used[LINE], nics_info[LINE * 2];
	long cpus;
	int gpus;
};

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

/* Keep -b/-e/-n as typed (they go to every benchmark that takes them), checked now. */
static int parse_size_text(const struct eb_opt *o, const char *arg, void *field, char *want,
			   size_t len)
{
	uint64_t v;
	int rc = eb_opt_size(o, arg, &v, want, len);

	if (rc == EB_OK)
		*(const char **)field = arg;
	return rc;
}

static int parse_count_text(const struct eb_opt *o, const char *arg, void *field, char *want,
			    size_t len)
{
	long v;
	int rc = eb_opt_lng(o, arg, &v, want, len);

	if (rc == EB_OK)
		*(const char **)field = arg;
	return rc;
}

#define R(field) EB_AT(struct ropts, field)

static const struct eb_opt report_opts[] = {
    {"output", 'o', "DIR", eb_opt_str, R(out), 0, 0,
     "folder for the tables, JSON, figures and index.md (created where missing)"},
    {"np", 0, "N", eb_opt_num, R(np), 2, 64, "ranks of the benchmarks that take them (default 2)"},
    {"provider", 0, "P", eb_opt_str, R(provider), 0, 0,
     "libfabric provider (default: efabench's own choice)"},
    {"minbytes", 'b', "S", parse_size_text, R(begin), 1, (double)(1ull << 40),
     "smallest size of the sweeps (default " DEFAULT_MIN ")"},
    {"maxbytes", 'e', "S", parse_size_text, R(end), 1, (double)(1ull << 40),
     "largest size of the sweeps (default " DEFAULT_MAX ")"},
    {"iters", 'n', "N", parse_count_text, R(iters), 1, 1e9,
     "timed iterations per size (default: each benchmark's own)"},
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

/* One Markdown table cell: '|' escaped, newlines dropped. */
static void cell(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '|')
			fputs("\\|", f);
		else if (*s != '\n')
			fputc(*s, f);
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* The machine, from /proc/cpuinfo, uname and the clock. */
static void machine_basics(struct machine *m)
{
	struct utsname u;
	char line[LINE];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	snprintf(m->host, sizeof(m->host), "unknown");
	snprintf(m->kernel, sizeof(m->kernel), "unknown");
	snprintf(m->cpu, sizeof(m->cpu), "unknown");
	if (uname(&u) == 0) {
		snprintf(m->host, sizeof(m->host), "%s", u.nodename);
		snprintf(m->kernel, sizeof(m->kernel), "%s %s (%s) %s", u.sysname, u.release,
			 u.version, u.machine);
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "processor", 9) == 0)
			m->cpus++;
		else if (colon != NULL && strncmp(line, "model name", 10) == 0 &&
			 strcmp(m->cpu, "unknown") == 0) {
			chomp(colon + 2);
			snprintf(m->cpu, sizeof(m->cpu), "%s", colon + 2);
		}
	}
	if (f != NULL)
		fclose(f);
	if (m->cpus == 0)
		m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	gmtime_r(&now, &tm);
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* What `efabench info` (saved in path) says: libfabric, CUDA and its GPUs, and the NICs of the
 * provider (all providers' when it is not known) with their link speeds. */
static void machine_info(struct machine *m, const char *path)
{
	char line[LINE], prov[64], dom[64];
	FILE *f = fopen(path, "r");
	int table = 0;
	size_t gused = 0, nused = 0, plen = strlen(m->provider);

	snprintf(m->libfabric, sizeof(m->libfabric), "unknown");
	snprintf(m->cuda, sizeof(m->cuda), "unknown");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		int g;

		chomp(line);
		if (strncmp(line, "libfabric: ", 11) == 0) {
			snprintf(m->libfabric, sizeof(m->libfabric), "%s", line + 11);
		} else if (strncmp(line, "CUDA: ", 6) == 0) {
			const char *semi = strstr(line, "; ");

			snprintf(m->cuda, sizeof(m->cuda), "%s", line + 6);
			if (strncmp(line, "CUDA: built in", 14) == 0 && semi != NULL)
				m->gpus = atoi(semi + 2);
		} else if (sscanf(line, "  GPU %d:", &g) == 1 && gused + 8 < sizeof(m->gpus_text)) {
			gused +=
			    (size_t)snprintf(m->gpus_text + gused, sizeof(m->gpus_text) - gused,
					     "%s%s", gused ? "; " : "", line + 2);
		} else if (strncmp(line, "provider ", 9) == 0) {
			table = 1;
		} else if (line[0] == '\0') {
			table = 0;
		} else if (table && sscanf(line, "%63s %63s", prov, dom) == 2 &&
			   (plen == 0 || (strncmp(prov, m->provider, plen) == 0 &&
					  (prov[plen] == '\0' || prov[plen] == ';')))) {
			const char *gbps = strstr(line, " Gbps");
			char entry[200], speed[32] = "link unknown";

			if (gbps != NULL) {
				const char *p = gbps;

				while (p > line && p[-1] != ' ')
					p--;
				snprintf(speed, sizeof(speed), "%.*s Gbps", (int)(gbps - p), p);
			}
			snprintf(entry, sizeof(entry), "%s (%s, %s)", dom, prov, speed);
			if (strstr(m->nics_info, entry) == NULL &&
			    nused + strlen(entry) + 4 < sizeof(m->nics_info))
				nused += (size_t)snprintf(m->nics_info + nused,
							  sizeof(m->nics_info) - nused, "%s%s",
							  nused ? ", " : "", entry);
		}
	}
	if (f != NULL)
		fclose(f);
}

/* The provider and NICs a benchmark's header names ("provider: shm", "on NICs: shm"). */
static void header_facts(struct machine *m, const char *path)
{
	char line[LINE];
	FILE *f = fopen(path, "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL && line[0] == '#') {
		char *p = strstr(line, "provider: "), *nics = strstr(line, "on NICs: ");

		chomp(line);
		if (p != NULL && m->provider[0] == '\0')
			sscanf(p + 10, "%63s", m->provider);
		if (nics != NULL && m->nics_used[0] == '\0') {
			char *end = strstr(nics, "  ");

			if (end != NULL)
				*end = '\0';
			snprintf(m->nics_used, sizeof(m->nics_used), "%s", nics + 9);
		}
	}
	if (f != NULL)
		fclose(f);
}

/* A benchmark's stdout as Markdown: its tables as tables, every other line in code blocks;
 * then its stderr, if any. */
static int write_md(const char *md, const struct run *r, const char *out, const char *err)
{
	FILE *o = fopen(md, "w"), *in;
	char line[LINE * 4];
	int state = 0, first; /* 0: between blocks, 1: in a code block, 2: in a table */

	if (o == NULL) {
		eb_err("cannot write %s", md);
		return EB_ESYS;
	}
	fprintf(o, "# efabench %s\n\n```sh\n%s\n```\n\nexit status %d, %.1f s\n\n", r->cmd->name,
		r->cmdline, r->code, r->secs);
	in = fopen(out, "r");
	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		int table = line[0] == '|';

		chomp(line);
		if (state == 1 && table)
			fputs("```\n\n", o);
		if (state != 1 && !table)
			fputs(state == 2 ? "\n```\n" : "```\n", o);
		state = table ? 2 : 1;
		fprintf(o, "%s\n", line);
	}
	if (state == 1)
		fputs("```\n", o);
	if (in != NULL)
		fclose(in);
	in = fopen(err, "r");
	for (first = 1; in != NULL && fgets(line, sizeof(line), in) != NULL; first = 0)
		fprintf(o, "%s%s", first ? "\nstderr:\n\n```\n" : "", line);
	if (!first)
		fputs("```\n", o);
	if (in != NULL)
		fclose(in);
	if (fclose(o) != 0) {
		eb_err("writing %s failed", md);
		return EB_ESYS;
	}
	return EB_OK;
}

static int takes(const struct eb_cmd *c, unsigned group)
{
	return (c->groups & group) != 0;
}

/* Run one benchmark: DIR/NAME.json, DIR/NAME.md. */
static void run_bench(struct run *r, const struct ropts *ro, struct machine *m)
{
	const struct eb_cmd *c = r->cmd;
	char out[EB_TOOL_PATH], err[EB_TOOL_PATH], md[EB_TOOL_PATH], np[16];
	char *argv[32];
	int n = 0;
	uint64_t t0;

	snprintf(r->json, sizeof(r->json), "%s/%s.json", ro->out, c->name);
	snprintf(out, sizeof(out), "%s/%s.out", ro->out, c->name);
	snprintf(err, sizeof(err), "%s/%s.err", ro->out, c->name);
	snprintf(md, sizeof(md), "%s/%s.md", ro->out, c->name);
	snprintf(np, sizeof(np), "%d", ro->np);
	argv[n++] = m->self;
	argv[n++] = (char *)c->name;
	if (takes(c, EB_G_RANKS)) {
		argv[n++] = "--np";
		argv[n++] = np;
	}
	if (takes(c, EB_G_FABRIC) && ro->provider != NULL) {
		argv[n++] = "--provider";
		argv[n++] = (char *)ro->provider;
	}
	if (takes(c, EB_G_SIZES)) {
		argv[n++] = "-b";
		argv[n++] = (char *)(ro->begin ? ro->begin : DEFAULT_MIN);
		argv[n++] = "-e";
		argv[n++] = (char *)(ro->end ? ro->end : DEFAULT_MAX);
		if (ro->iters != NULL) {
			argv[n++] = "-n";
			argv[n++] = (char *)ro->iters;
		}
	}
	if ((c == &eb_cmd_queue || c == &eb_cmd_proxy) && m->gpus == 0) {
		argv[n++] = "--producers-on";
		argv[n++] = "cpu";
	}
	argv[n++] = "--json";
	argv[n++] = r->json;
	argv[n] = NULL;
	join_cmd(r->cmdline, sizeof(r->cmdline), argv);
	printf("efabench report: %s\n", r->cmdline);
	remove(r->json);
	t0 = eb_now_ns();
	r->code = eb_tool_run(argv, out, err);
	r->secs = (double)(eb_now_ns() - t0) / 1e9;
	if (r->code != 0)
		eb_warn("efabench %s exited %d (see %s)", c->name, r->code, md);
	header_facts(m, out);
	write_md(md, r, out, err);
	remove(out);
	remove(err);
}

/* The figures plot listed (one path a line) that belong to NAME: "NAME-*.png". */
static void figures(FILE *f, const char *list, const char *name, int images)
{
	char line[LINE];
	FILE *in = fopen(list, "r");
	size_t n = strlen(name);
	int k = 0;

	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		const char *base = strrchr(line, '/');

		chomp(line);
		base = base != NULL ? base + 1 : line;
		if (strncmp(base, name, n) != 0 || base[n] != '-')
			continue;
		if (images)
			fprintf(f, "![%s](%s)\n\n", base, base);
		else
			fprintf(f, "%s[%s](%s)", k ? ", " : "", base, base);
		k++;
	}
	if (!images && k == 0)
		fputs("-", f);
	if (in != NULL)
		fclose(in);
}

static int write_index(const struct ropts *ro, const struct machine *m, const struct run *runs,
		       int nruns, const char *info_cmd, const char *plot_cmd, int plot_code)
{
	char path[EB_TOOL_PATH], list[EB_TOOL_PATH];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/index.md", ro->out);
	snprintf(list, sizeof(list), "%s/plot.out", ro->out);
	f = fopen(path, "w");
	if (f == NULL) {
		eb_err("cannot write %s", path);
		return EB_ESYS;
	}
	fprintf(f, "# efabench report\n\n| | |\n|---|---|\n");
	fprintf(f, "| date | %s |\n| machine | ", m->date);
	cell(f, m->host);
	fprintf(f, " |\n| CPU | ");
	cell(f, m->cpu);
	fprintf(f, ", %ld logical CPUs |\n| kernel | ", m->cpus);
	cell(f, m->kernel);
	fprintf(f, " |\n| efabench | %s (`", EB_VERSION_STRING);
	cell(f, m->self);
	fprintf(f, "`) |\n| libfabric | ");
	cell(f, m->libfabric);
	fprintf(f, " |\n| provider | ");
	cell(f, m->provider[0] ? m->provider : "unknown");
	fprintf(f, "%s |\n| CUDA | ", ro->provider ? " (--provider)" : " (efabench's choice)");
	cell(f, m->cuda);
	if (m->gpus_text[0] != '\0') {
		fputs("; ", f);
		cell(f, m->gpus_text);
	}
	fprintf(f, " |\n| NICs used | ");
	cell(f, m->nics_used[0] ? m->nics_used : "unknown");
	fprintf(f, " |\n| NICs (efabench info) | ");
	cell(f, m->nics_info[0] ? m->nics_info : "none found");
	fprintf(f, " |\n\n`efabench info` in full: [info.txt](info.txt)\n\n## Results\n\n"
		   "| benchmark | exit | seconds | table | JSON | figures |\n"
		   "|---|---:|---:|---|---|---|\n");
	for (i = 0; i < nruns; i++) {
		const char *name = runs[i].cmd->name;

		if (runs[i].skipped[0] != '\0') {
			fprintf(f, "| %s | - | - | not run: %s | - | - |\n", name, runs[i].skipped);
			continue;
		}
		fprintf(f, "| %s | %d | %.1f | [%s.md](%s.md) | [%s.json](%s.json) | ", name,
			runs[i].code, runs[i].secs, name, name, name, name);
		figures(f, list, name, 0);
		fputs(" |\n", f);
	}
	if (plot_code != 0)
		fprintf(f,
			"\nNo figures: `efabench plot` exited %d (see [plot.log](plot.log); it "
			"needs python3-matplotlib).\n",
			plot_code);
	for (i = 0; i < nruns && plot_code == 0; i++)
		if (runs[i].skipped[0] == '\0') {
			fprintf(f, "\n### %s\n\nTable: [%s.md](%s.md)\n\n", runs[i].cmd->name,
				runs[i].cmd->name, runs[i].cmd->name);
			figures(f, list, runs[i].cmd->name, 1);
		}
	fprintf(f, "\n## Command lines\n\n```sh\n%s\n", info_cmd);
	for (i = 0; i < nruns; i++)
		if (runs[i].skipped[0] == '\0')
			fprintf(f, "%s\n", runs[i].cmdline);
	if (plot_cmd[0] != '\0')
		fprintf(f, "%s\n", plot_cmd);
	fputs("```\n", f);
	if (fclose(f) != 0) {
		eb_err("writing %s failed", path);
		return EB_ESYS;
	}
	printf("efabench report: %s\n", path);
	return EB_OK;
}

/* The benchmarks to run: those named, or the default set; ipc needs two GPUs. */
static int choose(char **names, int nnames, const struct machine *m, struct run *runs)
{
	int i, k, n = 0;

	for (k = 0; k < NBENCHES; k++) {
		int want =
		    nnames == 0 && (k < NDEFAULT || (benches[k] == &eb_cmd_ipc && m->gpus >= 2));

		for (i = 0; i < nnames; i++)
			want |= strcmp(names[i], benches[k]->name) == 0;
		if (!want)
			continue;
		memset(&runs[n], 0, sizeof(runs[n]));
		runs[n].cmd = benches[k];
		if (benches[k] == &eb_cmd_ipc && m->gpus < 2)
			snprintf(runs[n].skipped, sizeof(runs[n].skipped),
				 "needs two GPUs (CUDA sees %d)", m->gpus);
		n++;
	}
	for (i = 0; i < nnames; i++) {
		for (k = 0; k < NBENCHES && strcmp(names[i], benches[k]->name) != 0; k++)
			;
		if (k == NBENCHES) {
			eb_err(
			    "efabench report runs write, sendrecv, alltoall, queue, proxy, ipc or "
			    "matrix, not '%s'",
			    names[i]);
			return EB_EINVAL;
		}
	}
	return n;
}

static int report_tool(int argc, char **argv)
{
	struct ropts ro = {.np = 2};
	struct eb_opt_group g = {"Options of efabench report", report_opts,
				 (int)(sizeof(report_opts) / sizeof(report_opts[0])), &ro};
	struct run *runs = calloc(MAX_RUNS, sizeof(*runs));
	struct machine *m = calloc(1, sizeof(*m));
	char **names = calloc((size_t)argc, sizeof(*names));
	char *info_argv[3], *plot_argv[MAX_RUNS + 16];
	char info_path[EB_TOOL_PATH], info_cmd[LINE], plot_cmd[LINE * 4] = "", list[EB_TOOL_PATH],
								      log[EB_TOOL_PATH];
	int nnames, nruns, help, i, n = 0, failed = 0, plot_code = 0, code = 2;

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
	machine_basics(m);
	/* The names are checked before anything runs or is created. */
	if (choose(names, nnames, m, runs) < 0 || eb_tool_outdir(ro.out) != EB_OK ||
	    eb_tool_self(m->self, sizeof(m->self)) != EB_OK)
		goto cleanup;

	/* What the machine offers decides the set (GPUs): efabench info first. */
	snprintf(info_path, sizeof(info_path), "%s/info.txt", ro.out);
	snprintf(log, sizeof(log), "%s/info.err", ro.out);
	info_argv[0] = m->self;
	info_argv[1] = "info";
	info_argv[2] = NULL;
	join_cmd(info_cmd, sizeof(info_cmd), info_argv);
	if (eb_tool_run(info_argv, info_path, log) != 0)
		eb_warn("efabench info failed: the machine stamp is incomplete");
	remove(log);
	if (ro.provider != NULL)
		snprintf(m->provider, sizeof(m->provider), "%s", ro.provider);
	machine_info(m, info_path);
	nruns = choose(names, nnames, m, runs);

	plot_argv[n++] = m->self;
	plot_argv[n++] = "plot";
	for (i = 0; i < nruns; i++) {
		if (runs[i].skipped[0] != '\0')
			continue;
		run_bench(&runs[i], &ro, m);
		failed |= runs[i].code != 0;
		if (access(runs[i].json, R_OK) == 0)
			plot_argv[n++] = runs[i].json;
	}
	if (ro.provider == NULL) { /* the provider the benchmarks chose, and its NICs */
		m->nics_info[0] = '\0';
		machine_info(m, info_path);
	}

	/* The figures, stamped with this machine and date. */
	snprintf(list, sizeof(list), "%s/plot.out", ro.out);
	snprintf(log, sizeof(log), "%s/plot.log", ro.out);
	if (n > 2) {
		plot_argv[n++] = "-o";
		plot_argv[n++] = (char *)ro.out;
		plot_argv[n++] = "--host";
		plot_argv[n++] = m->host;
		plot_argv[n++] = "--date";
		plot_argv[n++] = m->date;
		if (m->provider[0] != '\0') {
			plot_argv[n++] = "--provider";
			plot_argv[n++] = m->provider;
		}
		plot_argv[n] = NULL;
		join_cmd(plot_cmd, sizeof(plot_cmd), plot_argv);
		printf("efabench report: %s\n", plot_cmd);
		plot_code = eb_tool_run(plot_argv, list, log);
		if (plot_code != 0)
			eb_warn("no figures: efabench plot exited %d (see %s)", plot_code, log);
		else
			remove(log);
	}
	code = write_index(&ro, m, runs, nruns, info_cmd, plot_cmd, plot_code) != EB_OK || failed;
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
    .tool = report_tool,
};
