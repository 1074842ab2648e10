/* libFuzzer target: the whole option parse of a subcommand, as `efabench <sub> ...` runs it
 * (src/cli/main.c): eb_opts_parse with the subcommand's descriptor, then --help's printer or
 * the harness's variant selection. Input: NUL-separated argv words. The first word picks the
 * subcommand by name (one of the table's, as main.c does; any other word picks one by its first
 * byte); a '!' at its end sets EFABENCH_TESTING=1 (testing aids allowed). The other words are
 * argv[2..]. Properties: no crash, leak or hang; the parse returns EB_OK or a negative code. */
#include "harness/cmd.h"
#include "harness/harness.h"
#include "harness/sweep.h"
#include "cli/opts.h"
#include "efabench/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subcommands whose command line eb_opts_parse reads (the tools, plot and report, parse
 * their own; info lives in the CLI, with hwloc). */
#define FUZZ_CMDS(X)  X(write) X(sendrecv) X(alltoall) X(proxy) X(matrix) X(doctor) X(queue) X(ipc)
#define DECLARE(name) extern const struct eb_cmd eb_cmd_##name;
#define ADDRESS(name) &eb_cmd_##name,
FUZZ_CMDS(DECLARE)
static const struct eb_cmd *const cmds[] = {FUZZ_CMDS(ADDRESS)};
#define NCMDS ((int)(sizeof(cmds) / sizeof(cmds[0])))

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	const struct eb_cmd *cmd = NULL;
	char *copy, *argv[MAX_WORDS + 3], *p, *end;
	struct eb_opts o;
	void *own = NULL;
	size_t n;
	int argc = 0, i, help = 0, rc;

	if (size > 8192)
		return -1;
	if (devnull == NULL && (devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	/* Words are separate allocations of their exact length (ASan sees any read past one). */
	copy = malloc(size + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = strdup("efabench");
	for (p = copy, end = copy + size; p <= end && argc < MAX_WORDS + 2; p += n + 1) {
		n = strlen(p);
		argv[argc++] = strdup(p);
		if (p + n == end)
			break;
	}
	argv[argc] = NULL;
	free(copy);
	if (argc < 2) {
		free(argv[0]);
		return 0;
	}

	n = strlen(argv[1]);
	if (n > 0 && argv[1][n - 1] == '!') {
		argv[1][n - 1] = '\0';
		setenv("EFABENCH_TESTING", "1", 1);
	} else {
		unsetenv("EFABENCH_TESTING");
	}
	for (i = 0; i < NCMDS; i++)
		if (strcmp(argv[1], cmds[i]->name) == 0)
			cmd = cmds[i];
	if (cmd == NULL)
		cmd = cmds[(unsigned char)argv[1][0] % NCMDS];

	if (cmd->own_size > 0 && (own = calloc(1, cmd->own_size)) == NULL)
		abort();
	rc = eb_opts_parse(cmd, argc, argv, &o, own, &help);
	if (rc > 0)
		abort(); /* EB_OK or a negative eb_status, nothing else */
	if (rc == EB_OK && help)
		eb_opts_help(devnull, cmd);
	else if (rc == EB_OK && cmd->bench != NULL && cmd->bench->sweep != NULL) {
		if (eb_sweep_select(cmd->bench->sweep, &o, vars) > EB_MAX_VARIANTS)
			abort();
	}
	if (rc == EB_OK && !help && (o.nsizes < 1 || o.nsizes > EB_MAX_SIZES))
		abort();
	free(own);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
