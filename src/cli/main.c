/* efabench: one binary, one subcommand per benchmark. This file holds the table of
 * subcommands and starts them: in this process, or as ranks (forked here, under MPI, or
 * joined through the TCP rendezvous). */
#include "opts.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "harness/harness.h"
#include "harness/sweep.h"
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every subcommand, in `efabench --help` order. Adding one: its file, and its name here. */
#define EB_CMDS(X)                                                                                 \
	X(write)                                                                                   \
	X(sendrecv)                                                                                \
	X(alltoall) X(proxy) X(moe) X(matrix) X(doctor) X(queue) X(ipc) X(info) X(plot) X(report)

#define DECLARE(name) extern const struct eb_cmd eb_cmd_##name;
#define ADDRESS(name) &eb_cmd_##name,
EB_CMDS(DECLARE)
static const struct eb_cmd *const cmds[] = {EB_CMDS(ADDRESS)};
#define NCMDS ((int)(sizeof(cmds) / sizeof(cmds[0])))

const struct eb_cmd *const *eb_cli_cmds(int *n)
{
	*n = NCMDS;
	return cmds;
}

static void usage(FILE *f)
{
	int i;

	fputs("usage: efabench <subcommand> [options]\n\nSubcommands:\n", f);
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-10s %s\n", cmds[i]->name, cmds[i]->summary);
	fputs("\n`efabench <subcommand> --help` defines its figures and lists its options.\n"
	      "Exit status: 0 ok, 1 failure (wrong data, lost rank, timeout), 2 bad input.\n",
	      f);
}

static int rank_main(struct eb_boot *boot, void *arg)
{
	struct eb_opts *o = arg; /* this process's copy */
	int rc;

	if (o->cpu_map != NULL) { /* first: the rank's memory then lands near its CPUs */
		char why[96];

		rc = eb_topo_pin(o->cpu_map, boot->local_rank, why, sizeof(why));
		if (rc != EB_OK) {
			eb_err("--cpu-map %s: %s", o->cpu_map, why);
			return eb_exit_code(rc);
		}
		eb_dbg("%s", why);
	}
	/* Started by an outside launcher: each rank decides --mem auto for itself. */
	rc = eb_harness_mem_auto(o, boot);
	return eb_exit_code(rc != EB_OK ? rc : eb_harness_run(o->cmd->bench, o, boot));
}

/* An output file we cannot write is bad input: find out before any rank starts. A file that
 * did not exist is removed again (the run writes it at the end); a device (/dev/full) gets
 * one byte, since only a write tells whether it takes any. */
static int check_writable(const char *opt, const char *path)
{
	struct stat st;
	int existed, fail = 0;
	FILE *f;

	if (path == NULL || strcmp(path, "-") == 0) /* "-": stdout */
		return EB_OK;
	if (path[0] == '\0') {
		eb_err("%s needs a file name", opt);
		return EB_EINVAL;
	}
	existed = stat(path, &st) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		eb_err("cannot write %s %s: it is a directory", opt, path);
		return EB_EINVAL;
	}
	f = fopen(path, "a");
	if (f == NULL) {
		eb_err("cannot write %s %s: %s", opt, path, strerror(errno));
		return EB_EINVAL;
	}
	if (existed && S_ISCHR(st.st_mode))
		fail = fputc('\n', f) == EOF || fflush(f) != 0;
	if (fail)
		eb_err("cannot write %s %s: %s", opt, path, strerror(errno));
	fclose(f);
	if (!existed)
		unlink(path);
	return fail ? EB_EINVAL : EB_OK;
}

/* A rank started by an outside launcher: run it, then leave the bootstrap with its code. */
static int run_started(struct eb_boot *boot, struct eb_opts *o)
{
	int code = rank_main(boot, o);

	eb_boot_finalize(boot, code);
	return code;
}

static int run_mpi(struct eb_opts *o)
{
	struct eb_boot boot = {0};
	int rc;

	if (o->np != 0) {
		eb_err("--np is for the embedded launcher; under mpirun/srun the launcher sets "
		       "the rank count");
		return 2;
	}
	rc = eb_boot_mpi_init(&boot, o->fab.timeout_s);
	if (rc != EB_OK)
		return eb_exit_code(rc == EB_ENOTSUP ? EB_EINVAL : rc);
	boot.ask_s = o->fab.timeout_s;
	return run_started(&boot, o);
}

