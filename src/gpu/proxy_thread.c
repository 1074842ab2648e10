/* The CPU proxy: one thread per rank turns queued commands into chunked fi_writedata, publishes
 * completions for eb_quiet, and applies incoming signals once their payload has landed. */
#define _GNU_SOURCE /* pthread names */
#include "proxy_stamps.h"
#include "efabench/proxy_thread.h"
#include "efabench/region.h"
#include "efabench/gpuq.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "core/arrays.h"
#include "core/log.h"
#include "core/shmseg.h"
#include "core/ticks.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NRECV 64 /* signal records a target can hold before its proxy reads them */

/* A signal on the wire: apply op(value) to word sig once `need` chunks from src arrived. */
struct sigrec {
	uint64_t need, value;
	uint32_t sig, op, src, pad;
};

/* A command consumed from the queue, kept until it is complete. */
struct held {
	struct eb_pcmd c;
	int group; /* the transfers moving it, -1 when it has none */
	int done;
	struct eb_put_stamp *st; /* a sampled put's stamps, else NULL */
};

struct eb_proxy {
	struct eb_engine *e;
	struct eb_proxy_bufs b;
	struct eb_proxy_opts o;
	struct eb_gpuq q;
	struct eb_mem words; /* signal words, then the refused-producer word */
	struct eb_pstamps stamps;
	_Atomic uint64_t *sig;
	struct held *ring; /* consumed commands: [head, start) started, [start, tail) not */
	uint64_t cap, head, start, tail; /* positions since open; index = position & (cap - 1) */
	struct eb_xfer *x;		 /* [active][nchan] */
	void *tables;			 /* the arrays below, [active] ... [ranks], one block */
	struct eb_req *one;		 /* [active]: a put of one chunk goes as this one request */
	int *armed, narmed;		 /* groups whose one request is armed, not yet posted */
	uint64_t full;			 /* channels refused a post in this pass (eb_chan_mark) */
	int *nx;			 /* transfers armed per group */
	int *left;			 /* of those, not finished */
	uint64_t *owner;		 /* the position of the command a group moves */
	int *free_groups, nfree;
	int *posting, nposting;	  /* groups with chunks not yet posted (window full, queue full) */
	int moved;		  /* a transfer finished during progress */
	struct sigrec *out;	  /* [active] records of signals being sent */
	struct eb_region out_reg; /* out on channel 0 */
	struct sigrec *in;	  /* [NRECV] receive buffers */
	struct eb_req in_req[NRECV];
	int repost[NRECV], nrepost;
	struct eb_region in_reg; /* in on channel 0 */
	struct sigrec *pend;	 /* received, waiting for their payload */
	int npend, pcap;
	uint64_t *planned, *base; /* [ranks]: chunks written to / counted from each since start */
	uint64_t completed;
	_Atomic uint64_t puts;	    /* started since open: what the target receives */
	_Atomic uint64_t last_move; /* when anything last happened (any thread may read it) */
	struct {		    /* what the thread did, printed with -v at its end */
		uint64_t passes, found, cmds, refused, cqe;
		uint64_t ticks[4]; /* take, start + post, progress, the rest (-v only) */
		uint64_t t0, ns0, first_ns, last_ns; /* first command taken, last completion */
		int timed;
	} stat;
	pthread_t th;
	_Atomic int stop;
	_Atomic int ready; /* the thread is pinned, has its GPU and is about to poll */
	int running, status;
};

/* A mask, not %: every command indexes the ring five times, and dividing by the run-time size
 * took the TSC ticks between two of the proxy's posts from 155 to 182 (medians, nvidia-h200). */
static struct held *at(struct eb_proxy *p, uint64_t pos)
{
	return &p->ring[pos & (p->cap - 1)];
}

static uint64_t arrived(struct eb_proxy *p, int src)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < p->e->nchan; c++)
		n += eb_imm_count(p->e, src, c);
	return n;
}

