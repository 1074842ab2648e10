/* efabench moe's header and JSON head: the shape, the hosts, the routing and what it makes
 * each rank move, how the points run, and what a reader of the table should know. */
#include "moe_facts.h"
#include "moe_ce.h"
#include "moe_figures.h"
#include "moe_op.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_name[] = {"rank", "ll", "normal"};
static const char *const mode_says[] = {
    "a token once per rank holding its experts, a rank's outputs back unsummed",
    "a token once per expert, each output back alone: DeepEP's low-latency kernels",
    ("a token once per host over the fabric, forwarded inside it; a rank's row per token "
     "back (its experts summed before the clock), summed per host: DeepEP's normal kernels")};

static const char *launcher(const struct eb_ctx *c)
{
	return c->boot != NULL ? c->boot->ops->name : "none";
}

static void shape_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct mopts *mo = st->mo;

	eb_fact_break(s);
	eb_fact_int(s, "ranks", "ranks", c->nranks);
	eb_fact_str(s, "launcher", "launcher", launcher(c));
	eb_fact_str(s, "preset", "preset", mo->preset == MOE_PREFILL ? "prefill" : "decode");
	eb_fact_int(s, "tokens", "tokens per rank", mo->tokens);
	eb_fact_int(s, "hidden", "hidden", mo->hidden);
	eb_fact_int(s, "topk", "top-k", mo->topk);
	eb_fact_int(s, "experts", "experts", mo->experts);
	eb_head_fact(&s->head, "per rank", "%d", st->rt.per_rank);
	eb_fact_str(s, "dtype", "dtype", mo->dtype == MOE_FP8 ? "fp8" : "bf16");
	eb_fact_break(s);
	eb_fact_str(s, "mode", "mode", mode_name[mo->mode]);
	eb_head_fact(&s->head, NULL, "(%s)", mode_says[mo->mode]);
	eb_fact_break(s);
	eb_fact_int(s, "token_bytes", "bytes: token (dispatch)", (long long)st->plan.tok_bytes);
	/* DeepEP's low-latency tests count an fp8 token with its 16-byte header. */
	eb_fact_int(s, "deepep_token_bytes", NULL,
		    (long long)st->plan.tok_bytes + (mo->dtype == MOE_FP8 ? 16 : 0));
	if (mo->dtype == MOE_FP8)
		eb_head_fact(&s->head, NULL, "(DeepEP counts %llu: its 16-byte header)",
			     (unsigned long long)st->plan.tok_bytes + 16);
	eb_fact_int(s, "output_bytes", "expert output (combine, bf16)",
		    (long long)st->plan.out_bytes);
}

/* The hosts, how same-host peers are reached, and each rank's host (JSON). */
static void host_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct eb_moe_hosts *h = &st->hosts;
	int r;

	eb_fact_break(s);
	eb_fact_int(s, "hosts", "hosts", h->n);
	eb_head_fact(&s->head, NULL, "(%s, %s)", h->emulated ? "emulated: --hosts" : "by host name",
		     h->per > 0 ? "as many ranks on each" : "uneven");
	eb_fact_bool(s, "hosts_emulated", NULL, h->emulated);
	eb_fact_str(s, "intra", NULL, st->plan.intra ? "ipc" : "fabric");
	eb_head_fact(&s->head, "same-host peers", "%s",
		     h->most < 2	       ? "none (one rank per host)"
		     : !st->plan.intra	       ? "through the fabric"
		     : c->mem == EB_MEM_DEVICE ? "stores over NVLink (CUDA IPC)"
					       : "stores into shared memory");
	eb_fact_int(s, "legs", "legs per phase", st->plan.nlegs);
	for (r = 0; r < c->nranks; r++) {
		struct eb_rec *it = eb_rec_item(&s->doc.head, "rank_hosts");

		if (it == NULL)
			return;
		eb_rec_int(it, "rank", r);
		eb_rec_int(it, "host", h->host[r]);
		eb_rec_int(it, "local", h->local[r]);
	}
}

/* Tokens every rank receives, and the routing's name and seed. */
static void routing_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct eb_route *rt = &st->rt;
	int64_t lo = INT64_MAX, hi = 0, sum = 0;
	char route[300];
	int r, t;

	for (t = 0; t < c->nranks; t++) {
		int64_t in = 0;

		for (r = 0; r < c->nranks; r++)
			in += rt->count[(size_t)r * (size_t)c->nranks + (size_t)t];
		lo = in < lo ? in : lo;
		hi = in > hi ? in : hi;
		sum += in;
	}
	eb_route_name(&st->mo->spec, route, sizeof(route));
	eb_fact_break(s);
	eb_fact_str(s, "routing", "routing", route);
	eb_fact_int(s, "seed", "seed", st->mo->seed);
	eb_head_fact(&s->head, "tokens received per rank",
		     "min %lld, mean %.1f, max %lld (max/mean %.2f)", (long long)lo,
		     (double)sum / c->nranks, (long long)hi,
		     sum > 0 ? (double)hi * c->nranks / (double)sum : 0.0);
}

