/* efabench moe's figures: a row's record from every rank's p50/p99 (the selections, wire
 * bytes and writes the routing makes each rank move), and the header's facts. */
#include "moe_state.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdint.h>
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

void eb_moe_record(struct eb_ctx *c, struct eb_sheet *sh, const struct rank_t *all,
		   const double *base, uint64_t wrong)
{
	struct mstate *st = c->priv;
	struct eb_rec *r = eb_sheet_rec(sh);
	struct totals tt;
	double slow50 = 0, slow99 = 0, fast = 1e300, sel, wire, writes;
	int k, slow = 0, fastr = 0, ph = st->phase;

	if (r == NULL)
		return;
	totals_of(st, c->nranks, &tt);
	for (k = 0; k < c->nranks; k++) {
		if (all[k].p50 > slow50) {
			slow50 = all[k].p50;
			slow = k;
		}
		if (all[k].p50 < fast) {
			fast = all[k].p50;
			fastr = k;
		}
		slow99 = all[k].p99 > slow99 ? all[k].p99 : slow99;
	}
	sel = ph == PH_PAIR ? tt.sel[0] + tt.sel[1] : tt.sel[ph];
	wire = ph == PH_PAIR ? tt.wire[0] + tt.wire[1] : tt.wire[ph];
	eb_rec_str(r, "initiator", eb_moe_init_name[st->init]);
	eb_rec_str(r, "phase", eb_moe_phase_name[ph]);
	eb_rec_num(r, "p50_us", slow50 * 1e6);
	eb_rec_num(r, "p99_us", slow99 * 1e6);
	eb_rec_num(r, "fastest_p50_us", fast * 1e6);
	eb_rec_int(r, "fastest_rank", fastr);
	eb_rec_int(r, "slowest_rank", slow);
	eb_rec_num(r, "sel_GBps", slow50 > 0 ? sel / slow50 / 1e9 : 0.0);
	eb_rec_num(r, "wire_GBps", slow50 > 0 ? wire / slow50 / 1e9 : 0.0);
	eb_rec_num_or_null(r, "a2av_p50_us", base[ph] * 1e6, base[ph] > 0);
	eb_rec_num_or_null(r, "vs_a2av", base[ph] > 0 ? slow50 / base[ph] : 0, base[ph] > 0);
	/* The producers' writes as their proxy threads counted them; the a2av's by construction. */
	if (st->init == INIT_A2AV)
		writes = a2av_writes(st, c->nranks) * (ph == PH_PAIR ? 2 : 1);
	else
		for (k = 0, writes = 0; k < c->nranks; k++)
			writes += all[k].writes / c->nranks;
	eb_rec_num(r, "writes", writes);
	eb_rec_num(r, "mwrites_per_s", slow50 > 0 ? writes / slow50 / 1e6 : 0.0);
	eb_rec_int(r, "producers", st->init == INIT_A2AV ? 0 : st->producers);
	eb_rec_int(r, "wrong", (long long)wrong);
	for (k = 0; k < c->nranks; k++) {
		struct eb_rec *it = eb_rec_item(r, "ranks");

		if (it == NULL)
			break;
		eb_rec_int(it, "rank", k);
		eb_rec_num(it, "p50_us", all[k].p50 * 1e6);
		eb_rec_num(it, "p99_us", all[k].p99 * 1e6);
	}
	eb_sheet_show(sh, r);
}

const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS] = {
    {"Initiator", "initiator", 9, 0, 1},
    {"Phase", "phase", 8, 0, 1},
    {"p50(us)", "p50_us", 10, 1, 0},
    {"p99(us)", "p99_us", 10, 1, 0},
    {"fastest", "fastest_p50_us", 10, 1, 0},
    {"slowest", "slowest_rank", 7, 0, 0},
    {"sel GB/s", "sel_GBps", 9, 2, 0},
    {"wire GB/s", "wire_GBps", 9, 2, 0},
    {"x a2av", "vs_a2av", 7, 2, 0},
    {"Mwr/s", "mwrites_per_s", 6, 3, 0},
    {"#wrong", "wrong", 6, 0, 0},
};

/* The header: the shape, the routing and what it makes each rank move. */
static const char *launcher(const struct eb_ctx *c)
{
	return c->boot != NULL ? c->boot->ops->name : "none";
}

