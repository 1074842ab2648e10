#include "pairs.h"
#include "harness/loop.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "efabench/xfer.h"
#include "core/clock.h"
#include "core/log.h"
#include "report/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eb_pairs_rounds(int n)
{
	return n < 2 ? 0 : n % 2 == 0 ? n - 1 : n;
}

/* The circle method: with m (even) players, player m - 1 stays put and the others rotate; in
 * round r, i < m - 1 meets (r - i) mod (m - 1), or the fixed player when that is itself. */
int eb_pairs_partner(int n, int round, int rank)
{
	int m = n % 2 == 0 ? n : n + 1, k = m - 1, j, i;

	if (rank == m - 1) {
		for (i = 0; i < k; i++)
			if (((round - i) % k + k) % k == i)
				return i < n ? i : -1;
		return -1;
	}
	j = ((round - rank) % k + k) % k;
	j = j == rank ? m - 1 : j;
	return j < n ? j : -1; /* n odd: the fixed player is the one sitting out */
}

int eb_pairs_run(struct eb_pairs *p, const struct eb_pairs_plan *plan, struct eb_cell **mine,
		 double *elapsed_s)
{
	struct eb_engine *e = p->e;
	int r, ch, d, me = e->rank, nch = e->nchan, rc = EB_OK;
	/* This rank's place among the members (-1: it sits out), and how many there are. */
	int nm = plan->members != NULL ? plan->nmembers : e->size, j = plan->members ? -1 : me;
	struct eb_cell *cells = calloc((size_t)plan->rounds * (size_t)nch * 2, sizeof(*cells));
	uint64_t start = eb_now_ns();
	struct eb_progress prog;

	if (cells == NULL) {
		eb_err("out of memory for %d rounds of cells", plan->rounds);
		return EB_ENOMEM;
	}
	eb_progress_start(&prog, plan->name != NULL && me == 0, plan->name, plan->rounds);
	for (r = 0; plan->members != NULL && r < nm; r++)
		j = plan->members[r] == me ? r : j;
	for (r = 0; r < plan->rounds && rc == EB_OK; r++) {
		int peer = j < 0 ? -1 : eb_pairs_partner(nm, r, j);
		char step[32];

		if (peer >= 0 && plan->members != NULL)
			peer = plan->members[peer];
		snprintf(step, sizeof(step), "round %d of %d", r + 1, plan->rounds);
		eb_progress_step(&prog, step, 1);

		for (ch = 0; ch < nch && rc == EB_OK; ch++)
			for (d = 0; d < 2 && rc == EB_OK; d++) {
				struct eb_cell *cell = &cells[(r * nch + ch) * 2 + d];

				cell->status = 1; /* not taken part in */
				/* Phases start together: a pair never shares a link with the
				 * previous phase's stragglers. */
				rc = eb_boot_barrier(e->boot, eb_engine_deadline(e));
				if (rc != EB_OK || peer < 0)
					continue;
				rc = eb_pairs_cell(p, peer, (d == 0) == (me < peer), ch, plan->warm,
						   plan->iters, plan->lat_iters, plan->timeout_s,
						   cell);
			}
	}
	eb_progress_clear(&prog);
	if (rc == EB_OK)
		rc = eb_boot_barrier(e->boot, eb_engine_deadline(e));
	*elapsed_s = (double)(eb_now_ns() - start) * 1e-9;
	*mine = cells;
	return rc;
}

int eb_pairs_gather(struct eb_pairs *p, const struct eb_pairs_plan *plan,
		    const struct eb_cell *mine, struct eb_cell **out, double *phases_s)
{
	size_t n = (size_t)p->e->size, nch = (size_t)p->e->nchan;
	size_t per = (size_t)plan->rounds * nch * 2, i;
	struct eb_cell *all = calloc(per * n, sizeof(*all));
	struct eb_cell *grid = calloc(nch * n * n, sizeof(*grid));
	double *slowest = calloc(per, sizeof(*slowest));
	int rc = EB_ENOMEM;

	*phases_s = 0;
	if (all == NULL || grid == NULL || slowest == NULL) {
		eb_err("out of memory gathering %zu cells", per * n);
		goto free_all;
	}
	rc = eb_boot_allgather(p->e->boot, mine, all, per * sizeof(*all), eb_engine_deadline(p->e));
	for (i = 0; rc == EB_OK && i < per * n; i++) {
		const struct eb_cell *c = &all[i];
		struct eb_cell *g;

		if (c->status == 1)
			continue;
		/* A phase lasts as long as its slowest pair. */
		if (c->secs > slowest[i % per])
			slowest[i % per] = c->secs;
		g = &grid[((size_t)c->chan * n + (size_t)c->src) * n + (size_t)c->dst];
		if ((size_t)c->src == i / per) { /* the initiator's figures */
			uint64_t w = g->wrong;
			int32_t times = g->status > 0 ? g->status : 0;

			*g = *c;
			g->wrong = w;
			g->status = c->status == EB_OK ? times + 1 : c->status;
		} else {
			g->wrong = c->wrong; /* the target counted them */
		}
	}
	for (i = 0; rc == EB_OK && i < per; i++)
		*phases_s += slowest[i];
	if (rc == EB_OK) {
		*out = grid;
		grid = NULL;
	}
free_all:
	free(slowest);
	free(all);
	free(grid);
	return rc;
}

static int cmp_gbps(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double eb_pairs_typical(const struct eb_cell *grid, int n, int chan)
{
	double *best = calloc((size_t)n, sizeof(*best)), t = 0;
	int a, b, k = 0;

	if (best == NULL)
		return 0;
	for (a = 0; a < n; a++)
		for (b = 0; b < n; b++) {
			const struct eb_cell *c =
			    &grid[((size_t)chan * (size_t)n + (size_t)a) * (size_t)n + (size_t)b];

			if (a == b || c->status <= 0)
				continue;
			best[a] = c->gbps > best[a] ? c->gbps : best[a];
			best[b] = c->gbps > best[b] ? c->gbps : best[b];
		}
	for (a = 0; a < n; a++)
		if (best[a] > 0)
			best[k++] = best[a];
	if (k > 0) {
		qsort(best, (size_t)k, sizeof(*best), cmp_gbps);
		t = k % 2 ? best[k / 2] : (best[k / 2 - 1] + best[k / 2]) / 2;
	}
	free(best);
	return t;
}
