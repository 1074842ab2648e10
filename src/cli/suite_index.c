/* efabench report's files: each benchmark's output as Markdown, and index.md. */
#include "suite.h"
#include "efabench/status.h"
#include "efabench/versions.h"
#include "core/log.h"

#include <stdio.h>
#include <string.h>

#define LINE EB_RLINE

/* One Markdown table cell: '|' escaped, newlines dropped. */
static void cell(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '|')
			fputs("\\|", f);
		else if (*s != '\n')
			fputc(*s, f);
}

/* A benchmark's page: its command line, exit status and time, the Markdown it wrote of its
 * output (part), then its stderr, if any. */
int eb_suite_md(const char *md, const struct suite_run *r, const char *part, const char *err)
{
	FILE *o = fopen(md, "w"), *in;
	char buf[LINE * 4];
	size_t n;
	int first;

	if (o == NULL) {
		eb_err("cannot write %s", md);
		return EB_ESYS;
	}
	fprintf(o, "# efabench %s\n\n```sh\n%s\n```\n\nexit status %d, %.1f s\n\n", r->cmd->name,
		r->cmdline, r->code, r->secs);
	in = fopen(part, "r");
	while (in != NULL && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, o);
	if (in != NULL)
		fclose(in);
	in = fopen(err, "r");
	for (first = 1; in != NULL && fgets(buf, sizeof(buf), in) != NULL; first = 0)
		fprintf(o, "%s%s", first ? "\nstderr:\n\n```\n" : "", buf);
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

/* The figures plot listed (one path a line) that belong to NAME: "NAME-*.png". */
static void figures(FILE *f, const char *list, const char *name, int images)
{
	char line[LINE];
	FILE *in = fopen(list, "r");
	size_t n = strlen(name);
	int k = 0;

	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		const char *base = strrchr(line, '/');

		eb_suite_chomp(line);
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

/* The machine's table: date, host, CPU, kernel, efabench, libfabric, provider, CUDA, NICs. */
static void machine_table(FILE *f, const struct ropts *ro, const struct suite_machine *m)
{
	struct eb_versions v;

	fprintf(f, "# efabench report\n\n| | |\n|---|---|\n");
	fprintf(f, "| date | %s |\n| machine | ", m->date);
	cell(f, m->host);
	fprintf(f, " |\n| CPU | ");
	cell(f, m->cpu);
	fprintf(f, ", %ld logical CPUs |\n| kernel | ", m->cpus);
	cell(f, m->kernel);
	eb_versions_get(&v);
	fprintf(f, " |\n| efabench | %s, commit %s (`", v.efabench, v.commit);
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
	fprintf(f, " |\n\n`efabench info` in full: [info.txt](info.txt), as data: "
		   "[info.json](info.json)\n");
}

int eb_suite_index(const struct ropts *ro, const struct suite_machine *m,
		   const struct suite_run *runs, int nruns, const char *info_cmd,
		   const char *plot_cmd, int plot_code)
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
	machine_table(f, ro, m);
	fprintf(f, "\n## Results\n\n"
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
