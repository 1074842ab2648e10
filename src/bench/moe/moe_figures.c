/* efabench moe's figures: a row's record from every rank's p50/p99 and the bytes the plan
 * makes each rank move (selections, through the fabric, as DeepEP counts them), and the
 * writes its proxy threads counted. */
#include "moe_figures.h"
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
	double ncclep;	       /* NCCL EP's high-throughput count, the same in both ops */
};

/* One rank's own bytes per op, as the peers' tests count what the printing rank moved. */
struct own {
	double sel[2], rdma[2], nvl[2];
	double ncclep; /* (remote (token, host) pairs + tokens received) x 2 H */
};

/* A figure's bytes for the point's op (pair: both). */
static double of_op(const double v[2], int op)
{
	return op == OP_PAIR ? v[0] + v[1] : v[op];
}

/* Tokens of rank r counted once per host holding one of their experts. */
static int64_t host_copies(const struct mstate *st, int r)
{
	int64_t n = 0;
	int h;

	for (h = 0; h < st->hosts.n; h++)
		n += st->plan.hcount[(size_t)r * (size_t)st->hosts.n + (size_t)h];
	return n;
}

static struct own own_of(const struct mstate *st, int n, int r)
{
	const struct eb_route *rt = &st->rt;
	const struct eb_moe_plan *pl = &st->plan;
	int64_t got = 0,
		home = st->plan.hcount[(size_t)r * (size_t)st->hosts.n + (size_t)st->hosts.host[r]];
	struct own w = {0};
	int d, op;

	for (d = 0; d < n; d++)
		got += rt->count[(size_t)d * (size_t)n + (size_t)r];
	for (op = 0; op < 2; op++) {
		double unit = (double)(op ? pl->out_bytes : pl->tok_bytes);

		for (d = 0; d < n; d++)
			w.sel[op] += (double)rt->nsel[(size_t)r * (size_t)n + (size_t)d] * unit;
		w.rdma[op] = (double)host_copies(st, r) * unit;
		w.nvl[op] = (double)got * unit;
	}
	w.ncclep = (double)(host_copies(st, r) - home + got) * (double)pl->out_bytes;
	return w;
}

static void totals_of(const struct mstate *st, int n, struct totals *tt)
{
	const struct eb_route *rt = &st->rt;
	const struct eb_moe_plan *pl = &st->plan;
	uint64_t by[3];
	int64_t items[3];
	int r, d, op, leg;

	memset(tt, 0, sizeof(*tt));
	for (r = 0; r < n; r++) {
		struct own w = own_of(st, n, r);

		for (op = 0; op < 2; op++) {
			tt->sel[op] += w.sel[op] / n;
			tt->nvl[op] += w.nvl[op] / n;
			tt->rdma[op] += w.rdma[op] / n;
			for (d = 0; d < n; d++)
				for (leg = 0; leg < pl->nlegs && d != r; leg++)
					tt->a2av_writes[op] +=
					    (eb_moe_flow(pl, rt, op, leg, r, d).bytes > 0) /
					    (double)n;
			eb_moe_moved(pl, rt, op, r, by, items);
			tt->fabric[0][op] += (double)by[EB_PATH_FABRIC] / n;
			tt->fabric[1][op] += (double)(by[EB_PATH_FABRIC] + by[EB_PATH_INTRA]) / n;
		}
		tt->ncclep += w.ncclep / n;
	}
}

/* The bytes the peers' tests divide by the printing rank's own time: selections in ll and
 * rank modes (DeepEP's low-latency tests, every rank printing), a token once per host in
 * normal mode (DeepEP's normal tests, local rank 0 printing its "RDMA" figure). */
static double own_bytes(const struct mstate *st, const struct own *w, int op)
{
	return st->mo->mode == EB_MOE_NORMAL ? of_op(w->rdma, op) : of_op(w->sel, op);
}

/* A report's statistics, or zeros where none. */
static struct eb_stats of_rep(const struct eb_meas *m, int i)
{
	return i >= 0 ? m->rep[i].st : (struct eb_stats){0};
}

/* A number of the record, or null where it has no meaning for the row. */
struct fig {
	const char *key;
	double v;
	int has;
};

static void put_figs(struct eb_rec *r, const struct fig *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		eb_rec_num_or_null(r, f[i].key, f[i].v, f[i].has);
}

