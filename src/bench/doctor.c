/* efabench doctor: is this fleet healthy? Every rank checks its host (doctor_host.c) and,
 * one per host, its GPUs (doctor_gpu.c); then every NIC writes to a few peers in tournament
 * rounds (pairs.h) and rank 0 blames a NIC that is slow with every peer, not the peers that
 * met it. One PASS / WARN / FAIL line per check; exit 1 when any check fails. */
#include "checks.h"
#include "bench.h"
#include "pairs.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"

#include <stdlib.h>
#include <string.h>

/* What each rank tells the others before measuring: enough to agree on the NICs to use. */
struct summary {
	char host[64];
	int32_t nnics, blocked; /* blocked: a FAIL that makes measuring pointless or harmful */
	struct eb_dnic nic[EB_DOC_MAX_NICS];
};

/* A measured channel as each rank names it, for rank 0's lines. */
struct chan_name {
	char name[40];
	float gbps;
};

struct dctx {
	const struct eb_opts *o;
	const struct dopts *d;
	struct eb_boot *boot;
	int n, me, single;
	struct summary *all;
	char prov[32];
	char nics[512];		 /* the --nics list to measure ("" without --nics) */
	int nch;		 /* channels measured on every rank, 0: none */
	char skip[200];		 /* why nothing was measured */
	char left[200];		 /* NICs left out: unusable on some rank */
	struct chan_name *names; /* [rank][chan] */
	struct eb_cell *grid;	 /* [(chan * n + src) * n + dst] */
	int rounds;
	double elapsed_s;
	struct eb_checks *per; /* rank 0: every rank's checks */
};

static uint64_t deadline(const struct dctx *x)
{
	return eb_deadline(x->o->fab.timeout_s);
}

/* The NICs every rank can use: by name with --nics, else the fewest any rank has. */
static void agree(struct dctx *x)
{
	int k, r, up;

	x->nch = 0;
	x->nics[0] = '\0';
	for (r = 0; r < x->n; r++)
		if (x->all[r].blocked) {
			snprintf(x->skip, sizeof(x->skip),
				 "not measured: rank %d (%s) failed a check that measuring needs",
				 r, x->all[r].host);
			return;
		}
	if (x->o->fab.nics != NULL) {
		for (k = 0; k < x->all[0].nnics; k++) {
			for (r = 0, up = 1; r < x->n && up; r++)
				up = k < x->all[r].nnics && x->all[r].nic[k].up &&
				     strcmp(x->all[r].nic[k].name, x->all[0].nic[k].name) == 0;
			if (!up || strlen(x->nics) + strlen(x->all[0].nic[k].name) + 2 >=
				       sizeof(x->nics)) {
				snprintf(x->left + strlen(x->left),
					 sizeof(x->left) - strlen(x->left), " %s (rank %d)",
					 x->all[0].nic[k].name, r - 1);
				continue;
			}
			snprintf(x->nics + strlen(x->nics), sizeof(x->nics) - strlen(x->nics),
				 "%s%s", x->nch ? "," : "", x->all[0].nic[k].name);
			x->nch++;
		}
	} else {
		for (r = 0; r < x->n; r++) {
			for (k = 0, up = 0; k < x->all[r].nnics; k++)
				up += x->all[r].nic[k].up;
			x->nch = r == 0 || up < x->nch ? up : x->nch;
		}
	}
	if (x->nch == 0)
		snprintf(x->skip, sizeof(x->skip), "not measured: no NIC is usable on every rank");
}

