/* What one producer of `efabench moe` does in one leg of an op, written once for GPU blocks
 * and CPU threads. Producer p of P feeds proxy thread q = p % nq; for every destination rank,
 * thread q's producers take a contiguous q-th of the items going there. An item is a copy or
 * a weighted sum of bf16 rows (model/plan.h); it is made straight into the destination where
 * the rank reaches it by stores (itself, or a same-host peer whose region is mapped here),
 * and otherwise goes through the fabric. There, in decode each producer puts its own part of
 * the items, one put each (made in the packing area first where it is a sum or read from the
 * destination region). In prefill they cut the thread's share into pieces of a chunk's worth
 * of items, each producer makes its part of every piece and the last to finish a piece puts
 * it whole: one write per piece whatever the number of producers, the next piece made while
 * the last one travels. Each proxy thread's producers tell every peer once per leg that they
 * are done: a signal through the fabric, or a flag stored in the peer's memory
 * (eb_moe_produce). */
#ifndef EB_BENCH_MOE_WORK_H
#define EB_BENCH_MOE_WORK_H

#include "efabench/proxy_dev.h"

#include <stdint.h>
#if !defined(__CUDACC__)
#include "core/clock.h"

#include <stdatomic.h>
#include <string.h>
#endif

#define EB_MOE_MAX_Q 16
#define EB_MOE_MARK  (1ull << 32) /* per producer and destination, beside the item count */

/* One leg of an op, as producers read it (host or GPU copies of the plan's arrays). */
struct eb_moe_items {
	const int64_t *off; /* [ranks + 1] items per destination */
	const uint64_t *src, *packed, *len, *dst;
	const uint32_t *rows, *first; /* sums: rows, and the first in row_at / row_w */
	const uint64_t *row_at;
	const uint8_t *row_w; /* quarters */
	uint64_t
	    same;     /* every item's length, the offsets stepping by it (dispatch); 0: they vary */
	uint32_t sig; /* word sig + this rank at the destination counts what this rank sent */
	uint32_t flag; /* a same-host peer's flag word flag + rank * EB_MOE_MAX_Q + q */
	uint64_t seq;  /* the leg's runs so far, this one included: what a flag is set to */
	int from_dst;  /* items are read from this rank's destination region */
	int64_t piece; /* packing: items per write at most (a chunk's worth), packed then put in
			* turn so that packing the next overlaps the last one's transfer */
};

struct eb_moe_work {
	struct eb_proxy_dev d[EB_MOE_MAX_Q];
	int nq, producers, rank, ranks, coalesce;
	/* The rank's own items are copied by the rank's thread, not the producers (GPU blocks
	 * in decode over host memory, which would copy them token by token across PCIe). */
	int own_by_rank;
	char *src, *dst; /* this rank's regions: packing and its own items are local copies */
	/* [ranks]: a same-host peer's destination region and flag words as these producers
	 * reach them (NULL: the peer goes through the fabric). */
	char *const *peer;
	uint64_t *const *peer_flags;
	struct eb_moe_items items;
	/* CPU producers over GPU memory: gather makes a range of items at once (one kernel on
	 * the thread's stream, reading the item arrays of gitems, the leg's copies in GPU memory)
	 * into `to` (a region's GPU address) at to_off (the items' dst or packed); sync waits
	 * for what the thread queued. GPU blocks make items themselves. */
	int (*gather)(const struct eb_moe_work *w, char *to, int packed, int64_t a, int64_t b);
	int (*sync)(void);
	char *const *gpeer; /* [ranks] peers' regions as the GPU reaches them (gather's to) */
	struct eb_moe_items gitems;
	/* [nq][ranks + 1 + npieces] counters shared by the producers (GPU memory for GPU
	 * producers), zeroed once: per destination, for the end of the leg, and per piece
	 * (npieces: more than any leg's items / piece + ranks). */
	uint64_t *tickets;
	int64_t npieces;
	/* With --stages: [producers][3] when each had pushed every put of its share that crosses
	 * the fabric, when it had made all of its leg (its stores too), before the quiet that
	 * waits for the writes (CPU producers: the host's ns; GPU blocks: the GPU's %globaltimer,
	 * in mapped host memory), and the ns it spent making (packing, summing) what crosses the
	 * fabric before the push; NULL otherwise. */
	uint64_t *made;
};

