/* efabench moe's options, the checks made before anything starts, and its descriptor. */
#include "moe.h"
#include "moe_need.h"
#include "moe_state.h"
#include "harness/probe.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/json.h"
#include "core/log.h"

#include <stdio.h>

static const struct {
	int tokens, hidden, topk, experts;
} presets[] = {
    [MOE_DECODE] = {128, 7168, 8, 256},
    [MOE_PREFILL] = {4096, 7168, 8, 256},
};

/* Iterations per preset: a decode step is short and its p50 wants many; prefill's are long. */
static const struct eb_run_dflt moe_dflts[] = {
    [MOE_DECODE] = {"decode", 0, 0, 5, 50, 0},
    [MOE_PREFILL] = {"prefill", 0, 0, 2, 10, 0},
};

static int moe_dflt_of(const void *own)
{
	return ((const struct mopts *)own)->preset;
}

static void moe_defaults(void *arg)
{
	struct mopts *mo = arg;

	mo->route = "uniform";
	mo->seed = 1;
	mo->mode = -1; /* the preset's */
}

/* The preset's shape where the command line gives none, and what no shape allows. */
static int shape_of(struct mopts *mo)
{
	char why[256];

	mo->tokens = mo->tokens ? mo->tokens : presets[mo->preset].tokens;
	mo->hidden = mo->hidden ? mo->hidden : presets[mo->preset].hidden;
	mo->topk = mo->topk ? mo->topk : presets[mo->preset].topk;
	mo->experts = mo->experts ? mo->experts : presets[mo->preset].experts;
	if (mo->topk > mo->experts) {
		eb_err("--topk %d is more than the %d experts", mo->topk, mo->experts);
		return EB_EINVAL;
	}
	if (mo->piece && mo->piece < 2ull * (uint64_t)mo->hidden) {
		eb_err("--piece %llu is less than an expert output (%d bytes): a write carries one "
		       "at least",
		       (unsigned long long)mo->piece, 2 * mo->hidden);
		return EB_EINVAL;
	}
	if (mo->dtype == MOE_FP8 && mo->hidden % 128 != 0) {
		eb_err("--dtype fp8 carries a scale per 128 values: --hidden %d is not a multiple "
		       "of 128",
		       mo->hidden);
		return EB_EINVAL;
	}
	if (eb_route_parse(mo->route, &mo->spec, why, sizeof(why)) != EB_OK) {
		eb_err("--route %s: %s", mo->route, why);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* Initiators this build, launcher and memory can run (all where none are named). */
static int initiators_of(struct eb_opts *o, struct mopts *mo)
{
	if ((mo->initiators & (1u << INIT_GPU)) && !eb_mem_have_cuda()) {
		eb_err("--initiators gpu needs a build with CUDA (this one has none); cpu runs the "
		       "same puts from CPU threads");
		return EB_EINVAL;
	}
	if ((mo->initiators & (1u << INIT_GPU)) && o->mem == EB_MEM_HOST) {
		eb_err("--initiators gpu: GPU blocks copy the tokens themselves and cannot reach "
		       "--mem host; give --mem pinned or device");
		return EB_EINVAL;
	}
	if ((mo->initiators & (1u << INIT_MPI)) &&
	    (eb_boot_detect() != EB_LAUNCH_MPI || !eb_boot_have_mpi())) {
		eb_err("--initiators mpi times MPI_Alltoallv: start the job with mpirun (and a "
		       "build with MPI)");
		return EB_EINVAL;
	}
	if ((mo->initiators & (1u << INIT_MPI)) && o->mem == EB_MEM_DEVICE) {
		eb_err("--initiators mpi: MPI_Alltoallv runs over host memory here (a CUDA-aware "
		       "MPI is not assumed); give --mem host or pinned");
		return EB_EINVAL;
	}
	if (mo->initiators & (1u << INIT_GPU))
		o->want_gpu = "--initiators gpu";
	if (mo->initiators == 0)
		mo->initiators = INIT_ALL;
	else
		mo->inits_given = 1;
	return EB_OK;
}

static int moe_finish(struct eb_opts *o, void *arg)
{
	struct mopts *mo = arg;
	int cpu;

	if (o->serial) {
		eb_err("moe stages a phase's bytes whole, before and after it: --stage-serial does "
		       "not apply");
		return EB_EINVAL;
	}
	if (mo->rx_threads && mo->no_rx_threads) {
		eb_err("--rx-threads and --no-rx-threads: pick one");
		return EB_EINVAL;
	}
	if (mo->mode < 0)
		mo->mode = mo->preset == MOE_PREFILL ? EB_MOE_NORMAL : EB_MOE_LL;
	if (mo->piece && (mo->preset != MOE_PREFILL || mo->mode == EB_MOE_LL)) {
		eb_err("--piece cuts prefill's packed writes: decode and --mode ll write each "
		       "token on its own");
		return EB_EINVAL;
	}
	if (mo->intra == MOE_INTRA_IPC && o->staged) {
		eb_err("--intra ipc stores into peers' GPU memory: --staged moves bounce buffers "
		       "through the fabric instead (--intra fabric)");
		return EB_EINVAL;
	}
	if (shape_of(mo) != EB_OK || initiators_of(o, mo) != EB_OK)
		return EB_EINVAL;
	/* The rank, its proxy threads, their receiving partners (counted unless refused: the
	 * cores are known only once the ranks run) and its CPU producers all spin. */
	cpu = mo->producers > 0 ? mo->producers : (mo->proxy_threads > 0 ? mo->proxy_threads : 1);
	o->fab.threads =
	    1 + (mo->proxy_threads > 0 ? mo->proxy_threads : 1) * (2 - mo->no_rx_threads) + cpu;
	return EB_OK;
}

/* Before the local launcher starts ranks: what needs their count. */
static int moe_probe(struct eb_opts *o)
{
	const struct mopts *mo = o->own;
	struct eb_moe_shape sh;
	char why[512];
	int np = o->np ? o->np : 2;

	if (np < 2) /* the harness's probe says so */
		return eb_harness_probe(o);
	sh = (struct eb_moe_shape){np, mo->tokens, mo->topk, mo->experts, (uint64_t)mo->seed};
	if (mo->experts % np != 0) {
		eb_err("--experts %d is not divisible by the %d ranks", mo->experts, np);
		return -2;
	}
	if (mo->hosts > 0 && np % mo->hosts != 0) {
		eb_err("--hosts %d does not divide the %d ranks", mo->hosts, np);
		return -2;
	}
	if (eb_route_check(&mo->spec, &sh, why, sizeof(why)) != EB_OK) {
		eb_err("--route %s", why);
		return -2;
	}
	/* The routing and plan first (the regions' memory may be undecided), then all of it once
	 * --mem auto has decided where the regions go. */
	if (o->mem == EB_MEM_AUTO && eb_moe_need_check(o, mo, np) == EB_EINVAL)
		return -2;
	if (eb_harness_mem_auto(o, NULL) != EB_OK)
		return -1;
	switch (eb_moe_need_check(o, mo, np)) {
	case EB_OK:
		return eb_harness_probe(o);
	case EB_EINVAL:
		return -2;
	default:
		return -1;
	}
}

static const char *const mode_words[] = {"rank", "ll", "normal", NULL};

/* The mode and shape that run, as the preset and the options resolve them. */
static void moe_dry_run(struct eb_json *j, const struct eb_opts *o)
{
	const struct mopts *mo = o->own;

	eb_json_str(j, "mode", mode_words[mo->mode]);
	eb_json_int(j, "tokens", mo->tokens);
	eb_json_int(j, "hidden", mo->hidden);
	eb_json_int(j, "topk", mo->topk);
	eb_json_int(j, "experts", mo->experts);
	eb_json_str(j, "route", mo->route);
}

#define M(field) EB_AT(struct mopts, field)

static const char *const preset_words[] = {"decode", "prefill", NULL};
static const char *const dtype_words[] = {"bf16", "fp8", NULL};
static const char *const init_words[] = {"gpu", "cpu", "a2av", "mpi", NULL};
static const char *const intra_words[] = {"auto", "ipc", "fabric", NULL};

static const struct eb_opt moe_opts[] = {
    {"preset", 0, "P", eb_opt_choice, M(preset), 0, 0,
     "decode (default: 128 tokens, a write per token and\n"
     "destination, like low-latency kernels) or prefill (4096\n"
     "tokens packed per destination, like normal kernels);\n"
     "both hidden 7168, top-8 of 256 experts",
     preset_words},
    {"mode", 0, "M", eb_opt_choice, M(mode), 0, 0,
     "what a write carries: ll (decode's default: a token\n"
     "once per expert, each output back alone, as DeepEP's\n"
     "low-latency kernels), normal (prefill's: once per host\n"
     "over the fabric, forwarded inside it; a rank's row per\n"
     "token back, its experts summed before the clock, then\n"
     "summed per host, as DeepEP's normal kernels) or rank\n"
     "(once per rank, a rank's outputs back unsummed)",
     mode_words},
    {"hosts", 0, "N", eb_opt_num, M(hosts), 1, 4096,
     "group the ranks into N emulated hosts of consecutive\n"
     "ranks on this machine (default: hosts by host name)"},
    {"intra", 0, "HOW", eb_opt_choice, M(intra), 0, 0,
     "same-host peers: ipc (stores into their memory: NVLink\n"
     "through CUDA IPC for GPU memory, a shared mapping for\n"
     "host memory), fabric (the provider, as other hosts);\n"
     "default auto: ipc, fabric when --staged",
     intra_words},
    {"tokens", 0, "T", eb_opt_num, M(tokens), 1, 1 << 20, "tokens per rank (preset's)"},
    {"hidden", 0, "H", eb_opt_num, M(hidden), 1, 1 << 16, "values per token (preset's)"},
    {"topk", 0, "K", eb_opt_num, M(topk), 1, 64, "experts per token (preset's)"},
    {"experts", 0, "E", eb_opt_num, M(experts), 1, 1 << 16,
     "experts in all, E/N per rank (preset's)"},
    {"dtype", 0, "D", eb_opt_choice, M(dtype), 0, 0,
     "dispatch values: bf16 (default, 2H bytes a token) or fp8\n"
     "(H bytes and a 4-byte scale per 128); combine is bf16",
     dtype_words},
    {"route", 0, "R", eb_opt_str, M(route), 0, 0,
     "uniform (default), groups:G (a token's experts on at most\n"
     "G ranks), hot:R,F (rank R's experts F times as likely),\n"
     "lognormal:S (expert popularity exp(S*N(0,1))) or\n"
     "file:PATH (N lines of N token counts, source by\n"
     "destination)"},
    {"seed", 0, "S", eb_opt_lng, M(seed), 0, 1e15, "routing seed (default 1)"},
    {"initiators", 0, "LIST", eb_opt_mask, M(initiators), 0, 0,
     "gpu (kernels pack and put through the proxy), cpu (CPU\n"
     "threads push the same puts), a2av (one write per\n"
     "destination of the same bytes), mpi (MPI_Alltoallv of the\n"
     "same bytes, under mpirun); default: all that can run",
     init_words},
    {"proxy-threads", 0, "N", eb_opt_num, M(proxy_threads), 1, EB_MOE_MAX_Q,
     "proxy threads per rank, each with its own queue and\n"
     "channels; thread k drives NICs k, k + N, ... (default:\n"
     "one per NIC used, fewer where this host's ranks would\n"
     "have more spinning threads than cores, dividing the NICs)"},
    {"rx-threads", 0, NULL, eb_opt_flag, M(rx_threads), 0, 0,
     "beside each proxy thread, a thread that progresses the\n"
     "endpoints peers write to: where the target copies (shm's\n"
     "GPU memory, writes emulated by messages), the proxy thread\n"
     "then only posts (default: where this host's ranks have a\n"
     "core for every spinning thread with them)"},
    {"no-rx-threads", 0, NULL, eb_opt_flag, M(no_rx_threads), 0, 0,
     "no receiving threads: each proxy thread posts and\n"
     "progresses what peers write here"},
    {"piece", 0, "S", eb_opt_size, M(piece), 1, (double)(1ull << 40),
     "prefill: bytes a packed write carries at most; the\n"
     "producers pack the next piece while one travels (default:\n"
     "--chunk, which the a2av's writes keep)"},
    {"producers", 0, "P", eb_opt_num, M(producers), 1, 4096,
     "GPU blocks or CPU threads per rank (default: 32 blocks in\n"
     "decode, one per multiprocessor in prefill, whose blocks\n"
     "pack; one CPU thread per proxy thread)"},
};

const struct eb_cmd eb_cmd_moe = {
    .name = "moe",
    .summary = "Mixture-of-Experts dispatch and combine through the GPU proxy",
    .help = "  every rank routes T tokens to top-K of E experts (E/N per rank) from a seed.\n"
	    "  Modes (--mode; decode: ll, prefill: normal): rank puts a token once to every\n"
	    "  rank holding one of its experts and returns that rank's outputs unsummed; ll\n"
	    "  (DeepEP low-latency) puts a token once per selected expert and returns each\n"
	    "  output alone; normal (DeepEP normal) sends a token once per destination host, to\n"
	    "  the rank of the same local index there, which forwards it inside its host; its\n"
	    "  combine starts from one row per token a rank received (the rank's experts\n"
	    "  weighted and summed before the clock, as DeepEP's combine is given them), summed\n"
	    "  per host before they cross back. Ranks know their host by name (--hosts N\n"
	    "  emulates N hosts of equal ranks); same-host peers\n"
	    "  are reached by stores into their mapped regions (shared memory, or GPU memory\n"
	    "  over CUDA IPC) and a flag, other hosts through the fabric: puts into slots the\n"
	    "  receiver derives from the routing, then a signal per (proxy thread, source)\n"
	    "  that adds the items sent. Outputs (bf16) are a function of token, expert and\n"
	    "  epoch; after the clock stops every token, output, row and sum is checked.\n"
	    "  Initiators: gpu (kernels make the items and push puts to the proxy threads),\n"
	    "  cpu (threads do the same), a2av (the same bytes, leg by leg, as one chunked write\n"
	    "  per destination through the fabric, posted by the rank: an all-to-all-v), mpi\n"
	    "  (under mpirun: MPI_Alltoallv of the a2av's bytes between the same offsets,\n"
	    "  host or pinned memory).\n"
	    "  --mem device --staged keeps tokens and outputs in GPU memory and moves pinned\n"
	    "  bounce buffers, copied in the phase's time.\n"
	    "  t = a rank's time per iteration: from the barrier that starts every iteration\n"
	    "  until its own writes are complete and everything addressed to it has arrived;\n"
	    "  pair = dispatch then combine. p50/p99 = the slowest rank's (by p50); p99 is\n"
	    "  nearest-rank (at 100 iterations or fewer, the largest sample); max/it = p50\n"
	    "  over iterations of the slowest rank's time in each. Bytes per rank (means over\n"
	    "  ranks) / p50, in GB/s: sel = selections x bytes per token (or output)\n"
	    "  (DeepEP's low-latency tests, UCCL-EP, pplx); fabric = bytes the rank writes\n"
	    "  through the fabric: the producers' to other hosts (what its NICs carry), the\n"
	    "  a2av's and mpi's everything not its own (same-host peers too); RDMA = a token\n"
	    "  once per host holding one of its experts, its own host counted, and NVL = the\n"
	    "  tokens a rank receives, once each (DeepEP's normal tests). own GB/s = rank 0's\n"
	    "  own bytes / its own p50, the figure DeepEP and UCCL-EP print: its selections\n"
	    "  (ll, rank) or its RDMA bytes (normal); JSON has every rank's (ranks[].own_*)\n"
	    "  and NCCL EP's high-throughput count ((remote (token, host) pairs + tokens\n"
	    "  received) x 2H, mean over ranks / p50: ncclep_ht_GBps).\n"
	    "  cross GB/s (normal mode over several hosts, whose phases have two legs) = bytes\n"
	    "  a rank sends to other hosts / the largest p50 over ranks of the leg that carries\n"
	    "  them (dispatch's first, combine's second), timed alone on each rank: what the\n"
	    "  rails carry while they are in use, without the forwarding inside the host.\n"
	    "  Mwr/s = fabric writes a rank posts per second (JSON: writes per iteration), as\n"
	    "  its proxy threads counted them: one per item (token or output), or in\n"
	    "  prefill's packed modes a proxy thread's share per destination in writes\n"
	    "  of --piece at most; a2av one per leg and destination; mpi none counted.\n"
	    "  x a2av = p50 / the all-to-all-v's p50 for the same phase. #wrong = wrong\n"
	    "  8-byte words of tokens + wrong bf16 outputs + wrong sums. JSON adds each\n"
	    "  rank's p50/p99 (and its p50 of the leg between hosts), the traffic matrix, every\n"
	    "  rank's host, the bytes each rank moves per phase (own, same host, fabric) and,\n"
	    "  for small runs, the experts every token selected.\n"
	    "  Stages (--stages, every iteration of every rank): per op and leg, send = until\n"
	    "  the rank's own side is done (producers finished, writes complete; a2av: posted)\n"
	    "  and wait = until everything the leg brings has arrived; with producers (gpu,\n"
	    "  cpu) a send splits into pack (the time the producer that pushed last spent\n"
	    "  making what it put across the fabric, summed and laid at the front), push\n"
	    "  (until it had pushed those puts), store (until the last producer had also\n"
	    "  stored its items for same-host peers and itself) and complete (until the\n"
	    "  writes completed)\n" EB_HELP_STEAL,
    .groups =
	EB_G_ITERS | EB_G_FABRIC | EB_G_RANKS | EB_G_OUTPUT | EB_G_TESTING | EB_G_MEM | EB_G_STAGES,
    EB_CMD_OPTS(moe_opts, struct mopts, moe_defaults, moe_finish),
    .dflts = moe_dflts,
    .ndflts = 2,
    .dflt_by = "--preset",
    .dflt_of = moe_dflt_of,
    .bench = &eb_moe_bench,
    .probe = moe_probe,
    .dry_run = moe_dry_run,
    .mem_auto = 1,
};
