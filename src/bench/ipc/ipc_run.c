#include "ipc_run.h"

#ifdef EB_HAVE_CUDA
#include "harness/loop.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ipart {
	struct eb_stats st;
	uint64_t wrong;
	int32_t active, peer;
};

/* One phase as the one loop sees it: this rank's ops on a link set of a direction and shape. */
struct iphase {
	struct ipc_ctx *c;
	int dir, p, nops, filled;
	const struct ipc_shape *sh;
	uint64_t size;
	struct eb_ik_op ops[64];
};

/* Sources are filled once a phase; every start poisons the destinations again. */
static int i_prepare(void *arg)
{
	struct iphase *ph = arg;
	int rc = ipc_prepare(ph->c, ph->dir, ph->p, ph->size, !ph->filled);

	ph->filled = 1;
	return rc;
}

static int i_barrier(void *arg)
{
	return ipc_barrier(((struct iphase *)arg)->c);
}

/* n launches of every op, timed on the GPU (samples NULL: a warm-up, timed all the same). */
static int i_run(void *arg, long n, double *samples, long *got)
{
	struct iphase *ph = arg;
	struct ipc_ctx *c = ph->c;

	*got = 0;
	if (ph->nops == 0)
		return EB_OK;
	return eb_ik_run(c->timer, ph->ops, ph->nops, n, samples != NULL ? samples : c->samples,
			 got, c->o->fab.timeout_s, c->io->pairs == IPC_ALL ? ipc_barrier : NULL, c);
}

static int i_verify(void *arg, uint64_t *wrong)
{
	struct iphase *ph = arg;

	return ipc_verify(ph->c, ph->dir, ph->sh, ph->p, ph->size, wrong);
}

/* One phase: warm-up and the timed launches through the one loop, each verified; rank 0
 * gathers the groups. */
static int phase(struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
		 struct ipc_meas *m)
{
	struct iphase ph = {.c = c, .dir = dir, .p = p, .sh = sh, .size = size};
	struct eb_loop l = {.arg = &ph,
			    .prepare = i_prepare,
			    .align = i_barrier,
			    .run = i_run,
			    .settle = i_barrier,
			    .verify = i_verify,
			    .check = c->o->check};
	struct ipart me = {.peer = -1}, *all = NULL;
	int rc, r, a, b;
	long got = 0;

	c->epoch++;
	ph.nops = ipc_my_ops(c, dir, sh, p, size, ph.ops);
	rc = eb_loop_phase(&l, c->o->warmup, NULL, NULL, &me.wrong);
	if (rc == EB_OK)
		rc = eb_loop_phase(&l, c->o->iters, c->samples, &got, &me.wrong);
	if (rc != EB_OK)
		return rc;
	if (ph.nops > 0) {
		eb_stats_compute(c->samples, (size_t)got, &me.st);
		me.active = 1;
		if (c->io->pairs != IPC_ALL) {
			ipc_link_of(c, p, 0, &a, &b);
			me.peer = b;
		}
	}
	all = calloc((size_t)c->n, sizeof(*all));
	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->boot, &me, all, sizeof(me), ipc_deadline(c));
	if (rc != EB_OK || c->rank != 0)
		goto free_all;
	for (r = 0; r < c->n; r++) {
		m->wrong += all[r].wrong;
		if (all[r].active)
			m->groups[m->ngroups++] = (struct ipc_group){
			    .initiator = r, .peer = all[r].peer, .st = all[r].st};
	}
free_all:
	free(all);
	return rc;
}

/* Every phase of one (direction, shape, size); rank 0 fills m. */
static int measure(struct ipc_ctx *c, int dir, int shape, uint64_t size, struct ipc_meas *m)
{
	const struct ipc_shape *sh = &c->shapes[shape];
	int p, g, rc = EB_OK;
	double sum = 0;

	memset(m, 0, sizeof(*m));
	if (c->rank == 0) {
		m->groups = calloc((size_t)c->n * (size_t)c->n, sizeof(*m->groups));
		if (m->groups == NULL)
			return EB_ENOMEM;
	}
	eb_dbg("%s %s %llu bytes", ipc_dir_name(dir), sh->name, (unsigned long long)size);
	for (p = 0; p < ipc_nphases(c) && rc == EB_OK; p++)
		rc = phase(c, dir, sh, p, size, m);
	if (rc != EB_OK || c->rank != 0)
		return rc;
	for (g = 0; g < m->ngroups; g++)
		sum += m->groups[g].st.mean;
	m->valid = m->ngroups > 0;
	m->t = m->ngroups > 0 ? sum / m->ngroups : 0;
	m->bytes = (double)size * (c->io->pairs == IPC_ALL ? c->n - 1 : 1);
	m->gbs = m->t > 0 ? m->bytes / m->t / 1e9 : 0;
	return EB_OK;
}