static int run_rendezvous(struct eb_opts *o)
{
	struct eb_boot boot = {0};
	int rc;

	if (o->cmd->one_host) {
		eb_err("efabench %s runs on one host: start it with --np or mpirun, not a "
		       "rendezvous",
		       o->cmd->name);
		return 2;
	}
	if (o->np != 0) {
		eb_err("--np is for the embedded launcher; with a rendezvous each rank is started "
		       "on its own (--rank, --ranks)");
		return 2;
	}
	if (o->cpu_map != NULL) {
		eb_err("--cpu-map pins the ranks a launcher starts; with a rendezvous start each "
		       "rank under taskset instead");
		return 2;
	}
	o->rdv.timeout_s = o->fab.timeout_s;
	if (eb_rdv_opts_resolve(&o->rdv) != EB_OK)
		return 2;
	rc = eb_boot_rdv_init(&boot, &o->rdv);
	if (rc != EB_OK)
		return eb_exit_code(rc == EB_EINVAL ? EB_EPEER : rc);
	return run_started(&boot, o);
}

static int launch(struct eb_opts *o)
{
	int np;

	if (o->rdv.root != NULL || eb_boot_detect() == EB_LAUNCH_TCP)
		return run_rendezvous(o);
	if (eb_boot_detect() == EB_LAUNCH_MPI)
		return run_mpi(o);
	/* srun --mpi=none (Slurm's usual default) sets no PMI variables: every task would fork a
	 * job of its own and each would pass alone. */
	if (getenv("SLURM_STEP_NUM_TASKS") != NULL && atoi(getenv("SLURM_STEP_NUM_TASKS")) > 1) {
		eb_err("srun started %s tasks without a PMI (--mpi=none?): each would run alone. "
		       "Use srun --mpi=pmix (efabench, Open MPI) or --mpi=pmi2 (efabench-mpich)",
		       getenv("SLURM_STEP_NUM_TASKS"));
		return 2;
	}
	np = o->cmd->probe != NULL ? o->cmd->probe(o) : eb_harness_probe(o);
	if (np < 0)
		return -np;
	if (eb_harness_mem_auto(o, NULL) != EB_OK) /* where the probe left it open */
		return 1;
	if (o->cpu_map != NULL) {
		char why[96];

		if (eb_topo_map_check(o->cpu_map, np, why, sizeof(why)) != EB_OK) {
			eb_err("--cpu-map %s: %s", o->cpu_map, why);
			return 2;
		}
	}
	return eb_launch_local(np, rank_main, o, o->fab.timeout_s + 5.0);
}

int main(int argc, char **argv)
{
	const struct eb_variant *vars[EB_MAX_VARIANTS];
	const struct eb_cmd *cmd = NULL;
	struct eb_opts o;
	void *own = NULL;
	int i, help, code = 2;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < NCMDS; i++)
		if (strcmp(argv[1], cmds[i]->name) == 0)
			cmd = cmds[i];
	if (cmd == NULL) {
		eb_err("unknown subcommand '%s' (efabench --help lists them)", argv[1]);
		return 2;
	}
	if (cmd->tool != NULL)
		return cmd->tool(argc, argv);
	if (cmd->own_size > 0 && (own = calloc(1, cmd->own_size)) == NULL) {
		eb_err("out of memory");
		return 1;
	}
	if (eb_opts_parse(cmd, argc, argv, &o, own, &help) != EB_OK)
		goto free_own;
	if (help) {
		eb_opts_help(stdout, cmd);
		code = 0;
		goto free_own;
	}
	if (o.dry_run) {
		eb_opts_dry_run(stdout, &o);
		code = 0;
		goto free_own;
	}
	eb_log_set_verbose(o.verbose);
	if (cmd->bench != NULL && cmd->bench->sweep != NULL &&
	    eb_sweep_select(cmd->bench->sweep, &o, vars) == 0) {
		eb_err("%s has no variant with the layouts asked for (--layout)", cmd->name);
		goto free_own;
	}
	if (check_writable("--csv", o.csv) != EB_OK || check_writable("--json", o.json) != EB_OK ||
	    check_writable("--md", o.md) != EB_OK || check_writable("--trace", o.trace) != EB_OK)
		goto free_own;
	code = cmd->main != NULL ? eb_exit_code(cmd->main(&o))
	       : cmd->alone	 ? eb_exit_code(eb_harness_run(cmd->bench, &o, NULL))
				 : launch(&o);
free_own:
	free(own);
	return code;
}
