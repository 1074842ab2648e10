/* Command-line parsing: every bad input ends in one line on stderr and exit status 2, before
 * anything is allocated. */
#ifndef EB_CLI_OPTS_H
#define EB_CLI_OPTS_H

#include "../bench/harness.h"

#include <stdio.h>

/* EB_OK, or EB_EINVAL after printing one line. *help is set for -h. */
int eb_opts_parse(int argc, char **argv, struct eb_opts *o, int *help);
void eb_opts_usage(FILE *f, const char *bench);

#endif
