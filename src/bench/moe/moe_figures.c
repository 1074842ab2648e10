/* efabench moe's figures: a row's record from every rank's p50/p99 and the bytes the plan
 * makes each rank move (selections, through the fabric, as DeepEP counts them), and the
 * writes its proxy threads counted. */
#include "moe_figures.h"
#include "moe_cross.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const eb_moe_init_name[] = {"gpu", "cpu", "a2av", "mpi"};
const char *const eb_moe_op_name[] = {"dispatch", "combine", "pair"};

/* Bytes per rank and op (means over ranks) that each figure divides by the time. */
struct totals {
	double sel[2];	       /* selections x bytes per token (or output) */
	double fabric[2][2];   /* [producers, baselines]: through the fabric, every leg */
	double rdma[2];	       /* DeepEP's: a token once per destination host, its own counted */
	double nvl[2];	       /* DeepEP's: the tokens a rank ends up with, once each */
	double a2av_writes[2]; /* the a2av's writes: one per leg and destination with bytes */
};

/* Tokens of rank r counted once per host holding one of their experts. */
static int64_t host_copies(const struct mstate *st, int r)
{
	int64_t n = 0;
	int h;

	for (h = 0; h < st->hosts.n; h++)
		n += st->plan.hcount[(size_t)r * (size_t)st->hosts.n + (size_t)h];
	return n;
}

static void totals_of(const struct mstate *st, int n, struct totals *tt)
{
	const struct eb_route *rt = &st->rt;
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t by[3];
	int64_t items[3];
	int r, d, op, leg;

	memset(tt, 0, sizeof(*tt));
	for (r = 0; r < n; r++)
		for (op = 0; op < 2; op++) {
			double unit = (double)(op ? pl->out_bytes : pl->tok_bytes) / n;

			for (d = 0; d < n; d++) {
				tt->sel[op] +=
				    (double)rt->nsel[(size_t)r * (size_t)n + (size_t)d] * unit;
				tt->nvl[op] +=
				    (double)rt->count[(size_t)d * (size_t)n + (size_t)r] * unit;
				for (leg = 0; leg < pl->nlegs && d != r; leg++)
					tt->a2av_writes[op] +=
					    (eb_moe_flow(pl, rt, op, leg, r, d).bytes > 0) /
					    (double)n;
			}
			tt->rdma[op] += (double)host_copies(st, r) * unit;
			eb_moe_moved(pl, rt, op, r, by, items);
			tt->fabric[0][op] += (double)by[EB_PATH_FABRIC] / n;
			tt->fabric[1][op] += (double)(by[EB_PATH_FABRIC] + by[EB_PATH_INTRA]) / n;
		}
}

/* A figure's bytes for the point's op (pair: both). */
static double of_op(const double v[2], int op)
{
	return op == OP_PAIR ? v[0] + v[1] : v[op];
}

/* A report's statistics, or zeros where none. */
static struct eb_stats of_rep(const struct eb_meas *m, int i)
{
	return i >= 0 ? m->rep[i].st : (struct eb_stats){0};
}

/* Bytes over the slowest rank's p50, in GB/s. */
static void rate(struct eb_rec *r, const char *key, double bytes, double t)
{
	eb_rec_num(r, key, t > 0 ? bytes / t / 1e9 : 0.0);
}

