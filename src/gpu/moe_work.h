/* What one producer of `efabench moe` does in a phase (dispatch or combine), written once for
 * GPU blocks and CPU threads. Producer p of P takes, for every destination rank, its share of
 * the items going there (a contiguous p-th of them): in decode one put per item, in prefill
 * it packs its share contiguously and puts it at once. Then it tells the destination with a
 * signal that adds (items + EB_MOE_MARK): every producer signals every destination, so a
 * receiver learns that nothing comes as surely as that something came. Items for the rank
 * itself are copied locally. Producer p uses proxy thread p % nq. */
#ifndef EB_GPU_MOE_WORK_H
#define EB_GPU_MOE_WORK_H

#include "efabench/proxy_dev.h"

#include <stdint.h>
#if !defined(__CUDACC__)
#include <string.h>
#endif

#define EB_MOE_MAX_Q 16
#define EB_MOE_MARK  (1ull << 32) /* per producer and destination, beside the item count */

struct eb_moe_phase {
	const int64_t *off; /* [ranks + 1] items per destination */
	const uint64_t *src, *packed, *len, *dst;
	uint32_t sig; /* word sig + this rank at the destination counts what this rank sent */
};

struct eb_moe_work {
	struct eb_proxy_dev d[EB_MOE_MAX_Q];
	int nq, producers, rank, ranks, coalesce;
	char *src, *dst; /* this rank's regions: packing and its own items are local copies */
	struct eb_moe_phase ph;
	/* CPU producers copy with this (GPU memory needs cudaMemcpy); GPU blocks copy
	 * themselves. */
	int (*copy)(char *to, const char *from, uint64_t n);
};

#if defined(__CUDACC__)
/* The block copies together; 16 bytes at a time when everything is aligned to it. */
EB_Q_FN void eb_moe_copy(const struct eb_moe_work *w, char *to, const char *from, uint64_t n)
{
	uint64_t i;

	(void)w;
	if ((((uintptr_t)to | (uintptr_t)from | n) & 15) == 0) {
		for (i = threadIdx.x; i < n / 16; i += blockDim.x)
			((uint4 *)to)[i] = ((const uint4 *)from)[i];
	} else {
		for (i = threadIdx.x; i < n; i += blockDim.x)
			to[i] = from[i];
	}
}
#define EB_MOE_LEAD (threadIdx.x == 0)
#define EB_MOE_SYNC()                                                                              \
	do {                                                                                       \
		__threadfence_system();                                                            \
		__syncthreads();                                                                   \
	} while (0)
#else
EB_Q_FN void eb_moe_copy(const struct eb_moe_work *w, char *to, const char *from, uint64_t n)
{
	if (w->copy != NULL)
		(void)w->copy(to, from, n);
	else
		memcpy(to, from, n);
}
#define EB_MOE_LEAD 1
#define EB_MOE_SYNC()                                                                              \
	do {                                                                                       \
	} while (0)
#endif

/* The items [a, b) of one destination; 0 or -1 (the queue's error bit says why). */
EB_Q_FN int eb_moe_send(const struct eb_moe_work *w, const struct eb_proxy_dev *d, int peer,
			int64_t a, int64_t b)
{
	const struct eb_moe_phase *ph = &w->ph;
	int64_t i;
	int rc = 0;

	if (peer == w->rank) {
		for (i = a; i < b; i++)
			eb_moe_copy(w, w->dst + ph->dst[i], w->src + ph->src[i], ph->len[i]);
		return 0;
	}
	if (w->coalesce) {
		for (i = a; i < b; i++)
			if (ph->packed[i] != ph->src[i])
				eb_moe_copy(w, w->src + ph->packed[i], w->src + ph->src[i],
					    ph->len[i]);
		EB_MOE_SYNC(); /* packed bytes visible to the NIC before the put is pushed */
		if (EB_MOE_LEAD && b > a)
			rc = eb_put_nbi(d, (unsigned)peer, ph->dst[a], ph->packed[a],
					ph->packed[b - 1] + ph->len[b - 1] - ph->packed[a]);
	} else {
		for (i = a; EB_MOE_LEAD && rc == 0 && i < b; i++)
			rc = eb_put_nbi(d, (unsigned)peer, ph->dst[i], ph->src[i], ph->len[i]);
	}
	if (EB_MOE_LEAD && rc == 0)
		rc = eb_signal_nbi(d, (unsigned)peer, ph->sig + (unsigned)w->rank,
				   (uint64_t)(b - a) + EB_MOE_MARK, EB_SIGNAL_ADD);
	return rc;
}

/* Producer p's whole phase, ending with a quiet on its queue: 0 or -1. On the GPU every
 * thread of the block calls it and thread 0's result counts. */
EB_Q_FN int eb_moe_produce(const struct eb_moe_work *w, int p)
{
	const struct eb_proxy_dev *d = &w->d[p % w->nq];
	int k, rc = 0;

	/* The next rank up first, so that every rank's first writes go to a different peer;
	 * the local copies last. Every destination is visited even after a failure: a block's
	 * threads must meet at the same barriers. */
	for (k = 1; k <= w->ranks; k++) {
		int peer = (w->rank + k) % w->ranks;
		int64_t first = w->ph.off[peer], n = w->ph.off[peer + 1] - first;

		if (eb_moe_send(w, d, peer, first + n * p / w->producers,
				first + n * (p + 1) / w->producers) != 0)
			rc = -1;
	}
	EB_MOE_SYNC();
	if (EB_MOE_LEAD && rc == 0)
		rc = eb_quiet(d);
	return rc;
}

#endif
