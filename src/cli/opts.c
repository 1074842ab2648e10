#include "opts.h"
#include "harness/bench.h"
#include "efabench/layout.h"
#include "efabench/mem.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/json.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

#define O(field)    EB_AT(struct eb_opts, field)
#define SIZE_MAX_TB ((double)(1ull << 40))

/* --layout: a comma list of eb_layout_parse's names. */
static int add_layout(const char *item, void *arg)
{
	enum eb_layout l;

	if (eb_layout_parse(item, &l) != EB_OK)
		return EB_EINVAL;
	*(unsigned *)arg |= 1u << l;
	return EB_OK;
}

static int parse_layouts(const struct eb_opt *o, const char *arg, void *field, char *want,
			 size_t len)
{
	unsigned mask = 0;

	if (eb_opt_each(arg, add_layout, &mask) == EB_OK) {
		*(unsigned *)field = mask;
		return EB_OK;
	}
	snprintf(want, len, "a comma list of single, split and/or round-robin");
	return EB_EINVAL;
}

static const struct eb_opt sizes[] = {
    {"minbytes", 'b', "S", eb_opt_size, O(begin), 1, SIZE_MAX_TB,
     "smallest size; sizes take K, M, G, T (binary)"},
    {"maxbytes", 'e', "S", eb_opt_size, O(end), 1, SIZE_MAX_TB, "largest size, always run"},
    {"stepfactor", 'f', "F", eb_opt_lng, O(factor), 2, 1 << 20,
     "multiply the size by F each step (default 2)"},
};

static const struct eb_opt iters[] = {
    {"warmup", 'w', "N", eb_opt_lng, O(warmup), 0, 1e9, "untimed iterations per point"},
    {"iters", 'n', "N", eb_opt_lng, O(iters), 1, 1e9, "timed iterations per point"},
    {"check", 0, NULL, eb_opt_flag, O(check), 0, 0,
     "verify every byte after every iteration, not only after\n"
     "warm-up and after the timed loop"},
    {"dry-run", 0, NULL, eb_opt_flag, O(dry_run), 0, 0,
     "print the settings this command line gives a run (JSON:\n"
     "sizes, warmup, iters, rounds, phases) and exit"},
};

static const struct eb_opt rounds[] = {
    {"rounds", 0, "R", eb_opt_lng, O(rounds), 1, 1000,
     "the variants of a size take turns R times, each turn a\n"
     "share of every variant's timed iterations (at least R\n"
     "phases for those timed by the phase), so that a host whose\n"
     "speed drifts during the run moves every variant alike and\n"
     "the ratios between them hold (1: each variant's iterations\n"
     "in one go)"},
};

static const struct eb_opt phases[] = {
    {"phases", 0, "N", eb_opt_lng, O(phases), 1, 1000,
     "variants timed by the phase (write --rate, the proxy's NBI\n"
     "and rate variants) cut -n into N phases, each timed whole\n"
     "(default 5): JSON gives the phases' spread (phase_*_us),\n"
     "per-write percentiles are null (no write was timed alone)"},
};

/* --stages N, all or off: 1 in N, every one, none. */
static int parse_stages(const struct eb_opt *o, const char *arg, void *field, char *want,
			size_t len)
{
	char *end;
	long n = strtol(arg, &end, 10);

	(void)o;
	if (strcmp(arg, "all") == 0 || strcmp(arg, "off") == 0) {
		*(long *)field = arg[0] == 'a' ? 1 : 0;
		return EB_OK;
	}
	if (end == arg || *end != '\0' || n < 1 || n > 1000000) {
		snprintf(want, len, "a sampling of 1 in N (1 to 1000000), all or off");
		return EB_EINVAL;
	}
	*(long *)field = n;
	return EB_OK;
}

