/* The copy engines' rate for the bytes each rank stores into same-host peers' GPU memory:
 * what the GPU's DMA engines reach for those bytes, beside what the producers' stores reach.
 * Every rank copies its phase's same-host bytes to each peer at once (a stream per peer),
 * starting at a barrier; the slowest rank's p50 over the repetitions is the copy's time. */
#include "moe_state.h"
#include "efabench/stats.h"
#include "efabench/status.h"
#include "core/clock.h"

#include <stdlib.h>
#include <string.h>

enum { CE_WARM = 3, CE_REPS = 20 };

/* Whether some host has two ranks storing into each other's GPU memory (alike on all ranks). */
static int wanted(const struct eb_ctx *c, const struct mstate *st)
{
	return c->mem == EB_MEM_DEVICE && st->plan.intra && st->hosts.most > 1;
}

/* This rank's same-host bytes to each mapped peer in a phase (peers in rank order). */
static int lengths(const struct eb_ctx *c, const struct mstate *st, int ph, char **to,
		   uint64_t *len)
{
	int d, leg, n = 0;

	for (d = 0; d < c->nranks; d++) {
		if (st->peers.gpu[d] == NULL || d == c->rank)
			continue;
		to[n] = st->peers.gpu[d];
		len[n] = 0;
		for (leg = 0; leg < st->plan.nlegs; leg++)
			len[n] += eb_moe_flow(&st->plan, &st->rt, ph, leg, c->rank, d).bytes;
		n++;
	}
	return n;
}

/* One phase: the slowest rank's p50 in seconds. */
static int time_phase(struct eb_ctx *c, struct mstate *st, struct eb_mem_ce *ce, char **to,
		      const uint64_t *len, double *slowest)
{
	double t[CE_REPS], *all = calloc((size_t)c->nranks, sizeof(*all));
	struct eb_stats s;
	int i, r, rc = all != NULL ? EB_OK : EB_ENOMEM;

	for (i = 0; i < CE_WARM + CE_REPS && rc == EB_OK; i++) {
		uint64_t t0;

		rc = eb_boot_barrier(c->boot, eb_engine_deadline(c->e));
		t0 = eb_now_ns();
		if (rc == EB_OK && ce != NULL)
			rc = eb_mem_ce_copy(ce, to, eb_payload_at(&st->dst, 0), len);
		if (i >= CE_WARM)
			t[i - CE_WARM] = (double)(eb_now_ns() - t0) * 1e-9;
	}
	if (rc == EB_OK) {
		eb_stats_compute(t, CE_REPS, &s);
		rc = eb_boot_allgather(c->boot, &s.p50, all, sizeof(s.p50),
				       eb_engine_deadline(c->e));
	}
	for (r = 0, *slowest = 0; rc == EB_OK && r < c->nranks; r++)
		*slowest = all[r] > *slowest ? all[r] : *slowest;
	free(all);
	return rc;
}

int eb_moe_ce(struct eb_ctx *c, struct mstate *st)
{
	char **to = calloc((size_t)c->nranks, sizeof(*to));
	uint64_t *len = calloc((size_t)c->nranks, sizeof(*len)), by[3];
	struct eb_mem_ce *ce = NULL;
	int ph, r, n = 0, rc = to != NULL && len != NULL ? EB_OK : EB_ENOMEM;
	int64_t items[3];

	if (rc != EB_OK || !wanted(c, st))
		goto free_arrays;
	n = lengths(c, st, 0, to, len);
	if (n > 0)
		rc = eb_mem_ce_open(&ce, n);
	for (ph = 0; ph < 2 && rc == EB_OK; ph++) {
		lengths(c, st, ph, to, len);
		rc = time_phase(c, st, ce, to, len, &st->ce_s[ph]);
		for (r = 0, st->ce_bytes[ph] = 0; r < c->nranks; r++) {
			eb_moe_moved(&st->plan, &st->rt, ph, r, by, items);
			st->ce_bytes[ph] += (double)by[EB_PATH_INTRA] / c->nranks;
		}
	}
	st->have_ce = rc == EB_OK;
	eb_mem_ce_close(ce);
free_arrays:
	free(to);
	free(len);
	return rc;
}
