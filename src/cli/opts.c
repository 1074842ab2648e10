#include "opts.h"
#include "efabench/layout.h"
#include "efabench/size.h"
#include "efabench/status.h"
#include "../core/log.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_NP = 256,
	OPT_CHUNK,
	OPT_WINDOW,
	OPT_CHECK,
	OPT_PROVIDER,
	OPT_NICS,
	OPT_CHANNELS,
	OPT_LINK,
	OPT_TIMEOUT,
	OPT_CSV,
	OPT_JSON,
	OPT_CORRUPT,
	OPT_LAYOUT,
	OPT_ROOT,
	OPT_RANK,
	OPT_RANKS,
	OPT_PRODUCERS,
	OPT_PRODUCERS_ON,
	OPT_SLOTS,
	OPT_BATCH,
	OPT_PLACEMENT,
	OPT_BLOCK,
	OPT_LAT_ITERS,
	OPT_CORRUPT_KEY,
	OPT_GRID,
	OPT_PAIRS,
	OPT_METHODS,
	OPT_DIRS,
	OPT_TMA_CHUNK,
	OPT_TMA_STAGES,
};

static const struct option longopts[] = {
    {"np", required_argument, NULL, OPT_NP},
    {"minbytes", required_argument, NULL, 'b'},
    {"maxbytes", required_argument, NULL, 'e'},
    {"stepfactor", required_argument, NULL, 'f'},
    {"warmup", required_argument, NULL, 'w'},
    {"iters", required_argument, NULL, 'n'},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"check", no_argument, NULL, OPT_CHECK},
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"nics", required_argument, NULL, OPT_NICS},
    {"channels", required_argument, NULL, OPT_CHANNELS},
    {"link-gbps", required_argument, NULL, OPT_LINK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"csv", required_argument, NULL, OPT_CSV},
    {"json", required_argument, NULL, OPT_JSON},
    {"corrupt-at", required_argument, NULL, OPT_CORRUPT},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"root", required_argument, NULL, OPT_ROOT},
    {"rank", required_argument, NULL, OPT_RANK},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"producers", required_argument, NULL, OPT_PRODUCERS},
    {"producers-on", required_argument, NULL, OPT_PRODUCERS_ON},
    {"slots", required_argument, NULL, OPT_SLOTS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"placement", required_argument, NULL, OPT_PLACEMENT},
    {"block", required_argument, NULL, OPT_BLOCK},
    {"lat-iters", required_argument, NULL, OPT_LAT_ITERS},
    {"corrupt-key", no_argument, NULL, OPT_CORRUPT_KEY},
    {"grid", required_argument, NULL, OPT_GRID},
    {"pairs", required_argument, NULL, OPT_PAIRS},
    {"methods", required_argument, NULL, OPT_METHODS},
    {"dirs", required_argument, NULL, OPT_DIRS},
    {"tma-chunk", required_argument, NULL, OPT_TMA_CHUNK},
    {"tma-stages", required_argument, NULL, OPT_TMA_STAGES},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void eb_opts_usage(FILE *f, const char *bench)
{
	(void)bench;
	fputs(
	    "usage: efabench <write|sendrecv|alltoall|queue|ipc|info> [options]\n"
	    "\n"
	    "  write     one-sided fi_writedata, rank 0 -> rank k (k = 1..N-1); every chunk\n"
	    "            carries immediate data the target counts; t = first post until the\n"
	    "            target acknowledges that all chunks landed. Single and Split: one k at\n"
	    "            a time, averaged over pairs; RoundRobin: every k at once\n"
	    "  sendrecv  fi_send/fi_recv ping-pong rank 0 <-> rank k with pre-posted receives;\n"
	    "            t = HALF the round trip (one-way time); S bytes travel each way\n"
	    "  alltoall  every rank writes S bytes to every other rank at once, each target\n"
	    "            counting immediate data per source; t = mean over ranks of each rank's\n"
	    "            time per iteration; JSON adds nccl-tests' algbw and busbw\n"
	    "  queue     the GPU->CPU command queue alone: commands/s one consumer thread takes\n"
	    "            per producer count, one producer's push-to-seen latency, and the\n"
	    "            floor (a GPU<->CPU ping-pong through mapped memory) in the same run\n"
	    "  ipc       GPU -> GPU copies over NVLink through CUDA IPC, one rank per GPU: the\n"
	    "            copy engine and kernels of every launch shape swept, the best shape\n"
	    "            measured again beside the copy engine; writes and reads\n"
	    "  info      providers, what each supports, NICs and link speeds, MPI/CUDA/hwloc\n"
	    "\n"
	    "Ranks:\n"
	    "  --np N              fork N ranks on this host (default 2); under mpirun/srun\n"
	    "                      the launcher decides and --np is refused\n"
	    "Sizes and iterations (sizes take K, M, G suffixes, binary):\n"
	    "  -b, --minbytes S    smallest size (default 256K)\n"
	    "  -e, --maxbytes S    largest size (default 64M)\n"
	    "  -f, --stepfactor F  multiply the size by F each step (default 2; e is always run)\n"
	    "  -w, --warmup N      untimed iterations per size and pair (default 5)\n"
	    "  -n, --iters N       timed iterations per size and pair (default 20)\n"
	    "  --chunk S           bytes per operation; a buffer is cut into chunks\n"
	    "                      (default 512K on tcp/sockets, 1M on other providers)\n"
	    "  --window N          chunks in flight per channel (default 16 on tcp/sockets,\n"
	    "                      4 on other providers)\n"
	    "  --layout LIST       channel layouts to run (default: all the benchmark has):\n"
	    "                      single = channel 0; split = the buffer cut across all\n"
	    "                      channels, remainder on the last; round-robin = the whole\n"
	    "                      buffer for peer p on channel (p + rank) % channels\n"
	    "  --check             verify every byte after every iteration, not only after\n"
	    "                      warm-up and after the timed loop\n"
	    "Fabric:\n"
	    "  --provider P        libfabric provider (shm, tcp, sockets, efa, ...); default\n"
	    "                      FI_PROVIDER, else efa if present, else shm when all ranks\n"
	    "                      share a host, else tcp\n"
	    "  --nics LIST         comma list of NICs: domain names (interfaces for socket\n"
	    "                      providers, e.g. rail0,rail1; rdmap0s1 on EFA) or fabric\n"
	    "                      names (subnets such as 10.77.1.0/24)\n"
	    "  --channels N        channels to open, one per NIC (default: all NICs found);\n"
	    "                      more than the NICs found share them round-robin\n"
	    "  --link-gbps G       link speed per NIC for BusBW when the provider reports none\n"
	    "  --timeout SEC       deadline of every wait (default 30); a lost rank is named\n"
	    "Output:\n"
	    "  --csv FILE          one row per benchmark x variant x size\n"
	    "  --json FILE         one record per benchmark x variant x size, every statistic\n"
	    "  -v, --verbose       launcher and setup details on stderr\n"
	    "  --corrupt-at B      testing aid: every target flips byte B of what it receives\n"
	    "\n"
	    "Metrics (Size S = bytes a rank sends to one peer per iteration; Count = S/4):\n"
	    "  t        mean seconds per timed iteration, after a barrier that aligns every\n"
	    "           rank; measured on rank 0 (write, sendrecv) or on every rank (alltoall)\n"
	    "  Gbps     8*B/t/1e9 with B the bytes the measuring rank injects per iteration:\n"
	    "           S for write Single/Split and sendrecv, S*(N-1) for write RoundRobin\n"
	    "           and alltoall\n"
	    "  BusBW %  100*Gbps/(link Gbps * NICs the variant drives); '-' when the link\n"
	    "           speed is unknown (give --link-gbps)\n"
	    "  Lat (us) t*1e6; JSON adds min, p50, p99 (nearest rank), max, stddev per group\n"
	    "  #wrong   8-byte payload words that differ from the expected pattern, a function\n"
	    "           of (source, target, offset, epoch); any wrong word fails the run (exit 1)\n"
	    "Queue (efabench queue; -n = commands per producer, default 1000 GPU / 100000 CPU):\n"
	    "  --producers-on P    gpu (default) or cpu (threads run the same push)\n"
	    "  --producers LIST    GPU: 1t (one thread), 1w (a warp), 1b (a block), <N>b, all\n"
	    "                      (a block per SM); CPU: thread counts (default 1,2,4,8)\n"
	    "  --block N           threads per block (default 256)\n"
	    "  --slots N           ring slots, a power of two (default 4096)\n"
	    "  --batch N           the consumer publishes its position every N (default 64)\n"
	    "  --placement P       pinned (host, mapped; default) or managed slots\n"
	    "  --lat-iters N       round trips of the latency and floor tests (default 10000)\n"
	    "  push-to-seen = one producer's round trip (push, consumer sees it and echoes\n"
	    "  through mapped memory) minus half the floor's median round trip; Mcmd/s =\n"
	    "  commands / (last seen - first seen); every command is checked for loss,\n"
	    "  duplication, reordering and tearing\n"
	    "IPC (efabench ipc; --np = GPUs to use, default all; sizes, -w, -n, --check,\n"
	    "--csv, --json as above; --link-gbps = NVLink Gbps per GPU and direction when NVML\n"
	    "reports none):\n"
	    "  --pairs P           first (GPU 0 -> 1, default), each (every ordered pair, one\n"
	    "                      at a time, averaged) or all (every GPU to every other at\n"
	    "                      once; GB/s per GPU)\n"
	    "  --dirs LIST         write (initiator stores into the peer), read (initiator\n"
	    "                      loads the peer's memory into its own); default both\n"
	    "  --methods LIST      ce (cudaMemcpyPeerAsync), st (16-byte load/store kernel),\n"
	    "                      tma (bulk asynchronous copies); default all three\n"
	    "  --grid LIST         blocks per launch to sweep; all = one per SM (default\n"
	    "                      1,2,4,8,16,32,64,128,all)\n"
	    "  --block LIST        threads per block to sweep for st (default 256,1024)\n"
	    "  --tma-chunk S       bytes per bulk copy, a multiple of 16 (default 32K)\n"
	    "  --tma-stages N      shared-memory buffers per tma block (default 4)\n"
	    "  t = mean seconds per copy on the initiating GPU (CUDA events between launches\n"
	    "  queued behind a gate kernel, so host launch cost stays out); GB/s = bytes per\n"
	    "  copy / t / 1e9; NVL% = of NVML's active links x link speed; %CE = of the copy\n"
	    "  engine at that size; the receiving GPU checks every byte after warm-up and\n"
	    "  after the timed copies, and kernel writes' completion flag\n"
	    "Launch without MPI across hosts (TCP rendezvous through rank 0):\n"
	    "  --root HOST:PORT    where rank 0 listens (or EFABENCH_ROOT)\n"
	    "  --rank R, --ranks N this rank and the job size (or EFABENCH_RANK, EFABENCH_SIZE)\n"
	    "  EFABENCH_TOKEN      a per-job secret every rank must present (environment only)\n"
	    "Exit status: 0 ok, 1 failure (wrong data, lost rank, timeout), 2 bad input.\n",
	    f);
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	eb_err("%s (see efabench --help)", msg);
	return EB_EINVAL;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v > 0) || v > 1e9)
		return EB_EINVAL;
	*out = v;
	return EB_OK;
}

