#define _GNU_SOURCE /* sched_yield, ppoll */
#include "efabench/engine.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often a wait asks the bootstrap whether a peer was lost. */
#define CHECK_NS 10000000ull
#define CQ_BATCH 64
/* Empty polls before an oversubscribed wait starts yielding, and between reads of the clock
 * when spinning: the clock stays off the path between a completion and its detection, while
 * deadlines and lost peers are still seen within microseconds. */
#define SPIN_POLLS  64
#define CLOCK_POLLS 64
#define BUSY_POLLS  4096 /* a power of two */

uint64_t eb_engine_deadline(const struct eb_engine *e)
{
	return eb_deadline(e->timeout_s);
}

struct addr_rec {
	uint32_t len;
	char name[EB_ADDR_MAX];
};

/* Insert into e's address vectors every rank's endpoints of `to` (e itself, or an engine with
 * as many channels whose endpoints are the targets of e's posts). Collective. */
static int exchange_addresses(struct eb_engine *e, const struct eb_engine *to)
{
	struct addr_rec *all = malloc(sizeof(*all) * (size_t)e->size), mine;
	char *names = malloc((size_t)EB_ADDR_MAX * (size_t)e->size);
	uint32_t *lens = malloc(sizeof(*lens) * (size_t)e->size);
	int c, r, rc = EB_ENOMEM;

	if (all == NULL || names == NULL || lens == NULL)
		goto free_bufs;
	for (c = 0; c < e->nchan; c++) {
		memset(&mine, 0, sizeof(mine));
		mine.len = (uint32_t)to->chan[c].namelen;
		memcpy(mine.name, to->chan[c].name, to->chan[c].namelen);
		rc = eb_boot_allgather(e->boot, &mine, all, sizeof(mine), eb_engine_deadline(e));
		if (rc != EB_OK)
			goto free_bufs;
		for (r = 0; r < e->size; r++) {
			memcpy(names + (size_t)r * EB_ADDR_MAX, all[r].name, EB_ADDR_MAX);
			lens[r] = all[r].len;
		}
		rc = eb_chan_connect(&e->chan[c], names, lens, e->size);
		if (rc != EB_OK)
			goto free_bufs;
	}
free_bufs:
	free(lens);
	free(names);
	free(all);
	return rc;
}

/* The smallest of every channel's limits on every rank: all ranks cut and post alike. */
static int agree_limits(struct eb_engine *e)
{
	uint64_t mine[5] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, 1}, *all;
	int c, r, k, rc;

	for (c = 0; c < e->nchan; c++) {
		const struct eb_limits *l = &e->chan[c].lim;
		const uint64_t v[5] = {l->max_msg, l->max_rma, l->inject_msg, l->inject_rma,
				       (uint64_t)l->sas};

		for (k = 0; k < 5; k++)
			mine[k] = v[k] < mine[k] ? v[k] : mine[k];
	}
	all = malloc(sizeof(mine) * (size_t)e->size);
	if (all == NULL)
		return EB_ENOMEM;
	rc = eb_boot_allgather(e->boot, mine, all, sizeof(mine), eb_engine_deadline(e));
	for (r = 0; rc == EB_OK && r < e->size; r++)
		for (k = 0; k < 5; k++)
			mine[k] = all[5 * r + k] < mine[k] ? all[5 * r + k] : mine[k];
	free(all);
	e->lim = (struct eb_limits){(size_t)mine[0], (size_t)mine[1], (size_t)mine[2],
				    (size_t)mine[3], (int)mine[4]};
	return rc;
}

const char *eb_local_path_name(enum eb_local_path p)
{
	static const char *const names[] = {"none", "nic", "shm", "stack", "provider"};

	return names[p];
}

/* shm is shared memory; efa's RDM opens an shm endpoint for same-host peers unless told not to
 * (FI_REMOTE_COMM alone, or FI_OPT_SHARED_MEMORY_PERMITTED); socket providers go through the
 * kernel. */