void eb_moe_facts(struct eb_ctx *c, struct eb_sheet *sh)
{
	const struct mopts *mo = mown(c);
	struct mstate *st = c->priv;
	const struct eb_route *rt = &st->rt;
	struct eb_head *h = &sh->head;
	struct eb_rec *d = &sh->doc.head;
	int64_t lo = INT64_MAX, hi = 0, sum = 0, writes = 0;
	int cpu = mo->producers > 0 ? mo->producers : st->nq, s, t, spin;
	char route[300];
	const char *rx = "";

	for (t = 0; t < c->nranks; t++) {
		int64_t in = 0;

		for (s = 0; s < c->nranks; s++) {
			in += rt->count[(size_t)s * (size_t)c->nranks + (size_t)t];
			writes += s != t ? rt->count[(size_t)s * (size_t)c->nranks + (size_t)t] : 0;
		}
		lo = in < lo ? in : lo;
		hi = in > hi ? in : hi;
		sum += in;
	}
	eb_route_name(&mo->spec, route, sizeof(route));
	eb_head_fact(h, "efabench moe",
		     "%d ranks (%s launcher), %s: %d tokens per rank, hidden %d, top-%d of %d "
		     "experts (%d per rank), %s",
		     c->nranks, launcher(c), mo->preset == MOE_PREFILL ? "prefill" : "decode",
		     mo->tokens, mo->hidden, mo->topk, mo->experts, rt->per_rank,
		     mo->dtype == MOE_FP8 ? "fp8" : "bf16");
	eb_head_break(h);
	eb_head_fact(h, "bytes", "token %llu (dispatch), expert output %llu (combine, bf16)",
		     (unsigned long long)st->plan.tok_bytes,
		     (unsigned long long)st->plan.out_bytes);
	eb_head_fact(h, "provider", "%s, %s memory (registration: %s)", c->e->prov,
		     eb_mem_kind_name(c->mem),
		     c->staged ? "staged through pinned bounce buffers, copied inside each phase"
			       : eb_reg_path_name(c->path));
	eb_head_break(h);
	eb_head_fact(h, "routing", "%s, seed %ld", route, mo->seed);
	eb_head_fact(h, "tokens received per rank", "min %lld, mean %.1f, max %lld (max/mean %.2f)",
		     (long long)lo, (double)sum / c->nranks, (long long)hi,
		     sum > 0 ? (double)hi * c->nranks / (double)sum : 0.0);
	eb_head_break(h);
	if (mo->preset == MOE_PREFILL)
		eb_head_fact(h, "writes per rank",
			     "packed: a proxy thread's share of the tokens for a destination, in "
			     "writes of %lld tokens (dispatch) or %lld outputs (combine) at most, "
			     "packed by all its producers",
			     (long long)eb_moe_piece(c, st, 0), (long long)eb_moe_piece(c, st, 1));
	else
		eb_head_fact(
		    h, "writes per rank",
		    "one per (token, destination rank) in dispatch, per (token, home rank) "
		    "in combine: %.1f each on average",
		    (double)writes / c->nranks);
	if (st->rx)
		rx = ", each with a receiving thread for what peers write here";
	else if (!mo->no_rx_threads)
		rx = ", no receiving threads (too few cores here; --rx-threads adds them)";
	eb_head_fact(h, "proxy threads", "%d per rank%s; producers: %d GPU blocks / %d CPU threads",
		     st->nq, rx, st->blocks, cpu);
	eb_head_break(h);
	spin = 1 + st->npx + ((st->inits & (1u << INIT_CPU)) ? cpu : 0);
	if (c->e->cores > 0 && c->e->host_ranks * spin > c->e->cores) {
		eb_head_fact(h, "note",
			     "%d ranks here x %d spinning threads (rank, proxy threads%s, CPU "
			     "producers) > %d cores: they take turns",
			     c->e->host_ranks, spin, st->rx ? ", receiving threads" : "",
			     c->e->cores);
		eb_head_break(h);
	}
	if (c->mem == EB_MEM_DEVICE && !c->staged && !st->rx &&
	    strncmp(c->e->prov, "shm", 3) == 0 && (st->inits & ~(1u << INIT_A2AV))) {
		eb_head_fact(h, "note",
			     "shm copies GPU memory at the target, in the thread that progresses "
			     "it: here the proxy thread, between its posts (--rx-threads gives the "
			     "copies a thread of their own)");
		eb_head_break(h);
	}
	if ((st->inits & (1u << INIT_GPU)) && c->e->boot->local_size > eb_mem_gpu_count() &&
	    !eb_mem_mps_running()) {
		/* The proxy benchmark measured it: without MPS a producers' kernel holds the GPU
		 * while the other processes' copies wait. */
		eb_head_fact(h, "note",
			     "ranks here share a GPU: run one rank per GPU, or start MPS "
			     "(nvidia-cuda-mps-control -d) so their kernels and copies overlap");
		eb_head_break(h);
	}
	eb_head_fact(h, NULL,
		     "p50/p99 = the slowest rank's; fastest = the fastest rank's p50; "
		     "sel GB/s = selections x bytes / p50; wire GB/s = bytes to other ranks / p50 "
		     "(per rank, mean); x a2av = p50 / the all-to-all-v's");
	eb_head_break(h);
	eb_rec_int(d, "ranks", c->nranks);
	eb_rec_str(d, "launcher", launcher(c));
	eb_rec_str(d, "preset", mo->preset == MOE_PREFILL ? "prefill" : "decode");
	eb_rec_int(d, "tokens", mo->tokens);
	eb_rec_int(d, "hidden", mo->hidden);
	eb_rec_int(d, "topk", mo->topk);
	eb_rec_int(d, "experts", mo->experts);
	eb_rec_str(d, "dtype", mo->dtype == MOE_FP8 ? "fp8" : "bf16");
	eb_rec_int(d, "token_bytes", (long long)st->plan.tok_bytes);
	eb_rec_int(d, "output_bytes", (long long)st->plan.out_bytes);
	eb_rec_str(d, "routing", route);
	eb_rec_int(d, "seed", mo->seed);
	eb_rec_str(d, "provider", c->e->prov);
	eb_rec_str(d, "mem", eb_mem_kind_name(c->mem));
	eb_rec_str(d, "registration", c->staged ? "staged" : eb_reg_path_name(c->path));
	eb_rec_int(d, "proxy_threads", st->nq);
	eb_rec_int(d, "rx_threads", st->npx - st->nq);
	eb_rec_int(d, "chunk", (long long)c->chunk);
	eb_rec_int(d, "piece", (long long)eb_moe_piece_bytes(c));
	for (s = 0; s < c->nranks; s++)
		for (t = 0; t < c->nranks; t++) {
			struct eb_rec *it = eb_rec_item(d, "traffic");

			if (it == NULL)
				return;
			eb_rec_int(it, "src", s);
			eb_rec_int(it, "dst", t);
			eb_rec_int(it, "tokens",
				   rt->count[(size_t)s * (size_t)c->nranks + (size_t)t]);
			eb_rec_int(it, "selections",
				   rt->nsel[(size_t)s * (size_t)c->nranks + (size_t)t]);
		}
}
