/* efabench matrix: which link is slow? For every ordered pair of ranks and every channel (NIC),
 * the write bandwidth at one size and the 8-byte write latency, scheduled as a round-robin
 * tournament of disjoint pairs (pairs.h). Rank 0 prints a matrix per channel, the minimum and
 * median per host and per NIC, and the cells below --flag x their channel's typical rate or below
 * --expect Gbps. */
#include "harness/bench.h"
#include "bench/pairs/pairs.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

struct mopts {
	uint64_t size;
	long iters, warm, lat_iters;
	double flag, expect;
	int dry_run;
	int per; /* enum per */
};

/* Who measures: every rank when they share a host, else one per host; or every rank with its
 * GPU's nearest NICs. */
enum per { PER_AUTO, PER_HOST, PER_GPU };

struct host {
	char name[64];
};

struct mctx {
	const struct eb_opts *o;
	const struct mopts *mo;
	struct eb_engine *e;
	int n, nch, rounds;
	int *mem, nm;	 /* the ranks that measure (all, or the first of each host) */
	double *typical; /* [chan]: eb_pairs_typical of the gathered grid (rank 0) */
	struct host *hosts;
	double elapsed_s, cell_s; /* rank 0: the whole schedule; the sum of its phases' cells */
	const char **host, *nics[64];
	int *partner;
};

/* What the report layer prints: names resolved, the schedule spelled out for --dry-run. */
static int view(struct mctx *m, const struct eb_cell *grid, struct eb_matrix_view *v)
{
	int r, k;

	m->host = calloc((size_t)m->n, sizeof(*m->host));
	if (m->mo->dry_run)
		m->partner = calloc((size_t)m->rounds * (size_t)m->nm, sizeof(*m->partner));
	if (m->host == NULL || (m->mo->dry_run && m->partner == NULL))
		return EB_ENOMEM;
	for (r = 0; r < m->n; r++)
		m->host[r] = m->hosts[r].name;
	for (k = 0; k < m->nch && k < 64; k++)
		m->nics[k] = m->e->chan[k].nic.domain;
	for (r = 0; m->partner != NULL && r < m->rounds; r++)
		for (k = 0; k < m->nm; k++)
			m->partner[r * m->nm + k] = eb_pairs_partner(m->nm, r, k);
	*v = (struct eb_matrix_view){
	    .n = m->n,
	    .nm = m->nm,
	    .mem = m->mem,
	    .host = m->host,
	    .nch = m->nch < 64 ? m->nch : 64,
	    .nics = m->nics,
	    .rounds = m->rounds,
	    .partner = m->partner,
	    .warm = m->mo->warm,
	    .iters = m->mo->iters,
	    .lat_iters = m->mo->lat_iters,
	    .size = m->mo->size,
	    .flag = m->mo->flag,
	    .expect = m->mo->expect,
	    .per = m->mo->per == PER_GPU ? "gpu"
		   : m->nm < m->n	 ? "host"
					 : "rank",
	    .grid = grid,
	    .typical = m->typical,
	    .elapsed_s = m->elapsed_s,
	    .cells_s = m->cell_s,
	    .csv = m->o->csv,
	    .json = m->o->json,
	};
	return EB_OK;
}

/* Every rank (--per gpu, or all on one host), or the first rank of each host. Every rank
 * decides alike from the gathered host names. */
static int choose_members(struct mctx *m)
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
		if (m->e->rank == 0)
			eb_err("--per host: all %d ranks run on %s, so no two hosts make a pair "
			       "(--per "
			       "gpu measures every rank)",
			       m->n, m->hosts[0].name);
		return EB_EINVAL;
	}
	return EB_OK;
}

