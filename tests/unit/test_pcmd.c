/* The device API's command encoding, driven from the CPU (the same header compiles for CPU
 * producers): a put with offsets above 4 GiB and more than 2 GiB of bytes is split into
 * commands that decode to the same ranges, end to end; puts with signals (set and add), a
 * fence, and eb_put's quiet; out-of-range calls are refused with EB_Q_ERR_RANGE and push
 * nothing. No buffer is touched: the commands are only encoded and decoded. */
#include "check.h"
#include "efabench/gpuq.h"
#include "efabench/proxy_dev.h"
#include "efabench/status.h"

#include <pthread.h>
#include <string.h>

#define GIB (1ull << 30)

static uint64_t refused_word;

/* Take every ready command, marking each complete; returns how many. */
static int drain(struct eb_gpuq *q, struct eb_pcmd *out, int max)
{
	struct eb_q_cmd buf[64];
	int n = eb_gpuq_poll(q, buf, 64), i;

	for (i = 0; i < n && i < max; i++)
		eb_pcmd_decode(buf[i].lo, buf[i].hi, &out[i]);
	eb_gpuq_complete(q, q->pos);
	return n;
}

struct blocking {
	const struct eb_proxy_dev *d;
	int rc;
};

static void *blocking_put(void *arg)
{
	struct blocking *b = arg;

	eb_producer_set(1);
	b->rc = eb_put(b->d, 3, 7 * GIB, 9 * GIB, 4096);
	return NULL;
}

int main(void)
{
	struct eb_gpuq q;
	struct eb_pcmd c[16];
	struct eb_proxy_dev d;
	struct blocking b;
	pthread_t th;
	uint64_t off = 5 * GIB + 3, src = 6 * GIB + 7, bytes = 5 * GIB, sum = 0;
	int n, i;

	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, 6, 1, 5000000000ull) == EB_OK);
	memset(&d, 0, sizeof(d));
	d.q = q.dev;
	d.refused = (void *)&refused_word;
	d.npeers = 16;
	d.nsignals = 4;
	d.src_len = d.dst_len = 64 * GIB;
	eb_producer_set(0);

	/* 5 GiB at offsets above 4 GiB: three commands of at most 2 GiB - 1, contiguous. */
	CHECK(eb_put_nbi(&d, 9, off, src, bytes) == 0);
	n = drain(&q, c, 16);
	CHECK(n == 3);
	for (i = 0; i < n; i++) {
		CHECK(c[i].op == EB_PCMD_PUT && c[i].peer == 9);
		CHECK(c[i].dst_off == off + sum && c[i].src_off == src + sum);
		CHECK(c[i].bytes <= EB_PUT_MAX_BYTES && c[i].bytes > 0);
		sum += c[i].bytes;
	}
	CHECK(sum == bytes);

	/* A put with a signal set, one with a signal add, then a fence. */
	CHECK(eb_put_signal_nbi(&d, 15, 63 * GIB, 0, 8, 3, 42, EB_SIGNAL_SET) == 0);
	CHECK(eb_put_signal_nbi(&d, 2, 0, 63 * GIB, 16, 0, (1ull << 62) + 5, EB_SIGNAL_ADD) == 0);
	CHECK(eb_fence(&d) == 0);
	n = drain(&q, c, 16);
	CHECK(n == 5);
	CHECK(c[0].op == EB_PCMD_PUT && c[0].peer == 15 && c[0].dst_off == 63 * GIB &&
	      c[0].bytes == 8);
	CHECK(c[1].op == EB_PCMD_SIGNAL && c[1].peer == 15 && c[1].sig == 3 &&
	      c[1].sig_op == EB_SIGNAL_SET && c[1].value == 42);
	CHECK(c[2].op == EB_PCMD_PUT && c[2].peer == 2 && c[2].src_off == 63 * GIB &&
	      c[2].bytes == 16);
	CHECK(c[3].op == EB_PCMD_SIGNAL && c[3].peer == 2 && c[3].sig == 0 &&
	      c[3].sig_op == EB_SIGNAL_ADD && c[3].value == (1ull << 62) + 5);
	CHECK(c[4].op == EB_PCMD_FENCE);

	/* eb_put returns only once its command is complete. */
	b = (struct blocking){.d = &d, .rc = -2};
	CHECK(pthread_create(&th, NULL, blocking_put, &b) == 0);
	for (n = 0; n == 0;)
		n = drain(&q, c, 16);
	CHECK(n == 1 && c[0].op == EB_PCMD_PUT && c[0].peer == 3 && c[0].dst_off == 7 * GIB &&
	      c[0].src_off == 9 * GIB && c[0].bytes == 4096);
	pthread_join(th, NULL);
	CHECK(b.rc == 0);

	/* Out of range: a peer, a buffer's end, a signal. Refused, nothing pushed. */
	CHECK(eb_put_nbi(&d, 16, 0, 0, 8) == -1);
	CHECK(eb_put_nbi(&d, 0, 64 * GIB - 4, 0, 8) == -1);
	CHECK(eb_put_signal_nbi(&d, 0, 0, 0, 8, 4, 1, EB_SIGNAL_ADD) == -1);
	CHECK(drain(&q, c, 16) == 0);
	CHECK(eb_gpuq_errors(&q) & EB_Q_ERR_RANGE);
	CHECK(refused_word == 1); /* producer 0 was the first refused */
	eb_gpuq_destroy(&q);
	return check_done();
}
