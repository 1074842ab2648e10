/* What one producer of `efabench moe` does in a phase (dispatch or combine), written once for
 * GPU blocks and CPU threads. Producer p of P takes, for every destination rank, its share of
 * the items going there (a contiguous p-th of them): in decode one put per item, in prefill
 * it packs its share contiguously, a chunk's worth of items per put. Items for the rank itself are
 * copied locally. Producer p uses proxy thread p % nq; each proxy thread's producers signal every
 * destination once per phase (eb_moe_produce). */
#ifndef EB_GPU_MOE_WORK_H
#define EB_GPU_MOE_WORK_H

#include "efabench/proxy_dev.h"

#include <stdint.h>
#if !defined(__CUDACC__)
#include <stdatomic.h>
#include <string.h>
#endif

#define EB_MOE_MAX_Q 16
#define EB_MOE_MARK  (1ull << 32) /* per producer and destination, beside the item count */

struct eb_moe_phase {
	const int64_t *off; /* [ranks + 1] items per destination */
	const uint64_t *src, *packed, *len, *dst;
	uint32_t sig;  /* word sig + this rank at the destination counts what this rank sent */
	int64_t piece; /* packing: items per write at most (a chunk's worth), packed then put in
			* turn so that packing the next overlaps the last one's transfer */
};

struct eb_moe_work {
	struct eb_proxy_dev d[EB_MOE_MAX_Q];
	int nq, producers, rank, ranks, coalesce;
	char *src, *dst; /* this rank's regions: packing and its own items are local copies */
	struct eb_moe_phase ph;
	/* CPU producers over GPU memory: gather copies a range of items at once (one kernel on
	 * the thread's stream, reading the item arrays of gph, the phase's copies in GPU
	 * memory); sync waits for what the thread queued. GPU blocks copy themselves. */
	int (*gather)(const struct eb_moe_work *w, int own, int64_t a, int64_t b);
	int (*sync)(void);
	struct eb_moe_phase gph;
	/* [nq][ranks + 1] counters shared by the producers (GPU memory for GPU producers),
	 * zeroed once: per destination, and for the end of the phase. */
	uint64_t *tickets;
};

#if defined(__CUDACC__)
/* The block copies together; 16 bytes at a time when everything is aligned to it. */
EB_Q_FN void eb_moe_copy(char *to, const char *from, uint64_t n)
{
	uint64_t i;

	if ((((uintptr_t)to | (uintptr_t)from | n) & 15) == 0) {
		for (i = threadIdx.x; i < n / 16; i += blockDim.x)
			((uint4 *)to)[i] = ((const uint4 *)from)[i];
	} else {
		for (i = threadIdx.x; i < n; i += blockDim.x)
			to[i] = from[i];
	}
}
#define EB_MOE_LEAD (threadIdx.x == 0)
#define EB_MOE_SYNC(w)                                                                             \
	do {                                                                                       \
		__threadfence_system();                                                            \
		__syncthreads();                                                                   \
	} while (0)
#else
EB_Q_FN void eb_moe_copy(char *to, const char *from, uint64_t n)
{
	memcpy(to, from, n);
}
#define EB_MOE_LEAD 1
#define EB_MOE_SYNC(w)                                                                             \
	do {                                                                                       \
		if ((w)->sync != NULL)                                                             \
			(void)(w)->sync();                                                         \
	} while (0)
#endif

/* A ticket: the count before this producer's arrival (counters only grow). */
#if defined(__CUDACC__)
EB_Q_FN uint64_t eb_moe_ticket(uint64_t *t)
{
	__threadfence_system(); /* this producer's pushes come before its ticket */
	return (uint64_t)atomicAdd((unsigned long long *)t, 1ull);
}
#else
EB_Q_FN uint64_t eb_moe_ticket(uint64_t *t)
{
	return atomic_fetch_add_explicit((_Atomic uint64_t *)t, 1, memory_order_acq_rel);
}
#endif

/* Producers on proxy thread q, and the items they take for a destination with n items. */
EB_Q_FN int eb_moe_on_queue(const struct eb_moe_work *w, int q)
{
	return (w->producers - q + w->nq - 1) / w->nq;
}

EB_Q_FN int64_t eb_moe_queue_items(const struct eb_moe_work *w, int q, int64_t n)
{
	int64_t sum = 0;
	int p;

	for (p = q; p < w->producers; p += w->nq)
		sum += n * (p + 1) / w->producers - n * p / w->producers;
	return sum;
}