/* Bytes over a time, in GB/s (0 where there is no time). */
static double gbps(double bytes, double t)
{
	return t > 0 ? bytes / t / 1e9 : 0.0;
}

/* Rank group g's own figures: its own bytes over its own p50. */
static void own_item(const struct eb_ctx *c, const struct mstate *st, const struct eb_meas *m,
		     int g, struct eb_rec *it)
{
	struct own w = own_of(st, c->nranks, m->groups[g].rank % c->nranks);
	int op = m->pt->step;
	double t = m->groups[g].st.p50;
	const struct fig f[] = {
	    {"own_GBps", gbps(own_bytes(st, &w, op), t), 1},
	    {"own_sel_GBps", gbps(of_op(w.sel, op), t), 1},
	    {"own_rdma_GBps", gbps(of_op(w.rdma, op), t), 1},
	    {"own_nvl_GBps", gbps(of_op(w.nvl, op), t), 1},
	};

	put_figs(it, f, sizeof(f) / sizeof(f[0]));
}

/* The figure the peers' tests print, for the rank that prints it there (rank 0: local rank 0
 * of the first host in normal mode; in ll every rank prints, JSON has them all): its own
 * bytes over its own p50, or null where no group holds rank 0. */
static struct fig own_figure(const struct eb_ctx *c, const struct mstate *st,
			     const struct eb_meas *m)
{
	struct own w;
	int g;

	for (g = 0; g < m->ngroups && m->groups[g].rank % c->nranks != 0; g++)
		;
	if (g == m->ngroups)
		return (struct fig){"own_GBps", 0, 0};
	w = own_of(st, c->nranks, 0);
	return (struct fig){"own_GBps", gbps(own_bytes(st, &w, m->pt->step), m->groups[g].st.p50),
			    1};
}

/* Every rank group's own record under "ranks": its p50, p99, leg between hosts and own
 * figures. */
static void rank_items(const struct eb_ctx *c, const struct mstate *st, const struct eb_meas *m,
		       int crossed, struct eb_rec *r)
{
	int k;

	for (k = 0; k < m->ngroups; k++) {
		struct eb_rec *it = eb_rec_item(r, "ranks");
		const struct fig f[] = {
		    {"p50_us", m->groups[k].st.p50 * 1e6, 1},
		    {"p99_us", m->groups[k].st.p99 * 1e6, 1},
		    {"cross_p50_us", m->rep[m->groups[k].rank].span[MOE_SPAN_CROSS].p50 * 1e6,
		     crossed},
		};

		if (it == NULL)
			break;
		eb_rec_int(it, "rank", m->groups[k].rank);
		put_figs(it, f, sizeof(f) / sizeof(f[0]));
		own_item(c, st, m, k, it);
	}
}

