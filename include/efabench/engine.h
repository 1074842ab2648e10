/* The progress engine: owns the channels of one process, polls their completion queues,
 * completes requests, counts immediate data per (peer, channel), turns CQ error entries into
 * messages, and bounds every wait with a deadline. Requests follow the MPI/UCX model: a post
 * returns at once, wait/test complete it. */
#ifndef EFABENCH_ENGINE_H
#define EFABENCH_ENGINE_H

#include "efabench/boot.h"
#include "efabench/chan.h"
#include "efabench/mr.h"
#include "efabench/status.h"

#include <rdma/fi_eq.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Immediate data is 32 bits wide on EFA: the low 16 bits carry the sender's rank so the target
 * can count arrivals per (peer, channel); the high 16 bits are the caller's tag. */
#define EB_IMM(rank, tag) (((uint32_t)(rank)&0xffffu) | ((uint32_t)(tag) << 16))

enum eb_op { EB_OP_WRITE, EB_OP_SEND, EB_OP_RECV };

struct eb_req;
typedef void (*eb_req_cb)(struct eb_req *req);

struct eb_req {
	struct fi_context2 fi_ctx; /* first: libfabric hands its address back as op_context */
	eb_req_cb cb;		   /* optional, runs inside eb_progress */
	void *owner;
	int status; /* 0, or negative once failed */
	int done;
	enum eb_op op;
	int chan, peer;
	size_t len;   /* requested length (the spec defines cq len only for receives) */
	uint64_t tag; /* the owner's (a transfer keeps its chunk index here) */
	/* The rest of the post, kept so that eb_post_retry can post it again (buf is only
	 * written by receives). */
	void *buf, *desc;
	uint64_t raddr, rkey;
	uint32_t imm;
};

/* How a rank reaches the peers that share its host name. */
enum eb_local_path {
	EB_LOCAL_NONE,	   /* it has none */
	EB_LOCAL_NIC,	   /* through the NIC: the provider's shared-memory path is off */
	EB_LOCAL_SHM,	   /* shared memory: the shm provider, or efa's own shm endpoint */
	EB_LOCAL_STACK,	   /* the kernel's network stack (socket providers; loopback on one host) */
	EB_LOCAL_PROVIDER, /* the provider's choice, which may be shared memory */
};
const char *eb_local_path_name(enum eb_local_path p); /* "none", "nic", "shm", ... */

struct eb_engine {
	struct eb_boot *boot;
	int rank, size;
	int nchan;
	struct eb_chan *chan;
	struct eb_limits lim;	  /* the smallest of every channel's on every rank (eb_chan.h) */
	enum eb_local_path local; /* how peers with this host name are reached */
	int single_host;	  /* every rank has this host name */
	struct eb_nic *nics;
	int nnics;
	char prov[32];
	double timeout_s;
	uint64_t *imm; /* [size][nchan] arrivals of remote CQ data */
	/* What an empty poll reads: each channel with requests in flight (busy) or immediate
	 * data awaited (due), every channel while due_all, the rest once every
	 * EB_IDLE_SWEEP calls (efa runs its progress engine in every fi_cq_read: 31 idle
	 * channels read on every poll would cost a latency run 31 reads a poll). */
	uint32_t *busy;	  /* [nchan] requests posted and not yet finished */
	uint32_t *due;	  /* [nchan] waits counting this channel's immediate data */
	uint64_t hot;	  /* bit c (c < 64): busy[c] or due[c]; channels from 64 on: looked up */
	uint32_t due_all; /* waits counting any channel's, or a proxy thread's targets */
	/* [nchan] immediate data a bootstrap wait read off a CQ (it must progress the provider)
	 * but left uncounted, handed back by the channel's next eb_engine_read: counts that a
	 * phase starts from (a proxy's base) stay those of before the wait, as if the entries had
	 * stayed in the CQ. */
	struct eb_stash {
		struct fi_cq_data_entry *ent;
		size_t n, cap;
	} * stash;
	struct pollfd *pfd; /* [channels]: their CQs' file descriptors (--poll block) */
	uint32_t sweeps;
	uint64_t stray_imm; /* remote CQ data naming no valid rank */
	uint64_t next_check_ns;
	unsigned idle_polls; /* empty polls in a row */
	unsigned busy_polls; /* polls that found completions */
	/* Testing aid (0: off): chunk K of every chunked write is written at chunk K-1's offset,
	 * to prove that verification catches misplaced data. Set by the caller, never by
	 * default. */
	size_t misplace_chunk;
	int yield;	/* give the core up between empty polls (eb_poll_decide) */
	int block;	/* ... by sleeping on the CQs' file descriptors (--poll block) */
	int host_ranks; /* ranks on this machine (its kernel), when the policy was chosen */
	int cores;	/* in the union of their affinity masks (eb_boot_host_share) */
	int failed;	/* a CQ error or lost peer was reported: later calls fail fast */
	int lent;	/* a thread of its own drives it (a proxy): the bootstrap leaves it */
	/* Provider calls so far, twice each: odd while inside one (eb_prov_enter), which a
	 * watching thread ends the rank for once it lasts the timeout plus a second. */
	uint64_t prov_seq;
	const char *prov_call;
	int abandoned; /* eb_engine_abandon: the provider's objects are left to the exit */
	uint64_t seq;  /* the order it opened in, in this process */
	/* Optional: called for every write with immediate data that lands here, with the
	 * sender, the channel and the high 16 bits of the immediate data (the tag). */
	void (*on_write)(void *arg, int src, int chan, uint32_t tag);
	void *on_write_arg;
};

