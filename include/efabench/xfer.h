/* A transfer: one buffer moved as chunks over one channel with at most `window` in flight.
 * Several transfers progress together (split across channels, round-robin over targets). */
#ifndef EFABENCH_XFER_H
#define EFABENCH_XFER_H

#include "efabench/engine.h"
#include "efabench/stage.h"

#ifdef __cplusplus
extern "C" {
#endif

struct eb_xfer {
	struct eb_engine *e;
	enum eb_op op;
	int chan, peer;
	char *buf;
	size_t len, chunk;
	void *desc;
	uint64_t raddr, rkey;
	uint32_t imm;
	size_t nchunks, posted, completed;
	int window, inflight;
	int status;
	struct eb_req *reqs; /* [window] */
	int *free_slots;     /* stack of free request slots */
	int nfree;
	/* Staged (eb_xfer_stage): chunk i of buf mirrors dev + i * chunk in GPU memory. */
	struct eb_stage *stage;
	char *dev;
	int serial;		/* copy everything before the first post / after the last arrival */
	int *tickets;		/* [2 * window]: copies in flight, in chunk order */
	size_t staged, copied;	/* chunks whose copy started; completed (a prefix) */
	unsigned char *arrived; /* receives: chunks that landed, by index */
	size_t arrived_cap;
	/* Optional: called (inside progress) when the last chunk of an unstaged transfer
	 * completes, so owners of many transfers need not poll each. */
	void (*on_done)(struct eb_xfer *x);
	void *owner;
	/* Pooled (eb_xfer_write_pooled): the chunks of one buffer that transfers on several
	 * channels take, each its next one whenever its window has room. NULL otherwise. */
	struct eb_xfer_pool *pool;
};

/* Chunks of one buffer shared by the transfers that move it: the next one to post. */
struct eb_xfer_pool {
	size_t next, nchunks;
	int cap; /* chunks in flight per transfer (its window if 0): leave some for the others */
};

/* chunk > 0, window > 0. Returns EB_OK or EB_ENOMEM (printed). */
int eb_xfer_init(struct eb_xfer *x, struct eb_engine *e, int window);
void eb_xfer_fini(struct eb_xfer *x);

/* n transfers of window requests each, as one array (NULL after one line when out of memory),
 * and its release (NULL is fine). */
struct eb_xfer *eb_xfers_new(struct eb_engine *e, int n, int window);
void eb_xfers_free(struct eb_xfer *xs, int n);

/* Number of chunks len bytes make (at least one, so empty messages still notify). */
size_t eb_xfer_nchunks(size_t len, size_t chunk);

/* Arm a transfer; nothing is posted until eb_xfer_step or eb_xfer_wait. Every write chunk
 * carries imm; chunk i lands at raddr + i * chunk. */
void eb_xfer_write(struct eb_xfer *x, int chan, int peer, const void *buf, size_t len, size_t chunk,
		   void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm);
/* A write that shares its chunks with the other writes armed on the same pool, one per
 * channel: chunk i of buf lands at raddr + i * chunk whichever channel takes it, so a channel
 * that drains faster moves more of the buffer. pool->nchunks is set here, pool->next and
 * pool->cap reset.
 * Not for staged transfers; on_done is not called. The target counts the chunks over all
 * channels (EB_CHAN_ANY). */
void eb_xfer_write_pooled(struct eb_xfer *x, struct eb_xfer_pool *pool, int chan, int peer,
			  const void *buf, size_t len, size_t chunk, void *desc, uint64_t raddr,
			  uint64_t rkey, uint32_t imm);
void eb_xfer_send(struct eb_xfer *x, int chan, int peer, const void *buf, size_t len, size_t chunk,
		  void *desc);
void eb_xfer_recv(struct eb_xfer *x, int chan, int peer, void *buf, size_t len, size_t chunk,
		  void *desc);

/* Make an armed transfer staged: before chunk i is posted (writes, sends) it is copied from
 * dev + i * chunk on the GPU into buf; after it arrived (receives) it is copied to dev. Up to
 * 2 * window copies run ahead of the network, or (serial) the whole buffer is copied before the
 * first post / after the last arrival. Staged writes carry the chunk index in the high 16
 * bits of their immediate data, so a staged target knows which chunk landed. */
int eb_xfer_stage(struct eb_xfer *x, struct eb_stage *stage, void *dev, int serial);

/* Post as many chunks as the window allows without blocking. */
int eb_xfer_step(struct eb_xfer *x);
/* The same, EB_AGAIN when the provider refused a post: the channel's queue is full, and
 * posting more there before progress only costs the provider's locks. */
int eb_xfer_push(struct eb_xfer *x);
/* A set of full channels as a mask (channels from 64 on are never marked). */
int eb_chan_full(uint64_t full, int chan);
uint64_t eb_chan_mark(uint64_t full, int chan);
/* One transfer of a sweep over several: eb_xfer_push unless a post on its channel was refused
 * earlier in the sweep (*full, 0 at its start). EB_OK (posted what it could, or skipped),
 * EB_AGAIN (refused now: the channel is marked in *full) or the failure. */
int eb_xfer_push_sweep(struct eb_xfer *x, uint64_t *full);
int eb_xfer_done(const struct eb_xfer *x);

/* Drive n transfers to completion together. deadline: absolute, or EB_DEADLINE_LAZY (the
 * engine's timeout from the wait's first look at the clock). */
int eb_xfer_wait(struct eb_xfer **xs, int n, uint64_t deadline);

/* A send of len bytes (at most the channel's inject_size, from memory the CPU reads) by
 * fi_inject: buf is free again on return and no completion comes for it, as raw-libfabric
 * ping-pongs send small messages. Progresses the engine while the provider's queue is full,
 * up to the engine's timeout. */
int eb_xfer_inject_send(struct eb_engine *e, int chan, int peer, const void *buf, size_t len);

/* Immediate data a waiter expects: arrivals from peer on chan reaching count. */
struct eb_imm_wait {
	int peer, chan; /* chan EB_CHAN_ANY: the sum over every channel */
	uint64_t count;
};

/* Message rate: n writes of len bytes with window of them in flight on one channel, write i
 * taking the (i % slots)-th len bytes of buf to raddr + (i % slots) * len: a burst whose every
 * write can be checked afterwards (slots 1: all to the same place); returns once every one
 * completed. With
 * EB_BURST_INJECT in flags (buf is memory the CPU reads), writes of at most the channel's
 * inject_size go by fi_inject_writedata, as raw-libfabric benchmarks send small messages: no
 * completion comes for them, and the provider's queue, not window, bounds what is in flight. */
#define EB_BURST_INJECT 1u
int eb_xfer_burst_slots(struct eb_engine *e, int chan, int peer, const void *buf, size_t len,
			void *desc, uint64_t raddr, uint64_t rkey, uint32_t imm, long n, long slots,
			unsigned flags, int window, uint64_t deadline);

/* Drive n transfers to completion and wait for nw immediate-data counts, all together
 * (deadline as eb_xfer_wait's). */
int eb_xfer_wait_imm(struct eb_engine *e, struct eb_xfer **xs, int n, const struct eb_imm_wait *w,
		     int nw, uint64_t deadline);

#ifdef __cplusplus
}
#endif

#endif
