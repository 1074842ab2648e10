/* The embedded launcher and its bootstrap: collectives across forked ranks, and a lost rank
 * (killed, exited, or returned early) failing the others' collectives fast instead of hanging.
 *
 * Ranks report through their exit code: 0 passed, RANK_FAIL failed. The launcher reports the
 * job's status as the first non-zero rank status, except that 2 wins over any other, so a
 * failed survivor shows through even beside a victim that exited on purpose (with 3, or
 * killed: 1). Lines such as "lost rank 2: ..." on stderr are the expected noise of the
 * failure cases. */
#include "check.h"
#include "boot/hub.h"
#include "boot/wire.h"
#include "core/clock.h"
#include "efabench/boot.h"
#include "efabench/pattern.h"
#include "efabench/status.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define RANK_FAIL   2
#define VICTIM_EXIT 3
#define GRACE_S	    5.0
#define BIG	    (1u << 20)

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static double seconds_since(uint64_t t0)
{
	return (double)(eb_now_ns() - t0) * 1e-9;
}

/* What a rank returns: the CHECKs it failed since start were counted in its own process. */
static int rank_result(int failed_at_start)
{
	return check_failed != failed_at_start ? RANK_FAIL : 0;
}

/* (a) Every collective, on any number of ranks. */
static int rank_collectives(struct eb_boot *b, void *arg)
{
	int f0 = check_failed, np = *(const int *)arg, me = b->rank, r, i;
	uint64_t dl = eb_deadline(20.0);
	int *ints = calloc((size_t)np, sizeof(int)), *in = calloc((size_t)np, sizeof(int));
	int *out = calloc((size_t)np, sizeof(int));
	unsigned char *big_in = malloc(BIG), *big_out = malloc((size_t)BIG * (size_t)np);
	unsigned char *odd_in = malloc(1001 * (size_t)np), *odd_out = malloc(1001 * (size_t)np);

	CHECK(b->size == np);
	CHECK(me >= 0 && me < np);
	CHECK(b->local_size == np && b->local_rank == me);
	if (ints == NULL || in == NULL || out == NULL || big_in == NULL || big_out == NULL ||
	    odd_in == NULL || odd_out == NULL || b->size != np)
		return RANK_FAIL;

	CHECK(eb_boot_check(b) == EB_OK);
	CHECK(eb_boot_allgather(b, &me, ints, sizeof(int), dl) == EB_OK);
	for (r = 0; r < np; r++)
		CHECK(ints[r] == r);

	for (r = 0; r < np; r++)
		in[r] = me * 100 + r;
	CHECK(eb_boot_alltoall(b, in, out, sizeof(int), dl) == EB_OK);
	for (r = 0; r < np; r++)
		CHECK(out[r] == r * 100 + me);

	/* Blocks of an odd size, each a pattern slice naming sender and receiver. */
	for (r = 0; r < np; r++) {
		struct eb_pattern p = {.src = (uint32_t)me, .dst = (uint32_t)r, .epoch = 1};

		eb_pattern_fill(&p, odd_in + 1001 * (size_t)r, 1001, 0);
	}
	CHECK(eb_boot_alltoall(b, odd_in, odd_out, 1001, dl) == EB_OK);
	for (r = 0; r < np; r++) {
		struct eb_pattern p = {.src = (uint32_t)r, .dst = (uint32_t)me, .epoch = 1};

		CHECK(eb_pattern_check(&p, odd_out + 1001 * (size_t)r, 1001, 0, NULL) == 0);
	}

	for (i = 0; i < 50; i++) {
		int rc = eb_boot_barrier(b, dl);

		if (rc != EB_OK) {
			CHECK(rc == EB_OK);
			break;
		}
	}

	/* A large allgather: 1 MiB from each rank. */
	{
		struct eb_pattern p = {.src = (uint32_t)me, .dst = 0, .epoch = 2};

		eb_pattern_fill(&p, big_in, BIG, 0);
		memset(big_out, 0, (size_t)BIG * (size_t)np);
		CHECK(eb_boot_allgather(b, big_in, big_out, BIG, dl) == EB_OK);
		for (r = 0; r < np; r++) {
			p.src = (uint32_t)r;
			CHECK(eb_pattern_check(&p, big_out + (size_t)BIG * (size_t)r, BIG, 0,
					       NULL) == 0);
		}
	}

	/* Empty contributions are legal and complete like any other. */
	CHECK(eb_boot_allgather(b, in, out, 0, dl) == EB_OK);
	CHECK(eb_boot_alltoall(b, in, out, 0, dl) == EB_OK);

	CHECK(eb_boot_single_host(b, dl) == 1);
	CHECK(eb_boot_check(b) == EB_OK);
	CHECK(eb_boot_barrier(b, dl) == EB_OK);
	free(ints);
	free(in);
	free(out);
	free(big_in);
	free(big_out);
	free(odd_in);
	free(odd_out);
	return rank_result(f0);
}