/* A signal record landed: keep it until its payload is here, and receive the next. */
static void got_signal(struct eb_req *r)
{
	struct eb_proxy *p = r->owner;
	int i = (int)(r - p->in_req);

	if (r->status == EB_OK) {
		if (p->npend == p->pcap) {
			int cap = p->pcap ? 2 * p->pcap : 64;
			struct sigrec *grown = realloc(p->pend, sizeof(*grown) * (size_t)cap);

			if (grown == NULL) {
				eb_err("proxy: out of memory for incoming signals");
				p->status = EB_ENOMEM;
				return;
			}
			p->pend = grown;
			p->pcap = cap;
		}
		p->pend[p->npend++] = p->in[i];
	}
	p->repost[p->nrepost++] = i;
}

static int post_receives(struct eb_proxy *p)
{
	while (p->nrepost > 0) {
		int i = p->repost[p->nrepost - 1];
		int rc = eb_post_recv(p->e, &p->in_req[i], 0, -1, &p->in[i], sizeof(p->in[i]),
				      eb_region_desc(&p->in_reg, 0));

		if (rc == EB_AGAIN)
			return EB_OK;
		if (rc != EB_OK)
			return rc;
		p->nrepost--;
	}
	return EB_OK;
}

static void apply_signals(struct eb_proxy *p)
{
	int i = 0;

	while (i < p->npend) {
		struct sigrec *s = &p->pend[i];

		if (arrived(p, (int)s->src) - p->base[s->src] < s->need) {
			i++;
			continue;
		}
		if (s->op == EB_SIGNAL_ADD)
			atomic_fetch_add_explicit(&p->sig[s->sig], s->value, memory_order_release);
		else
			atomic_store_explicit(&p->sig[s->sig], s->value, memory_order_release);
		memmove(s, s + 1, sizeof(*s) * (size_t)(p->npend - i - 1));
		p->npend--;
		p->last_move = eb_now_ns();
	}
}

static void refuse(struct eb_proxy *p, const struct eb_pcmd *c, const char *what)
{
	eb_err("proxy: refused %s to rank %u (%llu bytes at offset %llu from %llu; buffers of %zu "
	       "and %zu bytes, %d ranks, %u signals)",
	       what, c->peer, (unsigned long long)c->bytes, (unsigned long long)c->dst_off,
	       (unsigned long long)c->src_off, p->b.dst_len, p->b.src_len, p->e->size,
	       p->o.nsignals);
	eb_q_flag_error(p->q.host.error, EB_Q_ERR_RANGE);
}

/* A sampled put's first chunk went to the provider (once). */
static void stamp_posted(struct eb_proxy *p, int g)
{
	struct eb_put_stamp *st = at(p, p->owner[g])->st;

	if (st != NULL && st->posted == 0)
		st->posted = eb_now_ns();
}

/* A group's command is complete: the command is done, the group free again. */
static void release(struct eb_proxy *p, int g)
{
	if (at(p, p->owner[g])->st != NULL)
		at(p, p->owner[g])->st->done = eb_now_ns();
	at(p, p->owner[g])->done = 1;
	at(p, p->owner[g])->group = -1;
	p->free_groups[p->nfree++] = g;
	p->moved = 1;
}

static void xfer_done(struct eb_xfer *x)
{
	struct eb_proxy *p = x->owner;
	int g = (int)((x - p->x) / p->e->nchan);

	if (x->status != EB_OK && p->status == EB_OK)
		p->status = x->status; /* the engine printed what failed */
	if (--p->left[g] == 0)
		release(p, g);
}

/* A put's one request completed. */
static void one_done(struct eb_req *r)
{
	struct eb_proxy *p = r->owner;

	if (r->status != EB_OK && p->status == EB_OK)
		p->status = r->status; /* the engine printed what failed */
	release(p, (int)(r - p->one));
}

/* The channel of a put that the layout gives whole to one channel and that fits one chunk,
 * or -1 (split across channels, longer than a chunk, or empty: those go through transfers). */
static int one_chan(const struct eb_proxy *p, const struct eb_pcmd *c)
{
	int nch = p->e->nchan, ch, one = -1;
	size_t off, n;

	if (c->bytes == 0 || c->bytes > p->o.chunk)
		return -1;
	for (ch = 0; ch < nch; ch++) {
		if (!eb_layout_slice(p->o.layout, nch, p->e->rank, (int)c->peer, c->bytes, ch, &off,
				     &n))
			continue;
		if (one >= 0 || n != c->bytes)
			return -1;
		one = ch;
	}
	return one;
}