/* Choose the provider, open one channel per NIC (up to opts->channels), exchange addresses
 * with every rank and insert them. Collective. On failure e is left as if closed. */
int eb_engine_open(struct eb_engine *e, struct eb_boot *b, const struct eb_fabric_opts *o);
void eb_engine_close(struct eb_engine *e);
/* From now on e's posts to rank r go to rank r's endpoints of `to` (opened with the same
 * channels, on every rank, in the same order): writes land, and their immediate data is counted,
 * where `to` progresses. Collective. */
int eb_engine_aim(struct eb_engine *e, const struct eb_engine *to);
/* Close every channel's endpoint first (eb_chan_close_ep): after a failure, operations may
 * still be posted whose buffers and contexts the caller is about to free, and a provider may
 * touch them until the endpoint is gone. Nothing may be posted afterwards. */
void eb_engine_quiesce(struct eb_engine *e);
/* The run failed: where closing the provider's objects is unsafe, quiesce and close leave them
 * open (reachable, not freed) for the process's exit to reclaim. libfabric's rxm (tcp;ofi_rxm,
 * 1.17 to 2.6 at least) closing an endpoint while a peer's write with CQ data is still arriving
 * reads the NULL context of the write it cancels (rxm_handle_comp_error) and crashes: survivors
 * of a lost rank died of SIGSEGV in 3 of 10 alltoall trials. Call before eb_engine_quiesce. */
void eb_engine_abandon(struct eb_engine *e);

/* Around every libfabric call on e's objects: a call that never returns (shm spinning on a
 * lock a stopped peer holds) ends the rank, said, once it lasts e's timeout plus a second. */
static inline void eb_prov_enter(struct eb_engine *e, const char *call)
{
	__atomic_store_n(&e->prov_call, call, __ATOMIC_RELAXED);
	__atomic_store_n(&e->prov_seq, e->prov_seq + 1, __ATOMIC_RELEASE);
}

static inline void eb_prov_leave(struct eb_engine *e)
{
	__atomic_store_n(&e->prov_seq, e->prov_seq + 1, __ATOMIC_RELEASE);
}

/* The watching thread's list (src/fabric/watch.c); eb_engine_open and close call these. */
int eb_watch_add(struct eb_engine *e);
void eb_watch_remove(struct eb_engine *e);
/* Every engine open in this process, in the order they opened (at most max): the ranks of a
 * job open theirs alike, so the k-th of one rank talks to the k-th of another. */
int eb_engines_open(struct eb_engine **out, int max);

/* Deadline opts->timeout_s from now. */
uint64_t eb_engine_deadline(const struct eb_engine *e);

/* A deadline the waits below (and eb_xfer_wait, eb_xfer_wait_imm) resolve themselves: the
 * engine's timeout from the first time the wait looks at the clock (after 64 empty polls).
 * A wait that ends sooner never reads the clock: per-iteration waits of small messages pass
 * it, since a clock read on the path between a completion and the next post is latency. */
#define EB_DEADLINE_LAZY 0

/* Poll the CQs once: those with work in flight or immediate data awaited, and every
 * EB_IDLE_SWEEP calls all of them. Returns completions seen (>= 0) or a negative status. */
#define EB_IDLE_SWEEP 1024 /* a power of two */
int eb_progress(struct eb_engine *e);
/* A wait counts immediate data on chan (EB_CHAN_ANY: any channel) from now on (d = +1), or
 * no longer (d = -1): eb_progress then reads that channel on every call. */
void eb_engine_expect(struct eb_engine *e, int chan, int d);
/* A loop that posts and reads a channel itself (eb_engine_read) keeps the count of what is
 * in flight on it: +1 for each request it posts without eb_post_*, -1 for each of their
 * completions it reads itself. */
static inline void eb_engine_heat(struct eb_engine *e, int chan)
{
	uint64_t bit = chan < 64 ? (uint64_t)1 << chan : 0;

	e->hot = e->busy[chan] || e->due[chan] ? e->hot | bit : e->hot & ~bit;
}

static inline void eb_engine_busy(struct eb_engine *e, int chan, int d)
{
	e->busy[chan] += (uint32_t)d;
	eb_engine_heat(e, chan);
}

