/* The GPU->CPU command queue protocol, written once for both sides of the PCIe bus: it
 * compiles as CUDA device code (GPU producers) and as C11 with <stdatomic.h> (CPU producers,
 * and the consumer). Only the few primitives below differ between the two.
 *
 *   slot     16 bytes {lo, hi}; bit 63 of hi is the lap flag: a slot holds position pos when
 *            its flag equals ((pos >> log2n) & 1) ^ 1, so slots start empty (zeroed) and never
 *            need clearing; one 16-byte store publishes a command (GPU), or lo then hi with
 *            release order (CPU), the consumer reading hi (acquire) before lo.
 *   head     claim counter: fetch-add per push (device memory on the GPU).
 *   consumed the consumer's position, published in batches to a mapped host word; producers
 *            read it only when the ring looks full, through a cached copy.
 *   completed advanced by whoever finishes the work a command asked for (the proxy), so a
 *            quiet can wait for completion, not just consumption.
 */
#ifndef EFABENCH_GPUQ_PROTO_H
#define EFABENCH_GPUQ_PROTO_H

#include <stdint.h>

#define EB_Q_LAP_BIT   (1ull << 63)
#define EB_Q_ERR_FULL  1u /* a producer gave up waiting for room */
#define EB_Q_ERR_QUIET 2u /* a quiet gave up waiting for completion */
/* The consumer stopped: producers waiting for room give up at once. It is published in the
 * consumed word itself, which waiting producers already read, so stopping costs them nothing. */
#define EB_Q_CLOSED UINT64_MAX

#if defined(__CUDACC__)
#define EB_Q_FN	       __device__ static inline
#define EB_Q_HD	       __host__ __device__ static inline
#define EB_Q_ATOMIC(t) t
#else
#include <stdatomic.h>
#define EB_Q_FN	       static inline
#define EB_Q_HD	       static inline
#define EB_Q_ATOMIC(t) _Atomic t
#endif

