/* efabench matrix: which link is slow? For every ordered pair of ranks and every channel (NIC),
 * the write bandwidth at one size and the 8-byte write latency, scheduled as a round-robin
 * tournament of disjoint pairs (pairs.h). Rank 0 prints a matrix per channel, the minimum and
 * median per host and per NIC, and the cells below --flag x their channel's typical rate or below
 * --expect Gbps. */
#include "harness.h"
#include "pairs.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"
#include "../report/doc.h"
#include "../report/table.h"

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
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The plan, for --dry-run and the header. */
static void print_plan(const struct mctx *m)
{
	int r, k;

	printf("# efabench matrix: %d ranks measure (of %d), %d channel%s on NICs:", m->nm, m->n,
	       m->nch, m->nch == 1 ? "" : "s");
	for (k = 0; k < m->nch; k++)
		printf(" %s", m->e->chan[k].nic.domain);
	printf("\n# %d rounds of disjoint pairs x %d channels x 2 directions; per cell %ld warm-up "
	       "+ %ld timed writes of %llu bytes, then %ld 8-byte writes; every write "
	       "acknowledged, the last one checked byte for byte\n",
	       m->rounds, m->nch, m->mo->warm, m->mo->iters, (unsigned long long)m->mo->size,
	       m->mo->lat_iters);
	for (r = 0; r < m->rounds && m->mo->dry_run; r++) {
		printf("# round %d:", r);
		for (k = 0; k < m->nm; k++) {
			int p = eb_pairs_partner(m->nm, r, k);

			if (p > k)
				printf(" %d<->%d", m->mem[k], m->mem[p]);
			else if (p < 0)
				printf(" (%d sits out)", m->mem[k]);
		}
		printf("\n");
	}
	fflush(stdout);
}

struct stat2 {
	double min, med;
};

static const struct eb_cell *cell_of(const struct mctx *m, const struct eb_cell *g, int ch, int a,
				     int b)
{
	return &g[((size_t)ch * (size_t)m->n + (size_t)a) * (size_t)m->n + (size_t)b];
}

/* Min and median of the cells where rank is source or target (rank < 0: all) on chan. */
static struct stat2 stats(const struct mctx *m, const struct eb_cell *g, int chan, int rank)
{
	double *v = malloc(sizeof(*v) * (size_t)m->n * (size_t)m->n);
	struct stat2 s = {0, 0};
	int ia, ib, k = 0;

	if (v == NULL)
		return s;
	for (ia = 0; ia < m->nm; ia++)
		for (ib = 0; ib < m->nm; ib++) {
			int a = m->mem[ia], b = m->mem[ib];

			if (a != b && (rank < 0 || a == rank || b == rank))
				v[k++] = cell_of(m, g, chan, a, b)->gbps;
		}
	s.med = median(v, k);
	s.min = k > 0 ? v[0] : 0;
	free(v);
	return s;
}

static int flagged(const struct mctx *m, const struct eb_cell *c, double med)
{
	return c->gbps < m->mo->flag * med || (m->mo->expect > 0 && c->gbps < m->mo->expect);
}

static void print_grid(const struct mctx *m, const struct eb_cell *g, int ch, int lat)
{
	struct eb_table t = {0};
	char head[16];
	int ia, ib;

	printf("#\n## channel %d (%s): %s, rows = source, columns = target\n", ch,
	       m->e->chan[ch].nic.domain, lat ? "8-byte write + ack latency (us)" : "write Gbps");
	eb_table_col(&t, "src\\dst", 7, 0);
	for (ib = 0; ib < m->nm; ib++) {
		snprintf(head, sizeof(head), "%d", m->mem[ib]);
		eb_table_col(&t, head, 8, 0);
	}
	eb_table_head(&t);
	for (ia = 0; ia < m->nm; ia++) {
		int a = m->mem[ia];

		eb_table_cell(&t, "%d", a);
		for (ib = 0; ib < m->nm; ib++) {
			int b = m->mem[ib];
			const struct eb_cell *c = cell_of(m, g, ch, a, b);

			if (a == b)
				eb_table_cell(&t, "-");
			else
				eb_table_cell(&t, "%.2f", lat ? c->lat_us : c->gbps);
		}
		eb_table_row(&t);
	}
}

