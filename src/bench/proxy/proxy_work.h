/* What one producer of `efabench proxy` does, written once for GPU threads and CPU threads:
 * n puts of `bytes` to one peer, each followed by a quiet (blocking) or one quiet at the end
 * (NBI); the last put of each producer carries a signal (add 1 to the peer's word 0), so the
 * target knows when every byte has landed. Timestamps: t[0] the earliest start, t[1] the
 * latest end, t[2 + i] after put i's quiet (blocking, producer 0). */
#ifndef EB_BENCH_PROXY_WORK_H
#define EB_BENCH_PROXY_WORK_H

#include "efabench/proxy_dev.h"

struct eb_pwork {
	struct eb_proxy_dev d;
	unsigned peer;
	uint64_t bytes;	 /* per put */
	uint64_t region; /* puts of producer p, i land at ((p * n + i) * bytes) % region */
	long n;		 /* puts per producer */
	int blocking;	 /* a quiet after every put */
	int bad;	 /* testing aid: producer 0's first put aims past the buffer */
	EB_Q_ATOMIC(uint64_t) * t;
};

#if defined(__CUDACC__)
EB_Q_FN void eb_pwork_min(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	atomicMin((unsigned long long *)p, (unsigned long long)v);
}

EB_Q_FN void eb_pwork_max(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	atomicMax((unsigned long long *)p, (unsigned long long)v);
}
#else
EB_Q_FN void eb_pwork_min(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);

	while (v < cur && !atomic_compare_exchange_weak(p, &cur, v))
		;
}

EB_Q_FN void eb_pwork_max(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak(p, &cur, v))
		;
}
#endif

/* Producer `id`: 0 when done, -1 when a put or quiet failed (the error bit says why). */
EB_Q_FN int eb_pwork_run(const struct eb_pwork *w, uint64_t id)
{
	long i;

	eb_pwork_min(&w->t[0], eb_q_now_ns());
	for (i = 0; i < w->n; i++) {
		uint64_t off = ((id * (uint64_t)w->n + (uint64_t)i) * w->bytes) % w->region, pos;
		struct eb_put_stamp *s;
		int rc;

		if (w->bad && id == 0 && i == 0)
			off = w->d.dst_len;
		rc = eb_put_nbi_at(&w->d, w->peer, off, off, w->bytes, &pos);
		if (rc == 0 && i + 1 == w->n) /* the last: every byte before it has landed */
			rc = eb_signal_nbi(&w->d, w->peer, 0, 1, EB_SIGNAL_ADD);
		if (rc != 0 || (w->blocking && eb_quiet(&w->d) != 0))
			return -1;
		if (w->blocking && (s = eb_stamp_of(&w->d, pos)) != (struct eb_put_stamp *)0)
			eb_stamp_put(&s->back, eb_q_now_ns());
		if (w->blocking && id == 0)
			w->t[2 + i] = eb_q_now_ns();
	}
	if (!w->blocking && eb_quiet(&w->d) != 0)
		return -1;
	eb_pwork_max(&w->t[1], eb_q_now_ns());
	return 0;
}

#endif
