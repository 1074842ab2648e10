/* GPU-initiated writes through a CPU proxy: the producer side, shaped like NVSHMEM's device
 * API. Like gpuq_proto.h it compiles as CUDA device code (kernels) and as C11 (CPU threads,
 * so the whole path runs without a GPU). Every call pushes 16-byte commands into the command
 * queue; the rank's proxy thread (proxy.h) turns them into fi_writedata on the fabric.
 *
 *   eb_put_nbi(d, peer, dst_off, src_off, bytes)   push a put and return: bytes at src_off of
 *       this rank's source buffer go to dst_off of peer's destination buffer
 *   eb_quiet(d)          wait until every command pushed to this queue so far (by any thread)
 *       is complete: every chunk of every put written (its write completion seen)
 *   eb_put(...)          eb_put_nbi, then eb_quiet
 *   eb_put_signal_nbi(d, peer, dst_off, src_off, bytes, sig, value, op)   a put, then peer's
 *       signal word sig is set to (EB_SIGNAL_SET) or increased by (EB_SIGNAL_ADD) value, but
 *       only once every chunk of every put this rank pushed to peer before it has landed
 *       there (the target counts the immediate data of every chunk). Adds from many producers
 *       commute (MoE dispatch counts tokens so); sets of one word belong to one producer.
 *   eb_signal_nbi(d, peer, sig, value, op)   the signal alone: peer's word changes once every
 *       put this rank pushed to peer before it has landed (a producer that has nothing for
 *       peer still tells it so)
 *   eb_signal_wait_until(d, sig, cmp, value)   on the target: wait until this rank's signal
 *       word sig compares true to value (EB_CMP_EQ, EB_CMP_GE, ...)
 *   eb_fence(d)          puts pushed after it are written only after every put pushed before
 *       it is complete: the ordering of puts to one peer (EFA does not order writes)
 *
 * Any thread may call any of them. Cheapest per byte: one thread pushing a few large puts (the
 * proxy cuts each into chunks over the channels); every put costs one queue slot, so
 * thousands of tiny puts from every thread are bound by the proxy's command rate. Each wait
 * has a deadline (the queue's timeout) and then fails with a sticky error bit the host reports:
 * a dead peer never hangs a kernel. Returns 0, or -1 after raising an EB_Q_ERR_* bit. */
#ifndef EFABENCH_PROXY_DEV_H
#define EFABENCH_PROXY_DEV_H

#include "efabench/gpuq_proto.h"

enum eb_pcmd_op { EB_PCMD_PUT = 1, EB_PCMD_SIGNAL = 2, EB_PCMD_FENCE = 3 };
enum eb_signal_op { EB_SIGNAL_SET = 0, EB_SIGNAL_ADD = 1 };
enum eb_signal_cmp { EB_CMP_EQ, EB_CMP_NE, EB_CMP_GT, EB_CMP_GE, EB_CMP_LT, EB_CMP_LE };

#define EB_PUT_MAX_PEERS (1u << 14)
#define EB_PUT_MAX_OFF	 ((1ull << 39) - 1) /* offsets into buffers of up to 512 GiB */
#define EB_PUT_MAX_BYTES ((1ull << 31) - 1) /* a larger put goes as several commands */
#define EB_SIGNAL_MAX	 (1u << 20)
#define EB_Q_ERR_RANGE	 4u  /* a put or signal outside the buffers was refused */
#define EB_Q_ERR_SIGWAIT 8u  /* a signal wait gave up at its deadline */
#define EB_Q_ERR_PROXY	 16u /* the proxy failed (fabric error, lost peer): it says why */

/* Where a sampled put's time went (in mapped host memory where producers are GPU threads):
 * the producer stamps its push and, for a blocking put, when its quiet saw the put complete,
 * on its own clock (a GPU's %globaltimer, a CPU thread's CLOCK_MONOTONIC); the proxy thread
 * stamps when it saw the command, posted its first chunk and saw its last complete, on the
 * host's. A put at queue position pos is sampled when pos % stamp_every == 0. */
struct eb_put_stamp {
	uint64_t push, back;	     /* the producer's clock; 0: not stamped */
	uint64_t seen, posted, done; /* the proxy thread's */
	uint64_t pos;		     /* the queue position + 1; 0: the slot is empty */
	uint64_t producer;	     /* eb_producer_id() + 1 */
	uint32_t peer, sample;	     /* the target, and the put's index among those sampled to it */
};