static enum eb_local_path local_path(const struct eb_engine *e, int same_host_ranks)
{
	if (same_host_ranks < 2)
		return EB_LOCAL_NONE;
	if (strncmp(e->prov, "shm", 3) == 0)
		return EB_LOCAL_SHM;
	if (eb_fabric_is_socket_prov(e->prov))
		return EB_LOCAL_STACK;
	/* efa-direct has no shared-memory path: the device loops same-host peers back */
	if (e->chan[0].shm_off || strcmp(e->chan[0].nic.fabric, "efa-direct") == 0)
		return EB_LOCAL_NIC;
	return strcmp(e->prov, "efa") == 0 ? EB_LOCAL_SHM : EB_LOCAL_PROVIDER;
}

static int read_cq(struct eb_engine *e, int chan, struct fi_cq_data_entry *ent, size_t max);

/* Keep an arrival for the channel's next read; 0, or -1 without room (it is counted now). */
static int stash(struct eb_engine *e, int chan, const struct fi_cq_data_entry *ent)
{
	struct eb_stash *s = &e->stash[chan];

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct fi_cq_data_entry *grown = realloc(s->ent, cap * sizeof(*grown));

		if (grown == NULL)
			return -1;
		s->ent = grown;
		s->cap = cap;
	}
	s->ent[s->n++] = *ent;
	return 0;
}

/* While a bootstrap collective waits: every channel read, so that the provider answers its
 * own protocol for peers whose operations are still completing (efa's receipts, end-of-read,
 * resends; rxm's connections). Requests finish; immediate data waits in the stash. */
static void boot_waits(void *arg)
{
	struct fi_cq_data_entry ent[CQ_BATCH];
	struct eb_engine *e = arg;
	ssize_t n, i;
	int c;

	if (e->lent || e->failed || e->abandoned)
		return;
	for (c = 0; c < e->nchan; c++) {
		n = read_cq(e, c, ent, CQ_BATCH);
		for (i = 0; i < n; i++)
			if (!(ent[i].flags & FI_REMOTE_WRITE) || stash(e, c, &ent[i]) != 0)
				eb_engine_dispatch(e, c, &ent[i], 1);
	}
}

enum eb_poll eb_poll_decide(enum eb_poll asked, int local_ranks, int threads, int cores)
{
	if (asked != EB_POLL_AUTO)
		return asked;
	return (long)local_ranks * threads <= cores ? EB_POLL_SPIN : EB_POLL_YIELD;
}

/* The per-channel tables of want channels; EB_ENOMEM after one line. */
static int alloc_tables(struct eb_engine *e, int want)
{
	e->chan = calloc((size_t)want, sizeof(*e->chan));
	e->imm = calloc((size_t)want * (size_t)e->size, sizeof(*e->imm));
	e->busy = calloc((size_t)want, sizeof(*e->busy));
	e->due = calloc((size_t)want, sizeof(*e->due));
	e->stash = calloc((size_t)want, sizeof(*e->stash));
	e->pfd = calloc((size_t)want, sizeof(*e->pfd));
	if (e->chan != NULL && e->imm != NULL && e->busy != NULL && e->due != NULL &&
	    e->stash != NULL && e->pfd != NULL)
		return EB_OK;
	eb_err("out of memory for %d channels", want);
	return EB_ENOMEM;
}

static void drop_tables(struct eb_engine *e)
{
	free(e->chan);
	free(e->imm);
	free(e->busy);
	free(e->due);
	free(e->stash);
	free(e->pfd);
	e->stash = NULL;
	e->pfd = NULL;
	e->chan = NULL;
	e->imm = NULL;
	e->busy = e->due = NULL;
}