#if defined(__CUDACC__)
/* GPU copies run at the bytes they keep in flight: each thread loads EB_MOE_UNROLL 16-byte
 * words before it stores them. Thread t of a group of `of` copies words t, t + of, ... */
#define EB_MOE_UNROLL 8

/* n aligned words from `from` to `to`. */
EB_Q_FN void eb_moe_copy_words(uint4 *to, const uint4 *from, uint64_t n, uint64_t t, uint64_t of)
{
	uint64_t g;
	int k;

	for (g = t; g < n; g += of * EB_MOE_UNROLL) {
		uint4 v[EB_MOE_UNROLL];

#pragma unroll
		for (k = 0; k < EB_MOE_UNROLL; k++)
			if (g + (uint64_t)k * of < n)
				v[k] = from[g + (uint64_t)k * of];
#pragma unroll
		for (k = 0; k < EB_MOE_UNROLL; k++)
			if (g + (uint64_t)k * of < n)
				to[g + (uint64_t)k * of] = v[k];
	}
}

/* Items [a, b), all `same` bytes long and aligned, their words taken as one sequence so that
 * small items keep as many loads in flight as large ones. Items already in place are left. */
EB_Q_FN void eb_moe_copy_same(char *to, const uint64_t *to_off, const char *from,
			      const uint64_t *from_off, uint64_t same, int64_t a, int64_t b,
			      uint64_t t, uint64_t of)
{
	uint64_t w = same / 16, n = (uint64_t)(b - a) * w, g;
	int k;

	for (g = t; g < n; g += of * EB_MOE_UNROLL) {
		uint4 v[EB_MOE_UNROLL], *p[EB_MOE_UNROLL];

#pragma unroll
		for (k = 0; k < EB_MOE_UNROLL; k++) {
			uint64_t x = g + (uint64_t)k * of;
			int64_t i = a + (int64_t)(x / w);

			p[k] = NULL;
			if (x < n && to + to_off[i] != from + from_off[i]) {
				p[k] = (uint4 *)(to + to_off[i]) + x % w;
				v[k] = ((const uint4 *)(from + from_off[i]))[x % w];
			}
		}
#pragma unroll
		for (k = 0; k < EB_MOE_UNROLL; k++)
			if (p[k] != NULL)
				*p[k] = v[k];
	}
}

/* Whether items of `same` bytes from these offsets can go as aligned words. */
EB_Q_FN int eb_moe_aligned(const char *to, uint64_t to_off, const char *from, uint64_t from_off,
			   uint64_t n)
{
	return (((uintptr_t)(to + to_off) | (uintptr_t)(from + from_off) | n) & 15) == 0;
}