/* Tournament rounds on the agreed NICs; every rank gets the grid and everyone's names. */
static int measure(struct dctx *x)
{
	struct eb_fabric_opts fab = x->o->fab;
	struct eb_pairs_plan plan = {0};
	struct eb_cell *mine = NULL;
	struct eb_pairs *pairs = NULL;
	struct chan_name *own;
	struct eb_engine e;
	double phases_s;
	size_t chunk;
	int window, k, rc;

	if (x->o->fab.nics != NULL)
		fab.nics = x->nics;
	else
		fab.channels = x->nch;
	rc = eb_engine_open(&e, x->boot, &fab);
	if (rc != EB_OK)
		return rc;
	x->nch = e.nchan;
	own = calloc((size_t)e.nchan, sizeof(*own));
	x->names = calloc((size_t)e.nchan * (size_t)x->n, sizeof(*x->names));
	if (own == NULL || x->names == NULL) {
		rc = EB_ENOMEM;
		goto free_names;
	}
	for (k = 0; k < e.nchan; k++) {
		snprintf(own[k].name, sizeof(own[k].name), "%.39s", e.chan[k].nic.domain);
		own[k].gbps = (float)e.chan[k].nic.link_gbps;
	}
	rc = eb_boot_allgather(x->boot, own, x->names, (size_t)e.nchan * sizeof(*own),
			       eb_engine_deadline(&e));
	if (rc != EB_OK)
		goto free_names;
	eb_harness_tune(x->o, e.prov, &chunk, &window);
	rc = eb_pairs_open(&pairs, &e, (size_t)x->d->size, EB_MEM_HOST, chunk, window);
	if (rc != EB_OK)
		goto free_names;
	x->rounds = eb_pairs_rounds(x->n);
	if (x->rounds > x->d->rounds)
		x->rounds = (int)x->d->rounds;
	plan = (struct eb_pairs_plan){x->rounds, 1, x->d->iters, 20, x->o->fab.timeout_s};
	rc = eb_pairs_run(pairs, &plan, &mine, &x->elapsed_s);
	if (rc == EB_OK)
		rc = eb_pairs_gather(pairs, &plan, mine, &x->grid, &phases_s);
	free(mine);
	if (rc != EB_OK)
		eb_engine_abandon(&e);
	eb_pairs_close(pairs);
free_names:
	free(own);
	eb_engine_close(&e);
	return rc;
}

static const struct eb_cell *cell(const struct dctx *x, int ch, int src, int dst)
{
	return &x->grid[((size_t)ch * (size_t)x->n + (size_t)src) * (size_t)x->n + (size_t)dst];
}

/* The rate a cell is held to: the slower end's link, else the channel's typical rate
 * (eb_pairs_typical) when at least 3 ranks took part (two ranks' cells are one pair's two
 * directions: which end is slow cannot be told), else none (0). */
static double reference(const struct dctx *x, int ch, int a, int b, double typical)
{
	double la = x->names[a * x->nch + ch].gbps, lb = x->names[b * x->nch + ch].gbps;

	if (la > 0 && lb > 0)
		return la < lb ? la : lb;
	return x->n >= 3 ? typical : 0;
}

/* Slow cells of rank r on ch: how many it took part in, how many were slow, the slowest. */
struct tally {
	int cells, slow, broken, worst_peer;
	double worst, worst_ref, lat;
	uint64_t wrong;
};

static struct tally tally(const struct dctx *x, int ch, int r, double typical)
{
	struct tally t = {.worst_peer = -1};
	int p, d;

	for (p = 0; p < x->n; p++)
		for (d = 0; d < 2 && p != r; d++) {
			const struct eb_cell *c = d ? cell(x, ch, p, r) : cell(x, ch, r, p);
			double ref = reference(x, ch, r, p, typical);

			if (c->status == 0)
				continue;
			t.cells++;
			t.wrong += c->wrong;
			if (c->status < 0) {
				t.broken++;
				continue;
			}
			t.lat = c->lat_us > t.lat ? c->lat_us : t.lat;
			if (ref > 0 && c->gbps < x->d->min_link * ref)
				t.slow++;
			if (t.worst_peer < 0 || c->gbps < t.worst) {
				t.worst = c->gbps;
				t.worst_ref = ref;
				t.worst_peer = p;
			}
		}
	return t;
}

/* Blame: a NIC slow with every peer fails; one slow with some peers warns, unless each of
 * those peers fails itself (it met a bad NIC, it is not one). */
