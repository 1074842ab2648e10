/* The CPU proxy of GPU-initiated networking: a host thread per rank drains the command queue
 * that producers (GPU threads, or CPU threads) fill through proxy_dev.h, writes each put with
 * fi_writedata in chunks (on channel 0, or split over every channel), keeps a window of chunks
 * in flight, and publishes the completed count that eb_quiet waits for. On the target side it
 * counts the immediate data of every chunk per source and applies a signal only once every
 * chunk the source wrote before it has arrived.
 *
 * Use: open (collective), hand eb_proxy_dev() to the producers, start, launch them, wait for
 * them, stop, close. While the proxy thread runs it alone drives the engine: the caller must
 * not post or progress on it. Start and stop at points where no write is in flight between
 * ranks (a barrier): arrivals are counted from the start. */
#ifndef EFABENCH_PROXY_THREAD_H
#define EFABENCH_PROXY_THREAD_H

#include "efabench/engine.h"
#include "efabench/layout.h"
#include "efabench/proxy_dev.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_proxy;

/* The queue and window a proxy takes where its user names none: 4,096 slots, the position
 * published every 64 commands, 64 puts in flight. */
#define EB_PROXY_LOG2N	12
#define EB_PROXY_BATCH	64
#define EB_PROXY_ACTIVE 64

struct eb_proxy_opts {
	enum eb_layout layout; /* single: channel 0; split: every channel (round-robin: no) */
	size_t chunk;	       /* bytes per write */
	int window;	       /* chunks in flight per channel and put */
	int active;	       /* puts in flight at once */
	uint32_t log2n, batch; /* queue slots, consumer publish interval */
	uint32_t nsignals;     /* this rank's signal words */
	int gpu;	       /* producers are GPU threads (queue and signals mapped for it) */
	double timeout_s;      /* no progress for this long: the proxy fails, producers give up */
	int cuda_device;       /* made current in the proxy thread (-1: none): GPU memory moved
				* by the provider needs a CUDA context in the thread that drives
				* it (shm's CUDA IPC fell back to host bounce buffers without) */
	int pin, cpu;	       /* pin: the proxy thread runs on CPU cpu only (0: wherever the
				* process may; eb_topo_helper_cpu picks one near the GPU) */
	int stall;	       /* testing aid: once it has started a put the thread blocks for
				* good, as one stuck inside a provider call does */
	uint32_t stamp_every;  /* stamp 1 in N puts (eb_put_stamp; 0: none) */
	uint32_t nstamps;      /* the stamps' ring: puts sampled before the caller reads them */
	uint32_t slow_ns;      /* testing aid: the thread spends this long on each command */
};

/* A sampled put of another rank that arrived here: every chunk of it counted, at t (this
 * rank's CLOCK_MONOTONIC). Its chunks carry a tag in their immediate data: the put's sample
 * index to this rank (its 7 low bits) and its chunk count (puts of 255 chunks or more are
 * not followed). */
struct eb_arrival {
	uint32_t src, sample;
	uint64_t t;
};

/* The buffers puts read from and write to. The source is registered (local access) on every
 * channel with src_mrs; every rank's destination on every channel is in
 * dst_keys[rank * nchan + chan]. Both must stay registered while the proxy lives. */
struct eb_proxy_bufs {
	char *src;
	size_t src_len;
	const struct eb_mr *src_mrs;
	size_t dst_len;
	const struct eb_rkey *dst_keys;
};

/* Create the queue, the signal words and the receives for incoming signals. Not collective;
 * every rank that takes part opens one. 0 or a negative status (printed). */
int eb_proxy_open(struct eb_proxy **p, struct eb_engine *e, const struct eb_proxy_bufs *b,
		  const struct eb_proxy_opts *o);
void eb_proxy_close(struct eb_proxy *p);

/* What producers get (by value, into kernels or threads). */
struct eb_proxy_dev eb_proxy_dev(const struct eb_proxy *p);

/* This rank's signal words as the host sees them (zeroed at open; the caller may reset them
 * while the proxy is stopped). */
uint64_t *eb_proxy_signals(struct eb_proxy *p);

/* The channel layout of puts from now on (only while stopped). */
void eb_proxy_layout(struct eb_proxy *p, enum eb_layout l);

/* Start the thread. */
int eb_proxy_start(struct eb_proxy *p);

/* Finish every command consumed so far, then end the thread: 0, or the failure the proxy
 * reported (a fabric error, a peer that stopped answering, a refused command). */
int eb_proxy_stop(struct eb_proxy *p);

/* Make producers waiting in the queue give up at once (the run is failing elsewhere). */
void eb_proxy_abort(struct eb_proxy *p);

/* Error bits producers raised (EB_Q_ERR_*), and the id + 1 of the first refused producer. */
uint32_t eb_proxy_errors(const struct eb_proxy *p);
uint64_t eb_proxy_refused(const struct eb_proxy *p);
/* Nanoseconds since the proxy thread last saw anything happen (a command, a completion, an
 * arrival, a signal applied): what a target waiting for a peer judges it by. */
uint64_t eb_proxy_idle_ns(const struct eb_proxy *p);

/* Puts the proxy has started since open (each one write request, or one chunked write). */
uint64_t eb_proxy_puts(const struct eb_proxy *p);

/* With stamp_every (only while stopped): the ring of this rank's sampled puts (*n entries, an
 * entry's pos 0 where none was stamped), and the arrivals of other ranks' sampled puts; both
 * emptied by eb_proxy_stamps_clear. */
struct eb_put_stamp *eb_proxy_stamps(struct eb_proxy *p, uint32_t *n);
size_t eb_proxy_arrivals(const struct eb_proxy *p, const struct eb_arrival **a);
void eb_proxy_stamps_clear(struct eb_proxy *p);

#ifdef __cplusplus
}
#endif

#endif