/* The parts of eb_progress and eb_engine_step, for loops that poll one channel themselves with
 * the least work between two polls (message rates). eb_engine_read: up to max completions of
 * channel chan into ent; how many (0: none), or a negative status (printed; a request that
 * failed is finished with it). eb_engine_dispatch: what eb_progress does with them (requests
 * finished, remote CQ data counted). eb_engine_polled: after each poll, found completions or
 * not, what every wait does (wait policy, deadline, lost peers), with eb_engine_step's returns;
 * *deadline may be EB_DEADLINE_LAZY. */
ssize_t eb_engine_read(struct eb_engine *e, int chan, struct fi_cq_data_entry *ent, size_t max);
void eb_engine_dispatch(struct eb_engine *e, int chan, const struct fi_cq_data_entry *ent,
			size_t n);
int eb_engine_polled(struct eb_engine *e, int found, uint64_t *deadline);
/* How its waits spend an empty poll: "spin", "yield" or "block". */
const char *eb_engine_poll_name(const struct eb_engine *e);

/* One step of every wait: progress once; every 10 ms ask the bootstrap whether a peer was lost.
 * EB_OK, EB_ETIMEDOUT once past deadline (not printed: the waiter knows what it waited for),
 * or another negative status (printed). */
int eb_engine_step(struct eb_engine *e, uint64_t deadline); /* absolute: never lazy */

/* Steps until a completion arrives or max_polls polls came up empty: a waiter whose state
 * changes only with completions looks at it once per event, not once per poll. Same returns
 * as eb_engine_step. *deadline may be EB_DEADLINE_LAZY: it is then set when first needed, and
 * the caller keeps it for its next call. */
int eb_engine_wait_event(struct eb_engine *e, uint64_t *deadline, unsigned max_polls);

/* Posts: EB_OK, EB_AGAIN, or a negative status (printed). The request must stay put until
 * done. imm is sent as remote CQ data. */
int eb_post_write(struct eb_engine *e, struct eb_req *r, int chan, int peer, const void *buf,
		  size_t len, void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm);
int eb_post_send(struct eb_engine *e, struct eb_req *r, int chan, int peer, const void *buf,
		 size_t len, void *desc);
int eb_post_recv(struct eb_engine *e, struct eb_req *r, int chan, int peer, void *buf, size_t len,
		 void *desc);

/* eb_post_write in two steps, for a loop that arms many writes first and then posts them
 * back to back (on shm, the time between two posts decides how the sender and the receiver
 * share the receiver's lock): eb_arm_write fills r, eb_post_armed hands it to the provider
 * (returns as eb_post_write; after EB_AGAIN r is still armed). */
void eb_arm_write(struct eb_req *r, int chan, int peer, const void *buf, size_t len, void *desc,
		  uint64_t raddr, uint64_t rkey, uint32_t imm);
int eb_post_armed(struct eb_engine *e, struct eb_req *r);

/* rc: what the provider's post of r (armed by an eb_post_*) returned, not 0 or -FI_EAGAIN:
 * reported as eb_post_* report it; returns the negative status. For loops that post r's
 * operation themselves. */
int eb_post_failed(struct eb_engine *e, struct eb_req *r, ssize_t rc);

/* rc: what an eb_post_* of r returned. While it is EB_AGAIN (the provider's queue is full, or
 * shm is still connecting to the peer), progress once and post r again, until the provider
 * takes it or the engine's timeout passes. A post taken at once reads no clock. */
int eb_post_retry(struct eb_engine *e, struct eb_req *r, int rc);

/* Waits: EB_OK, or EB_ETIMEDOUT / EB_EPEER / EB_EFABRIC after printing what was waited for.
 * deadline may be EB_DEADLINE_LAZY. */
int eb_req_wait(struct eb_engine *e, struct eb_req *r, uint64_t deadline);
int eb_req_wait_all(struct eb_engine *e, struct eb_req *r, size_t n, uint64_t deadline);
int eb_req_test(struct eb_engine *e, struct eb_req *r);
/* Immediate data from peer on chan so far (wait for counts with eb_xfer_wait_imm). */
#define EB_CHAN_ANY (-1) /* eb_imm_count: every channel together */
uint64_t eb_imm_count(const struct eb_engine *e, int peer, int chan);

/* Register [off, off + len) of m (any memory kind) for use (enum eb_use bits) on every channel and
 * gather every rank's keys: rkeys[rank * nchan + chan]. Collective; a rank with nothing to expose
 * passes m = NULL and contributes no keys. mrs has nchan entries. */
int eb_engine_reg_mem(struct eb_engine *e, struct eb_mem *m, size_t off, size_t len, unsigned use,
		      struct eb_mr *mrs, struct eb_rkey *rkeys);
void eb_engine_dereg(struct eb_engine *e, struct eb_mr *mrs);

#ifdef __cplusplus
}
#endif

#endif
