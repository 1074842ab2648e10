/* efabench moe: Mixture-of-Experts dispatch and combine between ranks, through the GPU proxy.
 * Every rank routes its tokens to top-k experts (a seeded routing every rank builds alike);
 * dispatch puts each token once to every rank holding one of its experts, with a signal per
 * (source, destination) counting tokens; combine returns each expert's output to the token's
 * home rank. GPU producers (the real case), CPU producers and an all-to-all-v of the same
 * bytes run in one table. */
#include "moe_state.h"
#include "harness/harness.h"
#include "harness/loop.h"
#include "efabench/status.h"
#include "core/log.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stdlib.h>
#include <string.h>

/* ---- the timed phases, through the one loop ---- */

static int l_prepare(void *arg)
{
	struct eb_ctx *c = arg;

	c->epoch++;
	return eb_moe_prepare(c);
}

static int l_align(void *arg)
{
	struct eb_ctx *c = arg;

	return eb_boot_barrier(c->boot, eb_engine_deadline(c->e));
}

static int l_iter(void *arg, long i)
{
	(void)i;
	return eb_moe_iter(arg);
}

static void l_corrupt(void *arg, long i)
{
	struct eb_ctx *c = arg;
	struct mstate *st = c->priv;
	size_t off = eb_moe_landing(c);

	(void)i;
	if (off != SIZE_MAX)
		eb_mem_flip(&st->dst.pay, off);
}

static int l_verify(void *arg, uint64_t *wrong)
{
	*wrong += eb_moe_verify(arg);
	return EB_OK;
}

static int measure(struct eb_ctx *c, double *samples, struct rank_t *all, uint64_t *wrong)
{
	struct eb_loop l = {.arg = c,
			    .prepare = l_prepare,
			    .align = l_align,
			    .iter = l_iter,
			    .after = c->o->corrupt_at >= 0 ? l_corrupt : NULL,
			    .verify = l_verify,
			    .check = c->o->check};
	struct eb_stats s;
	struct rank_t mine;
	uint64_t w = 0, puts = eb_moe_puts(c->priv);
	int64_t total = 0;
	int rc = eb_loop_phase(&l, c->o->warmup, NULL, NULL, &w);

	rc = rc != EB_OK ? rc : eb_loop_phase(&l, c->o->iters, samples, NULL, &w);
	if (rc != EB_OK)
		return rc;
	eb_stats_compute(samples, (size_t)c->o->iters, &s);
	/* Writes as posted, counted by the proxy threads over every iteration run. */
	puts = eb_moe_puts(c->priv) - puts;
	mine = (struct rank_t){s.p50, s.p99, (double)puts / (double)(c->o->warmup + c->o->iters)};
	rc = eb_boot_allreduce(c->boot, (int64_t)w, EB_SUM, &total, eb_engine_deadline(c->e));
	*wrong = (uint64_t)total;
	if (w > 0)
		eb_err("%llu wrong words or values received (moe %s %s)", (unsigned long long)w,
		       eb_moe_init_name[((struct mstate *)c->priv)->init],
		       eb_moe_phase_name[((struct mstate *)c->priv)->phase]);
	return rc != EB_OK
		   ? rc
		   : eb_boot_allgather(c->boot, &mine, all, sizeof(mine), eb_engine_deadline(c->e));
}

/* ---- the schedule ---- */

/* Bad input that needs the rank count: refused before anything is allocated. */
static int check_ranks(const struct mopts *mo, int nranks, int say)
{
	struct eb_moe_shape sh = {nranks, mo->tokens, mo->topk, mo->experts, (uint64_t)mo->seed};
	char why[512];

	if (mo->experts % nranks != 0) {
		if (say)
			eb_err("--experts %d is not divisible by the %d ranks", mo->experts,
			       nranks);
		return EB_EINVAL;
	}
	if (eb_route_check(&mo->spec, &sh, why, sizeof(why)) != EB_OK) {
		if (say)
			eb_err("--route %s", why);
		return EB_EINVAL;
	}
	return EB_OK;
}

static int run_initiator(struct eb_ctx *c, struct eb_sheet *sh, double *samples, struct rank_t *all,
			 double *base, uint64_t *wrong)
{
	struct mstate *st = c->priv;
	int ph, rc = eb_boot_barrier(c->boot, eb_engine_deadline(c->e)), rc2;

	rc = rc != EB_OK ? rc : eb_moe_begin(c);
	for (ph = 0; ph < PH_N && rc == EB_OK; ph++) {
		uint64_t w = 0;

		st->phase = ph;
		rc = measure(c, samples, all, &w);
		if (rc != EB_OK)
			break;
		*wrong += w;
		if (st->init == INIT_A2AV) {
			int k;

			for (k = 0, base[ph] = 0; k < c->nranks; k++)
				base[ph] = all[k].p50 > base[ph] ? all[k].p50 : base[ph];
		}
		if (c->rank == 0)
			eb_moe_record(c, sh, all, base, w);
	}
	if (rc == EB_OK) /* every rank's writes are in before the proxy threads stop */
		rc = eb_boot_barrier(c->boot, eb_engine_deadline(c->e));
	rc2 = eb_moe_end(c, rc != EB_OK);
	return rc != EB_OK ? rc : rc2;
}

int eb_moe_drive(struct eb_ctx *c)
{
	const struct mopts *mo = mown(c);
	struct eb_sheet sh;
	double *samples, base[PH_N] = {0};
	struct rank_t *all;
	uint64_t wrong = 0;
	unsigned inits = mo->initiators;
	int i, rc = check_ranks(mo, c->nranks, c->rank == 0);

	if (rc != EB_OK)
		return rc;
	if (c->gpu < 0 || c->mem == EB_MEM_HOST || !eb_mem_have_cuda())
		inits &= ~(1u << INIT_GPU); /* kernels copy: they need GPU or pinned memory */
	samples = calloc((size_t)c->o->iters, sizeof(*samples));
	all = calloc((size_t)c->nranks, sizeof(*all));
	if (samples == NULL || all == NULL) {
		free(samples);
		free(all);
		return EB_ENOMEM;
	}
	rc = eb_moe_setup(c, inits);
	if (rc != EB_OK)
		goto teardown;
	if (c->rank == 0) {
		eb_sheet_begin(&sh, "moe", c->o->csv, c->o->json);
		eb_moe_facts(c, &sh);
		eb_sheet_print_head(&sh);
		eb_sheet_table(&sh, NULL, eb_moe_cols, EB_MOE_NCOLS);
	}
	/* The baseline first: the proxied rows are compared with it. */
	for (i = INIT_N - 1; i >= 0 && rc == EB_OK; i--) {
		if (!(((struct mstate *)c->priv)->inits & (1u << i)))
			continue;
		((struct mstate *)c->priv)->init = i;
		rc = run_initiator(c, &sh, samples, all, base, &wrong);
	}
	if (c->rank == 0)
		rc = rc == EB_OK ? eb_sheet_end(&sh, wrong) : (eb_doc_free(&sh.doc), rc);
	if (rc == EB_OK && wrong > 0)
		rc = EB_EVERIFY;
teardown:
	if (rc != EB_OK)
		eb_engine_abandon(c->e);
	eb_engine_quiesce(c->e);
	eb_moe_teardown(c, rc != EB_OK);
	free(samples);
	free(all);
	return rc;
}
