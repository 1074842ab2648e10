/* efabench doctor: is this fleet healthy? Every rank checks its host (doctor_host.c) and,
 * one per host, its GPUs (doctor_gpu.c); then every NIC writes to a few peers in tournament
 * rounds (pairs.h) and rank 0 blames a NIC that is slow with every peer, not the peers that
 * met it. One PASS / WARN / FAIL line per check; exit 1 when any check fails. */
#include "doctor_net.h"
#include "harness/bench.h"
#include "harness/probe.h"
#include "bench/pairs/pairs.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

/* Checks on every rank, one rank per host for its GPUs, then the NICs every rank can use. */
static int check(struct dctx *x)
{
	struct summary me = {{0}};
	int k, rc;

	eb_host_name(me.host, sizeof(me.host));
	eb_doctor_host(x->o, x->d, x->single, x->boot->local_size, &x->mine, me.nic, &me.nnics,
		       x->prov, sizeof(x->prov));
	for (k = 0; k < x->mine.n; k++)
		if (x->mine.c[k].verdict == EB_FAIL &&
		    (strcmp(x->mine.c[k].name, "provider") == 0 ||
		     strcmp(x->mine.c[k].name, "memlock") == 0))
			me.blocked = 1;
	me.blocked |= x->prov[0] == '\0';
	if (!x->d->dry_run && x->boot->local_rank == 0)
		eb_doctor_gpus(x->o, x->d, x->prov, x->single, &x->gpus, &x->mine);
	me.ngpus = x->gpus.n;
	rc = eb_boot_allgather(x->boot, &me, x->all, sizeof(me), eb_doctor_deadline(x));
	for (k = 0; rc == EB_OK && !x->d->no_measure && k < x->n; k++)
		x->maxg = x->all[k].ngpus > x->maxg ? x->all[k].ngpus : x->maxg;
	if (rc == EB_OK)
		eb_doctor_agree(x);
	return rc;
}

static int doctor_setup(struct eb_ctx *c)
{
	struct dctx *x = c->priv;
	int rc;

	*x = (struct dctx){.o = c->o, .d = c->own, .boot = c->boot, .n = c->nranks, .me = c->rank};
	x->single = eb_boot_single_host(c->boot, eb_doctor_deadline(x));
	if (x->single < 0)
		return x->single;
	x->all = calloc((size_t)x->n, sizeof(*x->all));
	x->per = calloc((size_t)x->n, sizeof(*x->per));
	x->copies = calloc((size_t)x->n, sizeof(*x->copies));
	if (x->all == NULL || x->per == NULL || x->copies == NULL)
		return EB_ENOMEM;
	rc = check(x);
	if (rc != EB_OK || x->d->dry_run)
		return rc;
	if (x->d->no_measure)
		snprintf(x->skip, sizeof(x->skip), "not measured (--no-measure)");
	else if (x->n < 2)
		snprintf(x->skip, sizeof(x->skip), "not measured: one rank has no peer");
	else if (x->nch > 0 && (rc = eb_doctor_open(x)) == EB_OK)
		c->e = &x->e;
	return rc;
}

static void doctor_teardown(struct eb_ctx *c)
{
	struct dctx *x = c->priv;
	int k;

	eb_doctor_close(x, c->failed);
	c->e = NULL;
	for (k = 0; x->per != NULL && k < x->n; k++)
		eb_checks_free(&x->per[k]);
	free(x->per);
	free(x->copies);
	free(x->all);
	free(x->names);
	eb_checks_free(&x->mine);
}

/* Every rank's checks (a header point that measures nothing: each rank reports them), the
 * GPUs' measurements (header points), then the NICs in tournament rounds: the pair cells'
 * points, on the agreed NICs. */
static int doctor_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	struct dctx *x = c->priv;
	int first = 1 + (x->maxg > 0);

	if (x->d->dry_run)
		return 0;
	if (row == 0) {
		pts[0] = (struct eb_pt){.var = DOC_CHECKS,
					.turns = 1,
					.flags = EB_PT_HEAD | EB_PT_GATHER,
					.name = "checks"};
		return 1;
	}
	if (row < first)
		return eb_doctor_gpu_points(x, pts, max);
	if (x->pairs == NULL)
		return 0;
	if (row == first)
		x->t0 = eb_now_ns();
	return eb_pairs_plan(x->pairs, row - first, pts, 1, x->d->iters, 20);
}

/* The GPUs' points run hooks of their own (doctor_gpu_points.c). */
static void doctor_turn(struct eb_ctx *c)
{
	if (c->pt->var == DOC_PAIRS) {
		eb_pairs_turn(c);
	} else {
		c->role = EB_ROLE_ALL;
		c->peer = -1;
	}
}

static int doctor_prepare(struct eb_ctx *c)
{
	return c->pt->var == DOC_PAIRS ? eb_pairs_prepare(c) : EB_OK;
}

static int doctor_verify(struct eb_ctx *c, uint64_t *wrong)
{
	return c->pt->var == DOC_PAIRS ? eb_pairs_verify(c, wrong) : EB_OK;
}

/* The checks point: this rank's checks to rank 0. */
static void doctor_report(struct eb_ctx *c, struct eb_turn_rep *rep)
{
	const struct dctx *x = c->priv;

	(void)rep;
	if (c->pt->var == DOC_CHECKS)
		(void)eb_report_bytes(c, x->mine.c, (size_t)x->mine.n * sizeof(*x->mine.c));
}

