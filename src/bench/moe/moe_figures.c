/* efabench moe's figures: a row's record from every rank's p50/p99 (the selections, wire
 * bytes and writes the routing makes each rank move), and the header's facts. */
#include "moe_state.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const eb_moe_init_name[] = {"gpu", "cpu", "a2av"};
const char *const eb_moe_phase_name[] = {"dispatch", "combine", "pair"};

struct totals {
	double sel[2], wire[2]; /* bytes per rank (mean): selections x bytes, bytes to others */
};

static void totals_of(const struct mstate *st, int nranks, struct totals *tt)
{
	const struct eb_route *rt = &st->rt;
	int s, d;

	memset(tt, 0, sizeof(*tt));
	for (s = 0; s < nranks; s++)
		for (d = 0; d < nranks; d++) {
			double n = (double)rt->nsel[(size_t)s * (size_t)nranks + (size_t)d];

			tt->sel[0] += n * (double)st->plan.tok_bytes / nranks;
			tt->sel[1] += n * (double)st->plan.out_bytes / nranks;
			if (s == d)
				continue;
			tt->wire[0] += (double)rt->count[(size_t)s * (size_t)nranks + (size_t)d] *
				       (double)st->plan.tok_bytes / nranks;
			tt->wire[1] += n * (double)st->plan.out_bytes / nranks;
		}
}

/* The a2av's writes to other ranks per dispatch (or combine: the same pairs, the other way),
 * mean over ranks: one chunked write per pair that moves anything. */
static double a2av_writes(const struct mstate *st, int nranks)
{
	double sum = 0;
	int s, d;

	for (s = 0; s < nranks; s++)
		for (d = 0; d < nranks; d++)
			sum += s != d && st->rt.count[(size_t)s * (size_t)nranks + (size_t)d] > 0;
	return sum / nranks;
}

/* The slowest rank's time in each timed iteration (every iteration starts at a barrier, so
 * the i-th sample of every rank is the same iteration), summarised; NULL samples: zeros. */
static struct eb_stats slowest_each(const struct eb_meas *m)
{
	struct eb_stats st = {0};
	size_t n = m->ngroups > 0 ? m->groups[0].st.n : 0, i;
	double *worst = n > 0 && m->samples != NULL ? calloc(n, sizeof(*worst)) : NULL;
	int g;

	if (worst == NULL)
		return st;
	for (g = 0; g < m->ngroups; g++) {
		if (m->groups[g].st.n < n)
			n = m->groups[g].st.n;
		for (i = 0; i < n; i++) {
			double v = m->samples[(size_t)g * (size_t)m->per + i];

			worst[i] = v > worst[i] ? v : worst[i];
		}
	}
	eb_stats_compute(worst, n, &st);
	free(worst);
	return st;
}

void eb_moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		   struct eb_rec *r)
{
	struct mstate *st = c->priv;
	const struct eb_group *g = m->groups;
	struct totals tt;
	struct eb_stats each = slowest_each(m);
	double slow50 = 0, slow99 = 0, fast = 1e300, sel, wire, writes = 0, *base = st->base;
	int k, slow = 0, fastr = 0, ph = m->pt->step, init = m->pt->var;

	totals_of(st, c->nranks, &tt);
	for (k = 0; k < m->ngroups; k++) {
		if (g[k].st.p50 > slow50) {
			slow50 = g[k].st.p50;
			slow99 = g[k].st.p99;
			slow = g[k].rank;
		}
		if (g[k].st.p50 < fast) {
			fast = g[k].st.p50;
			fastr = g[k].rank;
		}
		writes += m->rep[g[k].rank].own[0] / c->nranks;
	}
	if (init == INIT_A2AV)
		base[ph] = slow50;
	sel = ph == PH_PAIR ? tt.sel[0] + tt.sel[1] : tt.sel[ph];
	wire = ph == PH_PAIR ? tt.wire[0] + tt.wire[1] : tt.wire[ph];
	eb_rec_str(r, "initiator", eb_moe_init_name[init]);
	eb_rec_str(r, "phase", eb_moe_phase_name[ph]);
	eb_rec_num(r, "p50_us", slow50 * 1e6);
	eb_rec_num(r, "p99_us", slow99 * 1e6);
	eb_rec_num(r, "each_max_p50_us", each.p50 * 1e6);
	eb_rec_num(r, "each_max_p99_us", each.p99 * 1e6);
	eb_rec_num(r, "fastest_p50_us", fast * 1e6);
	eb_rec_int(r, "fastest_rank", fastr);
	eb_rec_int(r, "slowest_rank", slow);
	eb_rec_num(r, "sel_GBps", slow50 > 0 ? sel / slow50 / 1e9 : 0.0);
	eb_rec_num(r, "wire_GBps", slow50 > 0 ? wire / slow50 / 1e9 : 0.0);
	eb_rec_num_or_null(r, "a2av_p50_us", base[ph] * 1e6, base[ph] > 0);
	eb_rec_num_or_null(r, "vs_a2av", base[ph] > 0 ? slow50 / base[ph] : 0, base[ph] > 0);
	/* The producers' writes as their proxy threads counted them; the a2av's by construction. */
	if (init == INIT_A2AV)
		writes = a2av_writes(st, c->nranks) * (ph == PH_PAIR ? 2 : 1);
	eb_rec_num(r, "writes", writes);
	eb_rec_num(r, "mwrites_per_s", slow50 > 0 ? writes / slow50 / 1e6 : 0.0);
	eb_rec_int(r, "producers",
		   init == INIT_A2AV  ? 0
		   : init == INIT_GPU ? st->blocks
				      : eb_moe_cpu_producers(st));
	eb_rec_int(r, "wrong", (long long)m->wrong);
	for (k = 0; k < m->ngroups; k++) {
		struct eb_rec *it = eb_rec_item(r, "ranks");

		if (it == NULL)
			break;
		eb_rec_int(it, "rank", g[k].rank);
		eb_rec_num(it, "p50_us", g[k].st.p50 * 1e6);
		eb_rec_num(it, "p99_us", g[k].st.p99 * 1e6);
	}
}

