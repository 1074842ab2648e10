/* progress_gap [bytes]: operations of a peer that complete only while this rank's provider
 * progresses, with this rank in a bootstrap barrier. Two ranks on this host over tcp;ofi_rxm
 * (FI_OFI_RXM_BUFFER_SIZE=256: anything larger goes by rendezvous).
 *   connect  rank 1 has nothing to wait for and enters the barrier at once; rank 0 sends it
 *            a first, eager message and waits for the send before it enters the barrier too.
 *            rxm connects on the first message, and rank 1 must accept: without progress
 *            inside the barrier, rank 0 waits for its deadline. Rank 1 receives it after.
 *   last     rank 0 receives a rendezvous message and enters the barrier right after; rank 1
 *            waits for its send, which completes once rank 0 read the data and acknowledged
 *            it, then enters the barrier.
 *   early    rank 0 writes to rank 1 with immediate data, then enters the barrier; rank 1,
 *            in the barrier meanwhile, counts from what had arrived once it is out (as a
 *            proxy's phase starts) and waits for one more write: the barrier's progress must
 *            not have counted it already (it would be waited for in vain).
 * Every byte checked. Exit 0 when both held, 1 otherwise. */
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/region.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT_S 5.0

struct args {
	size_t bytes;
};

static unsigned char byte_at(size_t i, int sender)
{
	return (unsigned char)(i * 7 + (size_t)sender + 1);
}

static int send_one(struct eb_engine *e, struct eb_region *msg, size_t bytes, int to)
{
	unsigned char *p = msg->mem.ptr;
	struct eb_req r = {0};
	size_t i;
	int rc;

	for (i = 0; i < bytes; i++)
		p[i] = byte_at(i, e->rank);
	rc = eb_post_retry(e, &r, eb_post_send(e, &r, 0, to, p, bytes, eb_region_desc(msg, 0)));
	if (rc == EB_OK)
		rc = eb_req_wait(e, &r, eb_engine_deadline(e));
	if (rc != EB_OK)
		fprintf(stderr, "progress_gap: rank %d: the send did not complete (%s)\n", e->rank,
			eb_strerror(rc));
	return rc;
}

static int recv_one(struct eb_engine *e, struct eb_region *msg, size_t bytes, int from)
{
	unsigned char *p = msg->mem.ptr;
	struct eb_req r = {0};
	size_t i;
	int rc;

	memset(p, 0, bytes);
	rc = eb_post_retry(e, &r, eb_post_recv(e, &r, 0, from, p, bytes, eb_region_desc(msg, 0)));
	if (rc == EB_OK)
		rc = eb_req_wait(e, &r, eb_engine_deadline(e));
	for (i = 0; rc == EB_OK && i < bytes; i++)
		if (p[i] != byte_at(i, from)) {
			fprintf(stderr, "progress_gap: rank %d: byte %zu is wrong\n", e->rank, i);
			rc = EB_EVERIFY;
		}
	return rc;
}

static int barrier(struct eb_engine *e)
{
	return eb_boot_barrier(e->boot, eb_engine_deadline(e));
}

/* connect: rank 1 in the barrier first, the message received after it. */
static int connect_gap(struct eb_engine *e, struct eb_region *msg)
{
	int rc;

	if (e->rank == 0) {
		rc = send_one(e, msg, 64, 1);
		return rc == EB_OK ? barrier(e) : rc;
	}
	rc = barrier(e);
	return rc == EB_OK ? recv_one(e, msg, 64, 0) : rc;
}

/* last: rank 0 receives, then the barrier at once; rank 1 waits for its send first. */
static int last_gap(struct eb_engine *e, struct eb_region *msg, size_t bytes)
{
	int rc = e->rank == 0 ? recv_one(e, msg, bytes, 1) : send_one(e, msg, bytes, 0);

	return rc == EB_OK ? barrier(e) : rc;
}

/* early: a write that lands while its target waits in a barrier is counted after it. */
static int early_write(struct eb_engine *e, struct eb_region *dst)
{
	struct eb_region src;
	struct eb_req r = {0};
	uint64_t base, dl = eb_engine_deadline(e);
	int rc = EB_OK;

	if (e->rank == 0) {
		const struct eb_rkey *k = eb_region_key(dst, 1, 0);

		rc = eb_region_alloc(&src, e, EB_MEM_HOST, 64, EB_USE_SOURCE, 0, "the source");
		if (rc != EB_OK)
			return rc;
		memset(src.mem.ptr, 0x5a, 64);
		rc = eb_post_retry(e, &r,
				   eb_post_write(e, &r, 0, 1, src.mem.ptr, 64,
						 eb_region_desc(&src, 0), k->addr, k->key,
						 EB_IMM(0, 0)));
		if (rc == EB_OK)
			rc = eb_req_wait(e, &r, dl);
		eb_region_close(&src);
		/* long enough for rank 1's barrier to progress the fabric a few times over */
		if (rc == EB_OK)
			nanosleep(&(struct timespec){0, 100000000}, NULL);
		return rc == EB_OK ? barrier(e) : rc;
	}
	rc = barrier(e);
	base = eb_imm_count(e, 0, 0);
	while (rc == EB_OK && eb_imm_count(e, 0, 0) < base + 1)
		rc = eb_engine_step(e, dl);
	if (rc != EB_OK)
		fprintf(stderr,
			"progress_gap: rank 1: the write that landed during the barrier was "
			"counted before it ended (%s)\n",
			eb_strerror(rc));
	else if (((unsigned char *)dst->mem.ptr)[63] != 0x5a)
		rc = EB_EVERIFY;
	return rc;
}

static int rank_main(struct eb_boot *b, void *arg)
{
	const struct args *a = arg;
	struct eb_fabric_opts fo = {.timeout_s = TIMEOUT_S, .channels = 1};
	struct eb_region msg, dst;
	struct eb_engine e;
	int rc;

	if (eb_engine_open(&e, b, &fo) != EB_OK)
		return 1;
	rc = eb_region_alloc(&msg, &e, EB_MEM_HOST, a->bytes, EB_USE_SEND | EB_USE_RECV, 0,
			     "the message");
	if (rc == EB_OK)
		rc = connect_gap(&e, &msg);
	if (rc == EB_OK)
		rc = last_gap(&e, &msg, a->bytes);
	if (rc == EB_OK)
		rc = eb_region_alloc(&dst, &e, EB_MEM_HOST, 64, EB_USE_TARGET, 1, "the target");
	if (rc == EB_OK) {
		rc = early_write(&e, &dst);
		eb_region_close(&dst);
	}
	eb_region_close(&msg);
	if (rc != EB_OK)
		eb_engine_abandon(&e);
	eb_engine_close(&e);
	return rc == EB_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct args a = {argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)1 << 20};

	if (a.bytes < 1) {
		fprintf(stderr, "usage: progress_gap [bytes]\n");
		return 2;
	}
	return eb_launch_local(2, rank_main, &a, TIMEOUT_S + 5);
}
