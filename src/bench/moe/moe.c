/* efabench moe: Mixture-of-Experts dispatch and combine between ranks, through the GPU proxy.
 * Every rank routes its tokens to top-k experts (a seeded routing every rank builds alike);
 * dispatch puts each token once to every rank holding one of its experts, with a signal per
 * (source, destination) counting tokens; combine returns each expert's output to the token's
 * home rank. GPU producers (the real case), CPU producers and an all-to-all-v of the same
 * bytes run in one table: a point per (initiator, op: dispatch, combine or both), every rank
 * measuring. */
#include "moe.h"
#include "moe_ce.h"
#include "moe_data.h"
#include "moe_facts.h"
#include "moe_figures.h"
#include "moe_op.h"
#include "moe_setup.h"
#include "moe_stages.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdio.h>

/* The baseline first: the proxied rows are compared with it. */
static const int order[INIT_N] = {INIT_A2AV, INIT_MPI, INIT_CPU, INIT_GPU};

static const char *const spans[] = {"cross"};

/* The copy engines first where they are measured (header points), then the table's row. */
static int moe_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	static char names[INIT_N * OP_N][24];
	const struct mstate *st = c->priv;
	int i, op, n = 0, first = eb_moe_ce_points(c, st, pts) > 0;

	if (row < first)
		return 2;
	if (row > first)
		return 0;
	for (i = 0; i < INIT_N; i++) {
		if (!(st->inits & (1u << order[i])))
			continue;
		for (op = 0; op < OP_N && n < max; op++, n++) {
			snprintf(names[n], sizeof(names[n]), "%s %s", eb_moe_init_name[order[i]],
				 eb_moe_op_name[op]);
			pts[n] = (struct eb_pt){.var = order[i],
						.step = op,
						.turns = 1,
						.warmup = c->o->warmup,
						.iters = c->o->iters,
						.flags = EB_PT_SAMPLES | EB_PT_ALIGN_EACH,
						.name = names[n]};
		}
	}
	return n;
}

/* An initiator's points run on its own proxy threads, started as every rank enters (before
 * the first iteration's barrier) and stopped once every rank is done (the harness leaves
 * together). The copy engines' points run hooks of their own (moe_ce.c). */
static int moe_enter(struct eb_ctx *c)
{
	((struct mstate *)c->priv)->init = c->pt->var;
	return eb_moe_begin(c);
}

static int moe_leave(struct eb_ctx *c, int failed)
{
	return eb_moe_end(c, failed);
}

static int moe_prepare(struct eb_ctx *c)
{
	struct mstate *st = c->priv;
	int rc;

	st->op = c->pt->step;
	rc = eb_moe_prepare(c);
	return rc != EB_OK ? rc : eb_moe_stamps_open(c, st);
}

static int moe_iter(struct eb_ctx *c, long i)
{
	(void)i;
	return eb_moe_iter(c);
}

static int moe_verify(struct eb_ctx *c, uint64_t *wrong)
{
	int rc = eb_moe_stamps_close(c, c->priv);

	return rc != EB_OK ? rc : eb_moe_verify(c, wrong);
}

/* Writes as posted, counted by the proxy threads over every iteration of the point. */
static void moe_report(struct eb_ctx *c, struct eb_turn_rep *rep)
{
	struct mstate *st = c->priv;
	uint64_t now = eb_moe_puts(st);

	rep->own[0] = (double)(now - st->puts_mark) / (double)(c->pt->warmup + c->pt->iters);
	st->puts_mark = now;
}

static const struct eb_payload *moe_landing(struct eb_ctx *c, size_t *off, size_t *len)
{
	struct mstate *st = c->priv;

	*len = 0;
	eb_moe_landing(c, off, len);
	return &st->dst;
}

static void moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		       struct eb_rec *r)
{
	eb_moe_record(c, m, s, r);
}

static int moe_setup(struct eb_ctx *c)
{
	return eb_moe_setup(c, c->own);
}

static void moe_teardown(struct eb_ctx *c)
{
	eb_moe_teardown(c, c->failed);
}

const struct eb_bench eb_moe_bench = {
    .priv_size = sizeof(struct mstate),
    .uses = EB_USES_FABRIC | EB_USES_HEAD,
    .spans = spans,
    .nspans = 1,
    .events = eb_moe_events,
    .nevents = MOE_NEVENTS,
    .stages = eb_moe_stages,
    .nstages = MOE_NSTAGES,
    .plan = moe_plan,
    .setup = moe_setup,
    .teardown = moe_teardown,
    .enter = moe_enter,
    .leave = moe_leave,
    .prepare = moe_prepare,
    .iter = moe_iter,
    .verify = moe_verify,
    .report = moe_report,
    .landing = moe_landing,
    .facts = eb_moe_facts,
    .record = moe_record,
    .cols = eb_moe_cols,
    .ncols = EB_MOE_NCOLS,
};
