#include "pairs.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "core/arrays.h"
#include "core/clock.h"

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

void eb_pairs_close(struct eb_pairs *p)
{
	int k;

	if (p == NULL)
		return;
	for (k = 0; k < NX; k++)
		eb_xfer_fini(&p->x[k]);
	eb_region_close(&p->src);
	eb_region_close(&p->dst);
	eb_region_close(&p->ctl_reg);
	free(p->block);
	free(p);
}

static int open_bufs(struct eb_pairs *p, enum eb_mem_kind mem)
{
	struct eb_engine *e = p->e;
	int nch = e->nchan, rc;
	struct eb_mem m = {.kind = EB_MEM_HOST, .gpu = -1, .dmabuf_fd = -1};

	int k;

	p->block = eb_arrays(&p->ctl, (size_t)nch * 2, sizeof(*p->ctl), &p->grid,
			     (size_t)nch * (size_t)p->n * (size_t)p->n, sizeof(*p->grid), NULL);
	rc = p->block != NULL ? EB_OK : EB_ENOMEM;
	for (k = 0; k < NX && rc == EB_OK; k++) /* the data writes keep a window in flight */
		rc = eb_xfer_init(&p->x[k], e, k == DATA ? p->window : 1);
	if (rc == EB_OK)
		rc = eb_region_alloc(&p->src, e, mem, p->size + 64, EB_USE_SOURCE, 0,
				     "the pairs source");
	if (rc == EB_OK)
		rc = eb_region_alloc(&p->dst, e, mem, p->size + 64, EB_USE_TARGET, 1,
				     "the pairs target");
	m.ptr = p->ctl;
	m.len = (size_t)nch * 2 * sizeof(*p->ctl);
	return rc == EB_OK ? eb_region_reg(&p->ctl_reg, e, &m, EB_USE_SEND | EB_USE_RECV, 0) : rc;
}

int eb_pairs_open(struct eb_pairs **out, struct eb_engine *e, size_t size, enum eb_mem_kind mem,
		  size_t chunk, int window, const int *members, int nmembers, int rounds)
{
	struct eb_pairs *p = calloc(1, sizeof(*p));
	int k, rc;

	if (p == NULL)
		return EB_ENOMEM;
	*p = (struct eb_pairs){.e = e,
			       .size = size,
			       .chunk = chunk,
			       .window = window,
			       .members = members,
			       .nmembers = members ? nmembers : e->size,
			       .rounds = rounds,
			       .n = e->size,
			       .me = members ? -1 : e->rank};
	for (k = 0; members != NULL && k < nmembers; k++)
		p->me = members[k] == e->rank ? k : p->me;
	rc = open_bufs(p, mem);
	if (rc != EB_OK) {
		eb_pairs_close(p);
		return rc;
	}
	*out = p;
	return EB_OK;
}

int eb_pairs_plan(const struct eb_pairs *p, int row, struct eb_pt *pts, long warm, long iters,
		  long lat_iters)
{
	int turns = p->rounds * p->e->nchan * 2;

	if (row > 0 || turns == 0)
		return 0;
	pts[0] = (struct eb_pt){.size = p->size,
				.var = 0,
				.step = 0,
				.turns = turns,
				.warmup = warm,
				.iters = iters,
				.name = "write bandwidth"};
	pts[1] = (struct eb_pt){.size = 8,
				.var = 0,
				.step = 1,
				.turns = turns,
				.iters = lat_iters,
				.name = "8-byte write + ack"};
	return 2;
}

/* Turn t is (round, channel, direction): in each the pairs of the round write one way; the
 * lower rank of a pair writes in the first direction. */
/* The cells of the benchmark that runs them: the first member of its state. */
static struct eb_pairs *of(const struct eb_ctx *c)
{
	return *(struct eb_pairs **)c->priv;
}

void eb_pairs_turn(struct eb_ctx *c)
{
	struct eb_pairs *p = of(c);
	int t = c->turn, nch = p->e->nchan, d = t % 2, round = t / 2 / nch, peer = -1;

	p->chan = t / 2 % nch;
	if (p->me >= 0)
		peer = eb_pairs_partner(p->nmembers, round, p->me);
	if (peer >= 0 && p->members != NULL)
		peer = p->members[peer];
	snprintf(c->label, sizeof(c->label), "round %d of %d (%s)", round + 1, p->rounds,
		 c->pt->name);
	c->peer = peer;
	c->role = peer < 0			 ? EB_ROLE_IDLE
		  : (d == 0) == (c->rank < peer) ? EB_ROLE_INIT
						 : EB_ROLE_TARGET;
}

/* The bytes a point writes: [0, size) for bandwidth, the 8 after them for latency. */
static size_t at(const struct eb_ctx *c, const struct eb_pairs *p)
{
	return c->pt->step == 0 ? 0 : p->size;
}