static const struct eb_opt stages[] = {
    {"stages", 0, "N", parse_stages, O(stages_every), 0, 0,
     "stamp the stages of 1 in N operations (default 64), all or\n"
     "off: where a put's time goes (moe: every iteration's legs\n"
     "while on), a table after the results and JSON stages\n"
     "(off: nothing stamped, nothing spent)"},
    {"trace", 0, "FILE", eb_opt_str, O(trace), 0, 0,
     "the stamped operations' stages in the Chrome Trace Event\n"
     "Format (Perfetto, chrome://tracing; efabench plot draws it)"},
};

static const char *const polls[] = {"auto", "spin", "yield", "block", NULL};

static const struct eb_opt fabric[] = {
    {"provider", 0, "P", eb_opt_str, O(fab.provider), 0, 0,
     "libfabric provider (shm, tcp, sockets, efa, ...); default\n"
     "FI_PROVIDER, else efa if present, else shm when all ranks\n"
     "share a host, else tcp"},
    {"fabric", 0, "NAME", eb_opt_str, O(fab.fabric), 0, 0,
     "the provider's fabric (default: efa on EFA, though\n"
     "libfabric >= 2.1 lists efa-direct first; elsewhere each\n"
     "NIC's first entry); efa-direct gives figures comparable\n"
     "with aws-ofi-nccl's on p5en (sends up to the MTU only)"},
    {"nics", 0, "LIST", eb_opt_str, O(fab.nics), 0, 0,
     "comma list of NICs: domain names (interfaces for socket\n"
     "providers, e.g. rail0,rail1; rdmap0s1 or rdmap0s1-rdm on\n"
     "EFA) or fabric names (subnets such as 10.77.1.0/24); a\n"
     "name that matches nothing is refused with the NICs found"},
    {"channels", 0, "N", eb_opt_num, O(fab.channels), 1, 64,
     "channels to open, one per NIC (default: all NICs found);\n"
     "more than the NICs found share them round-robin"},
    {"nic-only", 0, NULL, eb_opt_flag, O(fab.nic_only), 0, 0,
     "peers on this host through the NIC too: efa otherwise\n"
     "reaches them through shared memory (the header says\n"
     "which path ran)"},
    {"link-gbps", 0, "G", eb_opt_dbl, O(fab.link_gbps), 0, 1e9,
     "link speed per NIC for BusBW when the provider reports none"},
    {"chunk", 0, "S", eb_opt_size, O(chunk), 1, SIZE_MAX_TB,
     "bytes per operation; a buffer is cut into chunks (default\n"
     "512K on tcp/sockets, 256M for --mem device on shm, else 1M)"},
    {"poll", 0, "P", eb_opt_choice, O(fab.poll), 0, 0,
     "auto (default: spin while every rank on this host has a\n"
     "core of its own, else yield the core between empty polls),\n"
     "spin, yield, or block (sleep on the completion queues'\n"
     "file descriptors where the provider gives them: tcp,\n"
     "sockets, efa from libfabric 2.3; refused where none)",
     polls},
    {"window", 0, "N", eb_opt_lng, O(window), 1, 65536,
     "chunks in flight per channel (default 16 on tcp/sockets,\n"
     "4 on other providers)"},
};

static const char *const mem_kinds[] = {"host", "pinned", "device", "auto", NULL};

static const struct eb_opt mem[] = {
    {"mem", 0, "KIND", eb_opt_choice, O(mem), 0, 0,
     "where payloads live: host (malloc), pinned (host memory\n"
     "registered with CUDA), device (cudaMalloc; the NIC reads\n"
     "it through DMA-BUF or FI_HMEM_CUDA) or auto (device where\n"
     "a GPU is and the provider registers its memory, else\n"
     "pinned where a GPU is, else host; the header says why);\n"
     "default host (moe: auto)",
     mem_kinds},
    {"gpu", 0, "N", eb_opt_num, O(gpu), 0, 1023,
     "the GPU of every rank (default: local rank modulo the GPUs)"},
    {"staged", 0, NULL, eb_opt_flag, O(staged), 0, 0,
     "with --mem device: the fabric moves pinned bounce buffers;\n"
     "copies to and from the GPU run on CUDA streams, chunk by\n"
     "chunk, overlapped with the network (no GPUDirect needed)"},
    {"stage-serial", 0, NULL, eb_opt_flag, O(serial), 0, 0,
     "with --staged: no overlap (copy all, send; receive all,\n"
     "copy): what the pipelining saves"},
};

