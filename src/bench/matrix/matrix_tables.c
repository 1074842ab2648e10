/* efabench matrix's figures (rank 0): every cell as a record, a grid per channel (rows source,
 * columns target) of write Gbps and of 8-byte latency, the min and median per host and per
 * NIC, the flagged cells. */
#include "matrix.h"
#include "efabench/status.h"
#include "harness/steal.h"

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

static const struct eb_cell *cell_of(const struct matrix_state *m, int ch, int a, int b)
{
	return &m->pairs->grid[((size_t)ch * (size_t)m->n + (size_t)a) * (size_t)m->n + (size_t)b];
}

/* Min and median of the cells where rank is source or target (rank < 0: all) on chan. */
static void spread(const struct matrix_state *m, int chan, int rank, double *min, double *med)
{
	double *v = malloc(sizeof(*v) * (size_t)m->n * (size_t)m->n);
	int ia, ib, k = 0;

	*min = *med = 0;
	if (v == NULL)
		return;
	for (ia = 0; ia < m->nm; ia++)
		for (ib = 0; ib < m->nm; ib++) {
			int a = m->mem[ia], b = m->mem[ib];

			if (a != b && (rank < 0 || a == rank || b == rank))
				v[k++] = cell_of(m, chan, a, b)->gbps;
		}
	*med = median(v, k);
	*min = k > 0 ? v[0] : 0;
	free(v);
}

static int flagged(const struct matrix_opts *mo, const struct eb_cell *c, double typical)
{
	return c->gbps < mo->flag * typical || (mo->expect > 0 && c->gbps < mo->expect);
}

/* A record per measured cell, in (channel, source, target) order. */
static void records(const struct eb_ctx *c, const struct matrix_state *m, const double *typical,
		    struct eb_sheet *s)
{
	int ch, ia, ib;

	for (ch = 0; ch < m->nch; ch++)
		for (ia = 0; ia < m->nm; ia++)
			for (ib = 0; ib < m->nm; ib++) {
				int a = m->mem[ia], b = m->mem[ib];
				const struct eb_cell *x = cell_of(m, ch, a, b);
				struct eb_rec *r;

				if (a == b || (r = eb_sheet_rec(s)) == NULL)
					continue;
				eb_rec_int(r, "src", a);
				eb_rec_int(r, "dst", b);
				eb_rec_str(r, "src_host", m->hosts[a].name);
				eb_rec_str(r, "dst_host", m->hosts[b].name);
				eb_rec_int(r, "chan", ch);
				eb_rec_str(r, "nic", c->e->chan[ch].nic.domain);
				eb_rec_num(r, "gbps", x->gbps);
				eb_rec_num(r, "lat_us", x->lat_us);
				eb_rec_num(r, "typical_gbps", typical[ch]);
				eb_rec_num(r, "of_typical",
					   typical[ch] > 0 ? x->gbps / typical[ch] : 0);
				eb_rec_bool(r, "flagged", flagged(m->mo, x, typical[ch]));
				eb_rec_int(r, "wrong", (long long)x->wrong);
				eb_rec_int(r, "measured", x->measured);
				eb_steal_record(&x->steal, r);
			}
}

static void grids(const struct eb_ctx *c, const struct matrix_state *m, struct eb_sheet *s)
{
	long long *who = malloc(sizeof(*who) * (size_t)m->nm);
	char title[160];
	int ch, k, lat;

	for (k = 0; who != NULL && k < m->nm; k++)
		who[k] = m->mem[k];
	for (ch = 0; who != NULL && ch < m->nch; ch++)
		for (lat = 0; lat < 2; lat++) {
			struct eb_grid g = {.title = title,
					    .corner = "src\\dst",
					    .row_key = "src",
					    .col_key = "dst",
					    .val_key = lat ? "lat_us" : "gbps",
					    .rows = who,
					    .cols = who,
					    .nrows = m->nm,
					    .ncols = m->nm,
					    .decimals = 2,
					    .where = "chan",
					    .is = ch};

			snprintf(title, sizeof(title),
				 "channel %d (%s): %s, rows = source, columns = target", ch,
				 c->e->chan[ch].nic.domain,
				 lat ? "8-byte write + ack latency (us)" : "write Gbps");
			eb_sheet_grid(s, &g);
		}
	free(who);
}