/* want channels, more than NICs sharing a NIC round-robin; e->nchan counts those open. */
static int open_channels(struct eb_engine *e, const struct eb_fabric_opts *o, int want)
{
	int c, rc = EB_OK;

	for (c = 0; c < want && rc == EB_OK; c++) {
		const struct eb_nic *nic = &e->nics[c % e->nnics];
		struct eb_chan_cfg cfg = {
		    eb_cq_size(e->size, eb_fabric_window(e->prov, o->window), nic->info),
		    o->nic_only, .block = e->block};

		rc = eb_chan_open(&e->chan[c], nic, c, e->size, &cfg);
		if (rc != EB_OK)
			break;
		if (e->block)
			e->pfd[c] = (struct pollfd){.fd = e->chan[c].wait_fd, .events = POLLIN};
		e->chan[c].nic_index = c % e->nnics;
		e->nchan = c + 1;
	}
	return rc;
}

int eb_engine_open(struct eb_engine *e, struct eb_boot *b, const struct eb_fabric_opts *o)
{
	struct eb_host_share here;
	enum eb_poll poll;
	int want, c, rc;
	int64_t agreed;

	static uint64_t opened;

	memset(e, 0, sizeof(*e));
	e->seq = __atomic_add_fetch(&opened, 1, __ATOMIC_RELAXED);
	e->boot = b;
	e->rank = b->rank;
	e->size = b->size;
	e->timeout_s = o->timeout_s;
	rc = eb_boot_host_share(b, eb_engine_deadline(e), &here);
	if (rc != EB_OK)
		return rc;
	/* Spinning threads compete for the machine's cores, whatever host names its ranks use. */
	e->host_ranks = here.machine_ranks;
	e->cores = here.machine_cpus;
	poll = eb_poll_decide((enum eb_poll)o->poll, e->host_ranks, o->threads > 0 ? o->threads : 1,
			      e->cores);
	e->block = poll == EB_POLL_BLOCK;
	e->yield = poll != EB_POLL_SPIN; /* threads that must not sleep (a proxy) yield */
	rc = eb_fabric_choose(o, here.single, e->prov, sizeof(e->prov));
	if (rc != EB_OK)
		return rc;
	rc = eb_fabric_nics(e->prov, o, here.single, &e->nics, &e->nnics);
	if (rc != EB_OK)
		return rc;
	/* Everyone opens the same number of channels: the smallest count among ranks. */
	rc = eb_boot_allreduce(b, o->channels > 0 ? o->channels : e->nnics, EB_MIN, &agreed,
			       eb_engine_deadline(e));
	if (rc != EB_OK)
		goto free_nics;
	want = (int)agreed;
	rc = alloc_tables(e, want);
	if (rc != EB_OK)
		goto free_tables;
	rc = open_channels(e, o, want);
	if (rc != EB_OK)
		goto close_chans;
	e->single_host = here.single;
	e->local = local_path(e, here.ranks);
	rc = agree_limits(e);
	if (rc == EB_OK)
		rc = exchange_addresses(e, e);
	if (rc == EB_OK)
		rc = eb_boot_idle_add(b, boot_waits, e);
	if (rc == EB_OK && (rc = eb_watch_add(e)) != EB_OK)
		eb_boot_idle_remove(b, e);
	if (rc != EB_OK)
		goto close_chans;
	return EB_OK;

close_chans:
	for (c = 0; c < e->nchan; c++)
		eb_chan_close(&e->chan[c]);
	e->nchan = 0;
free_tables:
	drop_tables(e);
free_nics:
	eb_fabric_free_nics(e->nics, e->nnics);
	e->nics = NULL;
	e->nnics = 0; /* closing an engine that failed to open does nothing */
	return rc;
}

int eb_engine_aim(struct eb_engine *e, const struct eb_engine *to)
{
	if (to->nchan != e->nchan) {
		eb_err("internal: an engine of %d channels aimed at one of %d", e->nchan,
		       to->nchan);
		return EB_EINVAL;
	}
	return exchange_addresses(e, to);
}