static int matrix_drive(struct eb_ctx *c)
{
	struct eb_boot *boot = c->boot;
	const struct eb_opts *o = c->o;
	const struct mopts *mo = o->own;
	struct mctx m = {.o = o, .mo = mo, .n = boot->size};
	struct host me;
	struct eb_pairs *pairs = NULL;
	struct eb_cell *grid = NULL, *mine = NULL;
	struct eb_pairs_plan plan;
	struct eb_matrix_view v;
	uint64_t wrong = 0;
	int rc, i;

	if (boot->size < 2) {
		eb_err("matrix pairs ranks: it needs 2 or more (got %d)", boot->size);
		return EB_EINVAL;
	}
	m.e = c->e;
	m.nch = c->e->nchan;
	m.hosts = calloc((size_t)m.n, sizeof(*m.hosts));
	m.mem = calloc((size_t)m.n, sizeof(*m.mem));
	if (m.hosts == NULL || m.mem == NULL) {
		rc = EB_ENOMEM;
		goto free_tables;
	}
	eb_host_name(me.name, sizeof(me.name));
	rc = eb_boot_allgather(boot, &me, m.hosts, sizeof(me), eb_engine_deadline(c->e));
	if (rc == EB_OK)
		rc = choose_members(&m);
	if (rc != EB_OK)
		goto free_tables;
	m.rounds = eb_pairs_rounds(m.nm);
	if (boot->rank == 0) {
		rc = view(&m, NULL, &v);
		if (rc != EB_OK)
			goto free_tables;
		eb_matrix_plan(&v);
	}
	if (mo->dry_run)
		goto free_tables;
	rc = eb_pairs_open(&pairs, c->e, (size_t)mo->size, (enum eb_mem_kind)o->mem, c->chunk,
			   c->window);
	plan = (struct eb_pairs_plan){.rounds = m.rounds,
				      .warm = mo->warm,
				      .iters = mo->iters,
				      .lat_iters = mo->lat_iters,
				      .timeout_s = o->fab.timeout_s,
				      .name = o->quiet ? NULL : "matrix",
				      .members = m.mem,
				      .nmembers = m.nm};
	if (rc == EB_OK)
		rc = eb_pairs_run(pairs, &plan, &mine, &m.elapsed_s);
	if (rc == EB_OK)
		rc = eb_pairs_gather(pairs, &plan, mine, &grid, &m.cell_s);
	if (rc == EB_OK && boot->rank == 0 &&
	    (m.typical = calloc((size_t)m.nch, sizeof(*m.typical))) == NULL)
		rc = EB_ENOMEM;
	if (rc == EB_OK && boot->rank == 0) {
		for (i = 0; i < m.nch; i++)
			m.typical[i] = eb_pairs_typical(grid, m.n, i);
		v.grid = grid;
		v.typical = m.typical;
		v.elapsed_s = m.elapsed_s;
		v.cells_s = m.cell_s;
		rc = eb_matrix_report(&v, &wrong);
		if (rc == EB_OK && wrong > 0)
			rc = EB_EVERIFY;
	}
	/* Every rank leaves with rank 0's verdict. */
	if (rc == EB_OK || rc == EB_EVERIFY) {
		int64_t worst;

		if (eb_boot_allreduce(boot, rc, EB_MIN, &worst, eb_engine_deadline(c->e)) == EB_OK)
			rc = (int)worst;
	}
	free(m.typical);
	free(grid);
	free(mine);
	if (rc != EB_OK)
		eb_engine_abandon(c->e);
	eb_pairs_close(pairs);
free_tables:
	free(m.partner);
	free(m.host);
	free(m.mem);
	free(m.hosts);
	return rc;
}

static int matrix_finish(struct eb_opts *o, void *own)
{
	if (((const struct mopts *)own)->per == PER_GPU)
		o->want_gpu = "--per gpu";
	if (o->staged || o->mem == EB_MEM_PINNED) {
		eb_err("matrix moves host or device memory (--mem host|device)");
		return EB_EINVAL;
	}
	return EB_OK;
}

static void matrix_defaults(void *own)
{
	struct mopts *mo = own;

	mo->size = 64ull << 20;
	mo->iters = 5;
	mo->warm = 1;
	mo->lat_iters = 100;
	mo->flag = 0.9;
}

#define M(field) EB_AT(struct mopts, field)

static const char *const pers[] = {"auto", "host", "gpu", NULL};

static const struct eb_opt matrix_opts[] = {
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

static const struct eb_bench matrix_bench = {.drive = matrix_drive, .uses = EB_USES_FABRIC};

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
	"  acknowledged write",
    .groups = EB_G_FABRIC | EB_G_RANKS | EB_G_OUTPUT | EB_G_MEM,
    EB_CMD_OPTS(matrix_opts, struct mopts, matrix_defaults, matrix_finish),
    .bench = &matrix_bench,
};
