#include "nics.h"
#include "point.h"
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENGINES 64
#define MOVED_MAX   16
/* Below this many of efabench's bytes a NIC's ratios and shares are its acknowledgements' and
 * the protocol's own, not the payload's: not shown, not judged. */
#define MEANINGFUL (64.0 * 1024)

/* ---- this rank's side ---- */

static int engines(struct eb_engine **list)
{
	return eb_engines_open(list, MAX_ENGINES);
}

static int nic_index(struct eb_nicrun *n, const char *domain)
{
	int i;

	for (i = 0; i < n->nics; i++)
		if (strcmp(n->name[i], domain) == 0)
			return i;
	if (n->nics == EB_NICS_MAX)
		return EB_NICS_MAX - 1;
	snprintf(n->name[n->nics], sizeof(n->name[0]), "%s", domain);
	return n->nics++;
}

int eb_nics_alloc(const struct eb_ctx *c, struct eb_nicrun *n)
{
	struct eb_engine *list[MAX_ENGINES];
	int ne = engines(list), j, ch, k = 0;

	memset(n, 0, sizeof(*n));
	n->nranks = c->nranks;
	for (j = 0; j < ne; j++)
		n->nchan += list[j]->nchan;
	if (n->nchan == 0)
		return EB_OK;
	n->nic_of = calloc((size_t)n->nchan, sizeof(*n->nic_of));
	n->base = calloc((size_t)n->nchan * (size_t)n->nranks, sizeof(*n->base));
	n->sent = calloc((size_t)n->nchan * (size_t)n->nranks, sizeof(*n->sent));
	if (n->nic_of == NULL || n->base == NULL || n->sent == NULL)
		return EB_ENOMEM;
	for (j = 0; j < ne; j++)
		for (ch = 0; ch < list[j]->nchan; ch++)
			n->nic_of[k++] = nic_index(n, list[j]->chan[ch].nic.domain);
	n->before = calloc((size_t)n->nics, sizeof(*n->before));
	n->moved = calloc((size_t)n->nics, sizeof(*n->moved));
	return n->before != NULL && n->moved != NULL ? EB_OK : EB_ENOMEM;
}

void eb_nics_free(struct eb_nicrun *n)
{
	free(n->nic_of);
	free(n->base);
	free(n->sent);
	free(n->before);
	free(n->moved);
	memset(n, 0, sizeof(*n));
}

/* Every channel's posted bytes, [nchan][nranks], into (or added to) v. */
static void posted(const struct eb_nicrun *n, uint64_t *v, int add)
{
	struct eb_engine *list[MAX_ENGINES];
	int ne = engines(list), j, ch, p, k = 0;

	for (j = 0; j < ne; j++)
		for (ch = 0; ch < list[j]->nchan && k < n->nchan; ch++, k++)
			for (p = 0; p < n->nranks; p++) {
				uint64_t x =
				    __atomic_load_n(&list[j]->chan[ch].sent[p], __ATOMIC_RELAXED);
				uint64_t *at = &v[(size_t)k * (size_t)n->nranks + (size_t)p];

				*at = add ? *at + x : x;
			}
}

void eb_nics_before(struct eb_nicrun *n)
{
	int i;

	if (n->nchan == 0)
		return;
	posted(n, n->base, 0);
	for (i = 0; i < n->nics; i++)
		n->readable[i] =
		    eb_nic_ctr_read(n->name[i], &n->before[i], n->why[0] ? NULL : n->why,
				    n->why[0] ? 0 : sizeof(n->why)) == EB_OK;
}

/* Counter key of c, added to (or added as). */
static void add(struct eb_nic_ctr *c, const char *key, uint64_t v)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->key[i], key) == 0) {
			c->v[i] += v;
			return;
		}
	if (c->n == EB_NIC_CTR_MAX)
		return;
	snprintf(c->key[c->n], sizeof(c->key[0]), "%s", key);
	c->v[c->n++] = v;
}

void eb_nics_after(struct eb_nicrun *n)
{
	size_t i, all = (size_t)n->nchan * (size_t)n->nranks;
	struct eb_nic_ctr now, d;
	int k, j;

	if (n->nchan == 0)
		return;
	for (i = 0; i < all; i++)
		n->sent[i] -= n->base[i];
	posted(n, n->sent, 1);
	for (k = 0; k < n->nics; k++) {
		if (!n->readable[k] || eb_nic_ctr_read(n->name[k], &now, NULL, 0) != EB_OK)
			continue;
		eb_nic_ctr_diff(&n->before[k], &now, &d);
		if (n->moved[k].n == 0) {
			n->moved[k] = d;
			continue;
		}
		for (j = 0; j < d.n; j++)
			add(&n->moved[k], d.key[j], d.v[j]);
	}
}