static void judge(struct dctx *x)
{
	int ch, r, p, d;

	for (ch = 0; ch < x->nch; ch++) {
		double typical = eb_pairs_typical(x->grid, x->n, ch);
		char *bad = calloc((size_t)x->n, 1);

		for (r = 0; bad != NULL && r < x->n; r++) {
			struct tally t = tally(x, ch, r, typical);

			bad[r] = t.cells > 0 && t.slow == t.cells - t.broken && t.slow > 0;
		}
		for (r = 0; bad != NULL && r < x->n; r++) {
			const char *nic = x->names[r * x->nch + ch].name;
			struct tally t = tally(x, ch, r, typical);
			int innocent = 1, blame = -1;
			char what[40];

			snprintf(what, sizeof(what), "bandwidth %.26s", nic);
			for (p = 0; p < x->n; p++)
				for (d = 0; d < 2 && p != r; d++) {
					const struct eb_cell *c =
					    d ? cell(x, ch, p, r) : cell(x, ch, r, p);

					if (c->status > 0 &&
					    c->gbps <
						x->d->min_link * reference(x, ch, r, p, typical) &&
					    !bad[p]) {
						innocent = 0;
						blame = p;
					}
				}
			if (t.cells == 0)
				eb_check_add(&x->per[r], what, EB_SKIP, 0, 0,
					     "not paired in the %d round%s run (--rounds)",
					     x->rounds, x->rounds == 1 ? "" : "s");
			else if (t.broken > 0 || t.wrong > 0)
				eb_check_add(&x->per[r], what, EB_FAIL, 0, 0,
					     "%d of %d writes with peers failed, %llu wrong words",
					     t.broken, t.cells, (unsigned long long)t.wrong);
			else if (bad[r])
				eb_check_add(
				    &x->per[r], what, EB_FAIL, t.worst,
				    x->d->min_link * t.worst_ref,
				    "slow with every peer (%d cells): as low as %.2f Gbps with "
				    "rank %d, %.2f x the %.2f Gbps %s",
				    t.cells, t.worst, t.worst_peer, t.worst / t.worst_ref,
				    t.worst_ref,
				    x->names[r * x->nch + ch].gbps > 0 ? "link" : "typical");
			else if (!innocent)
				eb_check_add(
				    &x->per[r], what, EB_WARN, t.worst,
				    x->d->min_link * t.worst_ref,
				    "slow with rank %d (%s) only: %.2f Gbps; that peer or the "
				    "path between",
				    blame, x->all[blame].host, t.worst);
			else if (t.worst_ref <= 0)
				eb_check_add(
				    &x->per[r], what, EB_PASS, t.worst, 0,
				    "%d cells, slowest %.2f Gbps, not judged: no link rate "
				    "(--link-gbps) and fewer than 3 ranks to compare; "
				    "8-byte write+ack %.1f us",
				    t.cells, t.worst, t.lat);
			else
				eb_check_add(
				    &x->per[r], what, EB_PASS, t.worst,
				    x->d->min_link * t.worst_ref,
				    "%d cells, slowest %.2f Gbps = %.2f x %.2f Gbps%s%s; 8-byte "
				    "write+ack %.1f us",
				    t.cells, t.worst, t.worst_ref > 0 ? t.worst / t.worst_ref : 0,
				    t.worst_ref,
				    x->names[r * x->nch + ch].gbps > 0 ? " link" : " typical",
				    t.slow ? " (its slow cells' peers fail)" : "", t.lat);
		}
		free(bad);
	}
}

/* Hosts with fewer usable NICs than the most any host has. */
static void compare_nics(struct dctx *x)
{
	int r, k, most = 0, *up = calloc((size_t)x->n, sizeof(*up));

	for (r = 0; up != NULL && r < x->n; r++) {
		for (k = 0; k < x->all[r].nnics; k++)
			up[r] += x->all[r].nic[k].up;
		most = up[r] > most ? up[r] : most;
	}
	for (r = 0; up != NULL && r < x->n; r++)
		if (up[r] < most)
			eb_check_add(&x->per[r], "nics vs peers", EB_FAIL, up[r], most,
				     "%d usable NIC%s, other hosts have %d", up[r],
				     up[r] == 1 ? "" : "s", most);
	free(up);
}

