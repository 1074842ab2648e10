/* efabench-floor: the least a program can do with libfabric for efabench's small-message
 * measurements, so efabench's own overhead can be shown to be negligible. Same provider choice,
 * NIC and address exchange as efabench (its bootstrap and channel code); nothing in the timed
 * loops but posts and fi_cq_read spinning.
 *   sendrecv S N   ping-pong of fi_send / fi_recv: prints one-way microseconds (rtt / 2)
 *   write S N      fi_writedata of S bytes, the target sees its CQ data and answers with an
 *                  8-byte fi_send: prints microseconds per write + acknowledgement
 *   rate S N W     N writes of S with W in flight (within the inject size: injected, the
 *                  provider bounding those in flight), the target counting their CQ data and
 *                  acknowledging the last: prints messages per second
 * usage: efabench-floor sendrecv|write|rate SIZE ITERS [WINDOW] [--provider P] [--cpu-map L]
 * (--cpu-map as efabench's: rank i on the i-th CPU or range of L) */
#include "efabench/boot.h"
#include "efabench/chan.h"
#include "efabench/fabric.h"
#include "efabench/mr.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 100

struct args {
	const char *test, *prov, *cpu_map;
	size_t size;
	long iters;
	int window;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Spin on the CQ until n completions of the kind asked (remote CQ data or not) came. Those of
 * the other kind are kept for a later call: the next write can land before the completion of
 * the acknowledgement that let it go. */
static int reap(struct eb_chan *ch, long n, int remote)
{
	static long kept[2];
	struct fi_cq_data_entry e[16];

	while (kept[remote] < n) {
		ssize_t k = fi_cq_read(ch->cq, e, 16), i;

		if (k == -FI_EAGAIN)
			continue;
		if (k < 0) {
			fprintf(stderr, "efabench-floor: fi_cq_read: %s\n", fi_strerror((int)-k));
			return -1;
		}
		for (i = 0; i < k; i++)
			kept[!!(e[i].flags & FI_REMOTE_WRITE)]++;
	}
	kept[remote] -= n;
	return 0;
}

/* Post until the provider takes it. */
#define POST(call)                                                                                 \
	do {                                                                                       \
		ssize_t r_;                                                                        \
		while ((r_ = (call)) == -FI_EAGAIN)                                                \
			fi_cq_read(ch->cq, NULL, 0);                                               \
		if (r_ != 0) {                                                                     \
			fprintf(stderr, "efabench-floor: %s: %s\n", #call, fi_strerror((int)-r_)); \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* Each side sends first and posts its next receive while the message travels, as efabench
 * does: the reply cannot come sooner than a one-way trip. */
static int pingpong(struct eb_chan *ch, int rank, char *buf, void *desc, size_t s, long n)
{
	fi_addr_t peer = ch->peers[1 - rank];
	double t0 = 0;
	long i;

	if (rank == 1)
		POST(fi_recv(ch->ep, buf + s, s, desc, FI_ADDR_UNSPEC, NULL));
	for (i = -WARMUP; i < n; i++) {
		if (i == 0)
			t0 = now_us();
		if (rank == 0) {
			POST(fi_send(ch->ep, buf, s, desc, peer, NULL));
			POST(fi_recv(ch->ep, buf + s, s, desc, FI_ADDR_UNSPEC, NULL));
			if (reap(ch, 2, 0))
				return -1;
		} else {
			if (reap(ch, 1, 0))
				return -1;
			POST(fi_send(ch->ep, buf, s, desc, peer, NULL));
			if (i + 1 < n)
				POST(fi_recv(ch->ep, buf + s, s, desc, FI_ADDR_UNSPEC, NULL));
			if (reap(ch, 1, 0))
				return -1;
		}
	}
	if (rank == 0)
		printf("%.3f\n", (now_us() - t0) / (double)n / 2);
	return 0;
}

static int write_ack(struct eb_chan *ch, int rank, char *buf, struct eb_mr *mr,
		     const struct eb_rkey *rk, size_t s, long n)
{
	fi_addr_t peer = ch->peers[1 - rank];
	double t0 = 0;
	long i;

	for (i = -WARMUP; i < n; i++) {
		if (i == 0)
			t0 = now_us();
		if (rank == 0) {
			POST(fi_writedata(ch->ep, buf, s, mr->desc, 0, peer, rk->addr, rk->key,
					  NULL));
			POST(fi_recv(ch->ep, buf + s, 8, mr->desc, FI_ADDR_UNSPEC, NULL));
			if (reap(ch, 2, 0)) /* the write's completion and the acknowledgement */
				return -1;
		} else {
			if (reap(ch, 1, 1))
				return -1;
			POST(fi_send(ch->ep, buf, 8, mr->desc, peer, NULL));
			if (reap(ch, 1, 0))
				return -1;
		}
	}
	if (rank == 0)
		printf("%.3f\n", (now_us() - t0) / (double)n);
	return 0;
}

/* n writes with w in flight, then the target's 8-byte acknowledgement that all of them
 * landed: a write's local completion only says its command is queued at the target (shm
 * completes inline writes at once), so without it the last writes would go untimed. */
static int burst(struct eb_chan *ch, char *buf, struct eb_mr *mr, const struct eb_rkey *rk,
		 size_t s, long n, int w)
{
	static struct fi_context2 ack; /* the acknowledgement's receive; the writes pass NULL */
	struct fi_cq_data_entry e[16];
	fi_addr_t peer = ch->peers[1];
	long posted = 0, done = 0, i;
	int acked = 0;

	POST(fi_recv(ch->ep, buf + s, 8, mr->desc, FI_ADDR_UNSPEC, &ack));
	while (done < n || !acked) {
		ssize_t k;

		/* within the inject size no completion comes: the provider bounds the window */
		while (posted < n && (s <= ch->lim.inject_rma || posted - done < w)) {
			ssize_t r =
			    s <= ch->lim.inject_rma
				? fi_inject_writedata(ch->ep, buf, s, 0, peer, rk->addr, rk->key)
				: fi_writedata(ch->ep, buf, s, mr->desc, 0, peer, rk->addr, rk->key,
					       NULL);

			if (r == -FI_EAGAIN)
				break;
			if (r != 0) {
				fprintf(stderr, "efabench-floor: fi_writedata: %s\n",
					fi_strerror((int)-r));
				return -1;
			}
			posted++;
			done += s <= ch->lim.inject_rma;
		}
		k = fi_cq_read(ch->cq, e, 16);
		if (k < 0 && k != -FI_EAGAIN)
			return -1;
		for (i = 0; i < k; i++) {
			if (e[i].op_context == &ack)
				acked = 1;
			else
				done++;
		}
	}
	return 0;
}

/* Warm-up writes, then the timed ones, each acknowledged (the target answers when it has seen
 * them all), as efabench's warm-up and timed phases are. */
static int rate(struct eb_chan *ch, int rank, char *buf, struct eb_mr *mr, const struct eb_rkey *rk,
		size_t s, long n, int w)
{
	double t0;
	int p;

	if (rank == 1) {
		for (p = 0; p < 2; p++) {
			if (reap(ch, p == 0 ? WARMUP : n, 1))
				return -1;
			POST(fi_send(ch->ep, buf, 8, mr->desc, ch->peers[0], NULL));
			if (reap(ch, 1, 0))
				return -1;
		}
		return 0;
	}
	if (burst(ch, buf, mr, rk, s, WARMUP, w))
		return -1;
	t0 = now_us();
	if (burst(ch, buf, mr, rk, s, n, w))
		return -1;
	printf("%.1f\n", (double)n / ((now_us() - t0) * 1e-6));
	return 0;
}

static int run(struct eb_boot *b, void *arg)
{
	const struct args *a = arg;
	struct eb_fabric_opts fo = {.provider = a->prov, .timeout_s = 30};
	struct eb_rkey mine = {0}, *all = calloc((size_t)b->size, sizeof(*all));
	char prov[32], *buf = malloc(2 * a->size + 64), names[2][EB_ADDR_MAX];
	uint32_t lens[2] = {EB_ADDR_MAX, EB_ADDR_MAX};
	struct eb_nic *nics;
	struct eb_chan ch;
	struct eb_mr mr;
	int n, rc = 1;

	if (buf != NULL) /* real pages: untouched ones all map the one zero page, always cached */
		memset(buf, 0x5a, 2 * a->size + 64);
	if (all == NULL || buf == NULL || eb_fabric_choose(&fo, 1, prov, sizeof(prov)) != EB_OK ||
	    eb_fabric_nics(prov, &fo, 1, &nics, &n) != EB_OK)
		goto free_bufs;
	if (eb_chan_open(&ch, &nics[0], 0, b->size, NULL) != EB_OK)
		goto free_nics;
	/* The same address exchange efabench does, through its bootstrap. */
	if (eb_boot_allgather(b, ch.name, names, EB_ADDR_MAX, eb_deadline(30)) != EB_OK ||
	    eb_chan_connect(&ch, names[0], lens, b->size) != EB_OK ||
	    eb_mr_reg(&ch, buf, 2 * a->size + 64,
		      EB_USE_SEND | EB_USE_RECV | EB_USE_SOURCE | EB_USE_TARGET, &mr) != EB_OK)
		goto close_chan;
	mine = mr.rkey;
	if (eb_boot_allgather(b, &mine, all, sizeof(mine), eb_deadline(30)) != EB_OK ||
	    eb_boot_barrier(b, eb_deadline(30)) != EB_OK)
		goto dereg;
	if (strcmp(a->test, "sendrecv") == 0)
		rc = pingpong(&ch, b->rank, buf, mr.desc, a->size, a->iters);
	else if (strcmp(a->test, "write") == 0)
		rc = write_ack(&ch, b->rank, buf, &mr, &all[1 - b->rank], a->size, a->iters);
	else
		rc = rate(&ch, b->rank, buf, &mr, &all[1 - b->rank], a->size, a->iters, a->window);
	rc = rc != 0 || eb_boot_barrier(b, eb_deadline(30)) != EB_OK;
dereg:
	eb_mr_dereg(&mr);
close_chan:
	eb_chan_close(&ch);
free_nics:
	eb_fabric_free_nics(nics, n);
free_bufs:
	free(buf);
	free(all);
	fflush(stdout);
	return rc;
}

/* Pinned first, as efabench's ranks are: its buffers then land near its CPU. */
static int pin_and_run(struct eb_boot *b, void *arg)
{
	const struct args *a = arg;
	char why[96];

	if (a->cpu_map != NULL && eb_topo_pin(a->cpu_map, b->local_rank, why, sizeof(why)) != 0) {
		fprintf(stderr, "efabench-floor: --cpu-map %s: %s\n", a->cpu_map, why);
		return 2;
	}
	return run(b, arg);
}

int main(int argc, char **argv)
{
	struct args a = {.window = 16};
	char why[96];
	int i, pos = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
			a.prov = argv[++i];
		else if (strcmp(argv[i], "--cpu-map") == 0 && i + 1 < argc)
			a.cpu_map = argv[++i];
		else if (pos == 0)
			a.test = argv[pos++, i];
		else if (pos == 1)
			a.size = strtoul(argv[pos++, i], NULL, 0);
		else if (pos == 2)
			a.iters = strtol(argv[pos++, i], NULL, 0);
		else
			a.window = atoi(argv[i]);
	}
	if (a.test == NULL || a.size == 0 || a.iters < 1 || a.window < 1 ||
	    (strcmp(a.test, "sendrecv") && strcmp(a.test, "write") && strcmp(a.test, "rate"))) {
		fprintf(stderr, "usage: efabench-floor sendrecv|write|rate SIZE ITERS [WINDOW] "
				"[--provider P] [--cpu-map LIST]\n");
		return 2;
	}
	if (a.cpu_map != NULL && eb_topo_map_check(a.cpu_map, 2, why, sizeof(why)) != EB_OK) {
		fprintf(stderr, "efabench-floor: --cpu-map %s: %s\n", a.cpu_map, why);
		return 2;
	}
	return eb_launch_local(2, pin_and_run, &a, 35.0);
}