static const struct eb_opt layout[] = {
    {"layout", 0, "LIST", parse_layouts, O(layouts), 0, 0,
     "channel layouts to run (default: all the benchmark has):\n"
     "single = channel 0; split = the buffer cut across all\n"
     "channels, remainder on the last; round-robin = the whole\n"
     "buffer for peer p on channel (p + rank) % channels"},
};

static const struct eb_opt ranks[] = {
    {"np", 0, "N", eb_opt_num, O(np), 1, 4096,
     "fork N ranks on this host (default 2); under mpirun/srun\n"
     "the launcher decides and --np is refused"},
    {"root", 0, "HOST:PORT", eb_opt_str, O(rdv.root), 0, 0,
     "TCP rendezvous without MPI: where rank 0 listens (or\n"
     "EFABENCH_ROOT); every rank presents the job's secret from\n"
     "EFABENCH_TOKEN (environment only)"},
    {"rank", 0, "R", eb_opt_num, O(rdv.rank), 0, EB_RDV_MAX_RANKS - 1,
     "this rank, with --root (or EFABENCH_RANK)"},
    {"ranks", 0, "N", eb_opt_num, O(rdv.size), 1, EB_RDV_MAX_RANKS,
     "the job's rank count, with --root (or EFABENCH_SIZE)"},
    {"cpu-map", 0, "LIST", eb_opt_str, O(cpu_map), 0, 0,
     "pin local rank i to the i-th entry of LIST, a CPU or a\n"
     "range: 2,3 or 0-7,8-15 (with --np or mpirun; a range\n"
     "leaves a rank's helper threads a core)"},
};

static const struct eb_opt output[] = {
    {"csv", 0, "FILE", eb_opt_str, O(csv), 0, 0, "one row per measurement, every statistic"},
    {"json", 0, "FILE", eb_opt_str, O(json), 0, 0,
     "one record per measurement, every statistic and setting"},
    {"md", 0, "FILE", eb_opt_str, O(md), 0, 0,
     "the output as Markdown: tables as tables, the other lines\n"
     "in code blocks"},
};

static const struct eb_opt testing[] = {
    {"corrupt-at", 0, "B", eb_opt_lng, O(corrupt_at), 0, 1e15,
     "testing aid: every receiver flips byte B of what lands"},
    {"corrupt-key", 0, NULL, eb_opt_flag, O(corrupt_key), 0, 0,
     "testing aid: rank 0 writes with wrong remote keys"},
    {"misplace-chunk", 0, "K", eb_opt_lng, O(misplace_chunk), 1, 1e9,
     "testing aid: chunk K of every write (--rate --check: write K\n"
     "of every phase) lands where chunk (write) K-1 belongs"},
    {"stop-rank", 0, "R", eb_opt_num, O(stop_rank), 0, EB_RDV_MAX_RANKS - 1,
     "testing aid: rank R stops itself (SIGSTOP) at the end of its first timed phase, "
     "before the collective that closes it"},
};

static int given(int argc, char **argv, const char *name, char key);

/* Testing aids corrupt runs on purpose: they take EFABENCH_TESTING=1 as well, so that no
 * command line copied into a job script turns one on by accident. */
static int finish_testing(int argc, char **argv)
{
	static const char *const aids[] = {"corrupt-at", "corrupt-key", "misplace-chunk",
					   "bad-put",	 "stall-proxy", "slow-proxy",
					   "stop-rank"};
	const char *env = getenv("EFABENCH_TESTING");
	size_t i;

	if (env != NULL && strcmp(env, "1") == 0)
		return EB_OK;
	for (i = 0; i < sizeof(aids) / sizeof(aids[0]); i++)
		if (given(argc, argv, aids[i], 0)) {
			eb_err("--%s is a testing aid that breaks the run on purpose: it also "
			       "takes EFABENCH_TESTING=1 in the environment",
			       aids[i]);
			return EB_EINVAL;
		}
	return EB_OK;
}