/* Every rank's checks to rank 0 (collective). */
static int gather_checks(struct dctx *x, const struct eb_checks *mine)
{
	int64_t most;
	struct eb_check *all;
	int32_t *counts;
	int r, rc;

	rc = eb_boot_allreduce(x->boot, mine->n, EB_MAX, &most, deadline(x));
	if (rc != EB_OK)
		return rc;
	all = calloc((size_t)x->n * (size_t)(most + 1), sizeof(*all));
	counts = calloc((size_t)x->n, sizeof(*counts));
	struct eb_check *padded = calloc((size_t)(most + 1), sizeof(*padded));

	if (all == NULL || counts == NULL || padded == NULL) {
		rc = EB_ENOMEM;
		goto free_all;
	}
	memcpy(padded, mine->c, (size_t)mine->n * sizeof(*padded));
	rc =
	    eb_boot_allgather(x->boot, padded, all, (size_t)(most + 1) * sizeof(*all), deadline(x));
	if (rc == EB_OK)
		rc = eb_boot_allgather(x->boot, &mine->n, counts, sizeof(*counts), deadline(x));
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

/* What the report layer prints; host names point into x->all. */
static int view(const struct dctx *x, const struct summary *s0, struct eb_doctor_view *v)
{
	const char **host = calloc((size_t)x->n, sizeof(*host));
	int r;

	if (host == NULL)
		return EB_ENOMEM;
	for (r = 0; r < x->n; r++)
		host[r] = x->all[r].host;
	*v = (struct eb_doctor_view){
	    .n = x->n,
	    .prov = x->prov,
	    .host = host,
	    .per = x->per,
	    .no_measure = x->d->no_measure,
	    .brief = x->d->brief,
	    .min_link = x->d->min_link,
	    .min_nvlink = x->d->min_nvlink,
	    .max_floor_us = x->d->max_floor_us,
	    .rounds_asked = x->d->rounds,
	    .iters = x->d->iters,
	    .size = x->d->size,
	    .nic = s0->nic,
	    .nnics = s0->nnics,
	    .measured = x->grid != NULL,
	    .rounds = x->rounds,
	    .nch = x->nch,
	    .elapsed_s = x->elapsed_s,
	    .skip = x->skip,
	    .left = x->left,
	    .csv = x->o->csv,
	    .json = x->o->json,
	};
	return EB_OK;
}

static int doctor_drive(struct eb_ctx *c)
{
	struct eb_boot *boot = c->boot;
	const struct eb_opts *o = c->o;
	const struct dopts *d = o->own;
	struct dctx x = {.o = o, .d = d, .boot = boot, .n = boot->size, .me = boot->rank};
	struct eb_checks mine = {0};
	struct summary me = {{0}};
	struct eb_doctor_view v = {0};
	int64_t verdict;
	int rc, k, fails = 0;

	x.single = eb_boot_single_host(boot, deadline(&x));
	if (x.single < 0)
		return x.single;
	eb_host_name(me.host, sizeof(me.host));
	eb_doctor_host(o, d, x.single, &mine, me.nic, &me.nnics, x.prov, sizeof(x.prov));
	for (k = 0; k < mine.n; k++)
		if (mine.c[k].verdict == EB_FAIL && (strcmp(mine.c[k].name, "provider") == 0 ||
						     strcmp(mine.c[k].name, "memlock") == 0))
			me.blocked = 1;
	me.blocked |= x.prov[0] == '\0';
	x.all = calloc((size_t)x.n, sizeof(*x.all));
	x.per = calloc((size_t)x.n, sizeof(*x.per));
	if (x.all == NULL || x.per == NULL) {
		rc = EB_ENOMEM;
		goto free_ctx;
	}
	if (d->dry_run) {
		rc = x.me == 0 ? view(&x, &me, &v) : EB_OK;
		if (rc == EB_OK && x.me == 0)
			eb_doctor_plan(&v);
		free(v.host);
		goto free_ctx;
	}
	/* GPUs first, alone: nothing else of this host's runs while they are measured. */
	if (boot->local_rank == 0)
		eb_doctor_gpus(o, d, x.prov, x.single, !d->no_measure, &mine);
	rc = eb_boot_allgather(boot, &me, x.all, sizeof(me), deadline(&x));
	if (rc != EB_OK)
		goto free_ctx;
	agree(&x);
	if (d->no_measure)
		snprintf(x.skip, sizeof(x.skip), "not measured (--no-measure)");
	else if (x.n < 2)
		snprintf(x.skip, sizeof(x.skip), "not measured: one rank has no peer");
	else if (x.nch > 0) {
		rc = measure(&x);
		if (rc != EB_OK)
			goto free_ctx;
	}
	rc = gather_checks(&x, &mine);
	if (rc != EB_OK)
		goto free_ctx;
	if (x.me == 0) {
		compare_nics(&x);
		if (x.grid != NULL)
			judge(&x);
		rc = view(&x, &x.all[0], &v);
		if (rc != EB_OK)
			goto free_ctx;
		fails = eb_doctor_report(&v);
		free(v.host);
	}
	/* Every rank leaves with rank 0's verdict: exit 1 when a check failed. */
	rc = eb_boot_allreduce(boot, fails, EB_MAX, &verdict, deadline(&x));
	if (rc == EB_OK && verdict > 0)
		rc = EB_EVERIFY;
free_ctx:
	for (k = 0; x.per != NULL && k < x.n; k++)
		eb_checks_free(&x.per[k]);
	free(x.per);
	free(x.all);
	free(x.names);
	free(x.grid);
	eb_checks_free(&mine);
	return rc;
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
     "tournament rounds: peers each NIC meets (default 2)"},
    {"no-measure", 0, NULL, eb_opt_flag, D(no_measure), 0, 0,
     "the checks only: no bandwidth, copy or floor measurement"},
    {"brief", 0, NULL, eb_opt_flag, D(brief), 0, 0, "print only WARN and FAIL lines"},
    {"dry-run", 0, NULL, eb_opt_flag, D(dry_run), 0, 0,
     "print the checks and measurements it would run, and stop"},
};

/* It opens its own engine once the ranks agree on the NICs worth measuring. */
static const struct eb_bench doctor_bench = {.drive = doctor_drive};

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