/* One item, by the block. */
EB_Q_FN void eb_moe_copy(char *to, const char *from, uint64_t n)
{
	uint64_t i;

	if (eb_moe_aligned(to, 0, from, 0, n)) {
		eb_moe_copy_words((uint4 *)to, (const uint4 *)from, n / 16, threadIdx.x,
				  blockDim.x);
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

/* Whether this producer is the last of `mine` to take ticket t; the last then sees what the
 * others did before theirs (the fence makes their writes visible to what it posts next). */
EB_Q_FN int eb_moe_last(uint64_t *t, int mine)
{
	if ((eb_moe_ticket(t) + 1) % (uint64_t)mine != 0)
		return 0;
#if defined(__CUDACC__)
	__threadfence_system();
#endif
	return 1;
}

/* The same right after EB_MOE_SYNC: every thread of the block has fenced its stores and met
 * the others since, so the ticket needs no fence of its own. */
#if defined(__CUDACC__)
EB_Q_FN int eb_moe_last_synced(uint64_t *t, int mine)
{
	if (((uint64_t)atomicAdd((unsigned long long *)t, 1ull) + 1) % (uint64_t)mine != 0)
		return 0;
	__threadfence_system();
	return 1;
}
#else
#define eb_moe_last_synced eb_moe_last
#endif

/* Proxy threads that have producers, and producers on thread q. */
EB_Q_FN int eb_moe_queues(const struct eb_moe_work *w)
{
	return w->nq < w->producers ? w->nq : w->producers;
}

EB_Q_FN int eb_moe_on_queue(const struct eb_moe_work *w, int q)
{
	return (w->producers - q + w->nq - 1) / w->nq;
}

/* Thread q's share of destination peer's items: [*a, *b). */
EB_Q_FN void eb_moe_share(const struct eb_moe_work *w, int q, int peer, int64_t *a, int64_t *b)
{
	int64_t first = w->items.off[peer], n = w->items.off[peer + 1] - first;

	*a = first + n * q / eb_moe_queues(w);
	*b = first + n * (q + 1) / eb_moe_queues(w);
}

/* Part i of `of` of the items [a, b). */
EB_Q_FN int64_t eb_moe_cut(int64_t a, int64_t b, int i, int of)
{
	return a + (b - a) * i / of;
}

/* Producer i of thread q's part of destination peer's items: [*x, *y). */
EB_Q_FN void eb_moe_part(const struct eb_moe_work *w, int q, int i, int peer, int64_t *x,
			 int64_t *y)
{
	int mine = eb_moe_on_queue(w, q);
	int64_t a, b;

	eb_moe_share(w, q, peer, &a, &b);
	*x = eb_moe_cut(a, b, i, mine);
	*y = eb_moe_cut(a, b, i + 1, mine);
}

/* A weighted sum of bf16 rows, element by element in float: the rows hold small integers and
 * the weights are quarters, so every sum is exact in float and in bf16, whatever the order. */
EB_Q_FN float eb_moe_f32(uint16_t h)
{
	union {
		uint32_t u;
		float f;
	} v;

	v.u = (uint32_t)h << 16;
	return v.f;
}

EB_Q_FN uint16_t eb_moe_bf16(float f)
{
	union {
		uint32_t u;
		float f;
	} v;

	v.f = f;
	return (uint16_t)(v.u >> 16); /* exact: the sums need no rounding */
}

#if defined(__CUDACC__)
#define EB_MOE_SUMS 1
#define EB_MOE_ROWS 4
/* Item i summed 8 elements (16 bytes) at a time, where its rows and target are aligned: a
 * thread keeps a row's 16 bytes in flight per load instead of 2, and a peer's memory takes
 * 16-byte stores over NVLink. 0 where they are not aligned (nothing done). A sum is short (a
 * row per expert) and a block makes one at a time, so a thread's loads in flight come from
 * EB_MOE_SUMS words of EB_MOE_ROWS rows at once: the rows' addresses first, then all their
 * words (row by row, a thread waited on memory twice per row: for its address, then its
 * words). */
EB_Q_FN int eb_moe_sum16(const struct eb_moe_work *w, char *to, int64_t i, uint64_t t, uint64_t of)
{
	const struct eb_moe_items *it = &w->items;
	const char *from = it->from_dst ? w->dst : w->src;
	uint64_t n = it->len[i] / 16, e;
	uint32_t r0, first = it->first[i], rows = it->rows[i];
	uintptr_t odd = (uintptr_t)to | (uintptr_t)it->len[i];
	int j, k, u;

	for (r0 = 0; r0 < rows; r0 += EB_MOE_ROWS)
#pragma unroll
		for (j = 0; j < EB_MOE_ROWS; j++)
			if (r0 + j < rows)
				odd |= (uintptr_t)(from + it->row_at[first + r0 + j]);
	if (odd & 15)
		return 0;
	for (e = t; e < n; e += of * EB_MOE_SUMS) {
		float acc[EB_MOE_SUMS][8] = {};

		for (r0 = 0; r0 < rows; r0 += EB_MOE_ROWS) {
			const uint4 *row[EB_MOE_ROWS];
			float wt[EB_MOE_ROWS];
			uint4 v[EB_MOE_ROWS][EB_MOE_SUMS];

#pragma unroll
			for (j = 0; j < EB_MOE_ROWS; j++)
				if (r0 + j < rows) {
					row[j] = (const uint4 *)(from + it->row_at[first + r0 + j]);
					wt[j] = 0.25f * (float)it->row_w[first + r0 + j];
				}
#pragma unroll
			for (j = 0; j < EB_MOE_ROWS; j++)
#pragma unroll
				for (u = 0; u < EB_MOE_SUMS; u++)
					if (r0 + j < rows && e + (uint64_t)u * of < n)
						v[j][u] = row[j][e + (uint64_t)u * of];
#pragma unroll
			for (j = 0; j < EB_MOE_ROWS; j++)
#pragma unroll
				for (u = 0; u < EB_MOE_SUMS; u++) {
					uint32_t x[4] = {v[j][u].x, v[j][u].y, v[j][u].z,
							 v[j][u].w};

					if (r0 + j >= rows || e + (uint64_t)u * of >= n)
						continue;
#pragma unroll
					for (k = 0; k < 4; k++) {
						acc[u][2 * k] +=
						    wt[j] * eb_moe_f32((uint16_t)(x[k] & 0xffff));
						acc[u][2 * k + 1] +=
						    wt[j] * eb_moe_f32((uint16_t)(x[k] >> 16));
					}
				}
		}
#pragma unroll
		for (u = 0; u < EB_MOE_SUMS; u++) {
			uint32_t out[4];

			if (e + (uint64_t)u * of >= n)
				continue;
#pragma unroll
			for (k = 0; k < 4; k++)
				out[k] = (uint32_t)eb_moe_bf16(acc[u][2 * k]) |
					 (uint32_t)eb_moe_bf16(acc[u][2 * k + 1]) << 16;
			((uint4 *)to)[e + (uint64_t)u * of] =
			    make_uint4(out[0], out[1], out[2], out[3]);
		}
	}
	return 1;
}
#endif

#if !defined(__CUDACC__)
#define EB_MOE_CPU_BLOCK 512
/* Elements [t, t + EB_MOE_CPU_BLOCK) of item i, on a CPU: rows outer and elements inner, the
 * accumulators in L1, loops of a fixed count that compilers make vector instructions of at -O2
 * (in isolation, 2 rows of 7,168 elements: 5x the element-at-a-time loop, which reads every
 * row once per element). */
static inline void eb_moe_sum_block(const struct eb_moe_work *w, char *to, int64_t i, uint64_t t)
{
	const struct eb_moe_items *it = &w->items;
	const char *from = it->from_dst ? w->dst : w->src;
	uint32_t r, first = it->first[i], rows = it->rows[i];
	float acc[EB_MOE_CPU_BLOCK];
	int k;

	for (k = 0; k < EB_MOE_CPU_BLOCK; k++)
		acc[k] = 0;
	for (r = 0; r < rows; r++) {
		const uint16_t *row = (const uint16_t *)(from + it->row_at[first + r]) + t;
		float wt = 0.25f * (float)it->row_w[first + r];

		for (k = 0; k < EB_MOE_CPU_BLOCK; k++)
			acc[k] += wt * eb_moe_f32(row[k]);
	}
	for (k = 0; k < EB_MOE_CPU_BLOCK; k++)
		((uint16_t *)to)[t + k] = eb_moe_bf16(acc[k]);
}
#endif

/* Item i summed into to: elements t, t + of, ... (a GPU block's threads, or one thread). */
EB_Q_FN void eb_moe_sum(const struct eb_moe_work *w, char *to, int64_t i, uint64_t t, uint64_t of)
{
	const struct eb_moe_items *it = &w->items;
	const char *from = it->from_dst ? w->dst : w->src;
	uint64_t n = it->len[i] / 2, e;
	uint32_t r, first = it->first[i], rows = it->rows[i];

#if defined(__CUDACC__)
	if (eb_moe_sum16(w, to, i, t, of))
		return;
#else
	/* One CPU thread: whole blocks first (eb_moe_sum_block), the rest one element at a time. */
	if (of == 1)
		for (; t + EB_MOE_CPU_BLOCK <= n; t += EB_MOE_CPU_BLOCK)
			eb_moe_sum_block(w, to, i, t);
#endif
	for (e = t; e < n; e += of) {
		float acc = 0;

		for (r = 0; r < rows; r++) {
			const uint16_t *row = (const uint16_t *)(from + it->row_at[first + r]);

			acc += 0.25f * (float)it->row_w[first + r] * eb_moe_f32(row[e]);
		}
		((uint16_t *)to)[e] = eb_moe_bf16(acc);
	}
}

#if defined(__CUDACC__)
#define EB_MOE_T  threadIdx.x
#define EB_MOE_OF blockDim.x
#else
#define EB_MOE_T  0
#define EB_MOE_OF 1
#endif

/* Items [a, b) made at to + to_off[i]: a peer's region, this rank's own destination region,
 * or the packing area (items already in place are left). 0 or -1 after one line. */
EB_Q_FN int eb_moe_make(const struct eb_moe_work *w, char *to, const uint64_t *to_off, int64_t a,
			int64_t b)
{
	const struct eb_moe_items *it = &w->items;
	const char *from = it->from_dst ? w->dst : w->src;
	int64_t i;

#if defined(__CUDACC__)
	if (b > a && it->same > 0 && it->rows[a] == 0 && it->rows[b - 1] == 0 &&
	    eb_moe_aligned(to, to_off[a], from, it->src[a], it->same)) {
		eb_moe_copy_same(to, to_off, from, it->src, it->same, a, b, threadIdx.x,
				 blockDim.x);
		return 0;
	}
#endif
	for (i = a; i < b; i++) {
		if (it->rows[i] > 0)
			eb_moe_sum(w, to + to_off[i], i, EB_MOE_T, EB_MOE_OF);
		else if (to + to_off[i] != from + it->src[i])
			eb_moe_copy(to + to_off[i], from + it->src[i], it->len[i]);
	}
	return 0;
}

/* The same, by the producer's kind: CPU producers over GPU memory queue one kernel. */
EB_Q_FN int eb_moe_make_at(const struct eb_moe_work *w, int peer, int packed, int64_t a, int64_t b)
{
	const struct eb_moe_items *it = &w->items;
	char *to = packed ? w->src : peer == w->rank ? w->dst : w->peer[peer];

#if !defined(__CUDACC__)
	if (w->gather != NULL)
		return b > a ? w->gather(w,
					 packed		   ? NULL
					 : peer == w->rank ? w->dst
							   : w->gpeer[peer],
					 packed, a, b)
			     : 0;
#endif
	return eb_moe_make(w, to, packed ? it->packed : it->dst, a, b);
}

/* Whether item i must be made in the packing area before the fabric can carry it. */
EB_Q_FN int eb_moe_packs(const struct eb_moe_items *it, int64_t i)
{
	return it->rows[i] > 0 || it->packed[i] != it->src[i] || it->from_dst;
}

/* --stages: the producer's clock (the lead thread's on the GPU); 0 where nothing is stamped. */
EB_Q_FN uint64_t eb_moe_clock(const struct eb_moe_work *w)
{
	if (w->made == NULL || !EB_MOE_LEAD)
		return 0;
#if defined(__CUDACC__)
	return eb_q_now_ns();
#else
	return eb_now_ns();
#endif
}

/* --stages: *pack grows by the time since t0 (a clock reading from eb_moe_clock). */
EB_Q_FN void eb_moe_packed(const struct eb_moe_work *w, uint64_t t0, uint64_t *pack)
{
	if (t0 != 0)
		*pack += eb_moe_clock(w) - t0;
}

/* Decode through the fabric: this producer's items [a, b) of a destination, one put each
 * (from where it is made); *pack grows by the time making them took (--stages). 0 or -1 (the
 * queue's error bit says why). */
EB_Q_FN int eb_moe_send(const struct eb_moe_work *w, const struct eb_proxy_dev *d, int peer,
			int64_t a, int64_t b, uint64_t *pack)
{
	const struct eb_moe_items *it = &w->items;
	int64_t i;
	int rc = 0;

	for (i = a; i < b; i++) {
		int made = eb_moe_packs(it, i);

		if (made) {
			uint64_t t0 = eb_moe_clock(w);

			if (eb_moe_make_at(w, peer, 1, i, i + 1) != 0)
				rc = -1;
			EB_MOE_SYNC(w); /* made bytes visible to the NIC before the put */
			eb_moe_packed(w, t0, pack);
		}
		if (EB_MOE_LEAD && rc == 0 &&
		    eb_put_nbi(d, (unsigned)peer, it->dst[i], made ? it->packed[i] : it->src[i],
			       it->len[i]) != 0)
			rc = -1;
	}
	return rc;
}

/* Prefill through the fabric: thread q's share [a, b) of a destination, put by pieces.
 * Producer i of the thread's producers makes its part of each piece and takes the piece's
 * ticket; the last to arrive puts the piece. Tickets are taken after a failure too, so that
 * the counts stay whole. *pack as for eb_moe_send. 0 or -1 (the queue's error bit says why). */
EB_Q_FN int eb_moe_pieces(const struct eb_moe_work *w, const struct eb_proxy_dev *d, int q, int i,
			  int peer, int64_t a, int64_t b, uint64_t *pack)
{
	const struct eb_moe_items *it = &w->items;
	int mine = eb_moe_on_queue(w, q), rc = 0;
	/* A piece's counter: its first item / piece + peer differs for every piece of a leg,
	 * since a destination's items follow the one below's. */
	uint64_t *tk = w->tickets + (size_t)q * (size_t)(w->ranks + 1 + w->npieces) +
		       (size_t)w->ranks + 1 + (size_t)peer;
	int64_t s, e;

	for (s = a; s < b; s = e) {
		uint64_t t0 = eb_moe_clock(w);

		e = b - s > it->piece ? s + it->piece : b;
		if (eb_moe_make_at(w, peer, 1, eb_moe_cut(s, e, i, mine),
				   eb_moe_cut(s, e, i + 1, mine)) != 0)
			rc = -1;
		EB_MOE_SYNC(w); /* packed bytes visible to the NIC before the put */
		eb_moe_packed(w, t0, pack);
		if (EB_MOE_LEAD && eb_moe_last(&tk[s / it->piece], mine) &&
		    eb_put_nbi(d, (unsigned)peer, it->dst[s], it->packed[s],
			       it->packed[e - 1] + it->len[e - 1] - it->packed[s]) != 0)
			rc = -1;
	}
	return rc;
}

/* A same-host peer learns that this proxy thread's producers are done with the leg: its flag
 * word for (this rank, q) is set to the leg's run number, after everything they stored. */
EB_Q_FN void eb_moe_flag(const struct eb_moe_work *w, int peer, int q)
{
	uint64_t *f =
	    w->peer_flags[peer] + w->items.flag + (size_t)w->rank * EB_MOE_MAX_Q + (size_t)q;

#if defined(__CUDACC__)
	__threadfence_system();
	*(volatile uint64_t *)f = w->items.seq;
#else
	atomic_store_explicit((_Atomic uint64_t *)f, w->items.seq, memory_order_release);
#endif
}

/* The k-th destination a producer visits: peers from the next rank up, each producer of a
 * proxy thread starting one peer further (while some store to one peer, others store to the
 * next: one link alone would leave the rest idle), the rank itself last. */
EB_Q_FN int eb_moe_dest(const struct eb_moe_work *w, int i, int k)
{
	return k < w->ranks - 1 ? (w->rank + 1 + (k + i) % (w->ranks - 1)) % w->ranks : w->rank;
}

/* Everything this producer makes in place: items for same-host peers, stored straight into
 * their regions, and its own (unless the rank's thread copies them). A GPU block takes every
 * destination a step at a time (about two passes of its threads' loads), so that copies into
 * this GPU's memory go on while the stores to peers wait for their links, instead of after
 * them; a CPU producer takes each destination whole (over GPU memory, each is one kernel). */
EB_Q_FN int eb_moe_stores(const struct eb_moe_work *w, int q, int i)
{
	int64_t s;
	int k, rc = 0, more = 1;

	for (s = 0; more; s++) {
		more = 0;
		for (k = 0; k < w->ranks; k++) {
			int peer = eb_moe_dest(w, i, k);
			int64_t x, y, c;

			if (peer == w->rank ? w->own_by_rank : w->peer[peer] == NULL)
				continue;
			eb_moe_part(w, q, i, peer, &x, &y);
#if defined(__CUDACC__)
			c = y > x ? (int64_t)((uint64_t)blockDim.x * EB_MOE_UNROLL * 32 /
					      (w->items.len[x] > 0 ? w->items.len[x] : 1))
				  : 1;
			c = c > 0 ? c : 1;
#else
			c = y - x;
#endif
			if (x + s * c >= y)
				continue;
			more |= x + (s + 1) * c < y;
			if (eb_moe_make_at(w, peer, 0, x + s * c,
					   x + (s + 1) * c < y ? x + (s + 1) * c : y) != 0)
				rc = -1;
		}
	}
	return rc;
}

/* --stages: producer p's stamp k (0: its fabric puts pushed, 1: everything made), now; on the
 * GPU %globaltimer, which moe_stages.c moves to the host's clock. */
EB_Q_FN void eb_moe_at(const struct eb_moe_work *w, int p, int k)
{
	if (w->made != NULL && EB_MOE_LEAD)
		w->made[3 * p + k] = eb_moe_clock(w);
}

/* Producer p's whole leg: 0 or -1. On the GPU every thread of the block calls it and thread
 * 0's result counts. Peers reached through the fabric first (their writes travel while the
 * rest is made), then everything made in place (eb_moe_stores), and one fence after it all
 * covers every peer (a fence per destination made each wait for its own stores to land). The
 * producers of one proxy thread share two duties through tickets (counters in w->tickets that only
 * grow): the last to finish its share for a destination tells it so, once: a flag stored in a
 * same-host peer, or a signal through the fabric that adds the items all of them put there (plus
 * EB_MOE_MARK, so that a destination learns of nothing as surely as of something); and where
 * the leg used the fabric, the last to finish everything waits for the proxy thread to
 * complete it all (one quiet, not one spinning poller per producer). Every destination is
 * visited even after a failure: a block's threads must meet at the same barriers, and the
 * others count on its tickets. */
EB_Q_FN int eb_moe_produce(const struct eb_moe_work *w, int p)
{
	int q = p % w->nq, i = p / w->nq, mine = eb_moe_on_queue(w, q), k, rc = 0, fabric = 0;
	const struct eb_proxy_dev *d = &w->d[q];
	uint64_t *tk = w->tickets + (size_t)q * (size_t)(w->ranks + 1 + w->npieces), pack = 0;

	for (k = 0; k < w->ranks - 1; k++) {
		int peer = eb_moe_dest(w, i, k);
		int64_t a, b;

		if (w->peer[peer] != NULL)
			continue;
		eb_moe_share(w, q, peer, &a, &b);
		fabric = 1;
		if ((w->coalesce ? eb_moe_pieces(w, d, q, i, peer, a, b, &pack)
				 : eb_moe_send(w, d, peer, eb_moe_cut(a, b, i, mine),
					       eb_moe_cut(a, b, i + 1, mine), &pack)) != 0)
			rc = -1;
		if (EB_MOE_LEAD && eb_moe_last(&tk[peer], mine) &&
		    eb_signal_nbi(d, (unsigned)peer, w->items.sig + (unsigned)w->rank,
				  (uint64_t)(b - a) + EB_MOE_MARK, EB_SIGNAL_ADD) != 0)
			rc = -1;
	}
	eb_moe_at(w, p, 0);
	if (w->made != NULL && EB_MOE_LEAD)
		w->made[3 * p + 2] = pack;
	if (eb_moe_stores(w, q, i) != 0)
		rc = -1;
	EB_MOE_SYNC(w); /* stored, before the flags say so; packed, before the quiet */
	for (k = 0; k < w->ranks; k++)
		if (k != w->rank && w->peer[k] != NULL && EB_MOE_LEAD &&
		    eb_moe_last_synced(&tk[k], mine))
			eb_moe_flag(w, k, q);
	eb_moe_at(w, p, 1);
	if (fabric && EB_MOE_LEAD && eb_moe_last_synced(&tk[w->ranks], mine) && eb_quiet(d) != 0)
		rc = -1;
	return rc;
}

#endif