static const struct eb_opt always[] = {
    {"timeout", 0, "SEC", eb_opt_dbl, O(fab.timeout_s), 0, 1e9,
     "deadline of every wait (default 30); a lost rank is named"},
    {"verbose", 'v', NULL, eb_opt_flag, O(verbose), 0, 0, "launcher and setup details on stderr"},
    {"quiet", 'q', NULL, eb_opt_flag, O(quiet), 0, 0,
     "no progress line (drawn on stderr only when it is a terminal)"},
};

#define GROUP(bit, title, rows)                                                                    \
	{                                                                                          \
		bit, title, rows, (int)(sizeof(rows) / sizeof(rows[0]))                            \
	}

static const struct common_group {
	unsigned bit;
	const char *title;
	const struct eb_opt *opts;
	int nopts;
} common[] = {
    GROUP(EB_G_SIZES, "Sizes", sizes),
    GROUP(EB_G_ITERS, "Iterations", iters),
    GROUP(EB_G_ROUNDS, "Turns", rounds),
    GROUP(EB_G_PHASES, "Phases", phases),
    GROUP(EB_G_FABRIC, "Fabric", fabric),
    GROUP(EB_G_LAYOUT, "Layouts", layout),
    GROUP(EB_G_MEM, "Memory", mem),
    GROUP(EB_G_RANKS, "Ranks", ranks),
    GROUP(EB_G_OUTPUT, "Output", output),
    GROUP(EB_G_STAGES, "Stages", stages),
    GROUP(EB_G_TESTING, "Testing aids", testing),
    GROUP(0, "Common", always),
};

#define NCOMMON ((int)(sizeof(common) / sizeof(common[0])))

/* The groups cmd takes, its own options first. */
static int groups_of(const struct eb_cmd *cmd, struct eb_opts *o, void *own, struct eb_opt_group *g)
{
	int i, n = 0;

	if (cmd->nopts > 0)
		g[n++] = (struct eb_opt_group){"Options", cmd->opts, cmd->nopts, own};
	for (i = 0; i < NCOMMON; i++)
		if (common[i].bit == 0 || (cmd->groups & common[i].bit))
			g[n++] = (struct eb_opt_group){common[i].title, common[i].opts,
						       common[i].nopts, o};
	return n;
}

/* The defaults of a subcommand without rows of its own, and of the fields its rows leave 0. */
static const struct eb_run_dflt base = {NULL, 256ull << 10, 64ull << 20, 5, 20, 1};

/* The row cmd's options in own pick, its zeros filled from base. */
static struct eb_run_dflt dflt_row(const struct eb_cmd *cmd, const void *own, int row)
{
	struct eb_run_dflt d = base;
	const struct eb_run_dflt *r;

	if (cmd->ndflts == 0)
		return d;
	if (row < 0)
		row = cmd->dflt_of != NULL ? cmd->dflt_of(own) : 0;
	r = &cmd->dflts[row];
	d.mode = r->mode;
	d.begin = r->begin ? r->begin : d.begin;
	d.end = r->end ? r->end : d.end;
	d.warmup = r->warmup ? r->warmup : d.warmup;
	d.iters = r->iters ? r->iters : d.iters;
	d.rounds = r->rounds ? r->rounds : d.rounds;
	return d;
}

static void defaults(struct eb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->factor = 2;
	o->phases = 5;
	o->corrupt_at = -1;
	o->stop_rank = -1;
	o->stages_every = 64;
	o->fab.timeout_s = 30.0;
	o->rdv.rank = -1;
	o->gpu = -1;
	o->mem = -1; /* the command's default (finish_mem) */
}