void eb_moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		   struct eb_rec *r)
{
	struct mstate *st = c->priv;
	struct totals tt;
	struct eb_stats slow = of_rep(m, m->slow), fast = of_rep(m, m->fast);
	const struct eb_over *leg = &m->span[MOE_SPAN_CROSS];
	double writes = 0, *base = st->base, t = slow.p50, cross = 0;
	/* The leg's largest p50 over ranks: every rank's leg is over only when that one's is. */
	double cross_t = leg->slow >= 0 ? m->rep[leg->slow].span[MOE_SPAN_CROSS].p50 : 0;
	int k, op = m->pt->step, init = m->pt->var, crossed = st->crossed[op];
	/* Same-host stores against the copy engines moving the same bytes (producers only). */
	int ce = st->have_ce && INIT_PROXIED(init), leg_t = crossed && cross_t > 0;

	totals_of(st, c->nranks, &tt);
	for (k = 0; k < m->ngroups; k++)
		writes += m->rep[m->groups[k].rank].own[0] / c->nranks;
	for (k = 0; k < c->nranks && crossed; k++) /* pair: both ops' */
		cross += (double)(st->plan.cross[op != OP_COMBINE ? k : c->nranks + k] +
				  (op == OP_PAIR ? st->plan.cross[c->nranks + k] : 0)) /
			 c->nranks;
	if (init == INIT_A2AV)
		base[op] = t;
	/* The producers' writes as their proxy threads counted them; the a2av's by construction;
	 * MPI's are its own (null). */
	if (init == INIT_A2AV)
		writes = of_op(tt.a2av_writes, op);
	eb_rec_str(r, "initiator", eb_moe_init_name[init]);
	eb_rec_str(r, "phase", eb_moe_op_name[op]);
	{
		const struct fig head[] = {
		    {"p50_us", t * 1e6, 1},
		    {"p99_us", slow.p99 * 1e6, 1},
		    {"each_max_p50_us", m->each.p50 * 1e6, 1},
		    {"each_max_p99_us", m->each.p99 * 1e6, 1},
		    {"fastest_p50_us", fast.p50 * 1e6, 1},
		};

		put_figs(r, head, sizeof(head) / sizeof(head[0]));
	}
	eb_rec_int(r, "fastest_rank", m->fast >= 0 ? m->fast % c->nranks : 0);
	eb_rec_int(r, "slowest_rank", m->slow >= 0 ? m->slow % c->nranks : 0);
	{
		/* Producers count what crosses to other hosts; baselines send to same-host peers
		 * through the fabric too and count that as well. */
		const struct fig f[] = {
		    {"sel_GBps", gbps(of_op(tt.sel, op), t), 1},
		    {"fabric_GBps", gbps(of_op(tt.fabric[!INIT_PROXIED(init)], op), t), 1},
		};

		put_figs(r, f, sizeof(f) / sizeof(f[0]));
	}
	eb_rec_str(r, "fabric_counts", INIT_PROXIED(init) ? "other hosts" : "every other rank");
	{
		const struct fig f[] = {
		    {"rdma_GBps", gbps(of_op(tt.rdma, op), t), 1},
		    {"nvl_GBps", gbps(of_op(tt.nvl, op), t), 1},
		    {"ncclep_ht_GBps", gbps(op == OP_PAIR ? 2 * tt.ncclep : tt.ncclep, t), 1},
		    own_figure(c, st, m),
		    {"intra_GBps", gbps(of_op(st->ce_bytes, op), t), ce},
		    {"vs_ce", t > 0 ? of_op(st->ce_s, op) / t : 0, ce},
		    /* The leg between hosts alone: the slowest rank's median in it, and the
		     * largest of any rank's, which the leg's rate divides by. */
		    {"cross_p50_us",
		     m->slow >= 0 ? m->rep[m->slow].span[MOE_SPAN_CROSS].p50 * 1e6 : 0, leg_t},
		    {"cross_max_p50_us", cross_t * 1e6, leg_t},
		    {"cross_GBps", gbps(cross, cross_t), leg_t},
		    {"a2av_p50_us", base[op] * 1e6, base[op] > 0},
		    {"vs_a2av", base[op] > 0 ? t / base[op] : 0, base[op] > 0},
		    {"writes", writes, init != INIT_MPI},
		    {"mwrites_per_s", t > 0 ? writes / t / 1e6 : 0.0, init != INIT_MPI},
		};

		put_figs(r, f, sizeof(f) / sizeof(f[0]));
	}
	eb_rec_int(r, "producers",
		   !INIT_PROXIED(init) ? 0
		   : init == INIT_GPU  ? st->blocks
				       : st->cpu_producers);
	eb_rec_int(r, "wrong", (long long)m->wrong);
	rank_items(c, st, m, crossed, r);
}

/* clang-format off */
const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS] = {
    {"Initiator", "initiator", 9, 0, 1},
    {"Phase", "phase", 8, 0, 1},
    {"p50(us)", "p50_us", 10, 1, 0},
    {"p99(us)", "p99_us", 10, 1, 0},
    {"max/it", "each_max_p50_us", 10, 1, 0},
    {"sel GB/s", "sel_GBps", 9, 2, 0},
    {"own GB/s", "own_GBps", 9, 2, 0},
    {"fabric GB/s", "fabric_GBps", 11, 2, 0},
    {"RDMA GB/s", "rdma_GBps", 9, 2, 0},
    {"NVL GB/s", "nvl_GBps", 9, 2, 0},
    {"cross GB/s", "cross_GBps", 10, 2, 0},
    {"x a2av", "vs_a2av", 7, 2, 0},
    {"Mwr/s", "mwrites_per_s", 6, 3, 0},
    {"#wrong", "wrong", 6, 0, 0},
};
/* clang-format on */
