/* The command queue's protocol driven by CPU threads, as CI can run it (and under TSan): every
 * command from every producer arrives exactly once and in each producer's order, through
 * wrap-around of a tiny ring, a full ring, and quiet; a producer facing a consumer that never
 * comes gives up at its deadline instead of spinning forever. */
#include "check.h"
#include "efabench/gpuq.h"
#include "efabench/status.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct prod {
	pthread_t th;
	struct eb_gpuq_dev *q;
	uint64_t id;
	uint32_t per;
	int failed;
};

static void *produce(void *arg)
{
	struct prod *p = arg;
	uint64_t last = 0;
	uint32_t s;

	for (s = 0; s < p->per; s++) {
		uint64_t lo = p->id << 32 | s;

		last = eb_q_push(p->q, lo, eb_q_check(lo));
		if (last == UINT64_MAX) {
			p->failed = 1;
			return NULL;
		}
	}
	if (eb_q_quiet(p->q, last) != 0)
		p->failed = 1;
	return NULL;
}

/* n producers x per commands through a ring of 2^log2n slots; returns wrong commands. */
static uint64_t run(int n, uint32_t per, uint32_t log2n, uint32_t batch)
{
	struct eb_gpuq q;
	struct prod *p = calloc((size_t)n, sizeof(*p));
	uint32_t *next = calloc((size_t)n, sizeof(*next));
	struct eb_q_cmd buf[64];
	uint64_t total = (uint64_t)n * per, seen = 0, wrong = 0;
	int i;

	CHECK(p != NULL && next != NULL);
	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, log2n, batch, 20000000000ull) ==
	      EB_OK);
	for (i = 0; i < n; i++) {
		p[i] = (struct prod){.q = &q.dev, .id = (uint64_t)i, .per = per};
		CHECK(pthread_create(&p[i].th, NULL, produce, &p[i]) == 0);
	}
	while (seen < total && eb_gpuq_errors(&q) == 0) {
		int k, got = eb_gpuq_poll(&q, buf, 64);

		for (k = 0; k < got; k++) {
			uint64_t who = buf[k].lo >> 32;
			uint32_t seq = (uint32_t)buf[k].lo;

			if (buf[k].hi != eb_q_check(buf[k].lo) || who >= (uint64_t)n ||
			    seq != next[who])
				wrong++;
			else
				next[who]++;
		}
		seen += (uint64_t)got;
		/* Complete in order, a little behind, so quiet really waits. */
		if (got > 0)
			eb_gpuq_complete(&q, q.pos);
	}
	for (i = 0; i < n; i++) {
		pthread_join(p[i].th, NULL);
		CHECK(!p[i].failed);
		CHECK(next[i] == per);
	}
	CHECK(eb_gpuq_errors(&q) == 0);
	CHECK(seen == total);
	eb_gpuq_destroy(&q);
	free(p);
	free(next);
	return wrong;
}

int main(void)
{
	struct eb_gpuq q;
	uint64_t lo = 7;

	/* Many producers through a 4-slot ring: every push past the fourth finds it full. */
	CHECK(run(8, 1000, 2, 1) == 0);
	/* Publishing only every 16 commands on a 4-slot ring still never deadlocks: the
	 * consumer also publishes whenever it finds the ring empty. */
	CHECK(run(4, 2000, 2, 16) == 0);
	CHECK(run(16, 1000, 10, 64) == 0);
	CHECK(run(1, 50000, 12, 64) == 0);

	/* Nobody consumes: the fifth push into 4 slots gives up after its deadline. */
	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, 2, 1, 50000000ull) == EB_OK);
	for (int i = 0; i < 4; i++)
		CHECK(eb_q_push(&q.dev, lo, eb_q_check(lo)) == (uint64_t)i);
	CHECK(eb_q_push(&q.dev, lo, eb_q_check(lo)) == UINT64_MAX);
	CHECK(eb_gpuq_errors(&q) & EB_Q_ERR_FULL);
	/* Nothing completes: quiet gives up too, and says so. */
	CHECK(eb_q_quiet(&q.dev, 0) == -1);
	CHECK(eb_gpuq_errors(&q) & EB_Q_ERR_QUIET);
	eb_gpuq_destroy(&q);

	/* The consumer stops while producers wait for room and in quiet: they give up at once,
	 * long before their 20 s deadline. */
	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, 2, 1, 20000000000ull) == EB_OK);
	{
		struct prod p[3];
		uint64_t t0;
		int i;

		for (i = 0; i < 3; i++) {
			p[i] = (struct prod){.q = &q.dev, .id = (uint64_t)i, .per = 100};
			CHECK(pthread_create(&p[i].th, NULL, produce, &p[i]) == 0);
		}
		while (atomic_load(q.host.head) < 5) /* someone is waiting for room */
			sched_yield();
		t0 = eb_q_now_ns();
		eb_gpuq_close(&q);
		for (i = 0; i < 3; i++) {
			pthread_join(p[i].th, NULL);
			CHECK(p[i].failed);
		}
		CHECK(eb_q_now_ns() - t0 < 5000000000ull);
		CHECK(eb_gpuq_poll(&q, &(struct eb_q_cmd){0}, 1) == 0);
	}
	eb_gpuq_destroy(&q);

	/* Bad sizes are refused. */
	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, 0, 1, 1) == EB_EINVAL);
	CHECK(eb_gpuq_create(&q, EB_GPUQ_CPU, EB_GPUQ_PINNED, 25, 1, 1) == EB_EINVAL);
	return check_done();
}
