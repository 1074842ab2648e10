/* efabench matrix's output: the plan, a matrix per channel (rows source, columns target) of
 * write Gbps and of 8-byte latency, the min and median per host and per NIC, the flagged
 * cells, and every cell as a record. */
#include "matrix_view.h"
#include "doc.h"
#include "table.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>

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

void eb_matrix_plan(const struct eb_matrix_view *m)
{
	int r, k;

	printf("# efabench matrix: %d ranks measure (of %d), %d channel%s on NICs:", m->nm, m->n,
	       m->nch, m->nch == 1 ? "" : "s");
	for (k = 0; k < m->nch; k++)
		printf(" %s", m->nics[k]);
	printf("\n# %d rounds of disjoint pairs x %d channels x 2 directions; per cell %ld warm-up "
	       "+ %ld timed writes of %llu bytes, then %ld 8-byte writes; every write "
	       "acknowledged, the last one checked byte for byte\n",
	       m->rounds, m->nch, m->warm, m->iters, (unsigned long long)m->size, m->lat_iters);
	for (r = 0; r < m->rounds && m->partner != NULL; r++) {
		printf("# round %d:", r);
		for (k = 0; k < m->nm; k++) {
			int p = m->partner[r * m->nm + k];

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

static const struct eb_cell *cell_of(const struct eb_matrix_view *m, const struct eb_cell *g,
				     int ch, int a, int b)
{
	return &g[((size_t)ch * (size_t)m->n + (size_t)a) * (size_t)m->n + (size_t)b];
}

/* The cell after *k in (channel, source, target) order among the measuring ranks, the diagonal
 * skipped; *k starts at -1. NULL after the last. */
static const struct eb_cell *next_cell(const struct eb_matrix_view *m, const struct eb_cell *g,
				       long *k, int *ch, int *a, int *b)
{
	long per = (long)m->nm * m->nm;

	while (++*k < per * m->nch) {
		*ch = (int)(*k / per);
		*a = m->mem[*k % per / m->nm];
		*b = m->mem[*k % m->nm];
		if (*a != *b)
			return cell_of(m, g, *ch, *a, *b);
	}
	return NULL;
}

/* Min and median of the cells where rank is source or target (rank < 0: all) on chan. */
static struct stat2 stats(const struct eb_matrix_view *m, const struct eb_cell *g, int chan,
			  int rank)
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

static int flagged(const struct eb_matrix_view *m, const struct eb_cell *c, double med)
{
	return c->gbps < m->flag * med || (m->expect > 0 && c->gbps < m->expect);
}

static void print_grid(const struct eb_matrix_view *m, const struct eb_cell *g, int ch, int lat)
{
	struct eb_table t = {0};
	char head[16];
	int ia, ib;

	printf("#\n## channel %d (%s): %s, rows = source, columns = target\n", ch, m->nics[ch],
	       lat ? "8-byte write + ack latency (us)" : "write Gbps");
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

static void print_summary(const struct eb_matrix_view *m, const struct eb_cell *g)
{
	struct eb_table t = {0};
	const struct eb_cell *c;
	int i, ch, a, b, nflag = 0;
	long k;

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
		eb_table_cell(&t, "%s", r < 0 ? "(per NIC)" : m->host[r]);
		for (ch = 0; ch < m->nch; ch++) {
			struct stat2 s = stats(m, g, ch, r);

			eb_table_cell(&t, "%.2f", s.min);
			eb_table_cell(&t, "%.2f", s.med);
		}
		eb_table_row(&t);
	}
	printf("#\n## flagged: below %.2f x the channel's typical rate (the median over ranks of "
	       "each rank's fastest cell)%s\n",
	       m->flag, m->expect > 0 ? " or below --expect" : "");
	for (k = -1; (c = next_cell(m, g, &k, &ch, &a, &b)) != NULL;) {
		double med = m->typical[ch];

		if (!flagged(m, c, med))
			continue;
		printf("# %d (%s) -> %d (%s) on %s: %.2f Gbps = %.2f x typical %.2f\n", a,
		       m->host[a], b, m->host[b], m->nics[ch], c->gbps, med > 0 ? c->gbps / med : 0,
		       med);
		nflag++;
	}
	if (nflag == 0)
		printf("# none\n");
	printf("#\n# %d rounds in %.2f s; the slowest cell of each phase summed: %.2f s (the "
	       "schedule's overhead: %.2fx)\n",
	       m->rounds, m->elapsed_s, m->cells_s, m->cells_s > 0 ? m->elapsed_s / m->cells_s : 0);
}

static int write_files(const struct eb_matrix_view *m, const struct eb_cell *g)
{
	struct eb_doc d = {0};
	const struct eb_cell *c;
	int ch, ia, a, b, rc;
	long k;

	eb_rec_str(&d.head, "bench", "matrix");
	eb_rec_int(&d.head, "ranks", m->n);
	for (ia = 0; ia < m->n; ia++)
		eb_rec_strs(&d.head, "hosts", m->host[ia]);
	eb_rec_int(&d.head, "measuring_ranks", m->nm); /* the cells' src and dst say which */
	eb_rec_str(&d.head, "per", m->per);
	for (ch = 0; ch < m->nch; ch++)
		eb_rec_strs(&d.head, "channel_nics", m->nics[ch]);
	eb_rec_int(&d.head, "size", (long long)m->size);
	eb_rec_int(&d.head, "iters", m->iters);
	eb_rec_int(&d.head, "lat_iters", m->lat_iters);
	eb_rec_num(&d.head, "flag", m->flag);
	eb_rec_num_or_null(&d.head, "expect_gbps", m->expect, m->expect > 0);
	eb_rec_int(&d.head, "rounds", m->rounds);
	eb_rec_num(&d.head, "elapsed_s", m->elapsed_s);
	eb_rec_num(&d.head, "cells_s", m->cells_s);
	for (k = -1; (c = next_cell(m, g, &k, &ch, &a, &b)) != NULL;) {
		double med = m->typical[ch];
		struct eb_rec *x = eb_doc_add(&d);

		if (x == NULL)
			continue;
		eb_rec_int(x, "src", a);
		eb_rec_int(x, "dst", b);
		eb_rec_str(x, "src_host", m->host[a]);
		eb_rec_str(x, "dst_host", m->host[b]);
		eb_rec_int(x, "chan", ch);
		eb_rec_str(x, "nic", m->nics[ch]);
		eb_rec_num(x, "gbps", c->gbps);
		eb_rec_num(x, "lat_us", c->lat_us);
		eb_rec_num(x, "typical_gbps", med);
		eb_rec_num(x, "of_typical", med > 0 ? c->gbps / med : 0);
		eb_rec_bool(x, "flagged", flagged(m, c, med));
		eb_rec_int(x, "wrong", (long long)c->wrong);
		eb_rec_int(x, "measured", c->status > 0 ? c->status : 0);
	}
	rc = eb_doc_write(&d, m->csv, m->json);
	eb_doc_free(&d);
	return rc;
}

int eb_matrix_report(const struct eb_matrix_view *m, uint64_t *wrong)
{
	int i;

	for (i = 0; i < m->nch; i++) {
		print_grid(m, m->grid, i, 0);
		print_grid(m, m->grid, i, 1);
	}
	print_summary(m, m->grid);
	*wrong = 0;
	for (i = 0; i < m->nch * m->n * m->n; i++)
		*wrong += m->grid[i].wrong;
	eb_table_footer(*wrong);
	return write_files(m, m->grid);
}