static void print_summary(const struct mctx *m, const struct eb_cell *g)
{
	struct eb_table t = {0};
	int i, ch, ia, ib, nflag = 0;

	printf("#\n## per host: min / median write Gbps of the cells it is in, per channel\n");
	eb_table_col(&t, "rank", 4, 0);
	eb_table_col(&t, "host", 12, 1);
	for (ch = 0; ch < m->nch; ch++) {
		char head[96];

		snprintf(head, sizeof(head), "ch%d min", ch);
		eb_table_col(&t, head, 8, 0);
		snprintf(head, sizeof(head), "ch%d median", ch);
		eb_table_col(&t, head, 8, 0);
	}
	eb_table_head(&t);
	for (i = -1; i < m->nm; i++) {
		int r = i < 0 ? -1 : m->mem[i];

		eb_table_cell(&t, r < 0 ? "all" : "%d", r);
		eb_table_cell(&t, "%s", r < 0 ? "(per NIC)" : m->hosts[r].name);
		for (ch = 0; ch < m->nch; ch++) {
			struct stat2 s = stats(m, g, ch, r);

			eb_table_cell(&t, "%.2f", s.min);
			eb_table_cell(&t, "%.2f", s.med);
		}
		eb_table_row(&t);
	}
	printf("#\n## flagged: below %.2f x the channel's typical rate (the median over ranks of "
	       "each rank's fastest cell)%s\n",
	       m->mo->flag, m->mo->expect > 0 ? " or below --expect" : "");
	for (ch = 0; ch < m->nch; ch++) {
		double med = m->typical[ch];

		for (ia = 0; ia < m->nm; ia++)
			for (ib = 0; ib < m->nm; ib++) {
				int a = m->mem[ia], b = m->mem[ib];
				const struct eb_cell *c = cell_of(m, g, ch, a, b);

				if (a == b || !flagged(m, c, med))
					continue;
				printf(
				    "# %d (%s) -> %d (%s) on %s: %.2f Gbps = %.2f x typical %.2f\n",
				    a, m->hosts[a].name, b, m->hosts[b].name,
				    m->e->chan[ch].nic.domain, c->gbps, med > 0 ? c->gbps / med : 0,
				    med);
				nflag++;
			}
	}
	if (nflag == 0)
		printf("# none\n");
	printf("#\n# %d rounds in %.2f s; the slowest cell of each phase summed: %.2f s (the "
	       "schedule's overhead: %.2fx)\n",
	       m->rounds, m->elapsed_s, m->cell_s, m->cell_s > 0 ? m->elapsed_s / m->cell_s : 0);
}

