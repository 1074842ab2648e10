/* What doctor measures of each host's GPUs, as header points of the schedule: the copy engines
 * from each GPU to every other (GB/s against the slower end's NVLink peak) and each GPU's floor
 * (the GPU<->CPU round trip's median against --max-floor-us). One rank per host measures, the
 * others idle; a measurement that cannot run becomes a check that says so. */
#include "doctor_net.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "gpu/ce.h"
#include "gpu/floor.h"

#include <stdio.h>

#define CE_BYTES    (256u << 20)
#define CE_ITERS    5
#define FLOOR_ITERS 2000

enum { GPU_OK, GPU_NO_PEER, GPU_FAILED }; /* a measurement's outcome (own[0]) */

/* The source and target GPU of a point (a floor's are one). */
static void gpus_of(const struct eb_pt *pt, int *a, int *b)
{
	*a = pt->var == DOC_COPY ? pt->step / EB_DOC_MAX_GPUS : pt->step;
	*b = pt->var == DOC_COPY ? pt->step % EB_DOC_MAX_GPUS : pt->step;
}

static void gpu_turn(struct eb_ctx *c)
{
	const struct dctx *x = c->priv;
	int a, b;

	gpus_of(c->pt, &a, &b);
	c->peer = -1;
	c->role = c->boot->local_rank == 0 && a < x->gpus.n && b < x->gpus.n ? EB_ROLE_INIT
									     : EB_ROLE_IDLE;
}

/* A copy's seconds (every copy of the batch alike) or a floor's round trips. */
static int gpu_run(struct eb_ctx *c, long n, double *samples, long *got)
{
	struct dctx *x = c->priv;
	double gb = 0;
	int a, b, rc;
	long i;

	*got = 0;
	x->gpu_status = GPU_OK;
	if (c->role == EB_ROLE_IDLE)
		return EB_OK;
	gpus_of(c->pt, &a, &b);
	if (c->pt->var == DOC_FLOOR) {
		rc = eb_mem_use_gpu(a);
		rc = rc != EB_OK ? rc : eb_floor_samples(1, n, c->o->fab.timeout_s, samples);
		x->gpu_status = rc == EB_OK ? GPU_OK : GPU_FAILED;
		*got = rc == EB_OK && samples != NULL ? n : 0;
		return EB_OK;
	}
	if (eb_ce_can_peer(a, b) != 1) {
		x->gpu_status = GPU_NO_PEER;
		return EB_OK;
	}
	if (eb_ce_gbytes(a, b, CE_BYTES, (int)n, &gb) != EB_OK || gb <= 0) {
		x->gpu_status = GPU_FAILED;
		return EB_OK;
	}
	for (i = 0; samples != NULL && i < n; i++)
		samples[i] = (double)CE_BYTES / (gb * 1e9);
	*got = samples != NULL ? n : 0;
	return EB_OK;
}

/* The outcome and, for a copy, the slower end's NVLink peak (GB/s, 0 when unknown). */
static void gpu_report(struct eb_ctx *c, struct eb_turn_rep *rep)
{
	const struct dctx *x = c->priv;
	const struct eb_dgpus *g = &x->gpus;
	int a, b;

	gpus_of(c->pt, &a, &b);
	rep->own[0] = x->gpu_status;
	if (c->role == EB_ROLE_IDLE || a == b || g->links[a] <= 0 || g->links[b] <= 0)
		return;
	rep->own[1] = g->links[a] * g->gbytes[a] < g->links[b] * g->gbytes[b]
			  ? g->links[a] * g->gbytes[a]
			  : g->links[b] * g->gbytes[b];
}

/* Rank 0: a floor's check. */
static void floor_check(const struct dctx *x, int gpu, const struct eb_turn_rep *r,
			struct eb_checks *s)
{
	char what[32];
	double us = r->st.p50 * 1e6;

	snprintf(what, sizeof(what), "GPU %d floor", gpu);
	if (r->own[0] != GPU_OK || r->st.n == 0)
		eb_check_add(s, what, EB_FAIL, 0, x->d->max_floor_us,
			     "the GPU<->CPU round trip failed (see above)");
	else
		eb_check_add(s, what, us > x->d->max_floor_us ? EB_FAIL : EB_PASS, us,
			     x->d->max_floor_us,
			     "GPU<->CPU round trip through mapped memory: median %.2f us (at most "
			     "%.1f wanted)",
			     us, x->d->max_floor_us);
}

