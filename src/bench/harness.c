#include "harness.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Idle ranks wait at the end of a phase while a pair works; every wait of the pair is itself
 * bounded by the timeout, so this bounds the phase. */
static uint64_t phase_deadline(const struct eb_ctx *c, long iters)
{
	return eb_deadline(c->o->fab.timeout_s * (double)(iters + 2));
}

/* Sum of every rank's wrong-word count; collective, so all ranks fail together. */
static int sum_wrong(struct eb_ctx *c, uint64_t mine, uint64_t deadline, uint64_t *total)
{
	uint64_t *all = malloc(sizeof(*all) * (size_t)c->nranks);
	int r, rc;

	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(c->e->boot, &mine, all, sizeof(mine), deadline);
	*total = 0;
	for (r = 0; rc == EB_OK && r < c->nranks; r++)
		*total += all[r];
	free(all);
	return rc;
}

static void corrupt(const struct eb_bench *b, struct eb_ctx *c)
{
	unsigned char *p = b->landing(c);

	if (c->role == EB_ROLE_TARGET && p != NULL && c->bytes > 0)
		p[(uint64_t)c->o->corrupt_at % c->bytes] ^= 0x5a;
}

/* One phase: prepare, align every rank with a barrier, run iters timed iterations, verify.
 * samples (may be NULL) receives each iteration's seconds. */
static int phase(const struct eb_bench *b, struct eb_ctx *c, long iters, double *samples,
		 uint64_t *wrong)
{
	uint64_t mine = 0, t0, t1;
	long i;
	int rc;

	c->iters = iters;
	for (i = 0; i < iters; i++) {
		if (i == 0 || c->o->check) {
			if (i > 0 && c->role != EB_ROLE_IDLE)
				mine += b->verify(c);
			c->epoch++;
			rc = b->prepare(c);
			if (rc != EB_OK)
				return rc;
			rc = eb_boot_barrier(c->e->boot, eb_engine_deadline(c->e));
			if (rc != EB_OK)
				return rc;
		}
		t0 = eb_now_ns();
		rc = b->iter(c, i);
		t1 = eb_now_ns();
		if (rc != EB_OK)
			return rc;
		if (samples != NULL)
			samples[i] = (double)(t1 - t0) * 1e-9;
		if (c->o->corrupt_at >= 0)
			corrupt(b, c);
	}
	if (c->role != EB_ROLE_IDLE && iters > 0)
		mine += b->verify(c);
	if (mine > 0)
		eb_err("%llu wrong words received from rank %d (%s, %zu bytes)",
		       (unsigned long long)mine, c->peer, b->variants[c->variant], c->bytes);
	return sum_wrong(c, mine, phase_deadline(c, iters), wrong);
}

static void summarise(const struct eb_bench *b, const struct eb_report *rep, struct eb_result *res,
		      double *pooled, long iters)
{
	double half = b->one_way ? 0.5 : 1.0, cap;
	size_t n = (size_t)iters * (size_t)(rep->nranks - 1), i;

	for (i = 0; i < n; i++)
		pooled[i] *= half;
	eb_stats_compute(pooled, n, &res->all);
	res->t_s = res->all.mean;
	res->gbps = res->t_s > 0 ? 8.0 * (double)res->size / res->t_s / 1e9 : 0.0;
	cap = rep->link_gbps * rep->channels;
	res->busbw = cap > 0 ? 100.0 * res->gbps / cap : -1.0;
	for (i = 0; i < (size_t)rep->nranks - 1; i++) {
		res->pairs[i].mean *= half;
		res->pairs[i].min *= half;
		res->pairs[i].p50 *= half;
		res->pairs[i].p99 *= half;
		res->pairs[i].max *= half;
		res->pairs[i].stddev *= half;
	}
}

/* Every pair rank 0 -> k for one (size, variant). */
static int run_point(const struct eb_bench *b, struct eb_ctx *c, const struct eb_report *rep,
		     struct eb_result *res, double *samples, double *pooled)
{
	const struct eb_opts *o = c->o;
	uint64_t wrong;
	int k, rc;

