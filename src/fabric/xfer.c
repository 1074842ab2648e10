#include "efabench/xfer.h"
#include "efabench/status.h"
#include "core/log.h"

#include <rdma/fi_rma.h>
#include <stdlib.h>
#include <string.h>

/* Completions a message-rate loop reads per poll: a window's worth, not eb_progress's 64. */
#define RATE_BATCH 16

static void chunk_done(struct eb_req *r)
{
	struct eb_xfer *x = r->owner;

	x->inflight--;
	x->completed++; /* pooled: this channel's share, known only at the end */
	if (x->stage != NULL && x->op == EB_OP_RECV && r->status == EB_OK)
		x->arrived[r->tag] = 1;
	if (r->status != EB_OK && x->status == EB_OK)
		x->status = r->status;
	x->free_slots[x->nfree++] = (int)(r - x->reqs);
	if (x->on_done != NULL && x->stage == NULL && x->pool == NULL && x->completed == x->nchunks)
		x->on_done(x);
}

int eb_xfer_init(struct eb_xfer *x, struct eb_engine *e, int window)
{
	int i;

	memset(x, 0, sizeof(*x));
	x->e = e; /* on_done and owner are the caller's to set after init */
	x->window = window;
	x->nfree = -1; /* the first arm builds the stack of free requests */
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
	free(x->tickets);
	free(x->arrived);
	x->reqs = NULL;
	x->free_slots = NULL;
	x->tickets = NULL;
	x->arrived = NULL;
}

struct eb_xfer *eb_xfers_new(struct eb_engine *e, int n, int window)
{
	struct eb_xfer *xs = calloc((size_t)n, sizeof(*xs));
	int i;