/* Memory choices that are wrong whatever the machine; GPU counts are the probe's. */
static int finish_mem(struct eb_opts *o)
{
	if (o->mem < 0)
		o->mem = o->cmd->mem_auto ? EB_MEM_AUTO : EB_MEM_HOST;
	if (o->mem == EB_MEM_AUTO && !eb_mem_have_cuda()) { /* nothing to decide */
		o->mem = EB_MEM_HOST;
		snprintf(o->mem_why, sizeof(o->mem_why), "auto: a build without CUDA");
	}
	if (o->serial && !o->staged) {
		eb_err("--stage-serial goes with --staged");
		return EB_EINVAL;
	}
	if (o->staged && o->mem != EB_MEM_DEVICE) {
		eb_err("--staged moves GPU memory through pinned bounce buffers: it needs "
		       "--mem device");
		return EB_EINVAL;
	}
	if (o->mem != EB_MEM_HOST && o->mem != EB_MEM_AUTO && !eb_mem_have_cuda()) {
		eb_err("--mem %s needs a build with CUDA (this one has none)",
		       eb_mem_kind_name(o->mem));
		return EB_EINVAL;
	}
	/* FI_HMEM only when the NIC itself must reach GPU memory. */
	o->fab.hmem = o->mem == EB_MEM_DEVICE && !o->staged;
	return EB_OK;
}

static int finish_cpu_map(const struct eb_opts *o)
{
	char why[96];

	if (o->cpu_map == NULL || eb_topo_map_check(o->cpu_map, 0, why, sizeof(why)) == EB_OK)
		return EB_OK;
	eb_err("--cpu-map %s: %s", o->cpu_map, why);
	return EB_EINVAL;
}

static int finish_sizes(struct eb_opts *o)
{
	char b[24], e[24];

	if (o->begin > o->end) {
		eb_err("smallest size is larger than the largest (-b %s > -e %s)",
		       eb_size_format(o->begin, b, sizeof(b)),
		       eb_size_format(o->end, e, sizeof(e)));
		return EB_EINVAL;
	}
	if (o->trace != NULL && o->stages_every == 0) {
		eb_err("--trace writes the stamped stages: --stages off stamps none");
		return EB_EINVAL;
	}
	if (o->rounds > 1 && (o->cmd->bench == NULL || o->cmd->bench->sweep == NULL)) {
		eb_err(
		    "--rounds is for the benchmarks on the size sweep (write, sendrecv, alltoall, "
		    "proxy); %s runs its own schedule",
		    o->cmd->name);
		return EB_EINVAL;
	}
	if (o->rounds > o->iters) {
		eb_err("--rounds %ld is more than the %ld timed iterations (-n)", o->rounds,
		       o->iters);
		return EB_EINVAL;
	}
	o->nsizes = eb_size_sweep(o->begin, o->end, (uint64_t)o->factor, o->sizes, EB_MAX_SIZES);
	if (o->nsizes < 0) {
		eb_err("the size sweep has more than %d sizes; raise -f or narrow -b/-e",
		       EB_MAX_SIZES);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* Whether the command line names an option, in any of getopt's spellings. */
static int given(int argc, char **argv, const char *name, char key)
{
	size_t n = strlen(name);
	int i;

	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			return 0;
		/* key 0: long name only (else a lone "-", a value such as --csv -, would match) */
		if (key != 0 && a[0] == '-' && a[1] == key)
			return 1;
		if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, n) == 0 &&
		    (a[2 + n] == '\0' || a[2 + n] == '='))
			return 1;
	}
	return 0;
}

