/* Registered regions on a real provider (tcp, two channels, three forked ranks): every rank's
 * keys are the ones that rank registered, a rank that exposes nothing still joins the exchange,
 * the keys carry a write on every channel, and a region closes in one call, twice if need be.
 * Ranks report through their exit code: 0 passed, RANK_FAIL failed. */
#include "check.h"
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/region.h"
#include "efabench/status.h"
#include "core/clock.h"

#include <rdma/fabric.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANK_FAIL 2
#define SLOT	  64 /* bytes rank 1 writes into rank 2 per channel */

/* Rank 1 writes SLOT bytes into rank 2's region on every channel, at SLOT * chan, with the keys
 * the region gathered; rank 2 counts the writes' immediate data and checks the bytes. */
static void write_every_channel(struct eb_engine *e, struct eb_region *dst)
{
	struct eb_region src;
	struct eb_req req = {0};
	uint64_t dl = eb_engine_deadline(e);
	int c, i, rc = EB_OK;

	if (e->rank == 1) {
		CHECK(eb_region_alloc(&src, e, EB_MEM_HOST, SLOT, EB_USE_SOURCE, 0, "the source") ==
		      EB_OK);
		for (i = 0; i < SLOT; i++)
			((unsigned char *)src.mem.ptr)[i] = (unsigned char)(i + 1);
		for (c = 0; c < e->nchan && rc == EB_OK; c++) {
			const struct eb_rkey *k = eb_region_key(dst, 2, c);

			rc = eb_post_retry(
			    e, &req,
			    eb_post_write(e, &req, c, 2, src.mem.ptr, SLOT, eb_region_desc(&src, c),
					  k->addr + (uint64_t)c * SLOT, k->key, EB_IMM(1, 0)));
			/* even channels wait, odd ones poll: both complete a request */
			if (rc == EB_OK && c % 2 == 0)
				rc = eb_req_wait(e, &req, dl);
			while (rc == EB_OK && c % 2 == 1 && (rc = eb_req_test(e, &req)) == 0) {
				if (eb_now_ns() > dl)
					rc = EB_ETIMEDOUT;
			}
			rc = rc == 1 ? EB_OK : rc;
		}
		CHECK(rc == EB_OK);
		eb_region_close(&src);
	} else if (e->rank == 2) {
		for (c = 0; c < e->nchan && rc == EB_OK; c++)
			while (rc == EB_OK && eb_imm_count(e, 1, c) < 1)
				rc = eb_engine_step(e, dl);
		CHECK(rc == EB_OK);
		for (i = 0; i < SLOT * e->nchan; i++)
			CHECK(((unsigned char *)dst->mem.ptr)[i] == (unsigned char)(i % SLOT + 1));
	}
	CHECK(eb_boot_barrier(e->boot, dl) == EB_OK);
}

static int rank_regions(struct eb_boot *b, void *arg)
{
	struct eb_fabric_opts fo = {.provider = "tcp", .channels = 2, .timeout_s = 20};
	struct eb_engine e;
	struct eb_region r, one, zero = {0};
	static uint64_t msg[8];
	struct eb_rkey *mine, *all;
	int f0 = check_failed, me = b->rank, n, c;

	(void)arg;
	if (eb_engine_open(&e, b, &fo) != EB_OK)
		return RANK_FAIL;
	n = e.nchan;
	/* Rank 0 exposes nothing but takes part in the exchange. */
	if (me == 0)
		CHECK(eb_region_reg(&r, &e, NULL, EB_USE_TARGET, 1) == EB_OK);
	else
		CHECK(eb_region_alloc(&r, &e, EB_MEM_HOST, 4096, EB_USE_TARGET, 1, "the target") ==
		      EB_OK);
	CHECK(r.mr != NULL && r.rkeys != NULL && r.chan == -1);
	CHECK((r.mem.ptr == NULL) == (me == 0));
	CHECK(me == 0 || r.mr[0].path == EB_REG_HOST);

	/* What every rank gathered is what each registered; rank 0 contributed nothing. */
	mine = calloc((size_t)n, sizeof(*mine));
	all = calloc((size_t)n * (size_t)b->size, sizeof(*all));
	CHECK(mine != NULL && all != NULL);
	for (c = 0; c < n; c++)
		mine[c] = r.mr[c].rkey;
	CHECK(eb_boot_allgather(b, mine, all, sizeof(*mine) * (size_t)n, eb_engine_deadline(&e)) ==
	      EB_OK);
	CHECK(memcmp(all, r.rkeys, sizeof(*all) * (size_t)n * (size_t)b->size) == 0);
	for (c = 0; c < n; c++)
		CHECK(eb_region_key(&r, 0, c)->key == 0 && eb_region_key(&r, 0, c)->addr == 0);
	free(mine);
	free(all);
	write_every_channel(&e, &r);

	/* A local region: one channel, no keys. */
	CHECK(eb_region_local(&one, &e, n - 1, msg, sizeof(msg), EB_USE_SEND) == EB_OK);
	CHECK(one.chan == n - 1 && one.rkeys == NULL && one.mem.ptr == msg);
	CHECK(eb_region_desc(&one, 0) == one.mr[0].desc);

	eb_region_close(&one);
	eb_region_close(&r);
	CHECK(r.mr == NULL && r.rkeys == NULL && r.mem.ptr == NULL && !r.owned);
	eb_region_close(&r);	/* closing twice is harmless */
	eb_region_close(&zero); /* so is closing one never opened */
	eb_engine_close(&e);
	return check_failed != f0 ? RANK_FAIL : 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(eb_launch_local(3, rank_regions, NULL, 5.0) == 0);
	return check_done();
}