/* Channels of abandoned engines: still referenced, so that leak checkers see them as kept. */
static struct eb_chan **kept;
static size_t nkept;

void eb_engine_abandon(struct eb_engine *e)
{
	int c;

	for (c = 0; c < e->nchan && !e->abandoned; c++)
		e->abandoned = strstr(e->chan[c].nic.prov, "ofi_rxm") != NULL;
	if (e->abandoned)
		eb_dbg("the run failed: %s's endpoints are left open for the exit to close",
		       e->chan[0].nic.prov);
}

void eb_engine_quiesce(struct eb_engine *e)
{
	int c;

	eb_prov_enter(e, "fi_close");
	for (c = 0; c < e->nchan && !e->abandoned; c++)
		eb_chan_close_ep(&e->chan[c]);
	eb_prov_leave(e);
}

void eb_engine_close(struct eb_engine *e)
{
	struct eb_chan **more;
	int c;

	if (e->boot != NULL && e->nchan > 0)
		eb_boot_idle_remove(e->boot, e);
	if (e->abandoned && e->chan != NULL) {
		more = realloc(kept, (nkept + 1) * sizeof(*kept));
		if (more != NULL) {
			kept = more;
			kept[nkept++] = e->chan;
			e->chan = NULL;
		}
	}
	eb_prov_enter(e, "fi_close");
	for (c = 0; c < e->nchan && e->chan != NULL; c++)
		eb_chan_close(&e->chan[c]);
	eb_prov_leave(e);
	if (e->nchan > 0)
		eb_watch_remove(e);
	free(e->chan);
	free(e->imm);
	free(e->busy);
	free(e->due);
	for (c = 0; e->stash != NULL && c < e->nchan; c++)
		free(e->stash[c].ent);
	free(e->stash);
	free(e->pfd);
	eb_fabric_free_nics(e->nics, e->nnics);
	memset(e, 0, sizeof(*e));
}

static const char *op_name(enum eb_op op)
{
	return op == EB_OP_WRITE ? "write" : op == EB_OP_SEND ? "send" : "receive";
}

static void finish(struct eb_engine *e, struct eb_req *r, int status)
{
	eb_engine_busy(e, r->chan, -1);
	r->status = status;
	r->done = 1;
	if (r->cb != NULL)
		r->cb(r);
}

/* A fabric error is often the first sign of a dead peer (shm fails a transfer with a killed
 * rank at once): the first time, give the bootstrap a second to see the loss and name the rank
 * (it prints "lost rank R"), so that the message says who and not only what. */
static void name_lost_peer(struct eb_engine *e)
{
	static int waited;
	uint64_t until = eb_now_ns() + 1000000000ull;
	struct timespec ms = {0, 10000000};

	if (waited || e->boot == NULL)
		return;
	waited = 1;
	while (eb_boot_check(e->boot) == EB_OK && eb_now_ns() < until)
		nanosleep(&ms, NULL);
}

static int read_error(struct eb_engine *e, struct eb_chan *ch)
{
	struct fi_cq_err_entry err;
	char buf[256];
	const char *text = NULL;
	ssize_t n;

	name_lost_peer(e);
	memset(&err, 0, sizeof(err));
	eb_prov_enter(e, "fi_cq_readerr");
	n = fi_cq_readerr(ch->cq, &err, 0);
	if (n == 1)
		text = fi_cq_strerror(ch->cq, err.prov_errno, err.err_data, buf, sizeof(buf));
	eb_prov_leave(e);
	if (n != 1) {
		eb_err("channel %d (%s): a CQ error was signalled but could not be read", ch->index,
		       ch->nic.domain);
		return EB_EFABRIC;
	}
	if (err.op_context != NULL && !(err.flags & FI_REMOTE_WRITE)) {
		struct eb_req *r = err.op_context;

		eb_err("%s of %zu bytes with rank %d on channel %d (%s) failed: %s (%s)",
		       op_name(r->op), r->len, r->peer, ch->index, ch->nic.domain,
		       fi_strerror(err.err), text ? text : "no provider detail");
		finish(e, r, EB_EFABRIC);
	} else {
		eb_err("incoming transfer on channel %d (%s) failed: %s (%s)", ch->index,
		       ch->nic.domain, fi_strerror(err.err), text ? text : "no provider detail");
	}
	e->failed = 1;
	return EB_EFABRIC;
}