/* The row's values where the command line gives none (zeros were parsed into nothing). */
static void apply_dflt(struct eb_opts *o, int argc, char **argv)
{
	struct eb_run_dflt d = dflt_row(o->cmd, o->own, -1);
	unsigned g = o->cmd->groups; /* a subcommand's own -n (matrix) is not ours */
	int b = (g & EB_G_SIZES) && given(argc, argv, "minbytes", 'b');
	int e = (g & EB_G_SIZES) && given(argc, argv, "maxbytes", 'e');

	o->sizes_given = b || e;
	o->iters_given = (g & EB_G_ITERS) && given(argc, argv, "iters", 'n');
	o->rounds_given = (g & EB_G_ROUNDS) && given(argc, argv, "rounds", 0);
	o->phases_given = (g & EB_G_PHASES) && given(argc, argv, "phases", 0);
	o->begin = b ? o->begin : d.begin;
	o->end = e ? o->end : d.end;
	o->warmup = (g & EB_G_ITERS) && given(argc, argv, "warmup", 'w') ? o->warmup : d.warmup;
	o->iters = o->iters_given ? o->iters : d.iters;
	o->rounds = o->rounds_given ? o->rounds : d.rounds;
}

int eb_opts_parse(const struct eb_cmd *cmd, int argc, char **argv, struct eb_opts *o, void *own,
		  int *help)
{
	struct eb_opt_group g[NCOMMON + 1];
	int n, rc;

	defaults(o);
	o->cmd = cmd;
	o->own = own;
	if (cmd->defaults != NULL)
		cmd->defaults(own);
	n = groups_of(cmd, o, own, g);
	rc = eb_opt_parse(argc, argv, 2, g, n, cmd->name, help);
	if (rc != EB_OK || *help)
		return rc;
	apply_dflt(o, argc, argv);
	o->argc = argc;
	o->argv = argv;
	rc = finish_testing(argc, argv);
	if (rc == EB_OK)
		rc = finish_mem(o);
	if (rc == EB_OK)
		rc = finish_cpu_map(o);
	if (rc == EB_OK && cmd->finish != NULL)
		rc = cmd->finish(o, own);
	if (rc == EB_OK)
		rc = finish_sizes(o);
	return rc;
}

static void dflt_help(FILE *f, const struct eb_cmd *cmd);

void eb_opts_help(FILE *f, const struct eb_cmd *cmd)
{
	struct eb_opt_group g[NCOMMON + 1];
	char title[64];
	int n;

	fprintf(f, "usage: efabench %s [options]\n\n%s: %s\n%s\n", cmd->name, cmd->name,
		cmd->summary, cmd->help);
	/* The sweep's figures; a benchmark with its own schedule defines its own above. */
	if (cmd->bench != NULL && cmd->bench->sweep != NULL)
		fputs("Metrics (Size S = bytes a rank sends to one peer per iteration; Count = "
		      "S/4):\n"
		      "  t        mean seconds per timed iteration, after a barrier that aligns\n"
		      "           every rank\n"
		      "  Gbps     8*B/t/1e9, B = the bytes the measuring rank injects per\n"
		      "           iteration (above)\n"
		      "  BusBW %  100*Gbps/(link Gbps * NICs the variant drives); '-' when the\n"
		      "           link speed is unknown (give --link-gbps), or where no NIC\n"
		      "           carried the bytes (every peer on this host, reached through\n"
		      "           efa's shared memory: the header's same-host peers)\n"
		      "  Lat (us) t*1e6; JSON adds min, p50, p99 (nearest rank), max, stddev\n"
		      "           of iterations stamped with the TSC (timer: in the header)\n"
		      "           scaled to CLOCK_MONOTONIC over each phase\n"
		      "  #wrong   8-byte payload words that differ from the expected pattern, a\n"
		      "           function of (source, target, offset, epoch); any wrong word\n"
		      "           fails the run (exit 1)\n"
		      "Beside other tools: the columns are the seed tables' (Size, Count = S/4,\n"
		      "  Gbps, BusBW %, Lat us), but Gbps counts every byte the rank injects (the\n"
		      "  seeds' all-to-all counted one peer's S); nccl-tests report GB/s (divide\n"
		      "  Gbps by 8), algbw = bytes/t and for all-to-all busbw = algbw*(N-1)/N\n"
		      "  (alltoall's JSON carries both); perftest's and fabtests' bandwidth is\n"
		      "  bytes over the time of many writes in flight (here: write "
		      "--rate)\n" EB_HELP_STEAL "\n",
		      f);
	n = groups_of(cmd, NULL, NULL, g);
	if (cmd->nopts > 0) {
		snprintf(title, sizeof(title), "Options of efabench %s", cmd->name);
		g[0].title = title;
	}
	eb_opt_help(f, g, n);
	dflt_help(f, cmd);
	fputs("Exit status: 0 ok, 1 failure (wrong data, lost rank, timeout), 2 bad input.\n", f);
}

