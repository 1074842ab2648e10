/* What each NIC carried in a point: the bytes efabench posted on it (every engine of the rank,
 * every channel, to each peer; eb_chan_sent), the bytes that arrived at it (what the peers
 * posted to the rank on the same channel of the same engine), and the NIC's own counters
 * (efabench/nic_ctr.h), read before and after each visit of the point. Rank 0 sets them side by
 * side per rank and NIC, with the receive balance over a host's NICs and what stands out. */
#ifndef EB_HARNESS_NICS_H
#define EB_HARNESS_NICS_H

#include "bench.h"
#include "efabench/nic_ctr.h"

#define EB_NICS_MAX 32

/* This rank's side of a point. */
struct eb_nicrun {
	int nics; /* distinct NIC domains over the rank's engines; 0: not counted */
	char name[EB_NICS_MAX][64];
	int readable[EB_NICS_MAX];
	struct eb_nic_ctr *before, *moved; /* [nics] */
	char why[160];			   /* why the first unreadable NIC has no counters */
	int nchan;   /* (engine, channel) pairs, in the engines' opening order */
	int *nic_of; /* [nchan] index into name[] */
	int nranks;
	uint64_t *base; /* [nchan][nranks] posted before the visit */
	uint64_t *sent; /* [nchan][nranks] posted in the point's visits */
};

/* One NIC of one rank as rank 0 has it. The counters are its host's NIC's, the same for every
 * rank that uses it; `owner` marks the rank whose reading they are. */
struct eb_nic_meas {
	int rank, owner, readable;
	char host[64], name[64];
	uint64_t sent, received; /* efabench's payload bytes */
	uint64_t tx, rx;	 /* the counters' bytes (tx_bytes, rx_bytes) */
	int has_tx, has_rx, nmoved;
	char key[16][40]; /* the other counters that moved */
	uint64_t v[16];
	double rx_share; /* rx (else received) over the mean of its host's NICs */
};

int eb_nics_alloc(const struct eb_ctx *c, struct eb_nicrun *n);
void eb_nics_free(struct eb_nicrun *n);
/* Around each visit of the point. */
void eb_nics_before(struct eb_nicrun *n);
void eb_nics_after(struct eb_nicrun *n);
/* Collective, after the point's last visit: every rank's side on rank 0 (m->nic, m->nnic). */
int eb_nics_finish(struct eb_ctx *c, struct eb_nicrun *n, struct eb_meas *m);

/* Rank 0: a record's nic_counters (per rank and NIC: sent, received, tx_bytes, rx_bytes, the
 * counters that moved) and its balance and flags; nothing where nothing was counted. */
void eb_nics_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_rec *r);
/* Rank 0: the NICs of a row's points (m[0..n), the last row's: the largest size of a sweep),
 * a line per point and host NIC, and what stands out; shm's "no NIC" said once. */
void eb_nics_table(struct eb_sheet *s, const struct eb_meas *m, int n);

#endif