static int write_files(const struct mctx *m, const struct eb_cell *g)
{
	struct eb_doc d = {0};
	int ch, ia, ib, rc;

	eb_rec_str(&d.head, "bench", "matrix");
	eb_rec_int(&d.head, "ranks", m->n);
	for (ia = 0; ia < m->n; ia++)
		eb_rec_strs(&d.head, "hosts", m->hosts[ia].name);
	eb_rec_int(&d.head, "measuring_ranks", m->nm); /* the cells' src and dst say which */
	eb_rec_str(&d.head, "per", m->mo->per == PER_GPU ? "gpu" : m->nm < m->n ? "host" : "rank");
	for (ch = 0; ch < m->nch; ch++)
		eb_rec_strs(&d.head, "channel_nics", m->e->chan[ch].nic.domain);
	eb_rec_int(&d.head, "size", (long long)m->mo->size);
	eb_rec_int(&d.head, "iters", m->mo->iters);
	eb_rec_int(&d.head, "lat_iters", m->mo->lat_iters);
	eb_rec_num(&d.head, "flag", m->mo->flag);
	eb_rec_num_or_null(&d.head, "expect_gbps", m->mo->expect, m->mo->expect > 0);
	eb_rec_int(&d.head, "rounds", m->rounds);
	eb_rec_num(&d.head, "elapsed_s", m->elapsed_s);
	eb_rec_num(&d.head, "cells_s", m->cell_s);
	for (ch = 0; ch < m->nch; ch++) {
		double med = m->typical[ch];

		for (ia = 0; ia < m->nm; ia++)
			for (ib = 0; ib < m->nm; ib++) {
				int a = m->mem[ia], b = m->mem[ib];
				const struct eb_cell *c = cell_of(m, g, ch, a, b);
				struct eb_rec *x;

				if (a == b || (x = eb_doc_add(&d)) == NULL)
					continue;
				eb_rec_int(x, "src", a);
				eb_rec_int(x, "dst", b);
				eb_rec_str(x, "src_host", m->hosts[a].name);
				eb_rec_str(x, "dst_host", m->hosts[b].name);
				eb_rec_int(x, "chan", ch);
				eb_rec_str(x, "nic", m->e->chan[ch].nic.domain);
				eb_rec_num(x, "gbps", c->gbps);
				eb_rec_num(x, "lat_us", c->lat_us);
				eb_rec_num(x, "typical_gbps", med);
				eb_rec_num(x, "of_typical", med > 0 ? c->gbps / med : 0);
				eb_rec_bool(x, "flagged", flagged(m, c, med));
				eb_rec_int(x, "wrong", (long long)c->wrong);
				eb_rec_int(x, "measured", c->status > 0 ? c->status : 0);
			}
	}
	rc = eb_doc_write(&d, m->o->csv, m->o->json);
	eb_doc_free(&d);
	return rc;
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

static int matrix_rank(struct eb_boot *boot, const struct eb_opts *o)
{
	const struct mopts *mo = o->own;
	struct mctx m = {.o = o, .mo = mo, .n = boot->size};
	struct host me;
	struct eb_pairs *pairs = NULL;
	struct eb_cell *grid = NULL, *mine = NULL;
	struct eb_pairs_plan plan;
	struct eb_fabric_opts fab;
	struct eb_engine e;
	char pci[16];
	size_t chunk;
	uint64_t wrong = 0;
	int window, rc, i;

	if (boot->size < 2) {
		eb_err("matrix pairs ranks: it needs 2 or more (got %d)", boot->size);
		return EB_EINVAL;
	}
	fab = o->fab;
	if (o->mem == EB_MEM_DEVICE || mo->per == PER_GPU) { /* each rank: its GPU, NICs near it */
		int n = eb_mem_gpu_count(),
		    gpu = o->gpu >= 0 ? o->gpu : boot->local_rank % (n ? n : 1);

		rc = gpu < n ? eb_mem_use_gpu(gpu) : EB_EINVAL;
		if (rc == EB_OK && eb_mem_gpu_pci(gpu, pci, sizeof(pci)) == EB_OK)
			fab.near_pci = pci;
		if (rc != EB_OK) {
			eb_err("GPU %d: CUDA sees %d", gpu, n);
			return rc;
		}
	}
	rc = eb_engine_open(&e, boot, &fab);
	if (rc != EB_OK)
		return rc;
	m.e = &e;
	m.nch = e.nchan;
	m.hosts = calloc((size_t)m.n, sizeof(*m.hosts));
	m.mem = calloc((size_t)m.n, sizeof(*m.mem));
	if (m.hosts == NULL || m.mem == NULL) {
		rc = EB_ENOMEM;
		goto free_tables;
	}
	eb_host_name(me.name, sizeof(me.name));
	rc = eb_boot_allgather(boot, &me, m.hosts, sizeof(me), eb_engine_deadline(&e));
	if (rc == EB_OK)
		rc = choose_members(&m);
	if (rc != EB_OK)
		goto free_tables;
	m.rounds = eb_pairs_rounds(m.nm);
	if (boot->rank == 0)
		print_plan(&m);
	if (mo->dry_run)
		goto free_tables;
	eb_harness_tune(o, e.prov, &chunk, &window);
	rc = eb_pairs_open(&pairs, &e, (size_t)mo->size, (enum eb_mem_kind)o->mem, chunk, window);
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
		for (i = 0; i < m.nch; i++) {
			print_grid(&m, grid, i, 0);
			print_grid(&m, grid, i, 1);
		}
		print_summary(&m, grid);
		for (i = 0; i < m.nch * m.n * m.n; i++)
			wrong += grid[i].wrong;
		eb_table_footer(wrong);
		rc = write_files(&m, grid);
		if (rc == EB_OK && wrong > 0)
			rc = EB_EVERIFY;
	}
	/* Every rank leaves with rank 0's verdict. */
	if (rc == EB_OK || rc == EB_EVERIFY) {
		int64_t worst;

		if (eb_boot_allreduce(boot, rc, EB_MIN, &worst, eb_engine_deadline(&e)) == EB_OK)
			rc = (int)worst;
	}
	free(m.typical);
	free(grid);
	free(mine);
	if (rc != EB_OK)
		eb_engine_abandon(&e);
	eb_pairs_close(pairs);
free_tables:
	free(m.mem);
	free(m.hosts);
	eb_engine_close(&e);
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
    .rank = matrix_rank,
};
