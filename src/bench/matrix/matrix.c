/* efabench matrix: which link is slow? For every ordered pair of ranks and every channel (NIC),
 * the write bandwidth at one size and the 8-byte write latency, scheduled as a round-robin
 * tournament of disjoint pairs (pairs.h). Rank 0 prints a matrix per channel, the minimum and
 * median per host and per NIC, and the cells below --flag x their channel's typical rate or below
 * --expect Gbps. */
#include "matrix.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

/* Every rank (--per gpu, or all on one host), or the first rank of each host. Every rank
 * decides alike from the gathered host names. */
static int choose_members(const struct eb_ctx *c, struct matrix_state *m)
{
	int r, q, hosts = 0;

	for (r = 0; r < m->n; r++) {
		for (q = 0; q < r && strcmp(m->hosts[q].name, m->hosts[r].name) != 0; q++)
			;
		hosts += q == r;
	}
	m->nm = 0;
	for (r = 0; r < m->n; r++) {
		int first = 1;

		for (q = 0; q < r && first; q++)
			first = strcmp(m->hosts[q].name, m->hosts[r].name) != 0;
		if (m->mo->per == PER_GPU || (m->mo->per == PER_AUTO && hosts == 1) || first)
			m->mem[m->nm++] = r;
	}
	if (m->nm < 2) {
		if (c->rank == 0)
			eb_err("--per host: all %d ranks run on %s, so no two hosts make a pair "
			       "(--per gpu measures every rank)",
			       m->n, m->hosts[0].name);
		return EB_EINVAL;
	}
	return EB_OK;
}

static int matrix_setup(struct eb_ctx *c)
{
	const struct matrix_opts *mo = c->own;
	struct matrix_state *m = c->priv;
	struct host me;
	int rc;

	*m = (struct matrix_state){.mo = mo, .n = c->nranks, .nch = c->e->nchan};
	if (c->nranks < 2) {
		eb_err("matrix pairs ranks: it needs 2 or more (got %d)", c->nranks);
		return EB_EINVAL;
	}
	m->hosts = calloc((size_t)m->n, sizeof(*m->hosts));
	m->mem = calloc((size_t)m->n, sizeof(*m->mem));
	if (m->hosts == NULL || m->mem == NULL)
		return EB_ENOMEM;
	eb_host_name(me.name, sizeof(me.name));
	rc = eb_boot_allgather(c->boot, &me, m->hosts, sizeof(me), eb_engine_deadline(c->e));
	if (rc == EB_OK)
		rc = choose_members(c, m);
	if (rc != EB_OK)
		return rc;
	m->rounds = eb_pairs_rounds(m->nm);
	if (mo->dry_run)
		return EB_OK;
	return eb_pairs_open(&m->pairs, c->e, (size_t)mo->size, (enum eb_mem_kind)c->o->mem,
			     c->chunk, c->window, m->mem, m->nm, m->rounds);
}

static void matrix_teardown(struct eb_ctx *c)
{
	struct matrix_state *m = c->priv;

	eb_pairs_close(m->pairs);
	free(m->mem);
	free(m->hosts);
}

static int matrix_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	struct matrix_state *m = c->priv;

	(void)max;
	if (m->pairs == NULL)
		return 0;
	m->t0 = eb_now_ns();
	return eb_pairs_plan(m->pairs, row, pts, m->mo->warm, m->mo->iters, m->mo->lat_iters);
}

/* Rank 0: the cells into the grid; their records come once the typical rates are known. */
static void matrix_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			  struct eb_rec *r)
{
	struct matrix_state *st = c->priv;

	eb_pairs_collect(st->pairs, m);
	st->elapsed_s = (double)(eb_now_ns() - st->t0) * 1e-9;
	(void)s;
	(void)r;
}

/* The plan: who measures, the schedule, each round's pairs on a dry run. */
static void matrix_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct matrix_state *m = c->priv;
	const struct matrix_opts *mo = m->mo;
	const char *nics[64], *hosts[256];
	int r, k, nch = m->nch < 64 ? m->nch : 64;

	for (k = 0; k < nch; k++)
		nics[k] = c->e->chan[k].nic.domain;
	for (r = 0; r < m->n && r < 256; r++)
		hosts[r] = m->hosts[r].name;
	eb_head_fact(&s->head, NULL, "efabench matrix: %s", c->o->cmd->summary);
	eb_fact_break(s);
	eb_fact_int(s, "ranks", "ranks", m->n);
	eb_fact_int(s, "measuring_ranks", "measuring", m->nm);
	eb_fact_str(s, "per", "per", mo->per == PER_GPU ? "gpu" : m->nm < m->n ? "host" : "rank");
	eb_fact_strs(s, "channel_nics", "channels on NICs", nics, nch);
	eb_fact_strs(s, "hosts", NULL, hosts, r);
	eb_fact_break(s);
	eb_fact_int(s, "rounds", "rounds of disjoint pairs", m->rounds);
	eb_fact_size(s, "size", "bytes per write", mo->size);
	eb_fact_int(s, "iters", "timed writes per cell", mo->iters);
	eb_fact_int(s, "warmup", "warm-up", mo->warm);
	eb_fact_int(s, "lat_iters", "8-byte writes per cell", mo->lat_iters);
	eb_fact_num(s, "flag", "flag below", mo->flag, "%.2f x typical");
	if (mo->expect > 0)
		eb_fact_num(s, "expect_gbps", "or below", mo->expect, "%.2f Gbps");
	else
		eb_fact_null(s, "expect_gbps", NULL, NULL);
	eb_fact_say(s, NULL,
		    "%d rounds of disjoint pairs x %d channels x 2 directions; every "
		    "write acknowledged, the last one checked byte for byte",
		    m->rounds, m->nch);
	for (r = 0; mo->dry_run && r < m->rounds; r++) {
		char line[512];
		size_t used = 0;

		for (k = 0; k < m->nm && used < sizeof(line); k++) {
			int p = eb_pairs_partner(m->nm, r, k);

			if (p > k)
				used += (size_t)snprintf(line + used, sizeof(line) - used,
							 " %d<->%d", m->mem[k], m->mem[p]);
			else if (p < 0)
				used += (size_t)snprintf(line + used, sizeof(line) - used,
							 " (%d sits out)", m->mem[k]);
		}
		eb_head_fact(&s->head, NULL, "round %d:%s", r, line);
		eb_head_break(&s->head);
	}
	s->plan_only = mo->dry_run;
}