/* One row's values, of the options cmd takes. */
static void dflt_line(FILE *f, const struct eb_cmd *cmd, const struct eb_run_dflt *d)
{
	char b[24], e[24];

	if (cmd->groups & EB_G_SIZES)
		fprintf(f, " -b %s -e %s", eb_size_format(d->begin, b, sizeof(b)),
			eb_size_format(d->end, e, sizeof(e)));
	if (cmd->groups & EB_G_ITERS)
		fprintf(f, " -w %ld -n %ld", d->warmup, d->iters);
	if (cmd->groups & EB_G_ROUNDS)
		fprintf(f, " --rounds %ld", d->rounds);
	fputc('\n', f);
}

static void dflt_help(FILE *f, const struct eb_cmd *cmd)
{
	int i;

	if (!(cmd->groups & (EB_G_SIZES | EB_G_ITERS | EB_G_ROUNDS)))
		return;
	if (cmd->ndflts == 0) {
		fputs("Defaults (where the command line gives none):\n ", f);
		dflt_line(f, cmd, &base);
		return;
	}
	fprintf(f, "Defaults by %s (where the command line gives none):\n", cmd->dflt_by);
	for (i = 0; i < cmd->ndflts; i++) {
		struct eb_run_dflt d = dflt_row(cmd, NULL, i);

		fprintf(f, "  %-8s", d.mode);
		dflt_line(f, cmd, &d);
	}
}

void eb_opts_dry_run(FILE *f, const struct eb_opts *o)
{
	struct eb_run_dflt d = dflt_row(o->cmd, o->own, -1);
	struct eb_json j;
	const char *by;
	int i;

	eb_json_init(&j, f);
	eb_json_obj_begin(&j, NULL);
	eb_json_str(&j, "bench", o->cmd->name);
	/* The option that picked the defaults' row, by its name ("mode" where none does). */
	by = o->cmd->dflt_by != NULL && strcmp(o->cmd->dflt_by, "--mode") != 0 ? o->cmd->dflt_by + 2
									       : "mode";
	if (d.mode != NULL)
		eb_json_str(&j, by, d.mode);
	else if (strcmp(by, "mode") == 0)
		eb_json_null(&j, "mode");
	/* Only what the command takes: a key for an option it refuses would mislead. */
	if (o->cmd->groups & EB_G_SIZES) {
		eb_json_arr_begin(&j, "sizes");
		for (i = 0; i < o->nsizes; i++)
			eb_json_int(&j, NULL, (long long)o->sizes[i]);
		eb_json_arr_end(&j);
	}
	eb_json_int(&j, "warmup", o->warmup);
	eb_json_int(&j, "iters", o->iters);
	if (o->cmd->groups & EB_G_ROUNDS)
		eb_json_int(&j, "rounds", o->rounds);
	if (o->cmd->groups & EB_G_PHASES)
		eb_json_int(&j, "phases", o->phases);
	eb_json_bool(&j, "check", o->check);
	if (o->cmd->groups & EB_G_MEM)
		eb_json_str(&j, "mem",
			    o->mem == EB_MEM_AUTO ? "auto"
						  : eb_mem_kind_name((enum eb_mem_kind)o->mem));
	if (o->cmd->dry_run != NULL)
		o->cmd->dry_run(&j, o);
	eb_json_obj_end(&j);
	fputc('\n', f);
}
