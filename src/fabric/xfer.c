#include "efabench/xfer.h"
#include "efabench/status.h"
#include "../core/log.h"

#include <stdlib.h>
#include <string.h>

static void chunk_done(struct eb_req *r)
{
	struct eb_xfer *x = r->owner;

	x->inflight--;
	x->completed++;
	if (r->status != EB_OK && x->status == EB_OK)
		x->status = r->status;
	x->free_slots[x->nfree++] = (int)(r - x->reqs);
}

int eb_xfer_init(struct eb_xfer *x, struct eb_engine *e, int window)
{
	int i;

	memset(x, 0, sizeof(*x));
	x->e = e;
	x->window = window;
	x->reqs = calloc((size_t)window, sizeof(*x->reqs));
	x->free_slots = calloc((size_t)window, sizeof(*x->free_slots));
	if (x->reqs == NULL || x->free_slots == NULL) {
		eb_err("out of memory for a window of %d requests", window);
		eb_xfer_fini(x);
		return EB_ENOMEM;
	}
	for (i = 0; i < window; i++) {
		x->reqs[i].cb = chunk_done;
		x->reqs[i].owner = x;
	}
	return EB_OK;
}

void eb_xfer_fini(struct eb_xfer *x)
{
	free(x->reqs);
	free(x->free_slots);
	x->reqs = NULL;
	x->free_slots = NULL;
}

size_t eb_xfer_nchunks(size_t len, size_t chunk)
{
	return len == 0 ? 1 : (len + chunk - 1) / chunk;
}

static void arm(struct eb_xfer *x, enum eb_op op, int chan, int peer, const void *buf, size_t len,
		size_t chunk, void *desc)
{
	int i;

	x->op = op;
	x->chan = chan;
	x->peer = peer;
	x->buf = (char *)buf;
	x->len = len;
	x->chunk = chunk;
	x->desc = desc;
	x->nchunks = eb_xfer_nchunks(len, chunk);
	x->posted = x->completed = 0;
	x->inflight = 0;
	x->status = EB_OK;
	x->nfree = x->window;
	for (i = 0; i < x->window; i++)
		x->free_slots[i] = x->window - 1 - i;
}

void eb_xfer_write(struct eb_xfer *x, int chan, int peer, const void *buf, size_t len, size_t chunk,
		   void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm)
{
	arm(x, EB_OP_WRITE, chan, peer, buf, len, chunk, desc);
	x->raddr = raddr;
	x->rkey = rkey;
	x->imm = imm;
}

void eb_xfer_send(struct eb_xfer *x, int chan, int peer, const void *buf, size_t len, size_t chunk,
		  void *desc)
{
	arm(x, EB_OP_SEND, chan, peer, buf, len, chunk, desc);
}

void eb_xfer_recv(struct eb_xfer *x, int chan, int peer, void *buf, size_t len, size_t chunk,
		  void *desc)
{
	arm(x, EB_OP_RECV, chan, peer, buf, len, chunk, desc);
}

int eb_xfer_step(struct eb_xfer *x)
{
	while (x->status == EB_OK && x->posted < x->nchunks && x->nfree > 0) {
		size_t off = x->posted * x->chunk;
		size_t n = x->len - off < x->chunk ? x->len - off : x->chunk;
		struct eb_req *r = &x->reqs[x->free_slots[x->nfree - 1]];
		int rc;

		if (x->len == 0)
			n = 0;
		if (x->op == EB_OP_WRITE)
			rc = eb_post_write(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc,
					   x->raddr + off, x->rkey, x->imm);
		else if (x->op == EB_OP_SEND)
			rc = eb_post_send(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc);
		else
			rc = eb_post_recv(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc);
		if (rc == EB_AGAIN)
			break; /* the provider's queue is full: progress first */
		if (rc != EB_OK) {
			x->status = rc;
			break;
		}
		x->nfree--;
		x->inflight++;
		x->posted++;
	}
	return x->status;
}

int eb_xfer_done(const struct eb_xfer *x)
{
	return x->completed == x->nchunks;
}

static void report_timeout(struct eb_engine *e, struct eb_xfer **xs, int n,
			   const struct eb_imm_wait *w, int nw)
{
	int i;

	for (i = 0; i < n; i++) {
		if (eb_xfer_done(xs[i]))
			continue;
		eb_err("timed out after %.1f s: %s rank %d on channel %d: %zu of %zu chunks "
		       "complete",
		       e->timeout_s,
		       xs[i]->op == EB_OP_WRITE	 ? "writes to"
		       : xs[i]->op == EB_OP_SEND ? "sends to"
						 : "receives from",
		       xs[i]->peer, xs[i]->chan, xs[i]->completed, xs[i]->nchunks);
		return;
	}
	for (i = 0; i < nw; i++) {
		uint64_t got = eb_imm_count(e, w[i].peer, w[i].chan);

		if (got >= w[i].count)
			continue;
		eb_err("timed out after %.1f s waiting for writes from rank %d on channel %d "
		       "(%llu of %llu chunks arrived)",
		       e->timeout_s, w[i].peer, w[i].chan, (unsigned long long)got,
		       (unsigned long long)w[i].count);
		return;
	}
}

int eb_xfer_wait_imm(struct eb_engine *e, struct eb_xfer **xs, int n, const struct eb_imm_wait *w,
		     int nw, uint64_t deadline)
{
	int i, rc, pending;

	for (;;) {
		pending = 0;
		for (i = 0; i < n; i++) {
			rc = eb_xfer_step(xs[i]);
			if (rc != EB_OK)
				return rc; /* already reported where it failed */
			pending += !eb_xfer_done(xs[i]);
		}
		for (i = 0; i < nw; i++)
			pending += eb_imm_count(e, w[i].peer, w[i].chan) < w[i].count;
		if (pending == 0)
			return EB_OK;
		rc = eb_engine_step(e, deadline);
		if (rc == EB_ETIMEDOUT)
			report_timeout(e, xs, n, w, nw);
		if (rc != EB_OK)
			return rc;
	}
}

int eb_xfer_wait(struct eb_xfer **xs, int n, uint64_t deadline)
{
	return n == 0 ? EB_OK : eb_xfer_wait_imm(xs[0]->e, xs, n, NULL, 0, deadline);
}
