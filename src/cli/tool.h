/* What the subcommands that are tools rather than benchmarks (plot, report) share: a command
 * line with positional arguments, an output folder, this binary's path and child processes. */
#ifndef EB_CLI_TOOL_H
#define EB_CLI_TOOL_H

#include "harness/cmd.h"
#include "core/opt.h"

#include <stddef.h>

#define EB_TOOL_PATH 4096

/* Parse argv[2..argc) against one group of options. The other arguments (neither an option nor
 * its value; everything after "--") go to pos[0..*npos) in order, pos having room for argc.
 * EB_OK, or EB_EINVAL after one line. *help is set for -h / --help. */
int eb_tool_parse(int argc, char **argv, const struct eb_opt_group *g, const char *cmd, char **pos,
		  int *npos, int *help);

/* `efabench NAME --help` of a tool: usage, summary, help text, then its options. */
void eb_tool_help(const struct eb_cmd *cmd, const char *usage, const struct eb_opt_group *g);

/* Create dir and its parents where missing, then prove a file can be made in it. EB_OK, or
 * EB_EINVAL after one line naming dir and why. */
int eb_tool_outdir(const char *dir);

/* This binary's absolute path (/proc/self/exe): EB_OK or EB_ESYS. */
int eb_tool_self(char *buf, size_t len);

/* Run argv[0] (searched on PATH) with stdout and stderr into the files named (NULL: this
 * process's own) and wait for it. Its exit status;
 * 127 when it could not be started; 128 + the signal that killed it; EB_ESYS when fork or a
 * file failed (after one line). */
int eb_tool_run(char *const argv[], const char *out, const char *err);

#endif