static void test_collectives(void)
{
	static const int nps[] = {1, 2, 4, 7};
	size_t i;

	for (i = 0; i < sizeof(nps) / sizeof(nps[0]); i++) {
		int np = nps[i], rc;
		uint64_t t0 = eb_now_ns();

		rc = eb_launch_local(np, rank_collectives, &np, GRACE_S);
		printf("collectives np %d: job status %d in %.2f s\n", np, rc, seconds_since(t0));
		CHECK(rc == 0);
	}
}

enum death { DIE_EXIT, DIE_KILL, DIE_RETURN0, DIE_RETURN3 };

struct loss {
	int victim;
	enum death how;
};

/* The victim leaves while the others are (or are about to be) waiting on it. */
static int victim_leaves(const struct loss *l)
{
	sleep_ms(200);
	switch (l->how) {
	case DIE_EXIT:
		fflush(stderr);
		_exit(VICTIM_EXIT);
	case DIE_KILL:
		raise(SIGKILL);
		_exit(99); /* not reached */
	case DIE_RETURN0:
		return 0;
	case DIE_RETURN3:
		return VICTIM_EXIT;
	}
	return 99;
}

/* (b), (c): survivors sit in a barrier with a 20 s deadline; it must fail fast. */
static int rank_loss_barrier(struct eb_boot *b, void *arg)
{
	const struct loss *l = arg;
	int f0 = check_failed, rc;
	uint64_t t0;
	double took;

	/* Everybody is connected and past start-up before anyone leaves. */
	CHECK(eb_boot_barrier(b, eb_deadline(20.0)) == EB_OK);
	if (b->rank == l->victim)
		return victim_leaves(l);
	t0 = eb_now_ns();
	rc = eb_boot_barrier(b, eb_deadline(20.0));
	took = seconds_since(t0);
	CHECK(rc == EB_EPEER);
	CHECK(took < 5.0);
	if (rc != EB_EPEER || took >= 5.0)
		fprintf(stderr, "rank %d: barrier returned %d after %.2f s\n", b->rank, rc, took);
	/* Once lost, always lost: later calls fail at once. */
	t0 = eb_now_ns();
	CHECK(eb_boot_barrier(b, eb_deadline(20.0)) == EB_EPEER);
	CHECK(eb_boot_check(b) == EB_EPEER);
	CHECK(seconds_since(t0) < 1.0);
	return rank_result(f0);
}

/* (d): eb_boot_check is quiet while all is well and reports the loss once it happens. */
static int rank_loss_check(struct eb_boot *b, void *arg)
{
	const struct loss *l = arg;
	int f0 = check_failed, rc = EB_OK, i;
	uint64_t t0, limit;

	CHECK(eb_boot_barrier(b, eb_deadline(20.0)) == EB_OK);
	for (i = 0; i < 20; i++) {
		CHECK(eb_boot_check(b) == EB_OK);
		sleep_ms(1);
	}
	CHECK(eb_boot_barrier(b, eb_deadline(20.0)) == EB_OK);
	CHECK(eb_boot_check(b) == EB_OK);
	if (b->rank == l->victim)
		return victim_leaves(l);
	t0 = eb_now_ns();
	limit = eb_deadline(10.0);
	while (eb_now_ns() < limit) {
		rc = eb_boot_check(b);
		if (rc != EB_OK)
			break;
		sleep_ms(5);
	}
	CHECK(rc == EB_EPEER);
	if (rc != EB_EPEER)
		fprintf(stderr, "rank %d: eb_boot_check returned %d after %.2f s\n", b->rank, rc,
			seconds_since(t0));
	CHECK(eb_boot_check(b) == EB_EPEER);
	CHECK(eb_boot_barrier(b, eb_deadline(20.0)) == EB_EPEER);
	return rank_result(f0);
}