/* ---- to rank 0 ---- */

struct wire_head {
	char host[64];
	int32_t nics, nchan, nsent, pad;
};

struct wire_nic {
	char name[64];
	int32_t readable, nmoved, has_tx, has_rx;
	uint64_t tx, rx;
	char key[MOVED_MAX][40];
	uint64_t v[MOVED_MAX];
};

struct wire_sent {
	int32_t k, peer;
	uint64_t bytes;
};

/* A NIC's moved counters: tx and rx bytes apart, then the others that moved (faults first). */
static void wire_nic(const struct eb_nicrun *n, int i, struct wire_nic *w)
{
	const struct eb_nic_ctr *c = &n->moved[i];
	int pass, j;

	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", n->name[i]);
	w->readable = n->readable[i];
	for (pass = 0; pass < 2; pass++)
		for (j = 0; j < c->n; j++) {
			int tx = strcmp(c->key[j], "tx_bytes") == 0,
			    rx = strcmp(c->key[j], "rx_bytes") == 0;

			if (pass == 0 && (tx || rx)) {
				*(tx ? &w->tx : &w->rx) = c->v[j];
				*(tx ? &w->has_tx : &w->has_rx) = 1;
			}
			if (tx || rx || c->v[j] == 0 || w->nmoved == MOVED_MAX ||
			    eb_nic_ctr_is_fault(c->key[j]) != (pass == 0))
				continue;
			snprintf(w->key[w->nmoved], sizeof(w->key[0]), "%s", c->key[j]);
			w->v[w->nmoved++] = c->v[j];
		}
}

/* This rank's side as bytes: head, NICs, each channel's NIC, what it posted to each peer. */
static char *wire(const struct eb_nicrun *n, size_t *len)
{
	size_t i, all = (size_t)n->nchan * (size_t)n->nranks, nsent = 0, at;
	struct wire_head h = {.nics = n->nics, .nchan = n->nchan};
	char *b;

	for (i = 0; i < all; i++)
		nsent += n->sent[i] > 0;
	*len = sizeof(h) + sizeof(struct wire_nic) * (size_t)n->nics +
	       sizeof(int32_t) * (size_t)n->nchan + sizeof(struct wire_sent) * nsent;
	b = calloc(1, *len);
	if (b == NULL)
		return NULL;
	eb_host_name(h.host, sizeof(h.host));
	h.nsent = (int32_t)nsent;
	memcpy(b, &h, sizeof(h));
	at = sizeof(h);
	for (i = 0; i < (size_t)n->nics; i++, at += sizeof(struct wire_nic))
		wire_nic(n, (int)i, (struct wire_nic *)(void *)(b + at));
	for (i = 0; i < (size_t)n->nchan; i++, at += sizeof(int32_t))
		memcpy(b + at, &n->nic_of[i], sizeof(int32_t));
	for (i = 0; i < all; i++)
		if (n->sent[i] > 0) {
			struct wire_sent w = {(int32_t)(i / (size_t)n->nranks),
					      (int32_t)(i % (size_t)n->nranks), n->sent[i]};

			memcpy(b + at, &w, sizeof(w));
			at += sizeof(w);
		}
	return b;
}

/* Each rank's side, parsed (pointers into its bytes). */
struct side {
	struct wire_head h;
	const char *nic;    /* struct wire_nic [nics], unaligned */
	const char *nic_of; /* int32 [nchan], unaligned */
	const char *sent;   /* struct wire_sent [nsent], unaligned */
};

static int parse(const char *b, size_t len, struct side *s)
{
	size_t need;

	if (len < sizeof(s->h))
		return 0;
	memcpy(&s->h, b, sizeof(s->h));
	need = sizeof(s->h) + sizeof(struct wire_nic) * (size_t)s->h.nics +
	       sizeof(int32_t) * (size_t)s->h.nchan + sizeof(struct wire_sent) * (size_t)s->h.nsent;
	if (s->h.nics < 0 || s->h.nics > EB_NICS_MAX || need > len)
		return 0;
	s->nic = b + sizeof(s->h);
	s->nic_of = b + sizeof(s->h) + sizeof(struct wire_nic) * (size_t)s->h.nics;
	s->sent = s->nic_of + sizeof(int32_t) * (size_t)s->h.nchan;
	return 1;
}

static int32_t nic_of(const struct side *s, int k)
{
	int32_t v = -1;

	if (k >= 0 && k < s->h.nchan)
		memcpy(&v, s->nic_of + sizeof(int32_t) * (size_t)k, sizeof(v));
	return v;
}