/* Rank 0: every rank's checks, the NIC cells. */
static void doctor_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			  struct eb_rec *r)
{
	struct dctx *x = c->priv;
	int rank, k;

	(void)s;
	(void)r;
	if (m->pt->var == DOC_PAIRS) {
		eb_pairs_collect(x->pairs, m);
		x->grid = x->pairs->grid;
		x->elapsed_s = (double)(eb_now_ns() - x->t0) * 1e-9;
		return;
	}
	for (rank = 0; rank < m->nranks; rank++) {
		const struct eb_check *all = (const struct eb_check *)(const void *)m->blob[rank];

		for (k = 0; k < (int)(m->blob_len[rank] / sizeof(*all)); k++)
			eb_check_add(&x->per[rank], all[k].name, all[k].verdict, all[k].value,
				     all[k].limit, "%s", all[k].why);
	}
}

static void doctor_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct dctx *x = c->priv;

	s->no_footer = 1;
	s->plan_only = x->d->dry_run;
	if (x->d->dry_run)
		eb_doctor_plan(x, s);
}

/* Rank 0: every rank's checks, the NICs compared and judged, a line each. */
static int doctor_close(const struct eb_ctx *c, struct eb_sheet *s)
{
	struct dctx *x = c->priv;

	if (x->d->dry_run)
		return EB_OK;
	eb_doctor_compare_nics(x);
	if (x->grid != NULL)
		eb_doctor_judge(x);
	return eb_doctor_report(x, s);
}

/* Ranks to start on this host: --np, else 2; no fabric check first (that is doctor's job). */
static int doctor_probe(struct eb_opts *o)
{
	int rc = eb_harness_probe_poll(o);

	return rc < 0 ? rc : o->np > 0 ? o->np : 2;
}

static int doctor_finish(struct eb_opts *o, void *own)
{
	(void)o;
	(void)own;
	return EB_OK;
}

static void doctor_defaults(void *own)
{
	struct dopts *d = own;

	d->expect_nics = -1;
	d->expect_gpus = -1;
	d->min_link = 0.8;
	d->min_nvlink = 0.7;
	d->max_floor_us = 10;
	d->size = 16ull << 20;
	d->iters = 3;
	d->peers = 2;
}

#define D(field) EB_AT(struct dopts, field)

static const struct eb_opt doctor_opts[] = {
    {"expect-nics", 0, "N", eb_opt_lng, D(expect_nics), 0, 1024,
     "FAIL with fewer usable NICs (default: what the EFA instance type has)"},
    {"expect-gpus", 0, "N", eb_opt_lng, D(expect_gpus), 0, 1024,
     "FAIL unless CUDA sees exactly N GPUs"},
    {"min-link", 0, "F", eb_opt_dbl, D(min_link), 0, 10,
     "a NIC writing below F x its link rate is slow (default 0.8)"},
    {"min-nvlink", 0, "F", eb_opt_dbl, D(min_nvlink), 0, 10,
     "GPU copies below F x the NVLink peak fail (default 0.7)"},
    {"max-floor-us", 0, "U", eb_opt_dbl, D(max_floor_us), 0, 1e6,
     "a GPU<->CPU round trip above U us fails (default 10)"},
    {"size", 's', "S", eb_opt_size, D(size), 8, (double)(1ull << 34),
     "bytes per write of the NIC measurements (default 16M)"},
    {"iters", 'n', "N", eb_opt_lng, D(iters), 1, 1e6, "timed writes per cell (default 3)"},
    {"peers", 0, "P", eb_opt_lng, D(peers), 1, 1e6,
     "peers each NIC meets at most: tournament rounds (default\n"
     "2; fewer where the ranks make fewer; JSON: rounds_most,\n"
     "and rounds run)"},
    {"no-measure", 0, NULL, eb_opt_flag, D(no_measure), 0, 0,
     "the checks only: no bandwidth, copy or floor measurement"},
    {"brief", 0, NULL, eb_opt_flag, D(brief), 0, 0, "print only WARN and FAIL lines"},
    {"dry-run", 0, NULL, eb_opt_flag, D(dry_run), 0, 0,
     "print the checks and measurements it would run, and stop"},
};

/* It opens its own engine once the ranks agree on the NICs worth measuring. */
static const struct eb_bench doctor_bench = {
    .priv_size = sizeof(struct dctx),
    .plan = doctor_plan,
    .setup = doctor_setup,
    .teardown = doctor_teardown,
    .turn = doctor_turn,
    .prepare = doctor_prepare,
    .iter = eb_pairs_iter,
    .verify = doctor_verify,
    .report = doctor_report,
    .facts = doctor_facts,
    .record = doctor_record,
    .close = doctor_close,
};

const struct eb_cmd eb_cmd_doctor = {
    .name = "doctor",
    .summary = "pass/fail health check of hosts, NICs, links and GPUs",
    .help = "  every rank checks its host (libfabric, provider, NICs and links, ulimit -l,\n"
	    "  huge pages, /dev/shm's room and segments left there by processes that are\n"
	    "  gone) and one rank per host its GPUs (count, NVLinks, nearest NICs, GPU\n"
	    "  memory registration, copy engines between GPU pairs, the GPU<->CPU floor); then\n"
	    "  every NIC writes to --peers peers in tournament rounds. A NIC slow with every\n"
	    "  peer FAILs; one slow with some peers WARNs (the peer or the path). One line per\n"
	    "  check: PASS, WARN, FAIL or SKIP and why. Exit status 0 when nothing fails, 1\n"
	    "  when a check fails. Bandwidth = 8 * size / mean seconds per acknowledged write",
    .groups = EB_G_FABRIC | EB_G_RANKS | EB_G_OUTPUT,
    EB_CMD_OPTS(doctor_opts, struct dopts, doctor_defaults, doctor_finish),
    .bench = &doctor_bench,
    .probe = doctor_probe,
};
