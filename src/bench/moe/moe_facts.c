/* efabench moe's header and JSON head: the shape, the hosts, the routing and what it makes
 * each rank move, how the points run, and what a reader of the table should know. */
#include "moe_facts.h"
#include "moe_ce.h"
#include "moe_figures.h"
#include "moe_op.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdarg.h>
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

/* The header's facts, gathered in order and stated at once (eb_fact_list); formatted values
 * live in the list's own text. Every fact below fits (about 50 at most). */
#define MAX_FACTS 96
struct facts {
	struct eb_fact_item f[MAX_FACTS];
	int n;
	char text[8192];
	size_t used;
};

static void add(struct facts *t, struct eb_fact_item f)
{
	if (t->n < MAX_FACTS)
		t->f[t->n++] = f;
}

static const char *text(struct facts *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *text(struct facts *t, const char *fmt, ...)
{
	char *at = t->text + t->used;
	size_t room = sizeof(t->text) - t->used;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(at, room, fmt, ap);
	va_end(ap);
	t->used += n < 0 ? 0 : (size_t)n < room ? (size_t)n + 1 : room;
	return room > 0 ? at : "";
}

static void shape_facts(const struct eb_ctx *c, const struct mstate *st, struct facts *t)
{
	const struct mopts *mo = st->mo;
	long long tok = (long long)st->plan.tok_bytes;

	add(t, EB_F_BREAK);
	add(t, EB_F_INT("ranks", "ranks", c->nranks));
	add(t, EB_F_STR("launcher", "launcher", c->boot != NULL ? c->boot->ops->name : "none"));
	add(t, EB_F_STR("preset", "preset", mo->preset == MOE_PREFILL ? "prefill" : "decode"));
	add(t, EB_F_INT("tokens", "tokens per rank", mo->tokens));
	add(t, EB_F_INT("hidden", "hidden", mo->hidden));
	add(t, EB_F_INT("topk", "top-k", mo->topk));
	add(t, EB_F_INT("experts", "experts", mo->experts));
	add(t, EB_F_INT(NULL, "per rank", st->rt.per_rank));
	add(t, EB_F_STR("dtype", "dtype", mo->dtype == MOE_FP8 ? "fp8" : "bf16"));
	add(t, EB_F_BREAK);
	add(t, EB_F_STR("mode", "mode", mode_name[mo->mode]));
	add(t, EB_F_STR(NULL, NULL, text(t, "(%s)", mode_says[mo->mode])));
	add(t, EB_F_BREAK);
	add(t, EB_F_INT("token_bytes", "bytes: token (dispatch)", tok));
	/* DeepEP's low-latency tests count an fp8 token with its 16-byte header. */
	add(t, EB_F_INT("deepep_token_bytes", NULL, tok + (mo->dtype == MOE_FP8 ? 16 : 0)));
	if (mo->dtype == MOE_FP8)
		add(t, EB_F_STR(NULL, NULL,
				text(t, "(DeepEP counts %lld: its 16-byte header)", tok + 16)));
	add(t, EB_F_INT("output_bytes", "expert output (combine, bf16)",
			(long long)st->plan.out_bytes));
}

/* The hosts and how same-host peers are reached. */
static void host_facts(const struct eb_ctx *c, const struct mstate *st, struct facts *t)
{
	const struct eb_moe_hosts *h = &st->hosts;

	add(t, EB_F_BREAK);
	add(t, EB_F_INT("hosts", "hosts", h->n));
	add(t, EB_F_STR(NULL, NULL,
			h->emulated  ? (h->per > 0 ? "(emulated: --hosts, as many ranks on each)"
						   : "(emulated: --hosts, uneven)")
			: h->per > 0 ? "(by host name, as many ranks on each)"
				     : "(by host name, uneven)"));
	add(t, EB_F_BOOL("hosts_emulated", NULL, h->emulated));
	add(t, EB_F_STR("intra", NULL, st->plan.intra ? "ipc" : "fabric"));
	add(t, EB_F_STR(NULL, "same-host peers",
			h->most < 2		  ? "none (one rank per host)"
			: !st->plan.intra	  ? "through the fabric"
			: c->mem == EB_MEM_DEVICE ? "stores over NVLink (CUDA IPC)"
						  : "stores into shared memory"));
	add(t, EB_F_INT("legs", "legs per phase", st->plan.nlegs));
}

/* Tokens every rank receives, and the routing's name and seed. */
static void routing_facts(const struct eb_ctx *c, const struct mstate *st, struct facts *t)
{
	const struct eb_route *rt = &st->rt;
	int64_t lo = INT64_MAX, hi = 0, sum = 0;
	char route[300];
	int r, d;

	for (d = 0; d < c->nranks; d++) {
		int64_t in = 0;

		for (r = 0; r < c->nranks; r++)
			in += rt->count[(size_t)r * (size_t)c->nranks + (size_t)d];
		lo = in < lo ? in : lo;
		hi = in > hi ? in : hi;
		sum += in;
	}
	eb_route_name(&st->mo->spec, route, sizeof(route));
	add(t, EB_F_BREAK);
	add(t, EB_F_STR("routing", "routing", text(t, "%s", route)));
	add(t, EB_F_INT("seed", "seed", st->mo->seed));
	add(t, EB_F_STR(NULL, "tokens received per rank",
			text(t, "min %lld, mean %.1f, max %lld (max/mean %.2f)", (long long)lo,
			     (double)sum / c->nranks, (long long)hi,
			     sum > 0 ? (double)hi * c->nranks / (double)sum : 0.0)));
}

/* Load: selections per expert and per rank, the largest against the mean. */
static void load_facts(const struct eb_ctx *c, const struct mstate *st, struct facts *t)
{
	const struct eb_route *rt = &st->rt;
	size_t n = (size_t)c->nranks * (size_t)rt->tokens * (size_t)rt->width, i;
	int64_t *per = calloc((size_t)rt->experts, sizeof(*per)), most = 0, all = 0, rank_most = 0;
	int r, d, k;

	if (per == NULL)
		return;
	for (i = 0; i < n; i++) /* every rank's every token's selections (-1: none) */
		if (rt->sel[i] >= 0)
			per[rt->sel[i]]++, all++;
	for (k = 0; k < rt->experts; k++)
		most = per[k] > most ? per[k] : most;
	for (r = 0; r < c->nranks; r++) {
		int64_t in = 0;

		for (d = 0; d < c->nranks; d++)
			in += rt->nsel[(size_t)d * (size_t)c->nranks + (size_t)r];
		rank_most = in > rank_most ? in : rank_most;
	}
	free(per);
	add(t, EB_F_BREAK);
	add(t, EB_F_NUM("expert_load", "load (max/mean): per expert",
			all > 0 ? (double)most * rt->experts / (double)all : 0, "%.2f"));
	add(t, EB_F_NUM("rank_load", "per rank",
			all > 0 ? (double)rank_most * c->nranks / (double)all : 0, "%.2f"));
}

/* What a write carries, the threads that post them and the producers that feed them. */
static void thread_facts(const struct mstate *st, struct facts *t)
{
	add(t, EB_F_SIZE("piece", "piece", st->piece));
	if (st->w.coalesce)
		add(t, EB_F_SAY("fabric writes",
				text(t,
				     "packed: a proxy thread's share of a destination's items, in "
				     "writes of %lld tokens (dispatch) or %lld rows (combine) at "
				     "most, made by all its producers",
				     (long long)st->pieces[0], (long long)st->pieces[1])));
	else
		add(t,
		    EB_F_SAY("fabric writes", st->mo->mode == EB_MOE_LL
						  ? "one per item (token and expert, output)"
						  : "one per item (token and destination, row)"));
	add(t, EB_F_INT("proxy_threads", "proxy threads per rank", st->nq));
	add(t, EB_F_INT("rx_threads", "receiving threads", st->npx - st->nq));
	if (!st->rx && !st->mo->no_rx_threads)
		add(t, EB_F_STR(NULL, NULL, "(too few cores here; --rx-threads adds them)"));
	add(t, EB_F_STR(NULL, "producers",
			text(t, "%d GPU blocks / %d CPU threads", st->blocks, st->cpu_producers)));
}

/* How the points were run: iterations, how they follow each other, the initiators. */
static void run_facts(const struct eb_ctx *c, const struct mstate *st, struct facts *t,
		      const char **names)
{
	int n = 0, i;

	for (i = 0; i < INIT_N; i++)
		if (st->inits & (1u << i))
			names[n++] = eb_moe_init_name[i];
	add(t, EB_F_BREAK);
	add(t, EB_F_INT("warmup", "warm-up", c->o->warmup));
	add(t, EB_F_INT("iters", "timed iterations", c->o->iters));
	add(t, EB_F_STR("iterations", NULL, "aligned"));
	add(t, EB_F_STR(NULL, NULL, "(each starts at a barrier)"));
	add(t, EB_F_NUM("timeout_s", "timeout", c->o->fab.timeout_s, "%g s"));
	add(t, EB_F_BOOL("check", NULL, c->o->check));
	add(t, EB_F_STRS("initiators", "initiators", names, n));
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
static void notes(const struct eb_ctx *c, const struct mstate *st, struct facts *t)
{
	int spin = 1 + st->npx + ((st->inits & (1u << INIT_CPU)) ? st->cpu_producers : 0);

	if (!st->mo->inits_given && !(st->inits & (1u << INIT_GPU)))
		add(t, EB_F_SAY("note", text(t, "no GPU producers: %s", no_gpu_why(c))));
	if (c->e->cores > 0 && c->e->host_ranks * spin > c->e->cores)
		add(t, EB_F_SAY("note",
				text(t,
				     "%d ranks here x %d spinning threads (rank, proxy threads%s, "
				     "CPU producers) > %d cores: they take turns",
				     c->e->host_ranks, spin, st->rx ? ", receiving threads" : "",
				     c->e->cores)));
	if (c->mem == EB_MEM_DEVICE && !c->staged && !st->rx &&
	    strncmp(c->e->prov, "shm", 3) == 0 &&
	    (st->inits & ((1u << INIT_GPU) | (1u << INIT_CPU))))
		add(t,
		    EB_F_SAY("note",
			     "shm copies GPU memory at the target, in the thread that progresses "
			     "it: here the proxy thread, between its posts (--rx-threads gives the "
			     "copies a thread of their own)"));
	/* Emulated hosts reach each other through shm, whose CUDA copy per write of GPU memory is
	 * then what the leg between hosts measures (milliseconds where an all-to-all-v over the
	 * same shm takes tens of microseconds). */
	if (c->mem == EB_MEM_DEVICE && !c->staged && st->hosts.emulated && st->hosts.n > 1 &&
	    strncmp(c->e->prov, "shm", 3) == 0)
		add(t,
		    EB_F_SAY("note",
			     "emulated hosts reach each other through shm, which copies GPU memory "
			     "with a CUDA copy per write: the leg between hosts measures those "
			     "copies (--mem pinned measures the leg itself)"));
	/* The proxy benchmark measured it: without MPS a producers' kernel holds the GPU while
	 * the other processes' copies wait. */
	if ((st->inits & (1u << INIT_GPU)) && c->e->boot->local_size > eb_mem_gpu_count() &&
	    !eb_mem_mps_running())
		add(t,
		    EB_F_SAY("note", "ranks here share a GPU: run one rank per GPU, or start MPS "
				     "(nvidia-cuda-mps-control -d) so their kernels and copies "
				     "overlap"));
}

/* JSON only: each rank's host, and tokens and selections per (source, destination). */
static void traffic(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	int r, d;

	for (r = 0; r < c->nranks; r++) {
		struct eb_rec *it = eb_rec_item(&s->doc.head, "rank_hosts");

		if (it == NULL)
			return;
		eb_rec_int(it, "rank", r);
		eb_rec_int(it, "host", st->hosts.host[r]);
		eb_rec_int(it, "local", st->hosts.local[r]);
	}
	for (r = 0; r < c->nranks; r++)
		for (d = 0; d < c->nranks; d++) {
			struct eb_rec *it = eb_rec_item(&s->doc.head, "traffic");
			size_t k = (size_t)r * (size_t)c->nranks + (size_t)d;

			if (it == NULL)
				return;
			eb_rec_int(it, "src", r);
			eb_rec_int(it, "dst", d);
			eb_rec_int(it, "tokens", st->rt.count[k]);
			eb_rec_int(it, "selections", st->rt.nsel[k]);
		}
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
	size_t n = (size_t)c->nranks * (size_t)rt->tokens, i;
	int k;

	if (n * (size_t)rt->width > SELECTED_MAX)
		return;
	for (i = 0; i < n; i++) { /* rank by rank, token by token */
		const int32_t *x = rt->sel + i * (size_t)rt->width;
		size_t used = 0;

		buf[0] = '\0';
		for (k = 0; k < rt->width && x[k] >= 0; k++)
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%d",
						 k ? " " : "", x[k]);
		eb_rec_strs(&s->doc.head, "selected", buf);
	}
}

void eb_moe_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct mstate *st = c->priv;
	struct facts list = {.n = 0}, *t = &list;
	const char *names[INIT_N];

	shape_facts(c, st, t);
	host_facts(c, st, t);
	routing_facts(c, st, t);
	load_facts(c, st, t);
	run_facts(c, st, t, names);
	thread_facts(st, t);
	notes(c, st, t);
	add(t, EB_F_SAY(
		   NULL,
		   text(t,
			"p50/p99 = the slowest rank's (by p50; p99 nearest-rank: at 100 "
			"iterations or fewer the largest); max/it = p50 over iterations of the "
			"slowest rank's time in each (every iteration starts at a barrier); GB/s "
			"= bytes per rank (mean) / p50: sel = selections x bytes per token (or "
			"output), fabric = what goes through the fabric (gpu and cpu: to other "
			"hosts; a2av and mpi: to every other rank, same-host peers too), RDMA = a "
			"token once per destination host, its own counted (DeepEP's), NVL = the "
			"tokens a rank ends up with, once each (DeepEP's); own = rank 0's own "
			"bytes (sel; normal: RDMA) / its own p50, as DeepEP's tests print; cross "
			"= bytes to other hosts / the largest p50 over ranks of the leg that "
			"carries them, alone (normal mode over hosts); x a2av = p50 / the "
			"all-to-all-v's%s",
			st->ce_wanted ? "; JSON intra_GBps = same-host bytes / p50, vs_ce = the "
					"copy engines' time / p50"
				      : "")));
	eb_fact_list(s, t->f, t->n);
	traffic(c, st, s);
	moved(c, st, s);
	selected(c, st, s);
}