/* Syntax only: "all" needs the GPU to say how many SMs it has. */
static int producers_ok(const char *list, int gpu)
{
	const char *p = list;

	while (*p != '\0') {
		size_t n = strcspn(p, ","), d = strspn(p, "0123456789");

		if (n == 0)
			return 0;
		if (gpu && !((n == 2 && (strncmp(p, "1t", 2) == 0 || strncmp(p, "1w", 2) == 0)) ||
			     (n == 3 && strncmp(p, "all", 3) == 0) ||
			     (d > 0 && d == n - 1 && p[d] == 'b' && atol(p) > 0)))
			return 0;
		if (!gpu && (d != n || atol(p) < 1 || atol(p) > 4096))
			return 0;
		p += n;
		if (*p == ',')
			p++;
	}
	return 1;
}

static int parse_layouts(const char *list, unsigned *mask)
{
	char buf[128], *tok, *save = NULL;
	enum eb_layout l;

	if (strlen(list) >= sizeof(buf))
		return EB_EINVAL;
	strcpy(buf, list);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (eb_layout_parse(tok, &l) != EB_OK)
			return EB_EINVAL;
		*mask |= 1u << l;
	}
	return *mask != 0 ? EB_OK : EB_EINVAL;
}

static void defaults(struct eb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->begin = 256ull << 10;
	o->end = 64ull << 20;
	o->factor = 2;
	o->warmup = 5;
	o->iters = 20;
	o->corrupt_at = -1;
	o->fab.timeout_s = 30.0;
	o->rdv.rank = -1;
	o->q.on_gpu = 1;
	o->q.log2n = 12;
	o->q.batch = 64;
	o->q.block = 256;
	o->q.lat_iters = 10000;
	eb_ipc_defaults(&o->ipc);
}