	if (xs == NULL) {
		eb_err("out of memory for %d transfers", n);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (eb_xfer_init(&xs[i], e, window) != EB_OK) {
			eb_xfers_free(xs, i);
			return NULL;
		}
	return xs;
}

void eb_xfers_free(struct eb_xfer *xs, int n)
{
	int i;

	for (i = 0; xs != NULL && i < n; i++)
		eb_xfer_fini(&xs[i]);
	free(xs);
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
	x->stage = NULL; /* eb_xfer_stage turns it on for this transfer */
	x->pool = NULL;
	x->staged = x->copied = 0;
	/* A finished transfer gave every request back (in any order, which is as good): only a
	 * failed one needs its stack rebuilt. Re-arming a one-chunk transfer stays O(1). */
	if (x->nfree == x->window)
		return;
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

void eb_xfer_write_pooled(struct eb_xfer *x, struct eb_xfer_pool *pool, int chan, int peer,
			  const void *buf, size_t len, size_t chunk, void *desc, uint64_t raddr,
			  uint64_t rkey, uint32_t imm)
{
	eb_xfer_write(x, chan, peer, buf, len, chunk, desc, raddr, rkey, imm);
	pool->next = 0;
	pool->nchunks = x->nchunks;
	pool->cap = 0;
	x->pool = pool;
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

int eb_xfer_stage(struct eb_xfer *x, struct eb_stage *stage, void *dev, int serial)
{
	if (x->tickets == NULL)
		x->tickets = calloc((size_t)(2 * x->window), sizeof(*x->tickets));
	if (x->arrived_cap < x->nchunks) {
		free(x->arrived);
		x->arrived = malloc(x->nchunks);
		x->arrived_cap = x->arrived != NULL ? x->nchunks : 0;
	}
	if (x->tickets == NULL || x->arrived == NULL) {
		eb_err("out of memory for a staged transfer of %zu chunks", x->nchunks);
		return EB_ENOMEM;
	}
	if (x->op == EB_OP_WRITE && x->nchunks > 65536) {
		eb_err("a staged transfer names its chunks in 16 bits: %zu chunks of %zu bytes are "
		       "too many (raise --chunk)",
		       x->nchunks, x->chunk);
		return EB_EINVAL;
	}
	memset(x->arrived, 0, x->nchunks);
	x->stage = stage;
	x->dev = dev;
	x->serial = serial;
	return EB_OK;
}

static size_t chunk_len(const struct eb_xfer *x, size_t i)
{
	size_t off = i * x->chunk;

	return x->len == 0 ? 0 : x->len - off < x->chunk ? x->len - off : x->chunk;
}

/* Start the copies the pipeline allows and retire finished ones, in chunk order. Outgoing
 * chunks are copied ahead of their post; incoming ones once they arrived. */
static int stage_step(struct eb_xfer *x)
{
	int depth = 2 * x->window, rc;
	int in = x->op == EB_OP_RECV;

	while (x->staged < x->nchunks && x->staged - x->copied < (size_t)depth) {
		size_t i = x->staged, off = i * x->chunk;
		int *t = &x->tickets[i % (size_t)depth];

		if (in && (!x->arrived[i] || (x->serial && x->completed < x->nchunks)))
			break;
		if (chunk_len(x, i) == 0) {
			*t = -1;
		} else {
			rc = in ? eb_stage_start(x->stage, x->dev + off, x->buf + off,
						 chunk_len(x, i), 1, t)
				: eb_stage_start(x->stage, x->buf + off, x->dev + off,
						 chunk_len(x, i), 0, t);
			if (rc == EB_AGAIN)
				break;
			if (rc != EB_OK)
				return rc;
		}
		x->staged++;
	}
	while (x->copied < x->staged) {
		int t = x->tickets[x->copied % (size_t)depth];

		rc = t < 0 ? 1 : eb_stage_test(x->stage, t);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		x->copied++;
	}
	return EB_OK;
}

/* Chunks that may be posted now: all of them unless staged outgoing, where a chunk waits for
 * its copy (serial: for every copy). */
static size_t postable(const struct eb_xfer *x)
{
	if (x->stage == NULL || x->op == EB_OP_RECV)
		return x->nchunks;
	if (x->serial)
		return x->copied == x->nchunks ? x->nchunks : 0;
	return x->copied;
}

/* The testing aid's shift of chunk i: one chunk back for chunk K. */
static size_t misplaced(const struct eb_xfer *x, size_t i)
{
	return x->e->misplace_chunk > 0 && i == x->e->misplace_chunk ? x->chunk : 0;
}

/* The chunk to post next, or 0 when none may go now (*i set otherwise). */
static int next_chunk(const struct eb_xfer *x, size_t *i)
{
	if (x->pool != NULL) {
		*i = x->pool->next;
		return *i < x->pool->nchunks && (x->pool->cap == 0 || x->inflight < x->pool->cap);
	}
	*i = x->posted;
	return *i < postable(x);
}

int eb_xfer_push(struct eb_xfer *x)
{
	int refused = 0;

	if (x->stage != NULL && x->status == EB_OK) {
		int rc = stage_step(x);

		if (rc != EB_OK)
			x->status = rc;
	}
	size_t i;

	while (x->status == EB_OK && x->nfree > 0 && next_chunk(x, &i)) {
		size_t off = i * x->chunk;
		size_t n = chunk_len(x, i);
		struct eb_req *r = &x->reqs[x->free_slots[x->nfree - 1]];
		uint32_t imm = x->imm;
		int rc;

		r->tag = i;
		if (x->stage != NULL) /* a staged target learns which chunk landed */
			imm = (imm & 0xffffu) | (uint32_t)(i & 0xffffu) << 16;
		if (x->op == EB_OP_WRITE)
			rc = eb_post_write(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc,
					   x->raddr + off - misplaced(x, i), x->rkey, imm);
		else if (x->op == EB_OP_SEND)
			rc = eb_post_send(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc);
		else
			rc = eb_post_recv(x->e, r, x->chan, x->peer, x->buf + off, n, x->desc);
		if (rc == EB_AGAIN) {
			refused = 1; /* the provider's queue is full: progress first */
			break;
		}
		if (rc != EB_OK) {
			x->status = rc;
			break;
		}
		x->nfree--;
		x->inflight++;
		x->posted++;
		if (x->pool != NULL)
			x->pool->next++;
	}
	return x->status == EB_OK && refused ? EB_AGAIN : x->status;
}

int eb_xfer_step(struct eb_xfer *x)
{
	int rc = eb_xfer_push(x);

	return rc == EB_AGAIN ? EB_OK : rc;
}

int eb_chan_full(uint64_t full, int chan)
{
	return chan < 64 && (full >> chan & 1u);
}

uint64_t eb_chan_mark(uint64_t full, int chan)
{
	return chan < 64 ? full | (uint64_t)1 << chan : full;
}

int eb_xfer_push_sweep(struct eb_xfer *x, uint64_t *full)
{
	int rc;

	if (eb_chan_full(*full, x->chan))
		return EB_OK;
	rc = eb_xfer_push(x);
	if (rc == EB_AGAIN)
		*full = eb_chan_mark(*full, x->chan);
	return rc;
}

int eb_xfer_done(const struct eb_xfer *x)
{
	if (x->pool != NULL) /* its share: what it took once none is left to take */
		return x->pool->next == x->pool->nchunks && x->completed == x->posted;
	return x->completed == x->nchunks && (x->stage == NULL || x->copied == x->nchunks);
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
		       xs[i]->peer, xs[i]->chan, xs[i]->completed,
		       xs[i]->pool != NULL ? xs[i]->posted : xs[i]->nchunks);
		return;
	}
	for (i = 0; i < nw; i++) {
		uint64_t got = eb_imm_count(e, w[i].peer, w[i].chan);

		if (got >= w[i].count)
			continue;
		if (w[i].chan == EB_CHAN_ANY)
			eb_err(
			    "timed out after %.1f s waiting for writes from rank %d (%llu of %llu "
			    "chunks arrived over all channels)",
			    e->timeout_s, w[i].peer, (unsigned long long)got,
			    (unsigned long long)w[i].count);
		else
			eb_err(
			    "timed out after %.1f s waiting for writes from rank %d on channel %d "
			    "(%llu of %llu chunks arrived)",
			    e->timeout_s, w[i].peer, w[i].chan, (unsigned long long)got,
			    (unsigned long long)w[i].count);
		return;
	}
}

/* The waits' counts say which channels an empty poll must read (eb_engine_expect). */
static void expect(struct eb_engine *e, const struct eb_imm_wait *w, int nw, int d)
{
	int i;

	for (i = 0; i < nw; i++)
		eb_engine_expect(e, w[i].chan, d);
}

/* One count and no transfers (a message rate's target): this channel's CQ read in small
 * batches with nothing else between two reads, the other channels when it is empty. */
static int wait_count(struct eb_engine *e, const struct eb_imm_wait *w, uint64_t deadline)
{
	struct fi_cq_data_entry ent[RATE_BATCH];
	int rc = EB_OK;

	expect(e, w, 1, +1);
	while (rc == EB_OK && eb_imm_count(e, w->peer, w->chan) < w->count) {
		ssize_t k =
		    w->chan == EB_CHAN_ANY ? 0 : eb_engine_read(e, w->chan, ent, RATE_BATCH);

		if (k > 0)
			eb_engine_dispatch(e, w->chan, ent, (size_t)k);
		else if (k == 0 && (e->nchan > 1 || w->chan == EB_CHAN_ANY))
			k = eb_progress(e);
		rc = k < 0 ? (int)k : eb_engine_polled(e, k > 0, &deadline);
	}
	expect(e, w, 1, -1);
	if (rc == EB_ETIMEDOUT)
		report_timeout(e, NULL, 0, w, 1);
	return rc;
}

static int wait_imm(struct eb_engine *e, struct eb_xfer **xs, int n, const struct eb_imm_wait *w,
		    int nw, uint64_t deadline)
{
	int i, rc, pending;

	for (;;) {
		uint64_t full = 0; /* channels whose provider refused a post in this sweep */

		pending = 0;
		for (i = 0; i < n; i++) {
			rc = eb_xfer_push_sweep(xs[i], &full);
			if (rc != EB_OK && rc != EB_AGAIN)
				return rc; /* already reported where it failed */
			pending += !eb_xfer_done(xs[i]);
		}
		for (i = 0; i < nw; i++)
			pending += eb_imm_count(e, w[i].peer, w[i].chan) < w[i].count;
		if (pending == 0)
			return EB_OK;
		/* The transfers change only with completions; after 16 empty polls look anyway, to
		 * retry posts the provider refused for lack of room. */
		rc = eb_engine_wait_event(e, &deadline, 16);
		if (rc == EB_ETIMEDOUT)
			report_timeout(e, xs, n, w, nw);
		if (rc != EB_OK)
			return rc;
	}
}

int eb_xfer_wait_imm(struct eb_engine *e, struct eb_xfer **xs, int n, const struct eb_imm_wait *w,
		     int nw, uint64_t deadline)
{
	int rc;

	if (n == 0 && nw == 1)
		return wait_count(e, w, deadline);
	expect(e, w, nw, +1);
	rc = wait_imm(e, xs, n, w, nw, deadline);
	expect(e, w, nw, -1);
	return rc;
}

int eb_xfer_wait(struct eb_xfer **xs, int n, uint64_t deadline)
{
	return n == 0 ? EB_OK : eb_xfer_wait_imm(xs[0]->e, xs, n, NULL, 0, deadline);
}

int eb_xfer_inject_send(struct eb_engine *e, int chan, int peer, const void *buf, size_t len)
{
	struct fid_ep *ep = e->chan[chan].ep;
	fi_addr_t addr = e->chan[chan].peers[peer];
	uint64_t deadline = EB_DEADLINE_LAZY;
	ssize_t rc;

	/* A full queue empties only as completions are read: progress, then try again. */
	for (;;) {
		int k, r;

		eb_prov_enter(e, "fi_inject");
		rc = fi_inject(ep, buf, len, addr);
		eb_prov_leave(e);
		if (rc != -FI_EAGAIN)
			break;
		k = eb_progress(e);
		r = k < 0 ? k : eb_engine_polled(e, k > 0, &deadline);

		if (r == EB_ETIMEDOUT)
			eb_err("timed out after %.1f s: channel %d took no send to rank %d",
			       e->timeout_s, chan, peer);
		if (r != EB_OK)
			return r;
	}
	if (rc != 0) {
		eb_err("fi_inject of %zu bytes to rank %d on channel %d: %s", len, peer, chan,
		       fi_strerror((int)-rc));
		return EB_EFABRIC;
	}
	eb_chan_sent(&e->chan[chan], peer, len);
	return EB_OK;
}

struct burst {
	struct eb_req *reqs;
	int *free; /* stack of requests not in flight */
	int nfree;
	long done;
	int failed;  /* a write failed: the engine printed why */
	long slots;  /* write i goes (i % slots) * len into both buffers */
	int inject;  /* fi_inject_writedata: no completion, the provider bounds what is in flight */
	long direct; /* posted straight to the provider (the others through eb_post_write) */
};

/* A write the engine finished: one that failed, or one eb_progress read (several channels). */
static void burst_done(struct eb_req *r)
{
	struct burst *b = r->owner;

	b->done++;
	b->failed |= r->status != EB_OK;
	b->free[b->nfree++] = (int)(r - b->reqs);
}

/* Posts into every free slot: the first post arms a request, later ones hand the provider the
 * same write straight from registers. On shm, a few tens of cycles more between two posts let
 * the target take its queue's lock for every write instead of a batch (0.88x the floor's rate
 * at 8 B on the H100 host when every post re-armed its request). */
static int burst_post(struct eb_engine *e, struct burst *b, long *posted, long n, int chan,
		      int peer, const void *buf, size_t len, void *desc, uint64_t raddr,
		      uint64_t rkey, uint32_t imm)
{
	struct fid_ep *ep = e->chan[chan].ep;
	fi_addr_t addr = e->chan[chan].peers[peer];

	while (*posted < n && (b->inject || b->nfree > 0)) {
		/* checked bursts only (slots > 1): the timed one writes the same place */
		size_t off = b->slots > 1 ? (size_t)(*posted % b->slots) * len : 0;
		/* testing aid: write K lands on write K-1's slot */
		size_t back = off > 0 && e->misplace_chunk == (size_t)*posted ? len : 0;
		const char *p = (const char *)buf + off;
		uint64_t ra = raddr + off - back;
		struct eb_req *r;
		ssize_t rc;

		if (b->inject) { /* taken = done: no completion comes for it */
			eb_prov_enter(e, "fi_inject_writedata");
			rc = fi_inject_writedata(ep, p, len, imm, addr, ra, rkey);
			eb_prov_leave(e);
			if (rc == -FI_EAGAIN) /* the provider's queue is full: progress first */
				return EB_OK;
			if (rc != 0) {
				eb_err(
				    "fi_inject_writedata of %zu bytes to rank %d on channel %d: %s",
				    len, peer, chan, fi_strerror((int)-rc));
				return EB_EFABRIC;
			}
			(*posted)++;
			b->done++;
			b->direct++;
			continue;
		}
		r = &b->reqs[b->free[b->nfree - 1]];
		if (b->slots > 1 || r->tag == 0) { /* armed at its first post, taken or not */
			r->tag = 1;
			rc = eb_post_write(e, r, chan, peer, p, len, desc, ra, rkey, imm);
			if (rc == EB_AGAIN)
				return EB_OK;
			if (rc != EB_OK)
				return (int)rc;
		} else {
			eb_prov_enter(e, "fi_writedata");
			rc = fi_writedata(ep, buf, len, desc, imm, addr, raddr, rkey, &r->fi_ctx);
			eb_prov_leave(e);
			if (rc == -FI_EAGAIN) /* the provider's queue is full: progress first */
				return EB_OK;
			if (rc != 0)
				return eb_post_failed(e, r, rc);
			eb_engine_busy(e, chan, +1);
			b->direct++;
		}
		b->nfree--;
		(*posted)++;
	}
	return EB_OK;
}

int eb_xfer_burst_slots(struct eb_engine *e, int chan, int peer, const void *buf, size_t len,
			void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm, long n, long slots,
			unsigned flags, int window, uint64_t deadline)
{
	struct burst b = {calloc((size_t)window, sizeof(*b.reqs)),
			  calloc((size_t)window, sizeof(*b.free)),
			  0,
			  0,
			  0,
			  slots,
			  (flags & EB_BURST_INJECT) && len <= e->lim.inject_rma};
	struct fi_cq_data_entry ent[RATE_BATCH];
	long posted = 0;
	ssize_t k, j;
	int i, rc = EB_OK;

	if (b.reqs == NULL || b.free == NULL) {
		free(b.reqs);
		free(b.free);
		eb_err("out of memory for a window of %d writes", window);
		return EB_ENOMEM;
	}
	for (i = 0; i < window; i++) {
		b.reqs[i].cb = burst_done;
		b.reqs[i].owner = &b;
		b.free[b.nfree++] = i;
	}
	/* Nothing but posting and reading this channel's CQ between two posts. */
	while (rc == EB_OK && b.done < n) {
		rc = burst_post(e, &b, &posted, n, chan, peer, buf, len, desc, raddr, rkey, imm);
		k = rc == EB_OK ? eb_engine_read(e, chan, ent, RATE_BATCH) : 0;
		for (j = 0; j < k; j++) {
			/* as integers: a context that is not one of ours is another object */
			uintptr_t r = (uintptr_t)ent[j].op_context, first = (uintptr_t)b.reqs;

			if (!(ent[j].flags & FI_REMOTE_WRITE) && r >= first &&
			    r < first + (size_t)window * sizeof(*b.reqs)) {
				eb_engine_busy(e, chan, -1);
				b.done++;
				b.free[b.nfree++] = (int)((r - first) / sizeof(*b.reqs));
			} else { /* not ours (an acknowledgement's receive): the engine's */
				eb_engine_dispatch(e, chan, &ent[j], 1);
			}
		}
		if (k == 0 && rc == EB_OK && e->nchan > 1) /* the other channels' turn */
			k = eb_progress(e); /* finishes any of ours through burst_done */
		if (k < 0)
			rc = (int)k;
		else if (rc == EB_OK)
			rc = eb_engine_polled(e, k > 0, &deadline);
		if (rc == EB_ETIMEDOUT)
			eb_err("timed out after %.1f s: %ld of %ld writes to rank %d on channel %d "
			       "complete",
			       e->timeout_s, b.done, n, peer, chan);
		if (b.failed)
			rc = EB_EFABRIC;
	}
	eb_chan_sent(&e->chan[chan], peer, (uint64_t)b.direct * len);
	free(b.reqs);
	free(b.free);
	return rc;
}