void eb_moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		   struct eb_rec *r)
{
	struct mstate *st = c->priv;
	struct totals tt;
	struct eb_stats slow = of_rep(m, m->slow), fast = of_rep(m, m->fast);
	const struct eb_over *leg = &m->span[MOE_SPAN_CROSS];
	double writes = 0, *base = st->base, t = slow.p50, cross = 0;
	double cross_t = leg->slow >= 0 ? m->rep[leg->slow].span[MOE_SPAN_CROSS].p50 : 0;
	int k, op = m->pt->step, init = m->pt->var, crossed = eb_moe_cross_timed(st, op);

	totals_of(st, c->nranks, &tt);
	for (k = 0; k < m->ngroups; k++)
		writes += m->rep[m->groups[k].rank].own[0] / c->nranks;
	for (k = 0; k < c->nranks && crossed; k++)
		cross += eb_moe_cross_bytes(st, op, k) / c->nranks;
	if (init == INIT_A2AV)
		base[op] = t;
	eb_rec_str(r, "initiator", eb_moe_init_name[init]);
	eb_rec_str(r, "phase", eb_moe_op_name[op]);
	eb_rec_num(r, "p50_us", t * 1e6);
	eb_rec_num(r, "p99_us", slow.p99 * 1e6);
	eb_rec_num(r, "each_max_p50_us", m->each.p50 * 1e6);
	eb_rec_num(r, "each_max_p99_us", m->each.p99 * 1e6);
	eb_rec_num(r, "fastest_p50_us", fast.p50 * 1e6);
	eb_rec_int(r, "fastest_rank", m->fast >= 0 ? m->fast % c->nranks : 0);
	eb_rec_int(r, "slowest_rank", m->slow >= 0 ? m->slow % c->nranks : 0);
	rate(r, "sel_GBps", of_op(tt.sel, op), t);
	rate(r, "fabric_GBps", of_op(tt.fabric[!INIT_PROXIED(init)], op), t);
	rate(r, "rdma_GBps", of_op(tt.rdma, op), t);
	rate(r, "nvl_GBps", of_op(tt.nvl, op), t);
	/* Same-host stores against the copy engines moving the same bytes (producers only). */
	eb_rec_num_or_null(r, "intra_GBps", t > 0 ? of_op(st->ce_bytes, op) / t / 1e9 : 0,
			   st->have_ce && INIT_PROXIED(init));
	eb_rec_num_or_null(r, "vs_ce", t > 0 ? of_op(st->ce_s, op) / t : 0,
			   st->have_ce && INIT_PROXIED(init));
	/* The leg between hosts alone: the slowest rank's median in it. */
	eb_rec_num_or_null(r, "cross_p50_us", cross_t * 1e6, crossed && cross_t > 0);
	eb_rec_num_or_null(r, "cross_GBps", cross_t > 0 ? cross / cross_t / 1e9 : 0,
			   crossed && cross_t > 0);
	eb_rec_num_or_null(r, "a2av_p50_us", base[op] * 1e6, base[op] > 0);
	eb_rec_num_or_null(r, "vs_a2av", base[op] > 0 ? t / base[op] : 0, base[op] > 0);
	/* The producers' writes as their proxy threads counted them; the a2av's by construction;
	 * MPI's are its own (null). */
	if (init == INIT_A2AV)
		writes = of_op(tt.a2av_writes, op);
	eb_rec_num_or_null(r, "writes", writes, init != INIT_MPI);
	eb_rec_num_or_null(r, "mwrites_per_s", t > 0 ? writes / t / 1e6 : 0.0, init != INIT_MPI);
	eb_rec_int(r, "producers",
		   !INIT_PROXIED(init) ? 0
		   : init == INIT_GPU  ? st->blocks
				       : eb_moe_cpu_producers(st));
	eb_rec_int(r, "wrong", (long long)m->wrong);
	for (k = 0; k < m->ngroups; k++) {
		struct eb_rec *it = eb_rec_item(r, "ranks");

		if (it == NULL)
			break;
		eb_rec_int(it, "rank", m->groups[k].rank);
		eb_rec_num(it, "p50_us", m->groups[k].st.p50 * 1e6);
		eb_rec_num(it, "p99_us", m->groups[k].st.p99 * 1e6);
		eb_rec_num_or_null(it, "cross_p50_us",
				   m->rep[m->groups[k].rank].span[MOE_SPAN_CROSS].p50 * 1e6,
				   crossed);
	}
}

const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS] = {
    {"Initiator", "initiator", 9, 0, 1},
    {"Phase", "phase", 8, 0, 1},
    {"p50(us)", "p50_us", 10, 1, 0},
    {"p99(us)", "p99_us", 10, 1, 0},
    {"max/it", "each_max_p50_us", 10, 1, 0},
    {"sel GB/s", "sel_GBps", 9, 2, 0},
    {"fabric GB/s", "fabric_GBps", 11, 2, 0},
    {"RDMA GB/s", "rdma_GBps", 9, 2, 0},
    {"NVL GB/s", "nvl_GBps", 9, 2, 0},
    {"cross GB/s", "cross_GBps", 10, 2, 0},
    {"x a2av", "vs_a2av", 7, 2, 0},
    {"Mwr/s", "mwrites_per_s", 6, 3, 0},
    {"#wrong", "wrong", 6, 0, 0},
};
