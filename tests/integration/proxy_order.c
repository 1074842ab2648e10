/* proxy_order [bytes [channels]]: the proxy's device API keeps its promises, with a CPU thread
 * as the producer (the same functions GPU threads call; proxy_order.cu builds this file with a
 * GPU thread as the producer, writing pinned memory). Two ranks on this host; rank 0 puts
 * through its proxy thread to rank 1, split across the channels, and each case fails where the
 * promise is broken:
 *   put     eb_put returns once its put is complete: rank 0 then overwrites the source at once,
 *           and rank 1 must still find the bytes from before (a put that did not wait would
 *           carry some of the new ones);
 *   fence   eb_fence orders: a large put, a fence, then an 8-byte put of a flag; rank 1 checks
 *           the large put's bytes the moment the flag appears (without the fence the flag
 *           overtakes the large put's chunks where the provider does not keep writes in
 *           order: tcp, whose channels are connections of their own; shm only on its CMA
 *           path);
 *   signal  eb_put_signal_nbi's signal is applied once its put has landed: rank 1 checks the
 *           bytes the moment the signal says so.
 * Exit 0 when every case held, 1 otherwise (the case named). */
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/pattern.h"
#include "efabench/proxy_thread.h"
#include "efabench/status.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CASE_PUT, CASE_FENCE, CASE_SIGNAL, NCASES };
static const char *const case_name[NCASES] = {"put", "fence", "signal"};
#define FLAG 0xf1a9f1a9f1a9f1a9ull

struct args {
	size_t bytes;
	int channels;
};

#ifndef EB_ORDER_GPU
#define GPU	   0
#define SRC_MEM	   EB_MEM_HOST
#define SRC_PTR(m) ((char *)(m).ptr)
#endif

#ifndef EB_ORDER_HD
#define EB_ORDER_HD
#endif

/* The buffers: one region of `bytes` per case, then a flag word. */
static EB_ORDER_HD size_t at(const struct args *a, int k)
{
	return (size_t)k * a->bytes;
}

/* len bytes at offset off of the regions, as epoch's pattern has them there. */
static void fill(char *p, size_t off, size_t len, uint32_t epoch)
{
	struct eb_pattern pat = {0, 1, epoch};

	eb_pattern_fill(&pat, p + off, len, off);
}

/* The producer's part (a CPU thread here, one GPU thread in proxy_order.cu); overwrite puts
 * new bytes into the put case's source. */
#ifndef EB_ORDER_FN
#define EB_ORDER_FN static
#endif
EB_ORDER_FN int produce(const struct eb_proxy_dev *d, char *src, size_t bytes,
			void (*overwrite)(char *, size_t))
{
	struct args a0 = {bytes, 0}, *a = &a0;
	uint64_t flag_at = at(a, NCASES);
	int rc;

	/* Each case starts once rank 1 says it is ready (signal NCASES + case), so that it checks
	 * the case the moment it is said to be there, with nothing else to do: a check of 32 MiB
	 * outlasts shm's copy of them. */
	/* signal: applied after its put landed */
	rc = eb_signal_wait_until(d, NCASES + CASE_SIGNAL, EB_CMP_GE, 1);
	rc |= eb_put_signal_nbi(d, 1, at(a, CASE_SIGNAL), at(a, CASE_SIGNAL), a->bytes, CASE_SIGNAL,
				1, EB_SIGNAL_ADD);
	/* put: complete on return, so the source is free at once */
	rc |= eb_signal_wait_until(d, NCASES + CASE_PUT, EB_CMP_GE, 1);
	rc |= eb_put(d, 1, at(a, CASE_PUT), at(a, CASE_PUT), a->bytes);
	overwrite(src + at(a, CASE_PUT), a->bytes);
	rc |= eb_signal_nbi(d, 1, CASE_PUT, 1, EB_SIGNAL_ADD);
	/* fence: the flag's put starts once the large one has completed */
	rc |= eb_signal_wait_until(d, NCASES + CASE_FENCE, EB_CMP_GE, 1);
	rc |= eb_put_nbi(d, 1, at(a, CASE_FENCE), at(a, CASE_FENCE), a->bytes);
	rc |= eb_fence(d);
	rc |= eb_put_nbi(d, 1, flag_at, flag_at, sizeof(uint64_t));
	return rc | eb_quiet(d);
}

#ifndef EB_ORDER_GPU
static void overwrite_cpu(char *p, size_t len)
{
	memset(p, 0xee, len);
}

/* Rank 1 tells rank 0 it is ready for case k. */
static int ready(const struct eb_proxy_dev *d, int k)
{
	eb_producer_set(0);
	return eb_signal_nbi(d, 0, NCASES + k, 1, EB_SIGNAL_ADD) | eb_quiet(d);
}

static int sender(const struct eb_proxy_dev *d, char *src, const struct args *a)
{
	eb_producer_set(0);
	return produce(d, src, a->bytes, overwrite_cpu);
}
#endif

/* Wrong 8-byte words of a case's region, checked the moment it was said to be there. */
static uint64_t wrong(const char *dst, const struct args *a, int k)
{
	struct eb_pattern pat = {0, 1, 1};

	return eb_pattern_check(&pat, dst + at(a, k), a->bytes, at(a, k), NULL);
}