int eb_pairs_prepare(struct eb_ctx *c)
{
	struct eb_pairs *p = of(c);
	size_t len = c->pt->size;

	if (c->role == EB_ROLE_INIT) {
		struct eb_pattern pat = {(uint32_t)c->rank, (uint32_t)c->peer, c->epoch};

		return eb_mem_fill(&p->src.mem, at(c, p), len, &pat, at(c, p));
	}
	if (c->role == EB_ROLE_TARGET) {
		struct eb_pattern pat = {(uint32_t)c->peer, (uint32_t)c->rank, EB_EPOCH_POISON};

		/* Every chunk of the last phase is here; none of the next left (a barrier
		 * follows): count from what arrived. */
		p->w = (struct eb_imm_wait){.peer = c->peer,
					    .chan = p->chan,
					    .count = eb_imm_count(p->e, c->peer, p->chan)};
		p->chunks = eb_xfer_nchunks(len, c->pt->step == 0 ? p->chunk : 8);
		return eb_mem_fill(&p->dst.mem, at(c, p), len, &pat, at(c, p));
	}
	return EB_OK;
}

/* The initiator: one write, then the target's acknowledgement; the target: every chunk of
 * it arrived, then the acknowledgement. */
int eb_pairs_iter(struct eb_ctx *c, long i)
{
	struct eb_pairs *p = of(c);
	uint64_t deadline = eb_deadline(c->o->fab.timeout_s);
	int ch = p->chan, rc;

	if (c->role == EB_ROLE_INIT) {
		const struct eb_rkey *k = eb_region_key(&p->dst, c->peer, ch);
		struct eb_xfer *x = c->pt->step == 0 ? &p->x[DATA] : &p->x[SMALL],
			       *both[2] = {&p->x[RX], x};

		eb_xfer_recv(&p->x[RX], ch, c->peer, &p->ctl[2 * ch + 1], 8, 8,
			     eb_region_desc(&p->ctl_reg, ch));
		eb_xfer_write(x, ch, c->peer, (char *)p->src.mem.ptr + at(c, p), c->pt->size,
			      c->pt->step == 0 ? p->chunk : 8, eb_region_desc(&p->src, ch),
			      k->addr + at(c, p), k->key, EB_IMM(c->rank, 0));
		return eb_xfer_wait(both, 2, deadline);
	}
	if (c->role != EB_ROLE_TARGET)
		return EB_OK;
	p->w.count += p->chunks;
	rc = eb_xfer_wait_imm(p->e, NULL, 0, &p->w, 1, deadline);
	if (rc == EB_OK) {
		struct eb_xfer *x = &p->x[TX];

		p->ctl[2 * ch] = (uint64_t)p->seq++;
		eb_xfer_send(x, ch, c->peer, &p->ctl[2 * ch], 8, 8,
			     eb_region_desc(&p->ctl_reg, ch));
		rc = eb_xfer_wait(&x, 1, deadline);
	}
	return rc;
}

/* The target checks every byte of the last write. */
int eb_pairs_verify(struct eb_ctx *c, uint64_t *wrong)
{
	struct eb_pairs *p = of(c);
	struct eb_pattern pat = {(uint32_t)c->peer, (uint32_t)c->rank, c->epoch};

	if (c->role == EB_ROLE_TARGET)
		*wrong += eb_mem_check(&p->dst.mem, at(c, p), c->pt->size, &pat, at(c, p), NULL);
	return EB_OK;
}

int eb_pairs_collect(struct eb_pairs *p, const struct eb_meas *m)
{
	int g, t, r, nch = p->e->nchan;

	for (g = 0; g < m->ngroups; g++) {
		const struct eb_group *x = &m->groups[g];
		int ch = x->turn / 2 % nch;
		struct eb_cell *cell =
		    &p->grid[((size_t)ch * (size_t)p->n + (size_t)x->rank) * (size_t)p->n +
			     (size_t)x->peer];

		cell->src = x->rank;
		cell->dst = x->peer;
		cell->chan = ch;
		cell->measured = 1;
		cell->wrong += m->rep[(size_t)x->turn * (size_t)p->n + (size_t)x->peer].wrong;
		if (m->pt->step == 0) {
			cell->gbps = x->st.mean > 0 ? 8.0 * (double)p->size / x->st.mean / 1e9 : 0;
			cell->steal = m->steal;
		} else
			cell->lat_us = x->st.mean * 1e6;
	}
	/* A turn lasts as long as its slowest pair. */
	for (t = 0; t < m->turns; t++) {
		double slowest = 0;

		for (r = 0; r < p->n; r++)
			if (m->rep[(size_t)t * (size_t)p->n + (size_t)r].secs > slowest)
				slowest = m->rep[(size_t)t * (size_t)p->n + (size_t)r].secs;
		p->cells_s += slowest;
	}
	return EB_OK;
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

			if (a == b || !c->measured)
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