static int run_loss(const char *what, int np, struct loss *l, eb_rank_main fn, int want)
{
	uint64_t t0 = eb_now_ns();
	int rc;

	rc = eb_launch_local(np, fn, l, GRACE_S);
	printf("%s (np %d, victim %d): job status %d (want %d) in %.2f s\n", what, np, l->victim,
	       rc, want, seconds_since(t0));
	fflush(stdout);
	return rc;
}

static void test_losses(void)
{
	struct loss l;

	/* (b) A rank exits or is killed while the others wait in a barrier. */
	l = (struct loss){.victim = 2, .how = DIE_EXIT};
	CHECK(run_loss("exit(3) during barrier", 3, &l, rank_loss_barrier, VICTIM_EXIT) ==
	      VICTIM_EXIT);
	l = (struct loss){.victim = 0, .how = DIE_EXIT};
	CHECK(run_loss("exit(3) during barrier", 4, &l, rank_loss_barrier, VICTIM_EXIT) ==
	      VICTIM_EXIT);
	l = (struct loss){.victim = 1, .how = DIE_KILL};
	CHECK(run_loss("SIGKILL during barrier", 3, &l, rank_loss_barrier, 1) == 1);
	/* A rank that returns a failure code (and says so) is lost the same way. */
	l = (struct loss){.victim = 1, .how = DIE_RETURN3};
	CHECK(run_loss("return 3 during barrier", 3, &l, rank_loss_barrier, VICTIM_EXIT) ==
	      VICTIM_EXIT);

	/* (c) A rank that returns 0 early leaves the others' barrier unserved. */
	l = (struct loss){.victim = 0, .how = DIE_RETURN0};
	CHECK(run_loss("return 0 during barrier", 3, &l, rank_loss_barrier, 0) == 0);
	l = (struct loss){.victim = 2, .how = DIE_RETURN0};
	CHECK(run_loss("return 0 during barrier", 3, &l, rank_loss_barrier, 0) == 0);

	/* (d) eb_boot_check reports nothing, then the loss. */
	l = (struct loss){.victim = 1, .how = DIE_EXIT};
	CHECK(run_loss("exit(3) while polling check", 3, &l, rank_loss_check, VICTIM_EXIT) ==
	      VICTIM_EXIT);
	l = (struct loss){.victim = 0, .how = DIE_KILL};
	CHECK(run_loss("SIGKILL while polling check", 2, &l, rank_loss_check, 1) == 1);
}

/* Ranks that disagree on a collective's size are all failed, not served garbage. */
static int rank_mismatch(struct eb_boot *b, void *arg)
{
	int f0 = check_failed;
	char in[16] = {0}, *out = malloc(16 * (size_t)b->size);
	uint64_t t0 = eb_now_ns();

	(void)arg;
	if (out == NULL)
		return RANK_FAIL;
	CHECK(eb_boot_allgather(b, in, out, b->rank == 0 ? 8 : 16, eb_deadline(20.0)) == EB_EPEER);
	CHECK(seconds_since(t0) < 5.0);
	free(out);
	return rank_result(f0);
}

static void test_mismatch(void)
{
	uint64_t t0 = eb_now_ns();
	int rc = eb_launch_local(3, rank_mismatch, NULL, GRACE_S);

	printf("mismatched collective (np 3): job status %d (want 0) in %.2f s\n", rc,
	       seconds_since(t0));
	CHECK(rc == 0);
}

/* The hub's side of a socket: take the GATHER, then answer a PING if one comes. */
static void *answering_hub(void *arg)
{
	int fd = *(int *)arg;
	struct eb_wire_hdr h;
	char buf[64];

	if (eb_sock_read(fd, &h, sizeof(h), eb_deadline(5)) != EB_OK || h.len > sizeof(buf) ||
	    eb_sock_read(fd, buf, (size_t)h.len, eb_deadline(5)) != EB_OK ||
	    eb_sock_read(fd, &h, sizeof(h), eb_deadline(5)) != EB_OK)
		return (void *)(intptr_t)-1;
	if (h.type == EB_WIRE_PING)
		eb_wire_send(fd, EB_WIRE_PONG, 0, NULL, 0, eb_deadline(1));
	return (void *)(intptr_t)h.type;
}