/* What producers need, by value. Buffers and peers are checked before anything is pushed. */
struct eb_proxy_dev {
	struct eb_gpuq_dev q;
	EB_Q_ATOMIC(uint64_t) * signals; /* this rank's signal words (mapped host memory) */
	EB_Q_ATOMIC(uint64_t) * refused; /* the first refused producer's id + 1, 0 if none */
	uint32_t nsignals, npeers;
	uint64_t src_len, dst_len;
	struct eb_put_stamp *stamps; /* [nstamps], a ring of sampled puts; NULL: none stamped */
	uint32_t stamp_every, nstamps;
};

/* Command layout, 127 bits of a queue slot:
 *   put     lo = op | peer << 3 | dst_off << 17 | (src_off >> 32) << 56
 *           hi = bytes | (src_off & 0xffffffff) << 31
 *   signal  lo = op | peer << 3 | sig << 17 | sig_op << 37,  hi = value (63 bits)
 *   fence   lo = op */
struct eb_pcmd {
	unsigned op, peer, sig, sig_op;
	uint64_t dst_off, src_off, bytes, value;
};

EB_Q_HD void eb_pcmd_decode(uint64_t lo, uint64_t hi, struct eb_pcmd *c)
{
	c->op = (unsigned)(lo & 7);
	c->peer = (unsigned)(lo >> 3) & (EB_PUT_MAX_PEERS - 1);
	c->dst_off = (lo >> 17) & EB_PUT_MAX_OFF;
	c->src_off = ((lo >> 56) & 0x7f) << 32 | (hi >> 31 & 0xffffffffull);
	c->bytes = hi & EB_PUT_MAX_BYTES;
	c->sig = (unsigned)(lo >> 17) & (EB_SIGNAL_MAX - 1);
	c->sig_op = (unsigned)(lo >> 37) & 1;
	c->value = hi & ~EB_Q_LAP_BIT;
}