/* Post the armed puts of one request back to back, in the order they started; those a full
 * channel refuses stay armed for the next pass. Armed in one loop, posted in this one: on
 * libfabric 1.17's shm, 20 ns more between two 4 KiB posts cost 10 % of the rate
 * (nvidia-h200), as the receiver then takes its region's lock between every two. */
static int post_armed(struct eb_proxy *p)
{
	int i, keep = 0, rc;

	for (i = 0; i < p->narmed; i++) {
		struct eb_req *r = &p->one[p->armed[i]];

		if (!eb_chan_full(p->full, r->chan)) {
			rc = eb_post_armed(p->e, r);
			if (rc == EB_OK) {
				stamp_posted(p, p->armed[i]);
				continue;
			}
			if (rc != EB_AGAIN)
				return rc;
			p->full = eb_chan_mark(p->full, r->chan);
			p->stat.refused++;
		}
		p->armed[keep++] = p->armed[i];
	}
	p->narmed = keep;
	return EB_OK;
}

/* A sampled put's chunks carry its tag, for the target to tell when all of it is there. */
static void tag_chunks(struct eb_proxy *p, const struct held *s, struct eb_xfer *xs, int n)
{
	size_t chunks = 0;
	uint32_t tag;
	int k;

	if (s->st == NULL)
		return;
	for (k = 0; k < n; k++)
		chunks += xs[k].nchunks;
	tag = eb_pstamps_tag(&p->stamps, s->st, (int)s->c.peer, chunks);
	for (k = 0; k < n; k++)
		xs[k].imm = EB_IMM(p->e->rank, tag);
}

/* Start the command at `start` if it may start: puts and signals need free transfers, a
 * fence waits for everything before it. 1 when started, 0 when it must wait, < 0 on error. */