/* Items [a, b) copied within this rank: to its own destination region (own), or packed in
 * its source region where they do not already sit there. 0 or -1 after one line. */
EB_Q_FN int eb_moe_copy_items(const struct eb_moe_work *w, int own, int64_t a, int64_t b)
{
	const struct eb_moe_phase *ph = &w->ph;
	int64_t i;

#if !defined(__CUDACC__)
	if (w->gather != NULL)
		return b > a ? w->gather(w, own, a, b) : 0;
#endif
	for (i = a; i < b; i++)
		if (own || ph->packed[i] != ph->src[i])
			eb_moe_copy(own ? w->dst + ph->dst[i] : w->src + ph->packed[i],
				    w->src + ph->src[i], ph->len[i]);
	return 0;
}

/* The items [a, b) of one destination; 0 or -1 (the queue's error bit says why). */
EB_Q_FN int eb_moe_send(const struct eb_moe_work *w, const struct eb_proxy_dev *d, int peer,
			int64_t a, int64_t b)
{
	const struct eb_moe_phase *ph = &w->ph;
	int64_t i;
	int rc = 0;

	if (peer == w->rank)
		return eb_moe_copy_items(w, 1, a, b);
	if (w->coalesce) {
		/* Every thread of a block takes the same turns: the bounds alone decide them. */
		for (; a < b; a = i) {
			int r;

			i = b - a > ph->piece ? a + ph->piece : b;
			r = eb_moe_copy_items(w, 0, a, i);
			EB_MOE_SYNC(w); /* packed bytes visible to the NIC before the put */
			if (EB_MOE_LEAD && rc == 0)
				rc = r != 0
					 ? r
					 : eb_put_nbi(d, (unsigned)peer, ph->dst[a], ph->packed[a],
						      ph->packed[i - 1] + ph->len[i - 1] -
							  ph->packed[a]);
		}
	} else {
		for (i = a; EB_MOE_LEAD && rc == 0 && i < b; i++)
			rc = eb_put_nbi(d, (unsigned)peer, ph->dst[i], ph->src[i], ph->len[i]);
	}
	return rc;
}

/* Producer p's whole phase: 0 or -1. On the GPU every thread of the block calls it and
 * thread 0's result counts. The producers of one proxy thread share two duties through
 * tickets (counters in w->tickets that only grow): the last to finish its share for a
 * destination signals it, once, with the items all of them put there (plus EB_MOE_MARK, so
 * that a destination learns of nothing as surely as of something); the last to finish
 * everything waits for the proxy thread to complete it all (one quiet, not one spinning
 * poller per producer). */
EB_Q_FN int eb_moe_produce(const struct eb_moe_work *w, int p)
{
	int q = p % w->nq, mine = eb_moe_on_queue(w, q), k, rc = 0;
	const struct eb_proxy_dev *d = &w->d[q];
	uint64_t *tk = w->tickets + (size_t)q * (size_t)(w->ranks + 1);

	/* The next rank up first, so that every rank's first writes go to a different peer;
	 * the local copies last. Every destination is visited even after a failure: a block's
	 * threads must meet at the same barriers, and the others count on its tickets. */
	for (k = 1; k <= w->ranks; k++) {
		int peer = (w->rank + k) % w->ranks;
		int64_t first = w->ph.off[peer], n = w->ph.off[peer + 1] - first;

		if (eb_moe_send(w, d, peer, first + n * p / w->producers,
				first + n * (p + 1) / w->producers) != 0)
			rc = -1;
		if (peer == w->rank || !EB_MOE_LEAD)
			continue;
		if ((eb_moe_ticket(&tk[peer]) + 1) % (uint64_t)mine == 0 &&
		    eb_signal_nbi(d, (unsigned)peer, w->ph.sig + (unsigned)w->rank,
				  (uint64_t)eb_moe_queue_items(w, q, n) + EB_MOE_MARK,
				  EB_SIGNAL_ADD) != 0)
			rc = -1;
	}
	EB_MOE_SYNC(w);
	if (EB_MOE_LEAD && (eb_moe_ticket(&tk[w->ranks]) + 1) % (uint64_t)mine == 0 &&
	    eb_quiet(d) != 0)
		rc = -1;
	return rc;
}

#endif