#if defined(__CUDACC__)
/* A GPU producer's id: its global thread index (block * blockDim.x + thread). */
EB_Q_FN uint64_t eb_producer_id(void)
{
	return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

EB_Q_FN void eb_refuse(const struct eb_proxy_dev *d)
{
	atomicCAS((unsigned long long *)d->refused, 0ull, (unsigned long long)eb_producer_id() + 1);
	eb_q_flag_error(d->q.error, EB_Q_ERR_RANGE);
}
#else
#include <pthread.h>

/* CPU threads name themselves (eb_producer_set); unnamed ones go by their pthread id. */
static _Thread_local uint64_t eb_producer_tls;

EB_Q_FN void eb_producer_set(uint64_t id)
{
	eb_producer_tls = id + 1;
}

EB_Q_FN uint64_t eb_producer_id(void)
{
	return eb_producer_tls ? eb_producer_tls - 1 : (uint64_t)pthread_self();
}

EB_Q_FN void eb_refuse(const struct eb_proxy_dev *d)
{
	uint64_t none = 0;

	atomic_compare_exchange_strong(d->refused, &none, eb_producer_id() + 1);
	eb_q_flag_error(d->q.error, EB_Q_ERR_RANGE);
}
#endif

EB_Q_FN int eb_push(const struct eb_proxy_dev *d, uint64_t lo, uint64_t hi)
{
	return eb_q_push(&d->q, lo, hi) == UINT64_MAX ? -1 : 0;
}

/* The stamps of the put at position pos, NULL where it is not sampled. */
EB_Q_HD struct eb_put_stamp *eb_stamp_of(const struct eb_proxy_dev *d, uint64_t pos)
{
	return d->stamps != NULL && pos % d->stamp_every == 0
		   ? &d->stamps[(pos / d->stamp_every) % d->nstamps]
		   : (struct eb_put_stamp *)0;
}

/* A producer's stamp: written once, read by the host after the producers are done. */
EB_Q_FN void eb_stamp_put(uint64_t *at, uint64_t v)
{
	*(volatile uint64_t *)at = v;
}

/* A put command, its position in *pos; stamped at push where sampled. */
EB_Q_FN int eb_push_put(const struct eb_proxy_dev *d, uint64_t lo, uint64_t hi, uint64_t *pos)
{
	uint64_t t0 = d->stamps != NULL ? eb_q_now_ns() : 0;
	struct eb_put_stamp *s;

	*pos = eb_q_push(&d->q, lo, hi);
	if (*pos == UINT64_MAX)
		return -1;
	if ((s = eb_stamp_of(d, *pos)) != (struct eb_put_stamp *)0) {
		eb_stamp_put(&s->producer, eb_producer_id() + 1);
		eb_stamp_put(&s->push, t0);
	}
	return 0;
}

/* eb_put_nbi, the last command's position in *pos. */
EB_Q_FN int eb_put_nbi_at(const struct eb_proxy_dev *d, unsigned peer, uint64_t dst_off,
			  uint64_t src_off, uint64_t bytes, uint64_t *pos)
{
	if (peer >= d->npeers || dst_off > d->dst_len || bytes > d->dst_len - dst_off ||
	    src_off > d->src_len || bytes > d->src_len - src_off) {
		eb_refuse(d);
		return -1;
	}
	do {
		uint64_t n = bytes < EB_PUT_MAX_BYTES ? bytes : EB_PUT_MAX_BYTES;
		uint64_t lo = (uint64_t)EB_PCMD_PUT | (uint64_t)peer << 3 | dst_off << 17 |
			      (src_off >> 32) << 56;

		if (eb_push_put(d, lo, n | (src_off & 0xffffffffull) << 31, pos) != 0)
			return -1;
		bytes -= n;
		dst_off += n;
		src_off += n;
	} while (bytes > 0);
	return 0;
}

EB_Q_FN int eb_put_nbi(const struct eb_proxy_dev *d, unsigned peer, uint64_t dst_off,
		       uint64_t src_off, uint64_t bytes)
{
	uint64_t pos;

	return eb_put_nbi_at(d, peer, dst_off, src_off, bytes, &pos);
}

/* Every command claimed so far is complete. */
EB_Q_FN int eb_quiet(const struct eb_proxy_dev *d)
{
	uint64_t claimed = eb_q_load_dev(d->q.head);

	return claimed == 0 ? 0 : eb_q_quiet(&d->q, claimed - 1);
}

/* A blocking put: its quiet's return is stamped where it was sampled. */
EB_Q_FN int eb_put(const struct eb_proxy_dev *d, unsigned peer, uint64_t dst_off, uint64_t src_off,
		   uint64_t bytes)
{
	struct eb_put_stamp *s;
	uint64_t pos;

	if (eb_put_nbi_at(d, peer, dst_off, src_off, bytes, &pos) != 0 || eb_quiet(d) != 0)
		return -1;
	if ((s = eb_stamp_of(d, pos)) != (struct eb_put_stamp *)0)
		eb_stamp_put(&s->back, eb_q_now_ns());
	return 0;
}

EB_Q_FN int eb_signal_nbi(const struct eb_proxy_dev *d, unsigned peer, unsigned sig, uint64_t value,
			  unsigned op)
{
	if (peer >= d->npeers || sig >= d->nsignals || value > ~EB_Q_LAP_BIT) {
		eb_refuse(d);
		return -1;
	}
	return eb_push(d,
		       (uint64_t)EB_PCMD_SIGNAL | (uint64_t)peer << 3 | (uint64_t)sig << 17 |
			   (uint64_t)(op & 1) << 37,
		       value);
}

EB_Q_FN int eb_put_signal_nbi(const struct eb_proxy_dev *d, unsigned peer, uint64_t dst_off,
			      uint64_t src_off, uint64_t bytes, unsigned sig, uint64_t value,
			      unsigned op)
{
	if (sig >= d->nsignals || value > ~EB_Q_LAP_BIT) {
		eb_refuse(d);
		return -1;
	}
	if (eb_put_nbi(d, peer, dst_off, src_off, bytes) != 0)
		return -1;
	return eb_signal_nbi(d, peer, sig, value, op);
}

EB_Q_FN int eb_fence(const struct eb_proxy_dev *d)
{
	return eb_push(d, EB_PCMD_FENCE, 0);
}

EB_Q_HD int eb_signal_cmp(uint64_t v, unsigned cmp, uint64_t value)
{
	switch (cmp) {
	case EB_CMP_EQ:
		return v == value;
	case EB_CMP_NE:
		return v != value;
	case EB_CMP_GT:
		return v > value;
	case EB_CMP_GE:
		return v >= value;
	case EB_CMP_LT:
		return v < value;
	default:
		return v <= value;
	}
}

EB_Q_FN int eb_signal_wait_until(const struct eb_proxy_dev *d, unsigned sig, unsigned cmp,
				 uint64_t value)
{
	uint64_t start = eb_q_now_ns();
	unsigned nap = 32;

	if (sig >= d->nsignals) {
		eb_refuse(d);
		return -1;
	}
	while (!eb_signal_cmp(eb_q_load_sys(&d->signals[sig]), cmp, value)) {
		if (eb_q_now_ns() - start > d->q.timeout_ns) {
			eb_q_flag_error(d->q.error, EB_Q_ERR_SIGWAIT);
			return -1;
		}
		eb_q_backoff(nap);
		nap = nap < 1024 ? nap * 2 : 1024;
	}
	eb_q_acquire(); /* the payload the signal announces is visible after it */
	return 0;
}

#endif