int eb_opts_parse(int argc, char **argv, struct eb_opts *o, int *help)
{
	uint64_t sz;
	long v;
	int c;

	defaults(o);
	*help = 0;
	o->bench = argv[1];
	optind = 2;
	opterr = 0; /* we print our own single line */
	while ((c = getopt_long(argc, argv, ":b:e:f:w:n:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 'e':
		case OPT_CHUNK:
			if (eb_size_parse(optarg, &sz) != EB_OK)
				return bad("bad size '%s': want a positive number with an optional "
					   "K, M, G or T suffix",
					   optarg);
			*(c == 'b' ? &o->begin : c == 'e' ? &o->end : &o->chunk) = sz;
			break;
		case 'f':
			if (eb_count_parse(optarg, 2, &v) != EB_OK)
				return bad("bad step factor '%s': want an integer >= 2", optarg);
			o->factor = (uint64_t)v;
			break;
		case 'w':
			if (eb_count_parse(optarg, 0, &o->warmup) != EB_OK)
				return bad("bad warm-up count '%s': want an integer >= 0", optarg);
			break;
		case 'n':
			if (eb_count_parse(optarg, 1, &o->iters) != EB_OK)
				return bad("bad iteration count '%s': want an integer >= 1",
					   optarg);
			o->iters_set = 1;
			break;
		case OPT_WINDOW:
			if (eb_count_parse(optarg, 1, &o->window) != EB_OK || o->window > 65536)
				return bad("bad window '%s': want an integer from 1 to 65536",
					   optarg);
			break;
		case OPT_NP:
			if (eb_count_parse(optarg, 1, &v) != EB_OK || v > 4096)
				return bad("bad rank count '%s': want an integer from 1 to 4096",
					   optarg);
			o->np = (int)v;
			break;
		case OPT_CHANNELS:
			if (eb_count_parse(optarg, 1, &v) != EB_OK || v > 64)
				return bad("bad channel count '%s': want an integer from 1 to 64",
					   optarg);
			o->fab.channels = (int)v;
			break;
		case OPT_LINK:
			if (parse_double(optarg, &o->fab.link_gbps) != EB_OK)
				return bad("bad link speed '%s': want Gbps > 0", optarg);
			break;
		case OPT_TIMEOUT:
			if (parse_double(optarg, &o->fab.timeout_s) != EB_OK)
				return bad("bad timeout '%s': want seconds > 0", optarg);
			break;
		case OPT_CORRUPT:
			if (eb_count_parse(optarg, 0, &v) != EB_OK)
				return bad("bad byte offset '%s'", optarg);
			o->corrupt_at = v;
			break;
		case OPT_PRODUCERS:
			o->q.producers = optarg;
			break;
		case OPT_PRODUCERS_ON:
			if (strcmp(optarg, "gpu") != 0 && strcmp(optarg, "cpu") != 0)
				return bad("bad --producers-on '%s': want gpu or cpu", optarg);
			o->q.on_gpu = strcmp(optarg, "gpu") == 0;
			break;
		case OPT_SLOTS:
			if (eb_count_parse(optarg, 2, &v) != EB_OK || (v & (v - 1)) != 0 ||
			    v > (1l << 24))
				return bad(
				    "bad slot count '%s': want a power of two from 2 to 2^24",
				    optarg);
			for (o->q.log2n = 0; (1l << o->q.log2n) < v; o->q.log2n++)
				;
			break;
		case OPT_BATCH:
			if (eb_count_parse(optarg, 1, &v) != EB_OK)
				return bad("bad batch '%s': want an integer >= 1", optarg);
			o->q.batch = (uint32_t)v;
			break;
		case OPT_PLACEMENT:
			if (strcmp(optarg, "pinned") != 0 && strcmp(optarg, "managed") != 0)
				return bad("bad placement '%s': want pinned or managed", optarg);
			o->q.managed = strcmp(optarg, "managed") == 0;
			break;
		case OPT_BLOCK:
			if (strcmp(o->bench, "ipc") == 0) {
				if (eb_ipc_parse_list(optarg, 0, o->ipc.blocks, &o->ipc.nblocks) !=
				    EB_OK)
					return bad("bad --block list '%s': want up to 16 thread "
						   "counts from 1 to 1024",
						   optarg);
				break;
			}
			if (eb_count_parse(optarg, 1, &v) != EB_OK || v > 1024)
				return bad("bad block size '%s': want 1 to 1024 threads", optarg);
			o->q.block = (int)v;
			break;
		case OPT_LAT_ITERS:
			if (eb_count_parse(optarg, 1, &v) != EB_OK || v > 10000000)
				return bad("bad latency iteration count '%s'", optarg);
			o->q.lat_iters = (int)v;
			break;
		case OPT_GRID:
			if (eb_ipc_parse_list(optarg, 1, o->ipc.grids, &o->ipc.ngrids) != EB_OK)
				return bad(
				    "bad --grid list '%s': want up to 16 block counts or all",
				    optarg);
			break;
		case OPT_PAIRS:
			if (eb_ipc_parse_pairs(optarg, &o->ipc.pairs) != EB_OK)
				return bad("bad --pairs '%s': want first, each or all", optarg);
			break;
		case OPT_METHODS:
			if (eb_ipc_parse_methods(optarg, &o->ipc.methods) != EB_OK)
				return bad("bad --methods '%s': want ce, st and/or tma", optarg);
			break;
		case OPT_DIRS:
			if (eb_ipc_parse_dirs(optarg, &o->ipc.dirs) != EB_OK)
				return bad("bad --dirs '%s': want write and/or read", optarg);
			break;
		case OPT_TMA_CHUNK:
			if (eb_size_parse(optarg, &sz) != EB_OK || sz % 16 != 0 || sz > (1u << 20))
				return bad("bad --tma-chunk '%s': want a multiple of 16 up to 1M",
					   optarg);
			o->ipc.tma_chunk = sz;
			break;
		case OPT_TMA_STAGES:
			if (eb_count_parse(optarg, 2, &v) != EB_OK || v > 16)
				return bad("bad --tma-stages '%s': want 2 to 16", optarg);
			o->ipc.tma_stages = (int)v;
			break;
		case OPT_ROOT:
			o->rdv.root = optarg;
			break;
		case OPT_RANK:
			if (eb_count_parse(optarg, 0, &v) != EB_OK || v >= EB_RDV_MAX_RANKS)
				return bad("bad rank '%s'", optarg);
			o->rdv.rank = (int)v;
			break;
		case OPT_RANKS:
			if (eb_count_parse(optarg, 1, &v) != EB_OK || v > EB_RDV_MAX_RANKS)
				return bad("bad rank count '%s'", optarg);
			o->rdv.size = (int)v;
			break;
		case OPT_LAYOUT:
			if (parse_layouts(optarg, &o->layouts) != EB_OK)
				return bad("bad layout list '%s': want single, split and/or "
					   "round-robin, comma separated",
					   optarg);
			break;
		case OPT_CORRUPT_KEY:
			o->corrupt_key = 1;
			break;
		case OPT_CHECK:
			o->check = 1;
			break;
		case OPT_PROVIDER:
			o->fab.provider = optarg;
			break;
		case OPT_NICS:
			o->fab.nics = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			*help = 1;
			return EB_OK;
		case ':':
			return bad("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (o->q.producers == NULL)
		o->q.producers = o->q.on_gpu ? "1t,1w,1b,16b,64b,all" : "1,2,4,8";
	if (!producers_ok(o->q.producers, o->q.on_gpu))
		return bad("bad --producers '%s': want a comma list of 1t, 1w, 1b, <N>b, all "
			   "(GPU) or thread counts (CPU)",
			   o->q.producers);
	o->q.per = (uint32_t)(o->iters_set ? o->iters : o->q.on_gpu ? 1000 : 100000);
	if (o->begin > o->end) {
		char b[24], e[24], msg[96];

		snprintf(msg, sizeof(msg), "%s > %s", eb_size_format(o->begin, b, sizeof(b)),
			 eb_size_format(o->end, e, sizeof(e)));
		return bad("smallest size is larger than the largest (-b %s)", msg);
	}
	o->nsizes = eb_size_sweep(o->begin, o->end, o->factor, o->sizes, EB_MAX_SIZES);
	if (o->nsizes < 0)
		return bad("%s", "the size sweep has more than 64 sizes; raise -f or narrow -b/-e");
	if (o->end > ((uint64_t)1 << 40))
		return bad("%s", "sizes above 1T are not supported");
	return EB_OK;
}
