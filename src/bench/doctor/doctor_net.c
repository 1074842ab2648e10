#include "doctor_net.h"
#include "harness/bench.h"
#include "bench/pairs/pairs.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

uint64_t eb_doctor_deadline(const struct dctx *x)
{
	return eb_deadline(x->o->fab.timeout_s);
}

void eb_doctor_agree(struct dctx *x)
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

int eb_doctor_open(struct dctx *x)
{
	struct eb_fabric_opts fab = x->o->fab;
	struct chan_name *own;
	size_t chunk;
	int window, k, rc;

	if (x->o->fab.nics != NULL)
		fab.nics = x->nics;
	else
		fab.channels = x->nch;
	/* Links between ranks of one host prove something of the NICs only through them. */
	fab.nic_only = strncmp(x->prov, "shm", 3) != 0;
	rc = eb_engine_open(&x->e, x->boot, &fab);
	if (rc != EB_OK)
		return rc;
	x->opened = 1;
	x->nch = x->e.nchan;
	own = calloc((size_t)x->e.nchan, sizeof(*own));
	x->names = calloc((size_t)x->e.nchan * (size_t)x->n, sizeof(*x->names));
	if (own == NULL || x->names == NULL) {
		free(own);
		return EB_ENOMEM;
	}
	for (k = 0; k < x->e.nchan; k++) {
		snprintf(own[k].name, sizeof(own[k].name), "%.39s", x->e.chan[k].nic.domain);
		own[k].gbps = (float)x->e.chan[k].nic.link_gbps;
	}
	rc = eb_boot_allgather(x->boot, own, x->names, (size_t)x->e.nchan * sizeof(*own),
			       eb_engine_deadline(&x->e));
	free(own);
	if (rc != EB_OK)
		return rc;
	eb_harness_tune(x->o, x->e.prov, &chunk, &window);
	x->rounds = eb_pairs_rounds(x->n);
	if (x->rounds > x->d->peers)
		x->rounds = (int)x->d->peers;
	return eb_pairs_open(&x->pairs, &x->e, (size_t)x->d->size, EB_MEM_HOST, chunk, window, NULL,
			     0, x->rounds);
}

void eb_doctor_close(struct dctx *x, int failed)
{
	eb_pairs_close(x->pairs);
	x->pairs = NULL;
	if (x->opened) {
		if (failed)
			eb_engine_abandon(&x->e);
		eb_engine_close(&x->e);
		x->opened = 0;
	}
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
struct nic_tally {
	int cells, slow, worst_peer;
	double worst, worst_ref, lat;
	uint64_t wrong;
};

static struct nic_tally tally_nic(const struct dctx *x, int ch, int r, double typical)
{
	struct nic_tally t = {.worst_peer = -1};
	int p, d;

	for (p = 0; p < x->n; p++)
		for (d = 0; d < 2 && p != r; d++) {
			const struct eb_cell *c = d ? cell(x, ch, p, r) : cell(x, ch, r, p);
			double ref = reference(x, ch, r, p, typical);

			if (!c->measured)
				continue;
			t.cells++;
			t.wrong += c->wrong;
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
/* The peer of a cell of r's below --min-link that is not itself slow with every peer (-1:
 * none): r is not innocent of it. */
static int blamed_peer(const struct dctx *x, int ch, int r, double typical, const char *bad)
{
	int p, d, blame = -1;

	for (p = 0; p < x->n; p++)
		for (d = 0; d < 2 && p != r; d++) {
			const struct eb_cell *c = d ? cell(x, ch, p, r) : cell(x, ch, r, p);

			if (c->measured &&
			    c->gbps < x->d->min_link * reference(x, ch, r, p, typical) && !bad[p])
				blame = p;
		}
	return blame;
}

/* Rank r's NIC on channel ch: its line. */
static void judge_nic(struct dctx *x, int ch, int r, double typical, const char *bad)
{
	const char *nic = x->names[r * x->nch + ch].name;
	struct nic_tally t = tally_nic(x, ch, r, typical);
	int blame = blamed_peer(x, ch, r, typical, bad);
	const char *rate = x->names[r * x->nch + ch].gbps > 0 ? "link" : "typical";
	struct eb_checks *s = &x->per[r];
	char what[40];

	snprintf(what, sizeof(what), "bandwidth %.26s", nic);
	if (t.cells == 0)
		eb_check_add(s, what, EB_SKIP, 0, 0, "not paired in the %d round%s run (--peers)",
			     x->rounds, x->rounds == 1 ? "" : "s");
	else if (t.wrong > 0)
		eb_check_add(s, what, EB_FAIL, 0, 0, "%llu wrong words in %d cells with peers",
			     (unsigned long long)t.wrong, t.cells);
	else if (bad[r])
		eb_check_add(s, what, EB_FAIL, t.worst, x->d->min_link * t.worst_ref,
			     "slow with every peer (%d cells): as low as %.2f Gbps with rank %d, "
			     "%.2f x the %.2f Gbps %s",
			     t.cells, t.worst, t.worst_peer, t.worst / t.worst_ref, t.worst_ref,
			     rate);
	else if (blame >= 0)
		eb_check_add(
		    s, what, EB_WARN, t.worst, x->d->min_link * t.worst_ref,
		    "slow with rank %d (%s) only: %.2f Gbps; that peer or the path between", blame,
		    x->all[blame].host, t.worst);
	else if (t.worst_ref <= 0)
		eb_check_add(s, what, EB_PASS, t.worst, 0,
			     "%d cells, slowest %.2f Gbps, not judged: no link rate (--link-gbps) "
			     "and fewer than 3 ranks to compare; 8-byte write+ack %.1f us",
			     t.cells, t.worst, t.lat);
	else
		eb_check_add(
		    s, what, EB_PASS, t.worst, x->d->min_link * t.worst_ref,
		    "%d cells, slowest %.2f Gbps = %.2f x %.2f Gbps %s%s; 8-byte write+ack "
		    "%.1f us",
		    t.cells, t.worst, t.worst / t.worst_ref, t.worst_ref, rate,
		    t.slow ? " (its slow cells' peers fail)" : "", t.lat);
}

void eb_doctor_judge(struct dctx *x)
{
	int ch, r;

	for (r = 0; r < x->n && (x->e.local == EB_LOCAL_SHM || x->e.local == EB_LOCAL_PROVIDER) &&
		    strncmp(x->prov, "shm", 3) != 0;
	     r++)
		eb_check_add(&x->per[r], "same-host links", EB_WARN, 0, 0,
			     "%s found no way to keep peers on one host off shared memory: their "
			     "cells say nothing of the NICs",
			     x->prov);
	for (ch = 0; ch < x->nch; ch++) {
		double typical = eb_pairs_typical(x->grid, x->n, ch);
		char *bad = calloc((size_t)x->n, 1);

		for (r = 0; bad != NULL && r < x->n; r++) {
			struct nic_tally t = tally_nic(x, ch, r, typical);

			bad[r] = t.cells > 0 && t.slow == t.cells;
		}
		for (r = 0; bad != NULL && r < x->n; r++)
			judge_nic(x, ch, r, typical, bad);
		free(bad);
	}
}

/* Hosts with fewer usable NICs than the most any host has. */
void eb_doctor_compare_nics(struct dctx *x)
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