/* Until word w of the host's signal words reaches 1 (the deadline: a message, 1). */
static int signalled(const uint64_t *sigs, int k, uint64_t until)
{
	while (__atomic_load_n(&sigs[k], __ATOMIC_ACQUIRE) < 1)
		if (eb_now_ns() > until) {
			fprintf(stderr, "proxy_order: rank 1: the %s case's signal never came\n",
				case_name[k]);
			return 1;
		}
	return 0;
}

static int receiver(const struct eb_proxy_dev *d, const uint64_t *sigs, const char *dst,
		    const struct args *a, double timeout_s)
{
	const uint64_t *flag = (const uint64_t *)(dst + at(a, NCASES));
	uint64_t bad[NCASES] = {0}, until = eb_deadline(timeout_s);
	int k, rc = 0;

	if (ready(d, CASE_SIGNAL) != 0 || signalled(sigs, CASE_SIGNAL, until) != 0)
		return 1;
	bad[CASE_SIGNAL] = wrong(dst, a, CASE_SIGNAL);
	if (ready(d, CASE_PUT) != 0 || signalled(sigs, CASE_PUT, until) != 0)
		return 1;
	bad[CASE_PUT] = wrong(dst, a, CASE_PUT);
	if (ready(d, CASE_FENCE) != 0)
		return 1;
	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != FLAG)
		if (eb_now_ns() > until) {
			fprintf(stderr, "proxy_order: rank 1: the fence case's flag never came\n");
			return 1;
		}
	bad[CASE_FENCE] = wrong(dst, a, CASE_FENCE);
	for (k = 0; k < NCASES; k++) {
		printf("proxy_order: %-6s %llu wrong words of %zu\n", case_name[k],
		       (unsigned long long)bad[k], a->bytes / 8);
		rc |= bad[k] != 0;
	}
	return rc;
}

static int rank_main(struct eb_boot *b, void *arg)
{
	const struct args *a = (const struct args *)arg;
	size_t len = at(a, NCASES) + sizeof(uint64_t);
	struct eb_fabric_opts fo = {.channels = a->channels, .timeout_s = 30, .threads = 2};
	struct eb_proxy_opts po = {EB_LAYOUT_SPLIT, 64 << 10, 4,  64, 10, 64,
				   2 * NCASES,	    GPU,      30, -1};
	struct eb_mem src, dst;
	struct eb_mr *src_mr = (struct eb_mr *)calloc(64, sizeof(*src_mr));
	struct eb_mr *dst_mr = (struct eb_mr *)calloc(64, sizeof(*dst_mr));
	struct eb_rkey *keys = (struct eb_rkey *)calloc(64 * (size_t)b->size, sizeof(*keys));
	struct eb_proxy *p = NULL;
	struct eb_proxy_dev d;
	struct eb_engine e;
	uint64_t flag_word = FLAG;
	int rc = src_mr && dst_mr && keys ? 0 : 1;

	if (rc != 0 || (GPU && eb_mem_use_gpu(0) != 0) || eb_engine_open(&e, b, &fo) != 0)
		return 1;
	rc = eb_mem_alloc(&src, SRC_MEM, len, "the source");
	rc = rc ? rc : eb_mem_alloc(&dst, EB_MEM_HOST, len, "the destination");
	if (rc == 0) {
		fill((char *)src.ptr, 0, at(a, NCASES), 1);
		memcpy((char *)src.ptr + at(a, NCASES), &flag_word, sizeof(flag_word));
		memset(dst.ptr, 0, len);
	}
	rc = rc ? rc : eb_engine_reg_mem(&e, &src, 0, len, EB_USE_SOURCE, src_mr, NULL);
	rc = rc ? rc : eb_engine_reg_mem(&e, &dst, 0, len, EB_USE_TARGET, dst_mr, keys);
	struct eb_proxy_bufs pb = {(char *)src.ptr, len, src_mr, len, keys};
	rc = rc ? rc : eb_proxy_open(&p, &e, &pb, &po);
	rc = rc ? rc : eb_proxy_start(p);
	rc = rc ? rc : eb_boot_barrier(b, eb_engine_deadline(&e));
	if (rc == 0)
		d = eb_proxy_dev(p);
	if (rc == 0 && b->rank == 0 && sender(&d, SRC_PTR(src), a) != 0) {
		fprintf(stderr, "proxy_order: rank 0: a put, fence or signal failed\n");
		rc = 1;
	}
	if (rc == 0 && b->rank == 1)
		rc = receiver(&d, eb_proxy_signals(p), (const char *)dst.ptr, a, fo.timeout_s);
	rc |= eb_boot_barrier(b, eb_engine_deadline(&e)) != 0;
	rc |= p != NULL && eb_proxy_stop(p) != 0;
	eb_proxy_close(p);
	eb_engine_dereg(&e, src_mr);
	eb_engine_dereg(&e, dst_mr);
	eb_mem_free(&src);
	eb_mem_free(&dst);
	eb_engine_close(&e);
	free(src_mr);
	free(dst_mr);
	free(keys);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct args a = {argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)32 << 20,
			 argc > 2 ? atoi(argv[2]) : 3};

	if (a.bytes < 8 || a.bytes % 8 != 0 || a.channels < 1 || a.channels > 64) {
		fprintf(stderr, "usage: proxy_order [bytes, a multiple of 8 [channels, 1..64]]\n");
		return 2;
	}
#ifdef EB_ORDER_GPU
	if (!gpu_here())
		return 77;
#endif
	return eb_launch_local(2, rank_main, &a, 35.0);
}