/* A hub that answers every PING for a while, then sends the collective's result. */
static void *slow_hub(void *arg)
{
	int fd = *(int *)arg, pings = 0;
	uint64_t res[2] = {7, 8}, until = eb_deadline(1.0);
	struct eb_wire_hdr h;
	char buf[64];

	if (eb_sock_read(fd, &h, sizeof(h), eb_deadline(5)) != EB_OK || h.len > sizeof(buf) ||
	    eb_sock_read(fd, buf, (size_t)h.len, eb_deadline(5)) != EB_OK)
		return (void *)(intptr_t)-1;
	while (eb_now_ns() < until)
		if (eb_sock_read(fd, &h, sizeof(h), until) == EB_OK && h.type == EB_WIRE_PING) {
			eb_wire_send(fd, EB_WIRE_PONG, 0, NULL, 0, eb_deadline(1));
			pings++;
		}
	eb_wire_send(fd, EB_WIRE_RESULT, 1, res, sizeof(res), eb_deadline(1));
	return (void *)(intptr_t)pings;
}

/* A long collective (a phase's length) asks every ping_ns whether the hub is there: a live
 * hub's answers keep it waiting until the result comes; a silent hub ends it at once. */
/* Rank 1's allgather against a hub thread on the other end of a socket pair: the collective
 * must return want; the hub thread's result comes back. */
static intptr_t hub_collective(struct eb_boot *b, void *(*hub)(void *), uint64_t *in, uint64_t *out,
			       double seconds, int want)
{
	struct eb_wire_rank *w = b->impl;
	pthread_t th;
	void *res = NULL;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	w->fd = sv[0];
	CHECK(pthread_create(&th, NULL, hub, &sv[1]) == 0);
	CHECK(eb_boot_allgather(b, in, out, sizeof(*in), eb_deadline(seconds)) == want);
	CHECK(pthread_join(th, &res) == 0);
	close(sv[0]);
	close(sv[1]);
	return (intptr_t)res;
}

static void test_long_wait(void)
{
	struct eb_wire_rank w = {.hub_name = "rank 0 (the test's hub)", .ping_ns = 200000000};
	struct eb_boot b = {.rank = 1, .size = 2, .ops = &eb_wire_boot_ops, .impl = &w};
	uint64_t in = 8, out[2] = {0, 0}, t0;
	void *pings;
	int sv[2];

	pings = (void *)hub_collective(&b, slow_hub, &in, out, 30, EB_OK);
	printf("live hub: %d questions answered before the result\n", (int)(intptr_t)pings);
	CHECK((intptr_t)pings >= 2 && out[0] == 7 && out[1] == 8 && w.lost == 0);

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	w.fd = sv[0];
	w.seq = 0;
	t0 = eb_now_ns();
	CHECK(eb_boot_allgather(&b, &in, out, sizeof(in), eb_deadline(30)) == EB_EPEER);
	printf("silent hub in a 30 s collective: given up after %.2f s\n", seconds_since(t0));
	CHECK(seconds_since(t0) < 3.0 && w.lost == 1);
	close(sv[0]);
	close(sv[1]);
}

/* Rank 1 times out in a collective rank 0 never comes to: the launcher's hub answers its
 * PING at once, so rank 1 learns the hub is there well before the 2 s a silent one gets. */
static int rank_asks_hub(struct eb_boot *b, void *arg)
{
	uint64_t in = 1, out[2], t0 = eb_now_ns();
	int rc;

	(void)arg;
	if (b->rank == 0) {
		sleep_ms(1500);
		return 0;
	}
	rc = eb_boot_allgather(b, &in, out, sizeof(in), eb_deadline(0.3));
	printf("collective without rank 0: status %d after %.2f s (want %d within 1.2 s)\n", rc,
	       seconds_since(t0), EB_ETIMEDOUT);
	return rc == EB_ETIMEDOUT && seconds_since(t0) < 1.2 ? 0 : 1;
}

/* A collective that times out asks the hub whether it is there: a hub that answers is waiting
 * for someone else (the rank may try again later); a silent one (a stopped rank 0 serving a
 * rendezvous) is named and given up on, so the next collective fails at once. */