ssize_t eb_engine_read(struct eb_engine *e, int chan, struct fi_cq_data_entry *ent, size_t max)
{
	struct eb_stash *s = &e->stash[chan];

	if (s->n > 0) { /* what a bootstrap wait left first */
		size_t k = s->n < max ? s->n : max;

		s->n -= k;
		memcpy(ent, s->ent + s->n, k * sizeof(*ent));
		return (ssize_t)k;
	}
	return read_cq(e, chan, ent, max);
}

static int read_cq(struct eb_engine *e, int chan, struct fi_cq_data_entry *ent, size_t max)
{
	struct eb_chan *ch = &e->chan[chan];
	ssize_t n;

	eb_prov_enter(e, "fi_cq_read");
	n = fi_cq_read(ch->cq, ent, max);
	eb_prov_leave(e);
	if (n >= 0)
		return (int)n;
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL)
		return read_error(e, ch);
	eb_err("fi_cq_read on channel %d (%s): %s", chan, ch->nic.domain, fi_strerror((int)-n));
	e->failed = 1;
	return EB_EFABRIC;
}

void eb_engine_dispatch(struct eb_engine *e, int chan, const struct fi_cq_data_entry *ent, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		/* Classify by FI_REMOTE_WRITE: sockets also flags the initiator's own write
		 * completion with FI_REMOTE_CQ_DATA. */
		if (ent[i].flags & FI_REMOTE_WRITE) {
			uint32_t src = (uint32_t)ent[i].data & 0xffffu;

			if (src < (uint32_t)e->size) {
				e->imm[(size_t)src * (size_t)e->nchan + (size_t)chan]++;
				if (e->on_write != NULL)
					e->on_write(e->on_write_arg, (int)src, chan,
						    (uint32_t)ent[i].data >> 16);
			} else {
				e->stray_imm++;
			}
		} else if (ent[i].op_context != NULL) {
			finish(e, ent[i].op_context, EB_OK);
		}
	}
}

static ssize_t poll_one(struct eb_engine *e, int c, struct fi_cq_data_entry *ent)
{
	ssize_t n = eb_engine_read(e, c, ent, CQ_BATCH);

	if (n > 0)
		eb_engine_dispatch(e, c, ent, (size_t)n);
	return n;
}

/* Every channel, or those with something due: the hot ones by their bits, and from the 64th
 * on by their counts. */
static int poll_chans(struct eb_engine *e, int all)
{
	struct fi_cq_data_entry ent[CQ_BATCH];
	uint64_t hot = e->hot;
	int c, seen = 0;
	ssize_t n;

	if (all)
		hot = e->nchan >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << e->nchan) - 1;
	for (; hot != 0; hot &= hot - 1) {
		n = poll_one(e, __builtin_ctzll(hot), ent);
		if (n < 0)
			return (int)n;
		seen += (int)n;
	}
	for (c = 64; c < e->nchan; c++) {
		if (!all && e->busy[c] == 0 && e->due[c] == 0)
			continue;
		n = poll_one(e, c, ent);
		if (n < 0)
			return (int)n;
		seen += (int)n;
	}
	return seen;
}

int eb_progress(struct eb_engine *e)
{
	/* An idle channel still gets its turn: the provider's own protocol (acknowledgements,
	 * resends) and writes nobody counts yet. */
	return poll_chans(e, e->nchan == 1 || e->due_all > 0 ||
				 (++e->sweeps & (EB_IDLE_SWEEP - 1)) == 0);
}