static void add_shape(struct ipc_ctx *c, int method, int grid, int block)
{
	struct ipc_shape *s = &c->shapes[c->nshapes++];

	s->method = method;
	s->grid = grid;
	s->block = block;
	if (method == EB_IK_CE)
		snprintf(s->name, sizeof(s->name), "CE");
	else if (method == EB_IK_ST)
		snprintf(s->name, sizeof(s->name), "st %dx%d", grid, block);
	else
		snprintf(s->name, sizeof(s->name), "tma %d", grid);
}

void ipc_build_shapes(struct ipc_ctx *c)
{
	const struct ipc_opts *io = c->io;
	int g, b;

	if (io->methods & (1u << EB_IK_CE))
		add_shape(c, EB_IK_CE, 0, 0);
	for (g = 0; g < io->grids.n && (io->methods & (1u << EB_IK_ST)); g++)
		for (b = 0; b < io->blocks.n; b++)
			add_shape(c, EB_IK_ST, io->grids.v[g] ? io->grids.v[g] : c->gpu.sms,
				  io->blocks.v[b]);
	for (g = 0; g < io->grids.n && (io->methods & (1u << EB_IK_TMA)); g++)
		add_shape(c, EB_IK_TMA, io->grids.v[g] ? io->grids.v[g] : c->gpu.sms, 32);
}

/* The sweep of one (direction, size), then a fresh CE and best-kernel pair. */
static int run_size(struct ipc_ctx *c, int dir, int si)
{
	uint64_t size = c->o->sizes[si];
	struct ipc_meas scratch = {0}, *m;
	struct ipc_sum *sum = c->rank == 0 ? ipc_sum_at(&c->rep, dir, si) : NULL;
	int s, best = -1, ce = -1, rc = EB_OK;
	int32_t best_all[1];

	for (s = 0; s < c->nshapes && rc == EB_OK; s++) {
		m = c->rank == 0 ? ipc_sweep_at(&c->rep, dir, si, s) : &scratch;
		rc = measure(c, dir, s, size, m);
		if (c->rank != 0 || rc != EB_OK)
			continue;
		if (c->shapes[s].method == EB_IK_CE)
			ce = s;
		else if (best < 0 || m->gbs > ipc_sweep_at(&c->rep, dir, si, best)->gbs)
			best = s;
	}
	if (rc != EB_OK)
		return rc;
	/* Rank 0 chose; everyone runs what it chose. */
	if (c->rank != 0)
		ce = c->shapes[0].method == EB_IK_CE ? 0 : -1;
	best_all[0] = best;
	{
		int32_t *got = malloc(sizeof(int32_t) * (size_t)c->n);

		if (got == NULL)
			return EB_ENOMEM;
		rc = eb_boot_allgather(c->boot, best_all, got, sizeof(int32_t), ipc_deadline(c));
		best = got[0];
		free(got);
	}
	if (rc == EB_OK && ce >= 0)
		rc = measure(c, dir, ce, size, sum != NULL ? &sum->ce : &scratch);
	if (rc == EB_OK && best >= 0)
		rc = measure(c, dir, best, size, sum != NULL ? &sum->best : &scratch);
	if (sum != NULL)
		sum->best_shape = best;
	if (c->rank != 0)
		free(scratch.groups);
	return rc;
}

/* The launch floor: empty kernels timed exactly as the copies are. */
static int launch_floor(struct ipc_ctx *c, double *us)
{
	struct eb_ik_op op = {.method = EB_IK_EMPTY, .grid = 1, .block = 32};
	struct eb_stats st;
	long got = 0;
	/* Rank 0 alone: no ipc_barrier before the gate opens, whatever --pairs says. */
	int rc = eb_ik_run(c->timer, &op, 1, MAX_BATCH, c->samples, &got, c->o->fab.timeout_s, NULL,
			   NULL);

	if (rc == EB_OK) {
		eb_stats_compute(c->samples, (size_t)got, &st);
		*us = st.mean * 1e6;
	}
	return rc;
}

int ipc_run_all(struct ipc_ctx *c)
{
	int dir, si, rc = EB_OK;

	if (c->rank == 0) {
		rc = launch_floor(c, &c->rep.floor_us);
		c->rep.ce_api = eb_ik_ce_api();
		if (rc == EB_OK)
			ipc_print_header(&c->rep);
	}
	for (dir = 0; dir < IPC_NDIRS && rc == EB_OK; dir++) {
		if (!(c->io->dirs & (1u << dir)))
			continue;
		if (c->rank == 0)
			ipc_print_dir(&c->rep, dir);
		for (si = 0; si < c->o->nsizes && rc == EB_OK; si++) {
			rc = run_size(c, dir, si);
			if (rc == EB_OK && c->rank == 0)
				ipc_print_row(&c->rep, dir, si);
		}
	}
	if (rc != EB_OK || c->rank != 0)
		return rc;
	c->rep.ce_api = eb_ik_ce_api();
	return ipc_finish(&c->rep);
}

#endif