static void nic_at(const struct side *s, int i, struct wire_nic *w)
{
	memcpy(w, s->nic + sizeof(*w) * (size_t)i, sizeof(*w));
}

/* Whether NIC i of side s is named name. */
static int nic_named(const struct side *s, int i, const char *name)
{
	struct wire_nic w;

	if (i < 0 || i >= s->h.nics)
		return 0;
	nic_at(s, i, &w);
	return strcmp(w.name, name) == 0;
}

static struct wire_sent sent_at(const struct side *s, int i)
{
	struct wire_sent w;

	memcpy(&w, s->sent + sizeof(w) * (size_t)i, sizeof(w));
	return w;
}

/* Rank 0's list: a line per (rank, NIC), efabench's bytes each way and the counters. */
static int collect(const struct side *sides, int nranks, struct eb_meas *m)
{
	int r, i, k, total = 0;

	for (r = 0; r < nranks; r++)
		total += sides[r].h.nics;
	m->nic = calloc((size_t)(total > 0 ? total : 1), sizeof(*m->nic));
	if (m->nic == NULL)
		return EB_ENOMEM;
	for (r = 0; r < nranks; r++)
		for (i = 0; i < sides[r].h.nics; i++) {
			struct wire_nic w;
			struct eb_nic_meas *x = &m->nic[m->nnic++];

			nic_at(&sides[r], i, &w);

			*x = (struct eb_nic_meas){.rank = r,
						  .owner = r,
						  .readable = w.readable,
						  .tx = w.tx,
						  .rx = w.rx,
						  .has_tx = w.has_tx,
						  .has_rx = w.has_rx,
						  .nmoved = w.nmoved};
			snprintf(x->host, sizeof(x->host), "%s", sides[r].h.host);
			snprintf(x->name, sizeof(x->name), "%s", w.name);
			memcpy(x->key, w.key, sizeof(x->key));
			memcpy(x->v, w.v, sizeof(x->v));
		}
	/* what each rank posted on a channel left through that channel's NIC, and reached the
	 * peer's NIC of the same channel of the same engine */
	for (r = 0; r < nranks; r++)
		for (k = 0; k < sides[r].h.nsent; k++) {
			struct wire_sent w = sent_at(&sides[r], k);
			int from = nic_of(&sides[r], w.k), to;

			for (i = 0; i < m->nnic; i++) {
				struct eb_nic_meas *x = &m->nic[i];

				if (x->rank == r && from >= 0 &&
				    nic_named(&sides[r], from, x->name))
					x->sent += w.bytes;
				if (w.peer < 0 || w.peer >= nranks || x->rank != w.peer)
					continue;
				to = nic_of(&sides[w.peer], w.k);
				if (to >= 0 && nic_named(&sides[w.peer], to, x->name))
					x->received += w.bytes;
			}
		}
	return EB_OK;
}

/* One reading per host NIC: the lowest rank's, copied to the others that use it; then each
 * NIC's share of its host's receiving (counters' rx where read, else efabench's). */
static void share(struct eb_meas *m)
{
	int i, j;

	for (i = 0; i < m->nnic; i++)
		for (j = 0; j < i; j++) {
			struct eb_nic_meas *x = &m->nic[i], *o = &m->nic[j];

			if (o->owner != o->rank || strcmp(o->host, x->host) != 0 ||
			    strcmp(o->name, x->name) != 0)
				continue;
			x->owner = o->rank;
			x->readable = o->readable;
			x->tx = o->tx, x->rx = o->rx, x->has_tx = o->has_tx, x->has_rx = o->has_rx;
			x->nmoved = o->nmoved;
			memcpy(x->key, o->key, sizeof(x->key));
			memcpy(x->v, o->v, sizeof(x->v));
			break;
		}
	for (i = 0; i < m->nnic; i++) {
		double sum = 0, mine = 0, payload = 0;
		int n = 0;

		for (j = 0; j < m->nnic; j++) {
			const struct eb_nic_meas *o = &m->nic[j];
			double v = o->has_rx ? (double)o->rx : (double)o->received;

			if (strcmp(o->host, m->nic[i].host) != 0)
				continue;
			payload += (double)o->received;
			if (o->owner == o->rank) {
				sum += v;
				n++;
			}
			if (strcmp(o->name, m->nic[i].name) == 0)
				mine = v;
		}
		/* a host that received none of efabench's bytes has no balance to speak of */
		m->nic[i].rx_share = sum > 0 && payload >= MEANINGFUL ? mine / (sum / n) : 0;
	}
}