/* Per host: the min and median write Gbps of the cells it is in, per channel. */
static void per_host(const struct matrix_state *m, struct eb_sheet *s)
{
	struct eb_colspec cols[2 + 2 * 32];
	char heads[2 * 32][24];
	int ch, i, n = 2, nch = m->nch < 32 ? m->nch : 32;

	cols[0] = (struct eb_colspec){"rank", "rank", 4, 0, 0, NULL};
	cols[1] = (struct eb_colspec){"host", "host", 12, 0, 1, NULL};
	for (ch = 0; ch < nch; ch++) {
		snprintf(heads[2 * ch], sizeof(heads[0]), "ch%d min", ch);
		snprintf(heads[2 * ch + 1], sizeof(heads[0]), "ch%d median", ch);
		cols[n++] = (struct eb_colspec){heads[2 * ch], heads[2 * ch], 8, 2, 0, NULL};
		cols[n++] =
		    (struct eb_colspec){heads[2 * ch + 1], heads[2 * ch + 1], 8, 2, 0, NULL};
	}
	eb_sheet_table(s, "per host: min / median write Gbps of the cells it is in, per channel",
		       cols, n);
	for (i = -1; i < m->nm; i++) {
		int r = i < 0 ? -1 : m->mem[i];
		struct eb_rec row = {0};

		if (r < 0)
			eb_rec_str(&row, "rank", "all");
		else
			eb_rec_int(&row, "rank", r);
		eb_rec_str(&row, "host", r < 0 ? "(per NIC)" : m->hosts[r].name);
		for (ch = 0; ch < nch; ch++) {
			double min, med;

			spread(m, ch, r, &min, &med);
			eb_rec_num(&row, heads[2 * ch], min);
			eb_rec_num(&row, heads[2 * ch + 1], med);
		}
		eb_sheet_show(s, &row);
		eb_rec_free(&row);
	}
}

static void flag_lines(const struct eb_ctx *c, const struct matrix_state *m, const double *typical,
		       struct eb_sheet *s)
{
	int ch, ia, ib, n = 0;

	char title[160];

	snprintf(title, sizeof(title),
		 "flagged: below %.2f x the channel's typical rate (the median over ranks of "
		 "each rank's fastest cell)%s",
		 m->mo->flag, m->mo->expect > 0 ? " or below --expect" : "");
	eb_sheet_title(s, title);
	for (ch = 0; ch < m->nch; ch++)
		for (ia = 0; ia < m->nm; ia++)
			for (ib = 0; ib < m->nm; ib++) {
				int a = m->mem[ia], b = m->mem[ib];
				const struct eb_cell *x = cell_of(m, ch, a, b);

				if (a == b || !flagged(m->mo, x, typical[ch]))
					continue;
				eb_sheet_say(
				    s, "%d (%s) -> %d (%s) on %s: %.2f Gbps = %.2f x typical %.2f",
				    a, m->hosts[a].name, b, m->hosts[b].name,
				    c->e->chan[ch].nic.domain, x->gbps,
				    typical[ch] > 0 ? x->gbps / typical[ch] : 0, typical[ch]);
				n++;
			}
	if (n == 0)
		eb_sheet_say(s, "none");
}

int eb_matrix_close(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct matrix_state *m = c->priv;
	double *typical;
	int ch;

	if (m->pairs == NULL) /* a dry run */
		return EB_OK;
	typical = calloc((size_t)m->nch, sizeof(*typical));
	if (typical == NULL)
		return EB_ENOMEM;
	for (ch = 0; ch < m->nch; ch++)
		typical[ch] = eb_pairs_typical(m->pairs->grid, m->n, ch);
	records(c, m, typical, s);
	grids(c, m, s);
	per_host(m, s);
	flag_lines(c, m, typical, s);
	eb_sheet_say(s, NULL);
	eb_sheet_say(s,
		     "%d rounds in %.2f s; the slowest cell of each phase summed: %.2f s (the "
		     "schedule's overhead: %.2fx)",
		     m->rounds, m->elapsed_s, m->pairs->cells_s,
		     m->pairs->cells_s > 0 ? m->elapsed_s / m->pairs->cells_s : 0);
	eb_rec_num(&s->doc.head, "elapsed_s", m->elapsed_s);
	eb_rec_num(&s->doc.head, "cells_s", m->pairs->cells_s);
	free(typical);
	return EB_OK;
}
