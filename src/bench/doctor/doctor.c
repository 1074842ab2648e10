/* efabench doctor: is this fleet healthy? Every rank checks its host (doctor_host.c) and,
 * one per host, its GPUs (doctor_gpu.c); then every NIC writes to a few peers in tournament
 * rounds (pairs.h) and rank 0 blames a NIC that is slow with every peer, not the peers that
 * met it. One PASS / WARN / FAIL line per check; exit 1 when any check fails. */
#include "doctor_net.h"
#include "harness/bench.h"
#include "bench/pairs/pairs.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

/* Every rank's checks to rank 0 (collective). */
static int gather_checks(struct dctx *x, const struct eb_checks *mine)
{
	int64_t most;
	struct eb_check *all;
	int32_t *counts;
	int r, rc;

	struct eb_check *padded;

	rc = eb_boot_allreduce(x->boot, mine->n, EB_MAX, &most, eb_doctor_deadline(x));
	if (rc != EB_OK)
		return rc;
	all = calloc((size_t)x->n * (size_t)(most + 1), sizeof(*all));
	counts = calloc((size_t)x->n, sizeof(*counts));
	padded = calloc((size_t)(most + 1), sizeof(*padded));

	if (all == NULL || counts == NULL || padded == NULL) {
		rc = EB_ENOMEM;
		goto free_all;
	}
	memcpy(padded, mine->c, (size_t)mine->n * sizeof(*padded));
	rc = eb_boot_allgather(x->boot, padded, all, (size_t)(most + 1) * sizeof(*all),
			       eb_doctor_deadline(x));
	if (rc == EB_OK)
		rc = eb_boot_allgather(x->boot, &mine->n, counts, sizeof(*counts),
				       eb_doctor_deadline(x));
	for (r = 0; rc == EB_OK && x->me == 0 && r < x->n; r++) {
		int k;

		for (k = 0; k < counts[r]; k++) {
			const struct eb_check *c = &all[(size_t)r * (size_t)(most + 1) + (size_t)k];

			eb_check_add(&x->per[r], c->name, c->verdict, c->value, c->limit, "%s",
				     c->why);
		}
	}
free_all:
	free(padded);
	free(counts);
	free(all);
	return rc;
}

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
	/* GPUs first, alone: nothing else of this host's runs while they are measured. */
	if (!x->d->dry_run && x->boot->local_rank == 0)
		eb_doctor_gpus(x->o, x->d, x->prov, x->single, !x->d->no_measure, &x->mine);
	rc = eb_boot_allgather(x->boot, &me, x->all, sizeof(me), eb_doctor_deadline(x));
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
	if (x->all == NULL || x->per == NULL)
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
	return rc == EB_OK ? gather_checks(x, &x->mine) : rc;
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
	free(x->all);
	free(x->names);
	eb_checks_free(&x->mine);
}

/* The NICs in tournament rounds: the pair cells' points, on the agreed NICs. */
static int doctor_plan(struct eb_ctx *c, int row, struct eb_pt *pts, int max)
{
	struct dctx *x = c->priv;

	(void)max;
	if (x->pairs == NULL)
		return 0;
	x->t0 = eb_now_ns();
	return eb_pairs_plan(x->pairs, row, pts, 1, x->d->iters, 20);
}

static void doctor_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
			  struct eb_rec *r)
{
	struct dctx *x = c->priv;

	eb_pairs_collect(x->pairs, m);
	x->grid = x->pairs->grid;
	x->elapsed_s = (double)(eb_now_ns() - x->t0) * 1e-9;
	(void)s;
	(void)r;
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
static int doctor_probe(const struct eb_opts *o)
{
	return o->np > 0 ? o->np : 2;
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
	d->rounds = 2;
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
    {"rounds", 0, "R", eb_opt_lng, D(rounds), 1, 1e6,
     "tournament rounds at most: peers each NIC meets (default\n"
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
    .turn = eb_pairs_turn,
    .prepare = eb_pairs_prepare,
    .iter = eb_pairs_iter,
    .verify = eb_pairs_verify,
    .facts = doctor_facts,
    .record = doctor_record,
    .close = doctor_close,
};

const struct eb_cmd eb_cmd_doctor = {
    .name = "doctor",
    .summary = "pass/fail health check of hosts, NICs, links and GPUs",
    .help = "  every rank checks its host (libfabric, provider, NICs and links, ulimit -l,\n"
	    "  huge pages) and one rank per host its GPUs (count, NVLinks, nearest NICs, GPU\n"
	    "  memory registration, copy engines between GPU pairs, the GPU<->CPU floor); then\n"
	    "  every NIC writes to --rounds peers in tournament rounds. A NIC slow with every\n"
	    "  peer FAILs; one slow with some peers WARNs (the peer or the path). One line per\n"
	    "  check: PASS, WARN, FAIL or SKIP and why. Exit status 0 when nothing fails, 1\n"
	    "  when a check fails. Bandwidth = 8 * size / mean seconds per acknowledged write",
    .groups = EB_G_FABRIC | EB_G_RANKS | EB_G_OUTPUT,
    EB_CMD_OPTS(doctor_opts, struct dopts, doctor_defaults, doctor_finish),
    .bench = &doctor_bench,
    .probe = doctor_probe,
};