struct eb_q_cmd {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

struct eb_q_slot {
	EB_Q_ATOMIC(uint64_t) lo;
	EB_Q_ATOMIC(uint64_t) hi;
} __attribute__((aligned(16)));

/* Everything a producer needs, passed by value to kernels and threads. Pointers are as the
 * producer sees them (device pointers of mapped host memory on the GPU). */
struct eb_gpuq_dev {
	struct eb_q_slot *slots;
	EB_Q_ATOMIC(uint64_t) * head;	    /* claims */
	EB_Q_ATOMIC(uint64_t) * tail_cache; /* last consumed position a producer saw */
	EB_Q_ATOMIC(uint64_t) * consumed;   /* published by the consumer */
	EB_Q_ATOMIC(uint64_t) * completed;  /* published by whoever completes commands */
	EB_Q_ATOMIC(uint32_t) * error;	    /* EB_Q_ERR_* bits, sticky */
	uint32_t log2n;
	uint64_t timeout_ns; /* how long a producer waits for room or completion */
};

#if defined(__CUDACC__)
EB_Q_FN uint64_t eb_q_claim(EB_Q_ATOMIC(uint64_t) * p)
{
	return atomicAdd((unsigned long long *)p, 1ull);
}

/* Polls of host memory are relaxed (a PCIe read each, no fence); the fence comes once, after
 * the value awaited was seen (eb_q_acquire). */
EB_Q_FN uint64_t eb_q_load_sys(EB_Q_ATOMIC(uint64_t) * p)
{
	uint64_t v;

	asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

/* A word other agents read, written after everything before it (system scope). */
EB_Q_FN void eb_q_store_sys(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

EB_Q_FN void eb_q_acquire(void)
{
	asm volatile("fence.acq_rel.sys;" ::: "memory");
}

EB_Q_FN uint64_t eb_q_load_dev(EB_Q_ATOMIC(uint64_t) * p)
{
	uint64_t v;

	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

EB_Q_FN void eb_q_raise_dev(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	atomicMax((unsigned long long *)p, (unsigned long long)v);
}

/* One 16-byte store with release semantics at system scope: the consumer sees all or none. */
EB_Q_FN void eb_q_publish(struct eb_q_slot *s, uint64_t lo, uint64_t hi)
{
	asm volatile("st.release.sys.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(lo), "l"(hi) : "memory");
}

EB_Q_FN void eb_q_flag_error(EB_Q_ATOMIC(uint32_t) * e, uint32_t bits)
{
	atomicOr((unsigned int *)e, bits);
	__threadfence_system();
}

EB_Q_FN uint64_t eb_q_now_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

EB_Q_FN void eb_q_backoff(unsigned ns)
{
	__nanosleep(ns);
}
#else
#include <sched.h>
#include <time.h>

EB_Q_FN uint64_t eb_q_claim(EB_Q_ATOMIC(uint64_t) * p)
{
	return atomic_fetch_add_explicit(p, 1, memory_order_relaxed);
}

EB_Q_FN uint64_t eb_q_load_sys(EB_Q_ATOMIC(uint64_t) * p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

/* Nothing to do: every poll above already loads with acquire. */
EB_Q_FN void eb_q_acquire(void)
{
}

EB_Q_FN uint64_t eb_q_load_dev(EB_Q_ATOMIC(uint64_t) * p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

EB_Q_FN void eb_q_raise_dev(EB_Q_ATOMIC(uint64_t) * p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);

	while (cur < v && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

/* lo first, then hi with release: a consumer that acquires the flag in hi sees lo. */
EB_Q_FN void eb_q_publish(struct eb_q_slot *s, uint64_t lo, uint64_t hi)
{
	atomic_store_explicit(&s->lo, lo, memory_order_relaxed);
	atomic_store_explicit(&s->hi, hi, memory_order_release);
}

EB_Q_FN void eb_q_flag_error(EB_Q_ATOMIC(uint32_t) * e, uint32_t bits)
{
	atomic_fetch_or_explicit(e, bits, memory_order_release);
}

EB_Q_FN uint64_t eb_q_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EB_Q_FN void eb_q_backoff(unsigned ns)
{
	(void)ns;
	sched_yield();
}
#endif

/* Test commands: lo = producer << 32 | sequence; hi = a check of lo, so a torn slot (one half
 * old, one half new) is caught. */
EB_Q_HD uint64_t eb_q_check(uint64_t lo)
{
	uint64_t x = lo * 0x9e3779b97f4a7c15ull;

	return (x ^ (x >> 31)) & ~EB_Q_LAP_BIT;
}

/* Claim a slot and publish {lo, hi} (bit 63 of hi is ours). When the ring looks full the
 * producer next in line (the one whose slot frees next) reads the consumer's position from
 * host memory and raises the cached tail; everyone further back polls only that device-memory
 * copy, so thousands of waiting threads never flood PCIe with reads. Backoff grows to 1 us;
 * after timeout_ns a producer gives up with EB_Q_ERR_FULL raised (its claimed slot stays a
 * hole: the consumer must stop). Returns the position claimed, or UINT64_MAX on timeout or
 * once the consumer has closed the queue. */
EB_Q_FN uint64_t eb_q_push(const struct eb_gpuq_dev *q, uint64_t lo, uint64_t hi)
{
	uint64_t n = 1ull << q->log2n, pos = eb_q_claim(q->head), tail;

	tail = eb_q_load_dev(q->tail_cache);
	if (tail == EB_Q_CLOSED)
		return UINT64_MAX;
	if (pos - tail >= n) {
		uint64_t start = eb_q_now_ns();
		unsigned nap = 32;

		for (;;) {
			if (pos - tail == n) {
				uint64_t seen = eb_q_load_sys(q->consumed);

				if (seen > tail) {
					eb_q_raise_dev(q->tail_cache, seen);
					tail = seen;
				}
			}
			if (tail == EB_Q_CLOSED)
				return UINT64_MAX; /* the consumer stopped: nothing to wait for */
			if (pos - tail < n)
				break;
			if (eb_q_now_ns() - start > q->timeout_ns) {
				eb_q_flag_error(q->error, EB_Q_ERR_FULL);
				return UINT64_MAX;
			}
			eb_q_backoff(nap);
			nap = nap < 1024 ? nap * 2 : 1024;
			tail = eb_q_load_dev(q->tail_cache);
		}
		eb_q_acquire(); /* the consumer has read the slot before we overwrite it */
	}
	eb_q_publish(&q->slots[pos & (n - 1)], lo,
		     (hi & ~EB_Q_LAP_BIT) | ((((pos >> q->log2n) & 1) ^ 1) << 63));
	return pos;
}

/* Wait until completed passes position pos (every command up to it has been completed).
 * 0, or -1 after timeout_ns with EB_Q_ERR_QUIET raised, or once the consumer closed the queue.
 * A poll is one PCIe read and the wait for it, so the loop reads only the completed word;
 * whether the queue closed (nobody will complete anything any more) and the deadline are
 * looked at every 16 polls: checking on every poll put a second read on the path of every
 * completion (a put + quiet takes a few microseconds; 16 polls are ~10-20 us). */
EB_Q_FN int eb_q_quiet(const struct eb_gpuq_dev *q, uint64_t pos)
{
	uint64_t start = eb_q_now_ns();
	unsigned nap = 32, polls = 0;

	while (eb_q_load_sys(q->completed) <= pos) {
		if ((++polls & 15) == 0) {
			if (eb_q_load_sys(q->consumed) == EB_Q_CLOSED)
				return -1;
			if (eb_q_now_ns() - start > q->timeout_ns) {
				eb_q_flag_error(q->error, EB_Q_ERR_QUIET);
				return -1;
			}
		}
		/* Back to back at first, back off only for long waits. */
		if (polls < 64)
			continue;
		eb_q_backoff(nap);
		nap = nap < 1024 ? nap * 2 : 1024;
	}
	eb_q_acquire();
	return 0;
}

#endif