void eb_engine_expect(struct eb_engine *e, int chan, int d)
{
	if (chan == EB_CHAN_ANY) {
		e->due_all += (uint32_t)d;
		return;
	}
	e->due[chan] += (uint32_t)d;
	eb_engine_heat(e, chan);
}

/* Every CHECK_NS: is every peer still there (and answer the bootstrap's questions)? */
static int check_peers(struct eb_engine *e, uint64_t now)
{
	int rc;

	if (now < e->next_check_ns)
		return EB_OK;
	e->next_check_ns = now + CHECK_NS;
	rc = eb_boot_check(e->boot);
	if (rc != EB_OK)
		e->failed = 1;
	return rc;
}

/* A poll that found completions: a steady stream may never leave 64 empty polls in a row, so
 * every BUSY_POLLS of them look at the peers too. */
static int busy(struct eb_engine *e)
{
	e->idle_polls = 0;
	if ((++e->busy_polls & (BUSY_POLLS - 1)) != 0)
		return EB_OK;
	return check_peers(e, eb_now_ns());
}

/* --poll block: once every channel's provider says nothing is pending (fi_trywait), sleep on
 * the CQs' file descriptors until one is ready, the deadline or the next look at the peers. */
static int sleep_on_cqs(struct eb_engine *e, uint64_t now, uint64_t deadline)
{
	uint64_t until = deadline < e->next_check_ns ? deadline : e->next_check_ns;
	struct timespec ts;
	int c, rc;

	if (until <= now)
		return EB_OK;
	for (c = 0; c < e->nchan; c++) {
		struct fid *cq = &e->chan[c].cq->fid;

		rc = fi_trywait(e->chan[c].fabric, &cq, 1);
		if (rc == -FI_EAGAIN)
			return EB_OK;	/* something to read: poll again */
		if (rc != FI_SUCCESS) { /* not a sleep quietly turned into a spin */
			eb_err("fi_trywait on channel %d (%s): %s", c, e->chan[c].nic.domain,
			       fi_strerror(-rc));
			e->failed = 1;
			return EB_EFABRIC;
		}
	}
	ts.tv_sec = (time_t)((until - now) / 1000000000u);
	ts.tv_nsec = (long)((until - now) % 1000000000u);
	(void)ppoll(e->pfd, (nfds_t)e->nchan, &ts, NULL); /* EINTR: polled again anyway */
	return EB_OK;
}

/* An empty poll: yield when oversubscribed, and now and then look at the clock and the peers. */
static int idle(struct eb_engine *e, uint64_t *deadline)
{
	uint64_t now;
	int rc;

	/* Oversubscribed, the peer we wait for may need this core: after a short spin, give it
	 * up on every empty poll. */
	if (++e->idle_polls > SPIN_POLLS && e->yield && !e->block)
		sched_yield();
	if (e->idle_polls % CLOCK_POLLS != 0 && !e->yield)
		return EB_OK;
	now = eb_now_ns();
	if (*deadline == EB_DEADLINE_LAZY)
		*deadline = now + (uint64_t)(e->timeout_s * 1e9);
	rc = check_peers(e, now);
	if (rc != EB_OK)
		return rc;
	if (now > *deadline)
		return EB_ETIMEDOUT;
	if (e->block && e->idle_polls > SPIN_POLLS)
		return sleep_on_cqs(e, now, *deadline);
	return EB_OK;
}

const char *eb_engine_poll_name(const struct eb_engine *e)
{
	return e->block ? "block" : e->yield ? "yield" : "spin";
}

int eb_engine_polled(struct eb_engine *e, int found, uint64_t *deadline)
{
	return found ? busy(e) : idle(e, deadline);
}

/* One poll; a completion counts as busy, none as idle. *deadline may be lazy (set here). */
static int step(struct eb_engine *e, uint64_t *deadline)
{
	int rc = eb_progress(e);

	return rc < 0 ? rc : eb_engine_polled(e, rc > 0, deadline);
}

