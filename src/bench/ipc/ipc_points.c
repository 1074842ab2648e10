/* efabench ipc's points: the launch floor, then per direction and size every launch shape,
 * then the copy engine and the best kernel measured again back to back; each point in turns
 * of links (one ordered pair at a time, or every GPU to every other at once), the copies
 * timed on the initiating GPU and checked by the GPU that receives them. */
#include "ipc_links.h"

#ifdef EB_HAVE_CUDA
#include "efabench/size.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int kind_of(const struct eb_pt *pt)
{
	return pt->step / 2;
}

static int dir_of(const struct eb_pt *pt)
{
	return pt->step % 2;
}

/* Directions asked for, in order; the k-th (-1 past the last). */
static int nth_dir(const struct ipc_ctx *ic, int k)
{
	int d;

	for (d = 0; d < IPC_NDIRS; d++)
		if ((ic->io->dirs & (1u << d)) && k-- == 0)
			return d;
	return -1;
}

static struct eb_pt point(struct eb_ctx *c, struct ipc_ctx *ic, int shape, int dir, int kind,
			  uint64_t size, int slot)
{
	char sz[24], name[sizeof(ic->names[0])];

	snprintf(name, sizeof(name), "%s %s %s", dir == IPC_WRITE ? "write" : "read",
		 ic->shapes[shape].name, eb_size_format(size, sz, sizeof(sz)));
	memcpy(ic->names[slot], name, sizeof(name));
	return (struct eb_pt){.size = size,
			      .var = shape,
			      .step = dir + 2 * kind,
			      .turns = ipc_nphases(ic),
			      .warmup = c->o->warmup,
			      .iters = c->o->iters,
			      .flags = EB_PT_SELF_TIMED | EB_PT_SETTLE,
			      .name = ic->names[slot]};
}

/* The summary's shapes: the copy engine where it ran, and the kernel rank 0 found fastest in
 * the sweep (every rank runs what rank 0 chose). */
static int summary_points(struct eb_ctx *c, struct ipc_ctx *ic, int dir, uint64_t size,
			  struct eb_pt *pts)
{
	int32_t mine = ic->best, *all = malloc(sizeof(int32_t) * (size_t)ic->n);
	int n = 0, rc;

	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->boot, &mine, all, sizeof(mine), ipc_deadline(ic));
	ic->best = all[0];
	free(all);
	if (rc != EB_OK)
		return rc;
	if (ic->shapes[0].method == IPC_CE)
		pts[n++] = point(c, ic, 0, dir, IPC_CE_AGAIN, size, ic->nshapes);
	if (ic->best >= 0)
		pts[n++] = point(c, ic, ic->best, dir, IPC_BEST, size, ic->nshapes + 1);
	ic->summary_left = n;
	return n;
}

/* Row 0: the launch floor; then, per direction and size, the sweep and its summary. */
int ipc_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	struct ipc_ctx *ic = c->priv;
	int k = (row - 1) / 2, dir = nth_dir(ic, k / c->o->nsizes), s;
	uint64_t size;

	if (row == 0) {
		pts[0] = (struct eb_pt){.var = 0,
					.step = 2 * IPC_FLOOR,
					.turns = 1,
					.iters = MAX_BATCH,
					.flags = EB_PT_SELF_TIMED | EB_PT_HEAD,
					.name = "launch floor"};
		return 1;
	}
	if (dir < 0)
		return 0;
	size = c->o->sizes[k % c->o->nsizes];
	if (row % 2 == 0)
		return summary_points(c, ic, dir, size, pts);
	for (s = 0; s < ic->nshapes && s < max; s++)
		pts[s] = point(c, ic, s, dir, IPC_SWEEP, size, s);
	ic->best = -1;
	ic->ce_gbs = 0;
	ic->wrong = 0;
	return s;
}

/* Who initiates in turn c->turn: the floor runs on rank 0 alone; each link's initiator and
 * peer, or every rank at once. */
void ipc_turn(struct eb_ctx *c)
{
	struct ipc_ctx *ic = c->priv;
	int a, b;

	if (kind_of(c->pt) == IPC_FLOOR || ic->io->pairs != IPC_ALL) {
		if (kind_of(c->pt) == IPC_FLOOR)
			a = 0, b = -1;
		else
			ipc_link_of(ic, c->turn, 0, &a, &b);
		c->role = c->rank == a	 ? EB_ROLE_INIT
			  : c->rank == b ? EB_ROLE_TARGET
					 : EB_ROLE_IDLE;
		c->peer = c->rank == a ? b : c->rank == b ? a : -1;
		return;
	}
	c->role = EB_ROLE_ALL;
	c->peer = -1;
}

/* Sources filled for this epoch, destinations poisoned and their flags cleared. */
int ipc_prepare_hook(struct eb_ctx *c)
{
	struct ipc_ctx *ic = c->priv;

	ic->epoch = c->epoch;
	if (kind_of(c->pt) == IPC_FLOOR)
		return EB_OK;
	return ipc_prepare(ic, dir_of(c->pt), c->turn, c->pt->size, 1);
}

/* n launches of this rank's ops, timed on the GPU; the floor: empty kernels on rank 0, with
 * no barrier before the gate opens. */
int ipc_run(struct eb_ctx *c, long n, double *samples, long *got)
{
	struct ipc_ctx *ic = c->priv;
	struct eb_ik_op ops[64], empty = {.method = EB_IK_EMPTY, .grid = 1, .block = 32};
	int nops, rc;
	long i;

	*got = 0;
	if (samples == NULL)
		samples = ic->scratch;
	if (kind_of(c->pt) == IPC_FLOOR)
		return c->role != EB_ROLE_INIT ? EB_OK
					       : eb_ik_run(ic->timer, &empty, 1, n, samples, got,
							   c->o->fab.timeout_s, NULL, NULL);
	nops = ipc_my_ops(ic, dir_of(c->pt), &ic->shapes[c->pt->var], c->turn, c->pt->size, ops);
	if (nops == 0)
		return EB_OK;
	rc = eb_ik_run(ic->timer, ops, nops, n, samples, got, c->o->fab.timeout_s,
		       ic->io->pairs == IPC_ALL ? ipc_barrier : NULL, ic);
	for (i = 0; i < *got; i++) /* seconds per copy */
		samples[i] /= ic->io->copies;
	return rc;
}

int ipc_verify_hook(struct eb_ctx *c, uint64_t *wrong)
{
	struct ipc_ctx *ic = c->priv;

	if (kind_of(c->pt) == IPC_FLOOR)
		return EB_OK;
	return ipc_verify(ic, dir_of(c->pt), &ic->shapes[c->pt->var], c->turn, c->pt->size, wrong);
}

#endif