int eb_nics_finish(struct eb_ctx *c, struct eb_nicrun *n, struct eb_meas *m)
{
	size_t len = 0, stride = 0;
	char *mine, *all = NULL;
	struct side *sides;
	int r, rc;

	if (n->nchan == 0) /* alike on every rank: no engine here, none anywhere */
		return EB_OK;
	mine = wire(n, &len);
	sides = calloc((size_t)c->nranks, sizeof(*sides));
	rc = mine != NULL && sides != NULL ? eb_point_gather_var(c, mine, len, &all, &stride)
					   : EB_ENOMEM;
	for (r = 0; rc == EB_OK && r < c->nranks; r++)
		if (!parse(all + (size_t)r * stride, stride, &sides[r])) {
			eb_err("rank %d's NIC counts did not parse", r);
			rc = EB_EPROTO;
		}
	if (rc == EB_OK && c->rank == 0)
		rc = collect(sides, c->nranks, m);
	if (rc == EB_OK && c->rank == 0)
		share(m);
	free(all);
	free(sides);
	free(mine);
	return rc;
}

/* ---- what rank 0 says of them ---- */

/* Whether a point's layout is meant to spread every rank's bytes over its NICs. */
static int balancing(const struct eb_pt *pt)
{
	return pt->variant != NULL && pt->variant->layout == EB_LAYOUT_SPLIT;
}

/* Bytes every rank posted on one host NIC (efabench's, against its counters' tx). */
static uint64_t host_sent(const struct eb_meas *m, const struct eb_nic_meas *x, int received)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < m->nnic; i++)
		if (strcmp(m->nic[i].host, x->host) == 0 && strcmp(m->nic[i].name, x->name) == 0)
			n += received ? m->nic[i].received : m->nic[i].sent;
	return n;
}

/* What stands out, a line each into say (n lines at most): a NIC whose counters saw less
 * than efabench moved through it, a receive share above 1.2 or below 0.8 x its host's mean
 * where the layout spreads, a fault counter that moved. Returns how many. */
static int flags(const struct eb_meas *m, char (*say)[320], int n)
{
	int i, k, got = 0;

	for (i = 0; i < m->nnic && got < n; i++) {
		const struct eb_nic_meas *x = &m->nic[i];
		uint64_t out = host_sent(m, x, 0), in = host_sent(m, x, 1);

		if (x->owner != x->rank || !x->readable)
			continue;
		if (x->has_tx && x->tx < out && (double)out >= MEANINGFUL && got < n)
			snprintf(say[got++], sizeof(say[0]),
				 "%s on %s: its counters saw %llu bytes sent, efabench posted %llu",
				 x->name, x->host, (unsigned long long)x->tx,
				 (unsigned long long)out);
		if (x->has_rx && x->rx < in && (double)in >= MEANINGFUL && got < n)
			snprintf(say[got++], sizeof(say[0]),
				 "%s on %s: its counters saw %llu bytes received, %llu arrived",
				 x->name, x->host, (unsigned long long)x->rx,
				 (unsigned long long)in);
		if (balancing(m->pt) && x->rx_share > 0 &&
		    (x->rx_share > 1.2 || x->rx_share < 0.8) && got < n)
			snprintf(say[got++], sizeof(say[0]),
				 "%s on %s received %.2f x its host's mean under a layout that "
				 "spreads%s",
				 x->name, x->host, x->rx_share,
				 x->rx_share < 0.8 ? " (a slow or busy NIC takes less)" : "");
		for (k = 0; k < x->nmoved && got < n; k++)
			if (eb_nic_ctr_is_fault(x->key[k]))
				snprintf(say[got++], sizeof(say[0]), "%s on %s: %s moved by %llu",
					 x->name, x->host, x->key[k], (unsigned long long)x->v[k]);
	}
	return got;
}

static double most_share(const struct eb_meas *m)
{
	double most = 0;
	int i;

	for (i = 0; i < m->nnic; i++)
		most = m->nic[i].rx_share > most ? m->nic[i].rx_share : most;
	return most;
}