const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS] = {
    {"Initiator", "initiator", 9, 0, 1},
    {"Phase", "phase", 8, 0, 1},
    {"p50(us)", "p50_us", 10, 1, 0},
    {"p99(us)", "p99_us", 10, 1, 0},
    {"max/it", "each_max_p50_us", 10, 1, 0},
    {"slowest", "slowest_rank", 7, 0, 0},
    {"sel GB/s", "sel_GBps", 9, 2, 0},
    {"wire GB/s", "wire_GBps", 9, 2, 0},
    {"x a2av", "vs_a2av", 7, 2, 0},
    {"Mwr/s", "mwrites_per_s", 6, 3, 0},
    {"#wrong", "wrong", 6, 0, 0},
};

/* The header and JSON head: the shape, the routing and what it makes each rank move. */
static const char *launcher(const struct eb_ctx *c)
{
	return c->boot != NULL ? c->boot->ops->name : "none";
}

static void shape_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct mopts *mo = st->mo;

	eb_head_fact(&s->head, NULL, "efabench moe: %s", c->o->cmd->summary);
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
	eb_fact_int(s, "token_bytes", "bytes: token (dispatch)", (long long)st->plan.tok_bytes);
	eb_fact_int(s, "output_bytes", "expert output (combine, bf16)",
		    (long long)st->plan.out_bytes);
}

static void fabric_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	eb_fact_break(s);
	eb_fact_str(s, "provider", "provider", c->e->prov);
	eb_fact_str(s, "mem", "memory", eb_mem_kind_name(c->mem));
	eb_fact_str(s, "registration", "registration",
		    c->staged ? "staged" : eb_reg_path_name(c->path));
	if (c->staged)
		eb_head_fact(&s->head, "staged",
			     "through pinned bounce buffers, copied inside "
			     "each phase");
	eb_fact_size(s, "chunk", "chunk", c->chunk);
	eb_fact_size(s, "piece", "piece", eb_moe_piece_bytes(c, st));
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

/* Writes per rank, the threads that post them and the producers that feed them. */
static void thread_facts(const struct eb_ctx *c, const struct mstate *st, struct eb_sheet *s)
{
	const struct eb_route *rt = &st->rt;
	int64_t writes = 0;
	int r, t;

	for (r = 0; r < c->nranks; r++)
		for (t = 0; t < c->nranks; t++)
			writes += r != t ? rt->count[(size_t)r * (size_t)c->nranks + (size_t)t] : 0;
	if (st->mo->preset == MOE_PREFILL)
		eb_fact_say(s, "writes per rank",
			    "packed: a proxy thread's share of the tokens for a destination, in "
			    "writes of %lld tokens (dispatch) or %lld outputs (combine) at most, "
			    "packed by all its producers",
			    (long long)eb_moe_piece(c, st, 0), (long long)eb_moe_piece(c, st, 1));
	else
		eb_fact_say(s, "writes per rank",
			    "one per (token, destination rank) in dispatch, per (token, home rank) "
			    "in combine: %.1f each on average",
			    (double)writes / c->nranks);
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
	if (c->gpu < 0)
		return "no GPU here";
	return "host memory: GPU blocks copy the tokens themselves and cannot reach it (--mem "
	       "pinned or device runs them)";
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
	    strncmp(c->e->prov, "shm", 3) == 0 && (st->inits & ~(1u << INIT_A2AV)))
		eb_fact_say(s, "note",
			    "shm copies GPU memory at the target, in the thread that progresses "
			    "it: here the proxy thread, between its posts (--rx-threads gives the "
			    "copies a thread of their own)");
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

void eb_moe_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct mstate *st = c->priv;

	shape_facts(c, st, s);
	fabric_facts(c, st, s);
	routing_facts(c, st, s);
	run_facts(c, st, s);
	thread_facts(c, st, s);
	notes(c, st, s);
	eb_fact_say(s, NULL,
		    "p50/p99 = the slowest rank's (by p50); max/it = p50 over iterations of the "
		    "slowest rank's time in each (every iteration starts at a barrier); "
		    "sel GB/s = selections x bytes / p50; wire GB/s = bytes to other ranks / p50 "
		    "(per rank, mean); x a2av = p50 / the all-to-all-v's");
	traffic(c, st, s);
}