int eb_engine_step(struct eb_engine *e, uint64_t deadline)
{
	return step(e, &deadline);
}

int eb_engine_wait_event(struct eb_engine *e, uint64_t *deadline, unsigned max_polls)
{
	unsigned k;
	int rc;

	for (k = 0; k < max_polls; k++) {
		rc = step(e, deadline);
		if (rc != EB_OK || e->idle_polls == 0) /* busy() zeroes it: a completion came */
			return rc;
	}
	return EB_OK;
}

static int post_result(struct eb_engine *e, struct eb_req *r, ssize_t rc)
{
	if (rc == 0) {
		eb_engine_busy(e, r->chan, +1);
		if (r->op != EB_OP_RECV)
			eb_chan_sent(&e->chan[r->chan], r->peer, r->len);
		return EB_OK;
	}
	r->done = 0;
	/* shm (1.17) says -FI_ENOMEM when its receive queue is full: of our own receives,
	 * while any is in flight, and one finishing makes room as with -FI_EAGAIN. */
	if (rc == -FI_EAGAIN || (rc == -FI_ENOMEM && r->op == EB_OP_RECV && e->busy[r->chan] > 0))
		return EB_AGAIN;
	eb_err("posting a %s of %zu bytes to rank %d on channel %d (%s): %s", op_name(r->op),
	       r->len, r->peer, r->chan, e->chan[r->chan].nic.domain, fi_strerror((int)-rc));
	e->failed = 1;
	return EB_EFABRIC;
}

int eb_post_failed(struct eb_engine *e, struct eb_req *r, ssize_t rc)
{
	return post_result(e, r, rc);
}

static void arm(struct eb_req *r, enum eb_op op, int chan, int peer, void *buf, size_t len,
		void *desc)
{
	r->op = op;
	r->chan = chan;
	r->peer = peer;
	r->buf = buf;
	r->len = len;
	r->desc = desc;
	r->status = 0;
	r->done = 0;
}

/* Hand an armed request to the provider. */
static int issue(struct eb_engine *e, struct eb_req *r)
{
	struct eb_chan *ch = &e->chan[r->chan];
	ssize_t rc;

	eb_prov_enter(e, r->op == EB_OP_WRITE  ? "fi_writedata"
			 : r->op == EB_OP_SEND ? "fi_send"
					       : "fi_recv");
	if (r->op == EB_OP_WRITE)
		rc = fi_writedata(ch->ep, r->buf, r->len, r->desc, r->imm, ch->peers[r->peer],
				  r->raddr, r->rkey, &r->fi_ctx);
	else if (r->op == EB_OP_SEND)
		rc = fi_send(ch->ep, r->buf, r->len, r->desc, ch->peers[r->peer], &r->fi_ctx);
	else /* FI_ADDR_UNSPEC: no FI_DIRECTED_RECV asked; the peer is kept for messages */
		rc = fi_recv(ch->ep, r->buf, r->len, r->desc, FI_ADDR_UNSPEC, &r->fi_ctx);
	eb_prov_leave(e);
	return post_result(e, r, rc);
}

void eb_arm_write(struct eb_req *r, int chan, int peer, const void *buf, size_t len, void *desc,
		  uint64_t raddr, uint64_t rkey, uint32_t imm)
{
	arm(r, EB_OP_WRITE, chan, peer, (void *)buf, len, desc);
	r->raddr = raddr;
	r->rkey = rkey;
	r->imm = imm;
}

int eb_post_armed(struct eb_engine *e, struct eb_req *r)
{
	return issue(e, r);
}

int eb_post_write(struct eb_engine *e, struct eb_req *r, int chan, int peer, const void *buf,
		  size_t len, void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm)
{
	eb_arm_write(r, chan, peer, buf, len, desc, raddr, rkey, imm);
	return issue(e, r);
}