	for (k = 1; k < c->nranks; k++) {
		c->role = c->rank == 0	 ? EB_ROLE_INIT
			  : c->rank == k ? EB_ROLE_TARGET
					 : EB_ROLE_IDLE;
		c->peer = c->rank == 0 ? k : c->rank == k ? 0 : -1;
		rc = phase(b, c, o->warmup, NULL, &wrong);
		if (rc != EB_OK)
			return rc;
		res->wrong += wrong;
		rc = phase(b, c, o->iters, samples, &wrong);
		if (rc != EB_OK)
			return rc;
		res->wrong += wrong;
		if (c->rank == 0) {
			memcpy(pooled + (size_t)(k - 1) * (size_t)o->iters, samples,
			       sizeof(*samples) * (size_t)o->iters);
			eb_stats_compute(samples, (size_t)o->iters, &res->pairs[k - 1]);
		}
	}
	if (c->rank == 0)
		summarise(b, rep, res, pooled, o->iters);
	return EB_OK;
}

static int alloc_results(struct eb_report *rep, int nres)
{
	int i;

	rep->res = calloc((size_t)nres, sizeof(*rep->res));
	if (rep->res == NULL)
		return EB_ENOMEM;
	for (i = 0; i < nres; i++) {
		rep->res[i].pairs = calloc((size_t)rep->nranks, sizeof(struct eb_stats));
		if (rep->res[i].pairs == NULL)
			return EB_ENOMEM;
	}
	return EB_OK;
}

static void free_results(struct eb_report *rep, int nres)
{
	int i;

	for (i = 0; rep->res != NULL && i < nres; i++)
		free(rep->res[i].pairs);
	free(rep->res);
}

void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window)
{
	int sock = eb_fabric_is_socket_prov(prov);

	*chunk = o->chunk != 0 ? (size_t)o->chunk : sock ? 512u << 10 : 1u << 20;
	*window = o->window != 0 ? (int)o->window : sock ? 16 : 4;
}

int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot)
{
	struct eb_engine e;
	struct eb_ctx c = {.o = o, .rank = boot->rank, .nranks = boot->size, .peer = -1};
	struct eb_report rep = {.b = b, .o = o, .e = &e, .nranks = boot->size};
	int nres = o->nsizes * b->nvariants, s, v, rc;
	double *samples = NULL, *pooled = NULL;
	uint64_t wrong_total = 0;
	int file_rc = EB_OK;

	if (boot->size < 2) {
		if (boot->rank == 0)
			eb_err("%s needs at least 2 ranks (rank 0 and a peer); got %d", b->name,
			       boot->size);
		return EB_EINVAL;
	}
	rc = eb_engine_open(&e, boot, &o->fab);
	if (rc != EB_OK)
		return rc;
	c.e = &e;
	eb_harness_tune(o, e.prov, &c.chunk, &c.window);
	rep.chunk = c.chunk;
	rep.window = c.window;
	rep.launcher = boot->ops->name;
	rep.channels = 1; /* single-channel variants only, for now */
	rep.link_gbps = e.chan[0].nic.link_gbps;
	rc = alloc_results(&rep, nres);
	samples = calloc((size_t)o->iters, sizeof(*samples));
	pooled = calloc((size_t)o->iters * (size_t)boot->size, sizeof(*pooled));
	if (rc != EB_OK || samples == NULL || pooled == NULL) {
		eb_err("out of memory for results");
		rc = EB_ENOMEM;
		goto free_results;
	}
	rc = b->setup(&c);
	if (rc != EB_OK)
		goto free_results;
	if (c.rank == 0)
		eb_report_header(&rep);
	for (s = 0; s < o->nsizes; s++) {
		c.bytes = (size_t)o->sizes[s];
		for (v = 0; v < b->nvariants; v++) {
			struct eb_result *res = &rep.res[s * b->nvariants + v];

			c.variant = v;
			res->size = o->sizes[s];
			res->variant = v;
			rc = run_point(b, &c, &rep, res, samples, pooled);
			if (rc != EB_OK)
				goto teardown;
			wrong_total += res->wrong;
		}
		if (c.rank == 0)
			eb_report_row(&rep, s);
	}
	if (c.rank == 0) {
		eb_report_footer(&rep, wrong_total);
		if (o->csv != NULL && eb_report_csv(&rep, o->csv) != EB_OK)
			file_rc = EB_ESYS;
		if (o->json != NULL && eb_report_json(&rep, o->json) != EB_OK)
			file_rc = EB_ESYS;
	}
	/* Nobody tears down while a peer may still read its memory. */
	rc = eb_boot_barrier(boot, eb_engine_deadline(&e));
	if (rc == EB_OK && wrong_total > 0)
		rc = EB_EVERIFY;
	if (rc == EB_OK)
		rc = file_rc;
teardown:
	b->teardown(&c);
free_results:
	free(pooled);
	free(samples);
	free_results(&rep, nres);
	eb_engine_close(&e);
	return rc;
}