/* Rank 0: a copy a -> b into the source GPU's slowest peer so far; a failure's own check. */
static void copy_note(int a, int b, const struct eb_turn_rep *r, struct eb_dcopy *w,
		      struct eb_checks *s)
{
	char what[32];
	double gb, ratio;

	snprintf(what, sizeof(what), "GPU %d copy", a);
	if (r->own[0] == GPU_NO_PEER || r->own[0] == GPU_FAILED || r->st.n == 0) {
		if (r->own[0] == GPU_NO_PEER)
			eb_check_add(s, what, EB_WARN, 0, 0,
				     "GPU %d cannot map GPU %d (no peer access)", a, b);
		else
			eb_check_add(s, what, EB_FAIL, 0, 0,
				     "copy GPU %d -> GPU %d failed (see above)", a, b);
		w->failed = 1;
		return;
	}
	gb = (double)CE_BYTES / r->st.p50 / 1e9;
	ratio = r->own[1] > 0 ? gb / r->own[1] : gb;
	if (w->worst_b < 0 || ratio < w->worst)
		*w = (struct eb_dcopy){ratio, gb, r->own[1], b, w->failed};
}

/* Rank 0: a source GPU's line, naming its slowest peer. */
static void copy_check(const struct dctx *x, int a, const struct eb_dcopy *w, struct eb_checks *s)
{
	char what[32];

	snprintf(what, sizeof(what), "GPU %d copy", a);
	if (w->failed || w->worst_b < 0)
		return;
	if (w->peak <= 0)
		eb_check_add(s, what, EB_PASS, w->gb, 0,
			     "slowest: to GPU %d, %.0f GB/s (no NVLink peak to compare)",
			     w->worst_b, w->gb);
	else
		eb_check_add(s, what, w->worst < x->d->min_nvlink ? EB_FAIL : EB_PASS, w->gb,
			     x->d->min_nvlink * w->peak,
			     "slowest: to GPU %d, %.0f GB/s = %.2f x the %.0f GB/s NVLink peak (at "
			     "least %.2f wanted)",
			     w->worst_b, w->gb, w->worst, w->peak, x->d->min_nvlink);
}

/* Rank 0: the point's checks, into each measuring rank's (a header point: no record). */
static void gpu_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		       struct eb_rec *rec)
{
	struct dctx *x = c->priv;
	int a, b, r;

	(void)s;
	(void)rec;
	gpus_of(m->pt, &a, &b);
	for (r = 0; r < m->nranks; r++) {
		const struct eb_turn_rep *rep = &m->rep[r];
		struct eb_dcopy *w = &x->copies[r];
		int g = x->all[r].ngpus; /* the points of a and b < g are this rank's */

		if (!rep->active)
			continue;
		if (m->pt->var == DOC_FLOOR) {
			floor_check(x, a, rep, &x->per[r]);
			continue;
		}
		if (b == (a == 0 ? 1 : 0)) /* a's first peer */
			*w = (struct eb_dcopy){.worst_b = -1};
		copy_note(a, b, rep, w, &x->per[r]);
		if (b == (a == g - 1 ? g - 2 : g - 1)) /* and its last */
			copy_check(x, a, w, &x->per[r]);
	}
}

/* The GPUs' points run these hooks, not doctor's. */
static const struct eb_bench gpu_hooks = {
    .turn = gpu_turn, .run = gpu_run, .report = gpu_report, .record = gpu_record};

int eb_doctor_gpu_points(const struct dctx *x, struct eb_pt *pts, int max)
{
	int a, b, n = 0;

	for (a = 0; a < x->maxg; a++)
		for (b = 0; b < x->maxg && n < max; b++)
			if (a != b)
				pts[n++] = (struct eb_pt){.var = DOC_COPY,
							  .step = a * EB_DOC_MAX_GPUS + b,
							  .turns = 1,
							  .iters = CE_ITERS,
							  .flags = EB_PT_SELF_TIMED | EB_PT_HEAD,
							  .name = "GPU copies",
							  .own = &gpu_hooks};
	for (a = 0; a < x->maxg && n < max; a++)
		pts[n++] = (struct eb_pt){.var = DOC_FLOOR,
					  .step = a,
					  .turns = 1,
					  .iters = FLOOR_ITERS,
					  .flags = EB_PT_SELF_TIMED | EB_PT_HEAD,
					  .name = "GPU floors",
					  .own = &gpu_hooks};
	return n;
}
