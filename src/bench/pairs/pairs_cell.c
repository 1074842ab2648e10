#include "pairs_cell.h"
#include "harness/loop.h"
#include "efabench/pattern.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

void eb_pairs_close(struct eb_pairs *p)
{
	if (p == NULL)
		return;
	eb_xfer_fini(&p->data);
	eb_xfer_fini(&p->small);
	eb_xfer_fini(&p->tx);
	eb_xfer_fini(&p->rx);
	eb_region_close(&p->src);
	eb_region_close(&p->dst);
	eb_region_close(&p->ctl_reg);
	free(p->ctl);
	free(p);
}

int eb_pairs_open(struct eb_pairs **out, struct eb_engine *e, size_t size, enum eb_mem_kind mem,
		  size_t chunk, int window)
{
	struct eb_pairs *p = calloc(1, sizeof(*p));
	int nch = e->nchan, rc;

	if (p == NULL)
		return EB_ENOMEM;
	p->e = e;
	p->size = size;
	p->chunk = chunk;
	p->window = window;
	p->ctl = calloc((size_t)nch * 2, sizeof(*p->ctl));
	rc = p->ctl != NULL ? EB_OK : EB_ENOMEM;
	if (rc == EB_OK)
		rc = eb_xfer_init(&p->data, e, window);
	if (rc == EB_OK)
		rc = eb_xfer_init(&p->small, e, 1);
	if (rc == EB_OK)
		rc = eb_xfer_init(&p->tx, e, 1);
	if (rc == EB_OK)
		rc = eb_xfer_init(&p->rx, e, 1);
	if (rc == EB_OK)
		rc = eb_region_alloc(&p->src, e, mem, size + 64, FI_WRITE, 0, "the matrix source");
	if (rc == EB_OK)
		rc = eb_region_alloc(&p->dst, e, mem, size + 64, FI_REMOTE_WRITE, 1,
				     "the matrix target");
	if (rc == EB_OK) {
		struct eb_mem m = {.kind = EB_MEM_HOST,
				   .ptr = p->ctl,
				   .len = (size_t)nch * 2 * sizeof(*p->ctl),
				   .gpu = -1,
				   .dmabuf_fd = -1};

		rc = eb_region_reg(&p->ctl_reg, e, &m, FI_SEND | FI_RECV, 0);
	}
	if (rc != EB_OK) {
		eb_pairs_close(p);
		return rc;
	}
	*out = p;
	return EB_OK;
}

/* Send one 8-byte message to peer on chan and wait until it left. */
static int say(struct eb_pairs *p, int peer, int chan, uint64_t v, uint64_t deadline)
{
	struct eb_xfer *x = &p->tx;

	p->ctl[2 * chan] = v;
	eb_xfer_send(x, chan, peer, &p->ctl[2 * chan], 8, 8, eb_region_desc(&p->ctl_reg, chan));
	return eb_xfer_wait(&x, 1, deadline);
}

/* Post the receive of peer's next message on chan. */
static void listen(struct eb_pairs *p, int peer, int chan)
{
	eb_xfer_recv(&p->rx, chan, peer, &p->ctl[2 * chan + 1], 8, 8,
		     eb_region_desc(&p->ctl_reg, chan));
}

/* A cell as the one loop sees it, on either side. */
struct pcell {
	struct eb_pairs *p;
	int peer, chan, small; /* small: the 8-byte latency writes */
	uint64_t deadline, chunks;
	struct eb_imm_wait w; /* the target's count of arrived chunks */
	struct eb_pattern pat;
	long seq; /* the target's acknowledgements so far */
};

/* The initiator's iteration: one write, then the target's acknowledgement. */
static int c_write(void *arg, long i)
{
	struct pcell *pc = arg;
	struct eb_pairs *p = pc->p;
	const struct eb_rkey *k = eb_region_key(&p->dst, pc->peer, pc->chan);
	struct eb_xfer *x = pc->small ? &p->small : &p->data, *both[2] = {&p->rx, x};
	size_t off = pc->small ? p->size : 0;

	listen(p, pc->peer, pc->chan);
	eb_xfer_write(x, pc->chan, pc->peer, (char *)p->src.mem.ptr + off, pc->small ? 8 : p->size,
		      pc->small ? 8 : p->chunk, eb_region_desc(&p->src, pc->chan), k->addr + off,
		      k->key, EB_IMM(p->e->rank, 0));
	return eb_xfer_wait(both, 2, pc->deadline);
}

