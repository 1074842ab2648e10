/* The common option groups, and the parse of one subcommand's command line: every bad input
 * ends in one line on stderr and exit status 2, before anything is allocated. */
#ifndef EB_CLI_OPTS_H
#define EB_CLI_OPTS_H

#include "harness/cmd.h"

#include <stdio.h>

/* Parse argv[2..] for cmd: the common groups it takes into o, its own options into own (of
 * cmd->own_size bytes, defaults applied here). EB_OK, or EB_EINVAL after one line. *help is
 * set for -h / --help. */
int eb_opts_parse(const struct eb_cmd *cmd, int argc, char **argv, struct eb_opts *o, void *own,
		  int *help);

/* `efabench CMD --help`: what it measures, its metrics, every option it takes. */
void eb_opts_help(FILE *f, const struct eb_cmd *cmd);
/* Every subcommand, in `efabench --help` order (main.c's table); *n gets how many. */
const struct eb_cmd *const *eb_cli_cmds(int *n);

/* --dry-run: the settings the parsed options give a run, as one JSON object. */
void eb_opts_dry_run(FILE *f, const struct eb_opts *o);

#endif