/* What a write carries, the threads that post them and the producers that feed them. */
static void thread_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	eb_fact_size(s, "piece", "piece", eb_moe_piece_bytes(c, st));
	if (st->w.coalesce)
		eb_fact_say(
		    s, "fabric writes",
		    "packed: a proxy thread's share of a destination's items, in writes of "
		    "%lld tokens (dispatch) or %lld rows (combine) at most, made by all its "
		    "producers",
		    (long long)eb_moe_piece(c, st, 0), (long long)eb_moe_piece(c, st, 1));
	else
		eb_fact_say(s, "fabric writes", "one per item (%s)",
			    st->mo->mode == EB_MOE_LL ? "token and expert, output"
						      : "token and destination, row");
	eb_fact_int(s, "proxy_threads", "proxy threads per rank", st->nq);
	eb_fact_int(s, "rx_threads", "receiving threads", st->npx - st->nq);
	if (!st->rx && !st->mo->no_rx_threads)
		eb_head_fact(&s->head, NULL, "(too few cores here; --rx-threads adds them)");
	eb_head_fact(&s->head, "producers", "%d GPU blocks / %d CPU threads", st->blocks,
		     eb_moe_cpu_producers(st));
}

/* How the points were run: iterations, how they follow each other, the initiators. */
static void run_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const char *names[INIT_N];
	int n = 0, i;

	for (i = 0; i < INIT_N; i++)
		if (st->inits & (1u << i))
			names[n++] = eb_moe_init_name[i];
	eb_fact_break(s);
	eb_fact_int(s, "warmup", "warm-up", c->o->warmup);
	eb_fact_int(s, "iters", "timed iterations", c->o->iters);
	eb_fact_str(s, "iterations", NULL, "aligned");
	eb_head_fact(&s->head, NULL, "(each starts at a barrier)");
	eb_fact_num(s, "timeout_s", "timeout", c->o->fab.timeout_s, "%g s");
	eb_fact_bool(s, "check", NULL, c->o->check);
	eb_fact_strs(s, "initiators", "initiators", names, n);
}

/* Why GPU producers are missing from a table that was to have every initiator. */
static const char *no_gpu_why(const struct eb_ctx *c)
{
	if (!eb_mem_have_cuda())
		return "a build without CUDA";
	if (c->mem == EB_MEM_HOST && c->o->mem_why[0]) /* --mem auto found no GPU to use */
		return c->o->mem_why;
	if (c->mem == EB_MEM_HOST) /* no GPU was picked for host memory: it is not that none is */
		return "host memory: GPU blocks copy the tokens themselves and cannot reach it "
		       "(--mem pinned or device runs them)";
	return "no GPU here";
}

/* What a user of this host should know before reading the table. */
static void notes(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	int spin = 1 + st->npx + ((st->inits & (1u << INIT_CPU)) ? eb_moe_cpu_producers(st) : 0);

	if (!st->mo->inits_given && !(st->inits & (1u << INIT_GPU)))
		eb_fact_say(s, "note", "no GPU producers: %s", no_gpu_why(c));

	if (c->e->cores > 0 && c->e->host_ranks * spin > c->e->cores)
		eb_fact_say(s, "note",
			    "%d ranks here x %d spinning threads (rank, proxy threads%s, CPU "
			    "producers) > %d cores: they take turns",
			    c->e->host_ranks, spin, st->rx ? ", receiving threads" : "",
			    c->e->cores);
	if (c->mem == EB_MEM_DEVICE && !c->staged && !st->rx &&
	    strncmp(c->e->prov, "shm", 3) == 0 &&
	    (st->inits & ((1u << INIT_GPU) | (1u << INIT_CPU))))
		eb_fact_say(s, "note",
			    "shm copies GPU memory at the target, in the thread that progresses "
			    "it: here the proxy thread, between its posts (--rx-threads gives the "
			    "copies a thread of their own)");
	/* Emulated hosts reach each other through shm, whose CUDA copy per write of GPU memory is
	 * then what the leg between hosts measures (milliseconds where an all-to-all-v over the
	 * same shm takes tens of microseconds). */
	if (c->mem == EB_MEM_DEVICE && !c->staged && st->hosts.emulated && st->hosts.n > 1 &&
	    strncmp(c->e->prov, "shm", 3) == 0)
		eb_fact_say(
		    s, "note",
		    "emulated hosts reach each other through shm, which copies GPU memory "
		    "with a CUDA copy per write: the leg between hosts measures those copies "
		    "(--mem pinned measures the leg itself)");
	/* The proxy benchmark measured it: without MPS a producers' kernel holds the GPU while
	 * the other processes' copies wait. */
	if ((st->inits & (1u << INIT_GPU)) && c->e->boot->local_size > eb_mem_gpu_count() &&
	    !eb_mem_mps_running())
		eb_fact_say(s, "note",
			    "ranks here share a GPU: run one rank per GPU, or start MPS "
			    "(nvidia-cuda-mps-control -d) so their kernels and copies overlap");
}