/* The target's iteration: every chunk of the write arrived, then the acknowledgement. */
static int c_ack(void *arg, long i)
{
	struct pcell *pc = arg;
	int rc;

	pc->w.count += pc->small ? 1 : pc->chunks;
	rc = eb_xfer_wait_imm(pc->p->e, NULL, 0, &pc->w, 1, pc->deadline);
	return rc == EB_OK ? say(pc->p, pc->peer, pc->chan, (uint64_t)pc->seq++, pc->deadline) : rc;
}

/* The target checks the last bandwidth write byte for byte. */
static int c_verify(void *arg, uint64_t *wrong)
{
	struct pcell *pc = arg;

	pc->pat.epoch = (uint64_t)pc->chan + 1;
	*wrong += eb_mem_check(&pc->p->dst.mem, 0, pc->p->size, &pc->pat, 0, NULL);
	return EB_OK;
}

static double sum(const double *v, long n)
{
	double t = 0;
	long i;

	for (i = 0; i < n; i++)
		t += v[i];
	return t;
}

/* warm + iters writes of size, then lat 8-byte writes, each acknowledged: the initiator times
 * them, the target counts, acknowledges and checks. */
static int run_cell(struct eb_pairs *p, struct pcell *pc, int initiator, long warm, long iters,
		    long lat, struct eb_cell *out)
{
	struct eb_loop l = {.arg = pc, .iter = initiator ? c_write : c_ack};
	double *t = calloc((size_t)(iters + lat + 1), sizeof(*t));
	uint64_t wrong = 0;
	int rc;

	if (t == NULL)
		return EB_ENOMEM;
	rc = eb_loop_phase(&l, warm, NULL, NULL, &wrong);
	if (rc == EB_OK)
		rc = eb_loop_phase(&l, iters, initiator ? t : NULL, NULL, &wrong);
	pc->small = 1;
	l.verify = initiator ? NULL : c_verify;
	if (rc == EB_OK)
		rc = eb_loop_phase(&l, lat, initiator ? t + iters : NULL, NULL, &wrong);
	if (rc == EB_OK && !initiator && lat == 0)
		rc = c_verify(pc, &wrong);
	if (rc == EB_OK && initiator) {
		double bw = sum(t, iters);

		out->gbps = bw > 0 ? 8.0 * (double)p->size * (double)iters / bw / 1e9 : 0;
		out->lat_us = lat > 0 ? sum(t + iters, lat) / (double)lat * 1e6 : 0;
	}
	out->wrong = wrong;
	free(t);
	return rc;
}

/* The initiator: its source filled, wait for the target's go. */
static int initiate(struct eb_pairs *p, struct pcell *pc)
{
	struct eb_xfer *rx = &p->rx;
	struct eb_pattern pat = {(uint32_t)p->e->rank, (uint32_t)pc->peer, (uint64_t)pc->chan + 1};
	int rc = eb_mem_fill(&p->src.mem, 0, p->size, &pat, 0);

	listen(p, pc->peer, pc->chan);
	return rc == EB_OK ? eb_xfer_wait(&rx, 1, pc->deadline) : rc;
}

/* The target: poison, then say go. */
static int receive(struct eb_pairs *p, struct pcell *pc)
{
	int rc;

	pc->pat = (struct eb_pattern){(uint32_t)pc->peer, (uint32_t)p->e->rank, EB_EPOCH_POISON};
	pc->w = (struct eb_imm_wait){
	    .peer = pc->peer, .chan = pc->chan, .count = eb_imm_count(p->e, pc->peer, pc->chan)};
	pc->chunks = eb_xfer_nchunks(p->size, p->chunk);
	rc = eb_mem_fill(&p->dst.mem, 0, p->size, &pc->pat, 0);
	return rc == EB_OK ? say(p, pc->peer, pc->chan, 0, pc->deadline) : rc;
}

int eb_pairs_cell(struct eb_pairs *p, int peer, int initiator, int chan, long warm, long iters,
		  long lat_iters, double timeout_s, struct eb_cell *out)
{
	uint64_t deadline = eb_deadline(timeout_s * (double)(warm + iters + lat_iters + 2));
	struct pcell pc = {.p = p, .peer = peer, .chan = chan, .deadline = deadline};
	uint64_t t0 = eb_now_ns();
	int me = p->e->rank, rc;

	memset(out, 0, sizeof(*out));
	out->src = initiator ? me : peer;
	out->dst = initiator ? peer : me;
	out->chan = chan;
	rc = initiator ? initiate(p, &pc) : receive(p, &pc);
	if (rc == EB_OK)
		rc = run_cell(p, &pc, initiator, warm, iters, lat_iters, out);
	out->status = rc;
	out->secs = (double)(eb_now_ns() - t0) * 1e-9;
	return rc;
}