static void test_silent_hub(void)
{
	struct eb_wire_rank w = {.hub_name = "rank 0 (the test's hub)"};
	struct eb_boot b = {.rank = 1, .size = 2, .ops = &eb_wire_boot_ops, .impl = &w};
	uint64_t in = 7, out[2], t0;
	struct eb_wire_hdr h;
	void *seen;
	int sv[2];

	seen = (void *)hub_collective(&b, answering_hub, &in, out, 0.2, EB_ETIMEDOUT);
	CHECK((intptr_t)seen == EB_WIRE_PING);
	CHECK(w.lost == 0);

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	w.fd = sv[0];
	t0 = eb_now_ns();
	CHECK(eb_boot_allgather(&b, &in, out, sizeof(in), eb_deadline(0.2)) == EB_ETIMEDOUT);
	printf("silent hub: gave up in %.2f s (deadline 0.2 s + 2 s for an answer)\n",
	       seconds_since(t0));
	CHECK(seconds_since(t0) < 3.0);
	CHECK(w.lost == 1);
	t0 = eb_now_ns();
	CHECK(eb_boot_allgather(&b, &in, out, sizeof(in), eb_deadline(5)) == EB_EPEER);
	CHECK(seconds_since(t0) < 0.1);
	/* What the silent hub was sent: the GATHER with our 8 bytes, then the PING. */
	CHECK(eb_sock_read(sv[1], &h, sizeof(h), eb_deadline(1)) == EB_OK);
	CHECK(h.type == EB_WIRE_GATHER && h.len == sizeof(in));
	CHECK(eb_sock_read(sv[1], out, sizeof(in), eb_deadline(1)) == EB_OK && out[0] == in);
	CHECK(eb_sock_read(sv[1], &h, sizeof(h), eb_deadline(1)) == EB_OK);
	CHECK(h.type == EB_WIRE_PING && h.len == 0);
	close(sv[0]);
	close(sv[1]);
}

/* Rank 0 stops half-way through a frame (its header sent, not its payload): the hub must go on
 * answering rank 1 at once, not wait for the rest (it waited up to 10 s, so ranks asking
 * whether the launcher was there gave up on it); once the rest comes, the collective completes. */
static void test_partial_frame(void)
{
	struct eb_wire_hdr g = {.type = EB_WIRE_GATHER, .arg = 1, .len = sizeof(uint64_t)}, h;
	uint64_t v0 = 10, v1 = 11, res[2] = {0, 0}, t0;
	int sv[2][2], fds[2], r, ponged = 0;
	struct eb_hub hub;

	for (r = 0; r < 2; r++) {
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[r]) == 0);
		fds[r] = sv[r][0];
	}
	CHECK(eb_hub_init(&hub, 2, fds) == EB_OK);
	CHECK(eb_sock_write(sv[0][1], &g, sizeof(g), eb_deadline(1)) == EB_OK);
	CHECK(eb_wire_send(sv[1][1], EB_WIRE_PING, 0, NULL, 0, eb_deadline(1)) == EB_OK);
	t0 = eb_now_ns();
	while (!ponged && seconds_since(t0) < 1.0) {
		eb_hub_poll(&hub, 10);
		ponged = eb_sock_read(sv[1][1], &h, sizeof(h), eb_deadline(0.01)) == EB_OK &&
			 h.type == EB_WIRE_PONG;
	}
	printf("rank 0 stopped mid-frame: rank 1's question answered after %.3f s\n",
	       seconds_since(t0));
	CHECK(ponged && seconds_since(t0) < 1.0);
	CHECK(hub.r[0].state == EB_HUB_LIVE && hub.r[1].state == EB_HUB_LIVE);
	/* The rest of rank 0's frame, rank 1's contribution: both get the result. */
	CHECK(eb_sock_write(sv[0][1], &v0, sizeof(v0), eb_deadline(1)) == EB_OK);
	CHECK(eb_wire_send(sv[1][1], EB_WIRE_GATHER, 1, &v1, sizeof(v1), eb_deadline(1)) == EB_OK);
	for (r = 0; r < 2; r++) {
		while (eb_sock_read(sv[r][1], &h, sizeof(h), eb_deadline(0.01)) != EB_OK &&
		       seconds_since(t0) < 5.0)
			eb_hub_poll(&hub, 10);
		CHECK(h.type == EB_WIRE_RESULT && h.len == sizeof(res));
		CHECK(eb_sock_read(sv[r][1], res, sizeof(res), eb_deadline(1)) == EB_OK);
		CHECK(res[0] == v0 && res[1] == v1);
	}
	eb_hub_fini(&hub);
	for (r = 0; r < 2; r++)
		close(sv[r][1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_collectives();
	test_losses();
	test_mismatch();
	test_silent_hub();
	test_long_wait();
	test_partial_frame();
	CHECK(eb_launch_local(2, rank_asks_hub, NULL, GRACE_S) == 0);
	return check_done();
}