static int matrix_finish(struct eb_opts *o, void *own)
{
	if (((const struct matrix_opts *)own)->per == PER_GPU)
		o->want_gpu = "--per gpu";
	if (o->staged || o->mem == EB_MEM_PINNED) {
		eb_err("matrix moves host or device memory (--mem host|device)");
		return EB_EINVAL;
	}
	return EB_OK;
}

static void matrix_defaults(void *own)
{
	struct matrix_opts *mo = own;

	mo->size = 64ull << 20;
	mo->iters = 5;
	mo->warm = 1;
	mo->lat_iters = 100;
	mo->flag = 0.9;
}

#define M(field) EB_AT(struct matrix_opts, field)

static const char *const pers[] = {"auto", "host", "gpu", NULL};

static const struct eb_opt matrix_options[] = {
    {"size", 's', "S", eb_opt_size, M(size), 8, (double)(1ull << 40),
     "bytes per write of the bandwidth cells (default 64M)"},
    {"iters", 'n', "N", eb_opt_lng, M(iters), 1, 1e6, "timed writes per cell (default 5)"},
    {"warmup", 'w', "N", eb_opt_lng, M(warm), 0, 1e6, "untimed writes per cell (default 1)"},
    {"lat-iters", 0, "N", eb_opt_lng, M(lat_iters), 1, 1e7,
     "8-byte write + ack round trips per cell (default 100)"},
    {"flag", 0, "F", eb_opt_dbl, M(flag), 0, 1,
     "flag cells below F x their channel's typical rate (default 0.9)"},
    {"expect", 0, "G", eb_opt_dbl, M(expect), 0, 1e9, "also flag cells below G Gbps"},
    {"dry-run", 0, NULL, eb_opt_flag, M(dry_run), 0, 0,
     "print the schedule (rounds, pairs, channels) and stop"},
    {"per", 0, "WHO", eb_opt_choice, M(per), 0, 0,
     "who measures: host (the first rank of each host), gpu (every rank, each with its GPU "
     "and the NICs nearest it) or auto (default: host when ranks span hosts, else every rank)",
     pers},
};

static const struct eb_bench matrix_bench = {
    .priv_size = sizeof(struct matrix_state),
    .uses = EB_USES_FABRIC,
    .plan = matrix_plan,
    .setup = matrix_setup,
    .teardown = matrix_teardown,
    .turn = eb_pairs_turn,
    .prepare = eb_pairs_prepare,
    .iter = eb_pairs_iter,
    .verify = eb_pairs_verify,
    .facts = matrix_facts,
    .record = matrix_record,
    .close = eb_matrix_close,
};

const struct eb_cmd eb_cmd_matrix = {
    .name = "matrix",
    .summary = "every ordered pair of ranks x every NIC: which link is slow",
    .help =
	"  for every ordered pair of ranks (one per host, or every rank with --per gpu)\n"
	"  and every channel, the write bandwidth at one size and the 8-byte write + ack latency,\n"
	"  in a round-robin tournament of disjoint pairs (N - 1 rounds for N ranks, N\n"
	"  when N is odd), so the time grows with N, not N^2. Per channel a matrix (rows\n"
	"  source, columns target), the min / median per host and per NIC, and the cells\n"
	"  below --flag x their channel's typical rate (the median over ranks of each\n"
	"  rank's fastest cell, so one slow NIC does not drag it down), or below --expect\n"
	"  Gbps; every cell in CSV and JSON. Gbps = 8 * size / mean seconds per\n"
	"  acknowledged write\n" EB_HELP_STEAL,
    .groups = EB_G_FABRIC | EB_G_RANKS | EB_G_OUTPUT | EB_G_MEM,
    EB_CMD_OPTS(matrix_options, struct matrix_opts, matrix_defaults, matrix_finish),
    .bench = &matrix_bench,
    .report = EB_REPORT_NAMED,
};