void eb_nics_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *r)
{
	char say[16][320];
	int i, k, n;

	(void)c;
	if (m->nic == NULL || r->n == 0)
		return;
	eb_rec_items(r, "nic_counters");
	for (i = 0; i < m->nnic; i++) {
		const struct eb_nic_meas *x = &m->nic[i];
		struct eb_rec *y = eb_rec_item(r, "nic_counters");

		if (y == NULL)
			return;
		eb_rec_int(y, "rank", x->rank);
		eb_rec_str(y, "host", x->host);
		eb_rec_str(y, "nic", x->name);
		eb_rec_int(y, "sent", (long long)x->sent);
		eb_rec_int(y, "received", (long long)x->received);
		eb_rec_num_or_null(y, "tx_bytes", (double)x->tx, x->readable && x->has_tx);
		eb_rec_num_or_null(y, "rx_bytes", (double)x->rx, x->readable && x->has_rx);
		eb_rec_int(y, "counters_of_rank", x->owner);
		eb_rec_num_or_null(y, "rx_share", x->rx_share, x->rx_share > 0);
		eb_rec_obj(y, "moved");
		for (k = 0; k < x->nmoved; k++)
			eb_rec_int(y, x->key[k], (long long)x->v[k]);
		eb_rec_end(y);
	}
	eb_rec_num(r, "nic_rx_balance", most_share(m));
	eb_rec_to(r, EB_NOT_CSV);
	n = flags(m, say, 16);
	for (k = 0; k < n; k++) /* absent where nothing stands out */
		eb_rec_strs(r, "nic_flags", say[k]);
}

static const struct eb_colspec nic_cols[] = {
    {"Point", "point", 20, 0, 1, NULL},	    {"Host", "host", 10, 0, 1, NULL},
    {"NIC", "nic", 12, 0, 1, NULL},	    {"Sent MB", "sent_mb", 10, 2, 0, NULL},
    {"Recv MB", "recv_mb", 10, 2, 0, NULL}, {"tx MB", "tx_mb", 10, 2, 0, NULL},
    {"rx MB", "rx_mb", 10, 2, 0, NULL},	    {"tx/sent", "tx_ratio", 7, 3, 0, NULL},
    {"rx/recv", "rx_ratio", 7, 3, 0, NULL}, {"rx share", "rx_share", 8, 2, 0, NULL},
};

/* A host NIC's line: what every rank moved through it, what it counted. */
static void nic_row(struct eb_sheet *s, const struct eb_meas *m, const struct eb_nic_meas *x)
{
	uint64_t out = host_sent(m, x, 0), in = host_sent(m, x, 1);
	struct eb_rec r = {0};

	eb_rec_str(&r, "point", m->pt->name != NULL ? m->pt->name : "");
	eb_rec_str(&r, "host", x->host);
	eb_rec_str(&r, "nic", x->name);
	eb_rec_num(&r, "sent_mb", (double)out / 1e6);
	eb_rec_num(&r, "recv_mb", (double)in / 1e6);
	eb_rec_num_or_null(&r, "tx_mb", (double)x->tx / 1e6, x->readable && x->has_tx);
	eb_rec_num_or_null(&r, "rx_mb", (double)x->rx / 1e6, x->readable && x->has_rx);
	eb_rec_num_or_null(&r, "tx_ratio", out > 0 ? (double)x->tx / (double)out : 0,
			   x->readable && x->has_tx && (double)out >= MEANINGFUL);
	eb_rec_num_or_null(&r, "rx_ratio", in > 0 ? (double)x->rx / (double)in : 0,
			   x->readable && x->has_rx && (double)in >= MEANINGFUL);
	eb_rec_num_or_null(&r, "rx_share", x->rx_share, x->rx_share > 0);
	eb_sheet_show(s, &r);
	eb_rec_free(&r);
}

void eb_nics_table(struct eb_sheet *s, const struct eb_meas *m, int n)
{
	char say[16][320];
	int i, k, nf, lines = 0, read = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < m[i].nnic; k++) {
			lines++;
			read += m[i].nic[k].readable;
		}
	if (lines == 0)
		return;
	if (read == 0) { /* shm, or NICs that keep no counters: nothing to set beside */
		eb_sheet_say(s, NULL);
		eb_sheet_say(s, "NIC counters: none (%s has no NIC counters to read)",
			     m[0].nnic > 0 ? m[0].nic[0].name : "the provider");
		return;
	}
	eb_sheet_table(s,
		       "What each NIC carried: efabench's payload bytes against the NIC's own "
		       "counters (the last row's points)",
		       nic_cols, (int)(sizeof(nic_cols) / sizeof(nic_cols[0])));
	for (i = 0; i < n; i++)
		for (k = 0; k < m[i].nnic; k++)
			if (m[i].nic[k].owner == m[i].nic[k].rank)
				nic_row(s, &m[i], &m[i].nic[k]);
	for (i = 0; i < n; i++)
		for (k = 0, nf = flags(&m[i], say, 16); k < nf; k++)
			eb_sheet_say(s, "! %s: %s", m[i].pt->name != NULL ? m[i].pt->name : "",
				     say[k]);
}