static int start_one(struct eb_proxy *p)
{
	struct held *s = at(p, p->start);
	struct eb_pcmd *c = &s->c;
	int nch = p->e->nchan, g, ch;
	struct eb_xfer *xs;

	s->group = -1;
	if (c->op != EB_PCMD_PUT && c->op != EB_PCMD_SIGNAL) {
		if (c->op != EB_PCMD_FENCE)
			refuse(p, c, "an unknown command");
		if (p->head != p->start)
			return 0;
		s->done = 1;
		return 1;
	}
	if (c->peer >= (unsigned)p->e->size ||
	    (c->op == EB_PCMD_PUT &&
	     (c->dst_off > p->b.dst_len || c->bytes > p->b.dst_len - c->dst_off ||
	      c->src_off > p->b.src_len || c->bytes > p->b.src_len - c->src_off)) ||
	    (c->op == EB_PCMD_SIGNAL && c->sig >= p->o.nsignals)) {
		refuse(p, c, c->op == EB_PCMD_PUT ? "a put" : "a signal");
		s->done = 1;
		return 1;
	}
	if (p->nfree == 0)
		return 0;
	g = p->free_groups[--p->nfree];
	s->group = g;
	if (c->op == EB_PCMD_PUT)
		atomic_store_explicit(&p->puts,
				      atomic_load_explicit(&p->puts, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	p->owner[g] = p->start;
	xs = &p->x[(size_t)g * (size_t)nch];
	if (c->op == EB_PCMD_SIGNAL) {
		p->out[g] = (struct sigrec){.need = p->planned[c->peer],
					    .value = c->value,
					    .sig = c->sig,
					    .op = c->sig_op,
					    .src = (uint32_t)p->e->rank};
		eb_xfer_send(&xs[0], 0, (int)c->peer, &p->out[g], sizeof(p->out[g]),
			     sizeof(p->out[g]), eb_region_desc(&p->out_reg, 0));
		p->nx[g] = 1;
	} else if ((ch = one_chan(p, c)) >= 0) {
		const struct eb_rkey *k =
		    &p->b.dst_keys[(size_t)c->peer * (size_t)nch + (size_t)ch];
		struct eb_req *r = &p->one[g];

		p->planned[c->peer]++;
		eb_arm_write(
		    r, ch, (int)c->peer, p->b.src + c->src_off, c->bytes, p->b.src_mrs[ch].desc,
		    k->addr + c->dst_off, k->key,
		    EB_IMM(p->e->rank,
			   s->st != NULL ? eb_pstamps_tag(&p->stamps, s->st, (int)c->peer, 1) : 0));
		p->armed[p->narmed++] = g;
		return 1;
	} else {
		p->nx[g] = eb_layout_write(
		    p->o.layout, xs, nch, p->e->rank, (int)c->peer, p->b.src + c->src_off, c->bytes,
		    p->o.chunk, p->b.src_mrs, &p->b.dst_keys[(size_t)c->peer * (size_t)nch],
		    c->dst_off, EB_IMM(p->e->rank, 0));
		for (ch = 0; ch < p->nx[g]; ch++) /* the chunks the target will count */
			p->planned[c->peer] += xs[ch].nchunks;
		tag_chunks(p, s, xs, p->nx[g]);
	}
	p->left[g] = p->nx[g];
	if (p->nx[g] == 0) { /* an empty put across channels: nothing to move */
		release(p, g);
		return 1;
	}
	p->posting[p->nposting++] = g;
	return 1;
}

/* Post what the windows allow for groups with chunks left to post, in the order they
 * started; finished groups leave through their transfers' on_done. */
static int post_pending(struct eb_proxy *p)
{
	int i, k, rc = post_armed(p), keep = 0;

	if (rc != EB_OK)
		return rc;
	for (i = 0; i < p->nposting; i++) {
		int g = p->posting[i], all = 1;
		struct eb_xfer *xs = &p->x[(size_t)g * (size_t)p->e->nchan];

		for (k = 0; k < p->nx[g]; k++) {
			rc = eb_xfer_push_sweep(&xs[k], &p->full);
			if (rc == EB_AGAIN)
				p->stat.refused++;
			else if (rc != EB_OK)
				return rc;
			if (xs[k].posted > 0)
				stamp_posted(p, g);
			all &= xs[k].posted == xs[k].nchunks;
		}
		if (!all)
			p->posting[keep++] = g;
	}
	p->nposting = keep;
	return EB_OK;
}

/* Where the oldest unfinished command goes, for a deadline message. */
static void report_stall(struct eb_proxy *p)
{
	uint64_t pos;

	for (pos = p->head; pos < p->start; pos++)
		if (!at(p, pos)->done) {
			eb_err("proxy: a %s to rank %u made no progress for %.1f s (%llu commands "
			       "started, %llu waiting)",
			       at(p, pos)->c.op == EB_PCMD_SIGNAL ? "signal" : "put",
			       at(p, pos)->c.peer, p->o.timeout_s,
			       (unsigned long long)(p->start - p->head),
			       (unsigned long long)(p->tail - p->start));
			return;
		}
	if (p->npend > 0)
		eb_err(
		    "proxy: a signal from rank %u waited %.1f s for its payload (%llu of %llu "
		    "chunks arrived)",
		    p->pend[0].src, p->o.timeout_s,
		    (unsigned long long)(arrived(p, (int)p->pend[0].src) - p->base[p->pend[0].src]),
		    (unsigned long long)p->pend[0].need);
}

/* Ticks since *t, added to the stage's sum (only with -v: a TSC read costs ~20 ns a pass). */
static void lap(struct eb_proxy *p, int stage, uint64_t *t)
{
	uint64_t now;

	if (!p->stat.timed)
		return;
	now = eb_ticks();
	p->stat.ticks[stage] += now - *t;
	*t = now;
}

/* A command off the queue into the ring; a sampled put is seen now. */
static void take(struct eb_proxy *p, const struct eb_q_cmd *cmd)
{
	struct eb_put_stamp *st = p->stamps.ring != NULL && p->tail % p->stamps.every == 0
				      ? &p->stamps.ring[p->tail / p->stamps.every % p->stamps.n]
				      : NULL;
	struct held *s = at(p, p->tail);

	eb_pcmd_decode(cmd->lo, cmd->hi, &s->c);
	s->done = 0;
	s->group = -1;
	s->st = st != NULL && s->c.op == EB_PCMD_PUT ? st : NULL;
	if (s->st != NULL) {
		s->st->seen = eb_now_ns();
		s->st->pos = p->tail + 1;
	}
	if (p->o.slow_ns > 0) { /* testing aid: a proxy thread that takes its time */
		uint64_t until = eb_now_ns() + p->o.slow_ns;

		while (eb_now_ns() < until)
			;
	}
	p->tail++;
}

static int loop(struct eb_proxy *p)
{
	struct eb_q_cmd cmd[64];
	unsigned idle = 0;
	int i, n, rc, moved;
	uint64_t t = p->stat.timed ? eb_ticks() : 0;

	p->last_move = eb_now_ns();
	for (;; p->stat.passes++) {
		moved = 0;
		p->full = 0; /* a refused channel takes no more posts before progress */
		/* Take commands while the ring has room: a full ring holds producers back. */
		n = p->cap - (p->tail - p->head) < 64 ? (int)(p->cap - (p->tail - p->head)) : 64;
		n = n > 0 ? eb_gpuq_poll(&p->q, cmd, n) : 0;
		for (i = 0; i < n; i++)
			take(p, &cmd[i]);
		if (n > 0 && p->stat.first_ns == 0 && p->stat.timed)
			p->stat.first_ns = eb_now_ns();
		p->stat.found += n > 0;
		p->stat.cmds += (uint64_t)n;
		moved |= n > 0;
		lap(p, 0, &t);
		while (p->start < p->tail && (rc = start_one(p)) != 0) {
			if (rc < 0)
				return rc;
			p->start++;
			moved = 1;
		}
		while (p->o.stall && p->start > 0)
			pause(); /* testing aid: the thread never comes back, stop or not */
		rc = post_pending(p);
		if (rc == EB_OK)
			rc = post_receives(p);
		if (rc != EB_OK)
			return rc;
		lap(p, 1, &t);
		p->moved = 0;
		rc = eb_progress(p->e);
		if (rc < 0)
			return rc; /* the engine said what failed */
		lap(p, 2, &t);
		p->stat.cqe += (uint64_t)rc;
		moved |= rc > 0 || p->moved;
		if (p->status != EB_OK)
			return p->status;
		apply_signals(p);
		while (p->head < p->start && at(p, p->head)->done)
			p->head++;
		if (p->head != p->completed) {
			p->completed = p->head;
			eb_gpuq_complete(&p->q, p->completed);
			if (p->stat.timed)
				p->stat.last_ns = eb_now_ns();
		}
		if (moved) {
			p->last_move = eb_now_ns();
			idle = 0;
			lap(p, 3, &t);
			continue;
		}
		if (atomic_load_explicit(&p->stop, memory_order_acquire) && p->head == p->tail &&
		    p->npend == 0)
			return EB_OK;
		if ((p->head != p->tail || p->npend > 0) &&
		    eb_now_ns() - p->last_move > (uint64_t)(p->o.timeout_s * 1e9)) {
			report_stall(p);
			return EB_ETIMEDOUT;
		}
		if (++idle > 64 && p->e->yield)
			sched_yield(); /* oversubscribed: let the rank we wait for have the core */
		lap(p, 3, &t);
	}
}

/* -v: where the thread's passes went, per command taken. */
static void say_stats(struct eb_proxy *p)
{
	double per = p->stat.cmds ? 1.0 / (double)p->stat.cmds : 0, ns = 0;
	uint64_t ticks = eb_ticks() - p->stat.t0;

	if (!p->stat.timed)
		return;
	if (ticks > 0)
		ns = (double)(eb_now_ns() - p->stat.ns0) / (double)ticks;
	eb_dbg("proxy: %llu passes, %llu commands (%.1f per pass that found any), %llu posts "
	       "refused, %llu completions read; first command %.1f us after start, last "
	       "completion %.1f us after it; ns per command: take %.0f, start+post %.0f, "
	       "progress %.0f, rest %.0f",
	       (unsigned long long)p->stat.passes, (unsigned long long)p->stat.cmds,
	       p->stat.found ? (double)p->stat.cmds / (double)p->stat.found : 0.0,
	       (unsigned long long)p->stat.refused, (unsigned long long)p->stat.cqe,
	       p->stat.first_ns ? (double)(p->stat.first_ns - p->stat.ns0) * 1e-3 : 0.0,
	       p->stat.first_ns && p->stat.last_ns > p->stat.first_ns
		   ? (double)(p->stat.last_ns - p->stat.first_ns) * 1e-3
		   : 0.0,
	       (double)p->stat.ticks[0] * ns * per, (double)p->stat.ticks[1] * ns * per,
	       (double)p->stat.ticks[2] * ns * per, (double)p->stat.ticks[3] * ns * per);
}

/* A proxy that migrates between cores loses its caches and, sharing a core with a spinning
 * thread, whole scheduler slices: it stays on the core it was given. */
static void pin(struct eb_proxy *p)
{
	int rc;

	if (!p->o.pin)
		return;
	rc = eb_topo_pin_thread(p->o.cpu);
	if (rc != 0)
		eb_warn("proxy: cannot run on CPU %d (%s); it runs unpinned", p->o.cpu,
			strerror(rc));
	else
		eb_dbg("proxy thread pinned to CPU %d", p->o.cpu);
}

static void *run(void *arg)
{
	struct eb_proxy *p = arg;

	pin(p);
	memset(&p->stat, 0, sizeof(p->stat));
	p->stat.timed = eb_log_verbose();
	p->stat.t0 = eb_ticks();
	p->stat.ns0 = eb_now_ns();
	p->status = p->o.cuda_device >= 0 ? eb_mem_use_gpu(p->o.cuda_device) : EB_OK;
	atomic_store_explicit(&p->ready, 1, memory_order_release);
	if (p->status == EB_OK)
		p->status = loop(p);
	say_stats(p);
	if (p->status != EB_OK) {
		/* Producers waiting for room or in a quiet give up at once. */
		eb_q_flag_error(p->q.host.error, EB_Q_ERR_PROXY);
		eb_gpuq_close(&p->q);
	}
	return NULL;
}

void eb_proxy_layout(struct eb_proxy *p, enum eb_layout l)
{
	p->o.layout = l;
}

/* A write with immediate data landed: a chunk of another rank's sampled put? */
static void tagged(void *arg, int src, int chan, uint32_t tag)
{
	(void)chan;
	eb_pstamps_chunk(&((struct eb_proxy *)arg)->stamps, src, tag);
}

int eb_proxy_start(struct eb_proxy *p)
{
	uint64_t deadline;
	int r;

	for (r = 0; r < p->e->size; r++) {
		p->base[r] = arrived(p, r);
		p->planned[r] = 0;
	}
	p->status = EB_OK;
	atomic_store(&p->last_move, eb_now_ns()); /* a target judges idleness before loop runs */
	atomic_store(&p->stop, 0);
	atomic_store(&p->ready, 0);
	/* Writes land on any channel while the thread runs: it reads them all on every poll. It
	 * owns the engine: the bootstrap's waits leave it alone. */
	eb_engine_expect(p->e, EB_CHAN_ANY, +1);
	p->e->lent = 1;
	if (p->stamps.ring != NULL) { /* other ranks' sampled puts arrive through it */
		p->e->on_write = tagged;
		p->e->on_write_arg = p;
	}
	if (pthread_create(&p->th, NULL, run, p) != 0) {
		eb_engine_expect(p->e, EB_CHAN_ANY, -1);
		p->e->lent = 0;
		p->e->on_write = NULL;
		eb_err("cannot start the proxy thread");
		return EB_ESYS;
	}
	pthread_setname_np(p->th, "efabench-proxy");
	p->running = 1;
	/* Producers start their clocks at once: the thread's start-up (moving to its CPU, making
	 * the GPU current) is no put's time. */
	deadline = eb_deadline(p->o.timeout_s);
	while (!atomic_load_explicit(&p->ready, memory_order_acquire)) {
		if (eb_now_ns() > deadline) {
			eb_err("proxy: its thread did not start within %.1f s", p->o.timeout_s);
			return EB_ETIMEDOUT;
		}
		sched_yield();
	}
	return EB_OK;
}

int eb_proxy_stop(struct eb_proxy *p)
{
	struct timespec by;

	if (!p->running)
		return p->status;
	atomic_store_explicit(&p->stop, 1, memory_order_release);
	/* The thread ends once its work is done or stalls for timeout_s. It cannot end while a
	 * provider call never returns: shm spins for the lock of a peer's region, and a peer
	 * stopped while holding it holds the call for ever. Nothing can free that thread or the
	 * endpoint under it, so the rank ends at once (SIGKILL: the launcher tells the others),
	 * after saying why and removing the names of its shm segments, which no launcher of
	 * ours removes under the rendezvous or mpirun (peers keep what they have mapped). */
	clock_gettime(CLOCK_REALTIME, &by);
	by.tv_sec += (time_t)p->o.timeout_s + 1;
	if (pthread_timedjoin_np(p->th, NULL, &by) != 0) {
		eb_err("proxy: its thread did not return within %.0f s: stuck inside the provider "
		       "(a peer stopped while holding a shared-memory lock?); ending this rank",
		       p->o.timeout_s + 1);
		fflush(NULL);
		eb_shmseg_unlink(getpid());
		kill(getpid(), SIGKILL);
	}
	p->running = 0;
	eb_engine_expect(p->e, EB_CHAN_ANY, -1);
	p->e->lent = 0;
	if (p->e->on_write == tagged)
		p->e->on_write = NULL;
	return p->status;
}

void eb_proxy_abort(struct eb_proxy *p)
{
	if (p->q.host.consumed != NULL)
		eb_gpuq_close(&p->q);
}

struct eb_proxy_dev eb_proxy_dev(const struct eb_proxy *p)
{
	struct eb_proxy_dev d = {.q = p->q.dev,
				 .nsignals = p->o.nsignals,
				 .npeers = (uint32_t)p->e->size,
				 .src_len = p->b.src_len,
				 .dst_len = p->b.dst_len};
	char *words = p->words.dev_ptr != NULL ? p->words.dev_ptr : p->words.ptr;

	d.signals = (void *)words;
	d.refused = (void *)(words + sizeof(uint64_t) * p->o.nsignals);
	d.stamps = eb_pstamps_dev(&p->stamps);
	d.stamp_every = p->stamps.every;
	d.nstamps = p->stamps.n;
	return d;
}

struct eb_put_stamp *eb_proxy_stamps(struct eb_proxy *p, uint32_t *n)
{
	*n = p->stamps.n;
	return p->stamps.ring;
}

size_t eb_proxy_arrivals(const struct eb_proxy *p, const struct eb_arrival **a)
{
	*a = p->stamps.arr;
	return p->stamps.narr;
}

void eb_proxy_stamps_clear(struct eb_proxy *p)
{
	eb_pstamps_clear(&p->stamps);
}

uint64_t *eb_proxy_signals(struct eb_proxy *p)
{
	return (uint64_t *)p->sig;
}

uint32_t eb_proxy_errors(const struct eb_proxy *p)
{
	return eb_gpuq_errors(&p->q);
}

uint64_t eb_proxy_idle_ns(const struct eb_proxy *p)
{
	uint64_t now = eb_now_ns(), last = atomic_load(&p->last_move);

	return now > last ? now - last : 0;
}

uint64_t eb_proxy_refused(const struct eb_proxy *p)
{
	return atomic_load(
	    (_Atomic uint64_t *)((char *)p->words.ptr + sizeof(uint64_t) * p->o.nsignals));
}

uint64_t eb_proxy_puts(const struct eb_proxy *p)
{
	return atomic_load_explicit(&p->puts, memory_order_relaxed);
}

void eb_proxy_close(struct eb_proxy *p)
{
	if (p == NULL)
		return;
	eb_proxy_abort(p);
	eb_proxy_stop(p);
	eb_xfers_free(p->x, p->o.active * p->e->nchan);
	eb_region_close(&p->out_reg);
	eb_region_close(&p->in_reg);
	eb_gpuq_destroy(&p->q);
	eb_mem_free(&p->words);
	eb_pstamps_close(&p->stamps);
	free(p->tables);
	free(p->pend);
	free(p->ring);
	free(p);
}

static int alloc_tables(struct eb_proxy *p)
{
	int nch = p->e->nchan, a = p->o.active, g, rc = EB_OK;

	p->cap = 1ull << p->o.log2n;
	p->ring = calloc(p->cap, sizeof(*p->ring));
	p->x = eb_xfers_new(p->e, a * nch, p->o.window);
	p->tables = eb_arrays(
	    &p->one, (size_t)a, sizeof(*p->one), &p->armed, (size_t)a, sizeof(*p->armed), &p->nx,
	    (size_t)a, sizeof(*p->nx), &p->left, (size_t)a, sizeof(*p->left), &p->owner, (size_t)a,
	    sizeof(*p->owner), &p->posting, (size_t)a, sizeof(*p->posting), &p->free_groups,
	    (size_t)a, sizeof(*p->free_groups), &p->out, (size_t)a, sizeof(*p->out), &p->in,
	    (size_t)NRECV, sizeof(*p->in), &p->planned, (size_t)p->e->size, sizeof(*p->planned),
	    &p->base, (size_t)p->e->size, sizeof(*p->base), NULL);
	if (p->ring == NULL || p->x == NULL || p->tables == NULL) {
		eb_err("out of memory for the proxy's tables");
		return EB_ENOMEM;
	}
	for (g = 0; g < a * nch; g++) {
		p->x[g].on_done = xfer_done;
		p->x[g].owner = p;
	}
	for (g = 0; g < a; g++) {
		p->one[g].cb = one_done;
		p->one[g].owner = p;
		p->free_groups[p->nfree++] = a - 1 - g;
	}
	return rc;
}

int eb_proxy_open(struct eb_proxy **out, struct eb_engine *e, const struct eb_proxy_bufs *b,
		  const struct eb_proxy_opts *o)
{
	struct eb_proxy *p = calloc(1, sizeof(*p));
	size_t words = sizeof(uint64_t) * ((size_t)o->nsignals + 1);
	int i, rc;

	if (p == NULL)
		return EB_ENOMEM;
	p->e = e;
	p->b = *b;
	p->o = *o;
	p->words.dmabuf_fd = -1;
	rc = eb_pstamps_open(&p->stamps, o->gpu, o->stamp_every, o->nstamps, e->size);
	if (rc == EB_OK)
		rc = alloc_tables(p);
	if (rc == EB_OK)
		rc = eb_gpuq_create(&p->q, o->gpu ? EB_GPUQ_GPU : EB_GPUQ_CPU, EB_GPUQ_PINNED,
				    o->log2n, o->batch, (uint64_t)(o->timeout_s * 1e9));
	/* GPU producers read the signal words over PCIe: pinned and mapped. */
	if (rc == EB_OK)
		rc = eb_mem_alloc(&p->words, o->gpu ? EB_MEM_PINNED : EB_MEM_HOST, words,
				  "the signal words");
	if (rc == EB_OK) {
		p->sig = (_Atomic uint64_t *)p->words.ptr;
		rc = eb_region_local(&p->out_reg, e, 0, p->out, sizeof(*p->out) * (size_t)o->active,
				     EB_USE_SEND);
	}
	if (rc == EB_OK)
		rc = eb_region_local(&p->in_reg, e, 0, p->in, sizeof(*p->in) * NRECV, EB_USE_RECV);
	for (i = 0; i < NRECV; i++) {
		p->in_req[i].cb = got_signal;
		p->in_req[i].owner = p;
		p->repost[p->nrepost++] = i;
	}
	if (rc == EB_OK)
		rc = post_receives(p);
	if (rc != EB_OK) {
		eb_proxy_close(p);
		return rc;
	}
	*out = p;
	return EB_OK;
}
