/* An all-to-all-v: every rank writes a buffer of its own length to every other rank at once,
 * each write cut into chunks over the channels (a layout, or split balanced through a pool),
 * every chunk carrying immediate data the target counts per (source, channel). A step arms
 * the writes to each peer and what each peer owes here, then waits for both. Counts are
 * cumulative, so steps need no barrier between them. */
#ifndef EFABENCH_A2AV_H
#define EFABENCH_A2AV_H

#include "efabench/layout.h"
#include "efabench/xfer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct eb_a2av {
	struct eb_engine *e;
	int nranks, nchan;
	size_t chunk;
	struct eb_xfer *x;	    /* [peer][chan] */
	void *block;		    /* the arrays below */
	struct eb_xfer **all;	    /* the step's armed writes */
	struct eb_imm_wait *waits;  /* the step's arrivals */
	uint64_t *expect;	    /* [source][chan] chunks counted so far */
	uint64_t *total;	    /* [source] the same over every channel (pooled writes) */
	struct eb_xfer_pool *pools; /* [peer] */
	int n, nw;
};

/* Transfers for every (peer, channel) with window chunks in flight each; EB_ENOMEM. */
int eb_a2av_init(struct eb_a2av *a, struct eb_engine *e, int nranks, size_t chunk, int window);
void eb_a2av_fini(struct eb_a2av *a);
/* Count from what has arrived (every chunk of the last step is here, none of the next). */
void eb_a2av_sync(struct eb_a2av *a, int rank);
/* A new step. */
void eb_a2av_begin(struct eb_a2av *a);
/* Arm the write of len bytes at buf to peer's buffer (rkeys) at roff; pooled: split balanced
 * over the channels. *xs and the count returned are the armed transfers (to stage, say). */
int eb_a2av_write(struct eb_a2av *a, enum eb_layout l, int pooled, int rank, int peer,
		  const char *buf, size_t len, const struct eb_mr *mrs, const struct eb_rkey *rkeys,
		  uint64_t roff, uint32_t imm, struct eb_xfer **xs);
/* What peer writes here in this step, len bytes the same way. */
void eb_a2av_expect(struct eb_a2av *a, enum eb_layout l, int pooled, int rank, int peer,
		    size_t len);
/* Every armed write complete and every expected chunk here. */
int eb_a2av_wait(struct eb_a2av *a, uint64_t deadline);

#ifdef __cplusplus
}
#endif

#endif