/* JSON only: tokens and selections per (source, destination). */
static void traffic(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	int r, t;

	for (r = 0; r < c->nranks; r++)
		for (t = 0; t < c->nranks; t++) {
			struct eb_rec *it = eb_rec_item(&s->doc.head, "traffic");
			size_t k = (size_t)r * (size_t)c->nranks + (size_t)t;

			if (it == NULL)
				return;
			eb_rec_int(it, "src", r);
			eb_rec_int(it, "dst", t);
			eb_rec_int(it, "tokens", st->rt.count[k]);
			eb_rec_int(it, "selections", st->rt.nsel[k]);
		}
}

/* Load: selections per expert and per rank, the largest against the mean. */
static void load_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct eb_route *rt = &st->rt;
	int64_t *per = calloc((size_t)rt->experts, sizeof(*per)), most = 0, all = 0, rank_most = 0;
	int r, t, k;

	if (per == NULL)
		return;
	for (r = 0; r < c->nranks; r++)
		for (t = 0; t < rt->tokens; t++)
			for (k = 0; k < rt->width && eb_route_sel(rt, r, t)[k] >= 0; k++)
				per[eb_route_sel(rt, r, t)[k]]++, all++;
	for (k = 0; k < rt->experts; k++)
		most = per[k] > most ? per[k] : most;
	for (r = 0; r < c->nranks; r++) {
		int64_t in = 0;

		for (t = 0; t < c->nranks; t++)
			in += rt->nsel[(size_t)t * (size_t)c->nranks + (size_t)r];
		rank_most = in > rank_most ? in : rank_most;
	}
	free(per);
	eb_fact_break(s);
	eb_fact_num(s, "expert_load", "load (max/mean): per expert",
		    all > 0 ? (double)most * rt->experts / (double)all : 0, "%.2f");
	eb_fact_num(s, "rank_load", "per rank",
		    all > 0 ? (double)rank_most * c->nranks / (double)all : 0, "%.2f");
}

/* JSON only: what each rank moves in each op, every leg, by path. */
static void moved(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	static const char *const key[2][3] = {
	    {"dispatch_own_bytes", "dispatch_intra_bytes", "dispatch_fabric_bytes"},
	    {"combine_own_bytes", "combine_intra_bytes", "combine_fabric_bytes"}};
	static const char *const items[2] = {"dispatch_fabric_items", "combine_fabric_items"};
	uint64_t by[3];
	int64_t n[3];
	int r, op, k;

	for (r = 0; r < c->nranks; r++) {
		struct eb_rec *it = eb_rec_item(&s->doc.head, "moved");

		if (it == NULL)
			return;
		eb_rec_int(it, "rank", r);
		for (op = 0; op < 2; op++) {
			eb_moe_moved(&st->plan, &st->rt, op, r, by, n);
			for (k = 0; k < 3; k++)
				eb_rec_int(it, key[op][k], (long long)by[k]);
			eb_rec_int(it, items[op], (long long)n[EB_PATH_FABRIC]);
		}
	}
}

/* JSON only, for small runs: every token's experts ("3 17 42", rank by rank, token by token),
 * so that a reader can recount every figure from the routing. */
#define SELECTED_MAX 65536
static void selected(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct eb_route *rt = &st->rt;
	char buf[64 * 8];
	int r, t, k;

	if ((size_t)c->nranks * (size_t)rt->tokens * (size_t)rt->width > SELECTED_MAX)
		return;
	for (r = 0; r < c->nranks; r++)
		for (t = 0; t < rt->tokens; t++) {
			size_t used = 0;

			buf[0] = '\0';
			for (k = 0; k < rt->width && eb_route_sel(rt, r, t)[k] >= 0; k++)
				used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%d",
							 k ? " " : "", eb_route_sel(rt, r, t)[k]);
			eb_rec_strs(&s->doc.head, "selected", buf);
		}
}

void eb_moe_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct mstate *st = c->priv;

	shape_facts(c, st, s);
	host_facts(c, st, s);
	routing_facts(c, st, s);
	load_facts(c, st, s);
	run_facts(c, st, s);
	thread_facts(c, st, s);
	notes(c, st, s);
	eb_fact_say(s, NULL,
		    "p50/p99 = the slowest rank's (by p50; p99 nearest-rank: at 100 iterations "
		    "or fewer the largest); max/it = p50 over iterations of the slowest rank's "
		    "time in each (every iteration starts at a barrier); GB/s = bytes per rank "
		    "(mean) / p50: sel = selections x bytes per token (or output), fabric = what "
		    "goes through the fabric (gpu and cpu: to other hosts; a2av and mpi: to "
		    "every other rank, same-host peers too), RDMA = a token once per destination "
		    "host, its own counted (DeepEP's), NVL = the tokens a rank ends up with, once "
		    "each (DeepEP's); own = rank 0's own bytes (sel; normal: RDMA) / its own p50, "
		    "as DeepEP's tests print; cross = bytes to other hosts / the largest p50 over "
		    "ranks of the leg that carries them, alone (normal mode over hosts); x a2av = "
		    "p50 / the all-to-all-v's%s",
		    eb_moe_ce_wanted(c, st)
			? "; JSON intra_GBps = same-host bytes / p50, vs_ce = the copy "
			  "engines' time / p50"
			: "");
	traffic(c, st, s);
	moved(c, st, s);
	selected(c, st, s);
}