int eb_post_send(struct eb_engine *e, struct eb_req *r, int chan, int peer, const void *buf,
		 size_t len, void *desc)
{
	arm(r, EB_OP_SEND, chan, peer, (void *)buf, len, desc);
	return issue(e, r);
}

int eb_post_recv(struct eb_engine *e, struct eb_req *r, int chan, int peer, void *buf, size_t len,
		 void *desc)
{
	arm(r, EB_OP_RECV, chan, peer, buf, len, desc);
	return issue(e, r);
}

int eb_post_retry(struct eb_engine *e, struct eb_req *r, int rc)
{
	uint64_t deadline = EB_DEADLINE_LAZY;

	while (rc == EB_AGAIN) {
		rc = step(e, &deadline);
		if (rc == EB_ETIMEDOUT)
			eb_err("timed out after %.1f s: the provider took no %s of %zu bytes %s "
			       "rank %d on channel %d",
			       e->timeout_s, op_name(r->op), r->len,
			       r->op == EB_OP_RECV ? "from" : "to", r->peer, r->chan);
		if (rc == EB_OK)
			rc = issue(e, r);
	}
	return rc;
}

int eb_req_test(struct eb_engine *e, struct eb_req *r)
{
	int rc;

	if (r->done)
		return 1;
	rc = eb_progress(e);
	if (rc < 0)
		return rc;
	return r->done;
}

int eb_req_wait_all(struct eb_engine *e, struct eb_req *r, size_t n, uint64_t deadline)
{
	size_t i = 0;
	int rc;

	while (i < n) {
		if (r[i].done) {
			if (r[i].status != EB_OK)
				return r[i].status;
			i++;
			continue;
		}
		rc = step(e, &deadline);
		if (rc == EB_ETIMEDOUT) {
			eb_err("timed out after %.1f s waiting for a %s of %zu bytes with rank %d "
			       "on channel %d",
			       e->timeout_s, op_name(r[i].op), r[i].len, r[i].peer, r[i].chan);
			return rc;
		}
		if (rc != EB_OK)
			return rc;
	}
	return EB_OK;
}

int eb_req_wait(struct eb_engine *e, struct eb_req *r, uint64_t deadline)
{
	return eb_req_wait_all(e, r, 1, deadline);
}

uint64_t eb_imm_count(const struct eb_engine *e, int peer, int chan)
{
	const uint64_t *row = &e->imm[(size_t)peer * (size_t)e->nchan];
	uint64_t n = 0;
	int c;

	if (chan != EB_CHAN_ANY)
		return row[chan];
	for (c = 0; c < e->nchan; c++)
		n += row[c];
	return n;
}

int eb_engine_reg_mem(struct eb_engine *e, struct eb_mem *m, size_t off, size_t len, unsigned use,
		      struct eb_mr *mrs, struct eb_rkey *rkeys)
{
	struct eb_rkey *mine = calloc((size_t)e->nchan, sizeof(*mine));
	int c, rc = EB_ENOMEM;

	if (mine == NULL)
		return rc;
	memset(mrs, 0, sizeof(*mrs) * (size_t)e->nchan);
	for (c = 0; c < e->nchan && m != NULL; c++) {
		rc = eb_mr_reg_mem(&e->chan[c], m, off, len, use, &mrs[c]);
		if (rc != EB_OK)
			goto dereg;
		mine[c] = mrs[c].rkey;
	}
	rc = EB_OK;
	if (rkeys != NULL)
		rc = eb_boot_allgather(e->boot, mine, rkeys, sizeof(*mine) * (size_t)e->nchan,
				       eb_engine_deadline(e));
	if (rc == EB_OK)
		goto free_mine;
dereg:
	eb_engine_dereg(e, mrs);
free_mine:
	free(mine);
	return rc;
}

void eb_engine_dereg(struct eb_engine *e, struct eb_mr *mrs)
{
	int c;

	for (c = 0; c < e->nchan; c++)
		eb_mr_dereg(&mrs[c]);
}
