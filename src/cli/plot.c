/* efabench plot: PNG figures of efabench --json output. The figures are drawn by
 * efabench_plot.py (Python 3 and matplotlib); this finds it where it was installed, checks the
 * inputs and the output folder, and runs python3 on it. */
#include "tool.h"
#include "efabench/status.h"
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRIPT "efabench_plot.py"

extern const struct eb_cmd eb_cmd_plot;

struct plot_opts {
	const char *out, *host, *provider, *date;
};

#define P(field) EB_AT(struct plot_opts, field)

static const struct eb_opt plot_opts[] = {
    {"output", 'o', "DIR", eb_opt_str, P(out), 0, 0,
     "folder for the PNGs and their .data.json (created where missing)"},
    {"host", 0, "NAME", eb_opt_str, P(host), 0, 0,
     "machine named in each figure's corner when the JSON names none"},
    {"provider", 0, "P", eb_opt_str, P(provider), 0, 0,
     "provider named in the corner when the JSON names none"},
    {"date", 0, "D", eb_opt_str, P(date), 0, 0, "date in the corner when the JSON has none"},
};

/* path = dir/name when that file is readable. */
static int try_path(char *path, size_t len, const char *dir, const char *name)
{
	if (dir == NULL || dir[0] == '\0' || (size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
		return 0;
	return access(path, R_OK) == 0;
}

/* Where the drawing script is: <prefix>/share/efabench beside an installed binary, the source
 * tree's tools/ for a build, else $EFABENCH_TOOLS. */
static int find_script(char *path, size_t len)
{
	char self[EB_TOOL_PATH], *slash;
	int i;

	if (eb_tool_self(self, sizeof(self)) == EB_OK) {
		for (i = 0; i < 2 && (slash = strrchr(self, '/')) != NULL; i++)
			*slash = '\0'; /* <prefix>/bin/efabench -> <prefix> */
		if (i == 2 && strlen(self) + sizeof("/share/efabench") < sizeof(self)) {
			strcat(self, "/share/efabench");
			if (try_path(path, len, self, SCRIPT))
				return EB_OK;
		}
	}
#ifdef EB_SOURCE_DIR
	if (try_path(path, len, EB_SOURCE_DIR "/tools", SCRIPT))
		return EB_OK;
#endif
	if (try_path(path, len, getenv("EFABENCH_TOOLS"), SCRIPT))
		return EB_OK;
	eb_err("cannot find %s: not in <prefix>/share/efabench beside this binary, nor in the "
	       "source tree's tools/, nor in $EFABENCH_TOOLS",
	       SCRIPT);
	return EB_EINVAL;
}

static int plot_tool(int argc, char **argv)
{
	struct plot_opts po = {0};
	struct eb_opt_group g = {"Options of efabench plot", plot_opts,
				 (int)(sizeof(plot_opts) / sizeof(plot_opts[0])), &po};
	char script[EB_TOOL_PATH], **files = NULL, **args = NULL;
	int nfiles, help, i, n = 0, code = 2;

	files = calloc((size_t)argc, sizeof(*files));
	args = calloc((size_t)argc + 12, sizeof(*args));
	if (files == NULL || args == NULL) {
		eb_err("out of memory");
		goto cleanup;
	}
	if (eb_tool_parse(argc, argv, &g, "plot", files, &nfiles, &help) != EB_OK)
		goto cleanup;
	if (help) {
		eb_tool_help(&eb_cmd_plot, "FILE.json [FILE.json ...] -o DIR", &g);
		code = 0;
		goto cleanup;
	}
	if (nfiles == 0 || po.out == NULL) {
		eb_err("efabench plot needs JSON files and -o DIR (efabench plot FILE.json ... -o "
		       "DIR)");
		goto cleanup;
	}
	for (i = 0; i < nfiles; i++) {
		FILE *f = fopen(files[i], "r");

		if (f == NULL) {
			eb_err("cannot read %s: %s", files[i], strerror(errno));
			goto cleanup;
		}
		fclose(f);
	}
	if (eb_tool_outdir(po.out) != EB_OK || find_script(script, sizeof(script)) != EB_OK)
		goto cleanup;
	args[n++] = "python3";
	args[n++] = script;
	for (i = 0; i < nfiles; i++)
		args[n++] = files[i];
	args[n++] = "-o";
	args[n++] = (char *)po.out;
	if (po.host != NULL) {
		args[n++] = "--host";
		args[n++] = (char *)po.host;
	}
	if (po.provider != NULL) {
		args[n++] = "--provider";
		args[n++] = (char *)po.provider;
	}
	if (po.date != NULL) {
		args[n++] = "--date";
		args[n++] = (char *)po.date;
	}
	args[n] = NULL;
	code = eb_tool_run(args, NULL, NULL);
	if (code == 127) {
		eb_err("python3 was not found: plots need Python 3 and matplotlib (apt-get install "
		       "python3-matplotlib)");
		code = 2;
	} else if (code < 0) {
		code = 1;
	}
cleanup:
	free(files);
	free(args);
	return code;
}

const struct eb_cmd eb_cmd_plot = {
    .name = "plot",
    .summary = "PNG figures of efabench --json output (needs python3-matplotlib)",
    .help = "  efabench plot FILE.json [FILE.json ...] -o DIR draws, per file: Gbps and latency\n"
	    "  (us, log axes) vs size per variant with the link limit where the JSON has a link\n"
	    "  speed (write, sendrecv, alltoall, proxy); proxy vs CPU-initiated ratios per size\n"
	    "  (proxy); commands/s vs producers (queue); GB/s heat maps of grid x block (ipc);\n"
	    "  a Gbps heat map per channel with flagged cells marked (matrix); per phase, each\n"
	    "  rank's p50/p99 per initiator, heat maps of tokens and selections per source and\n"
	    "  destination and wire/sel GB/s per initiator and phase (moe). Beside each PNG,\n"
	    "  NAME.data.json lists the series drawn. The figures are drawn by\n"
	    "  efabench_plot.py, looked for in <prefix>/share/efabench, the source tree's tools/,\n"
	    "  then $EFABENCH_TOOLS",
    .tool = plot_tool,
};
