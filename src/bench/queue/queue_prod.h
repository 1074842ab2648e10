/* efabench queue's producers and consumer: the options, the run's context, and a run of
 * producers (GPU threads, or CPU threads running the same push) drained by one consumer that
 * checks every command for loss, duplication and tearing (one out of order shows as both). */
#ifndef EB_BENCH_QUEUE_PROD_H
#define EB_BENCH_QUEUE_PROD_H

#include "efabench/gpuq.h"

#include <stdatomic.h>
#include <stdint.h>

#define POLL_MAX      512
#define MAX_PRODUCERS 32

/* One producer configuration: blocks x threads on the GPU (blocks 0: one per SM), or threads
 * on the CPU (blocks 1). */
struct qshape {
	char name[16];
	int blocks, threads;
};

struct qopts {
	int on_cpu;	       /* producers are CPU threads, else GPU threads */
	int managed;	       /* slots in managed memory instead of pinned host memory */
	int log2n, batch;      /* ring size, consumer publish interval */
	long per;	       /* commands per producer; 0: 1000 on the GPU, 100000 on the CPU */
	int block;	       /* threads per block for GPU producer counts in blocks */
	int lat_iters;	       /* round trips of the latency and floor tests */
	int cpu;	       /* --consumer-cpu: a CPU, or EB_CPU_AUTO / EB_CPU_NONE */
	const char *producers; /* comma list: 1t,1w,1b,<N>b,all (GPU) or thread counts (CPU) */
	struct qshape shapes[MAX_PRODUCERS];
	int nshapes;
};

struct tally {
	uint64_t seen, lost, dup, torn, alien;
	double first_s, last_s;
};

/* The latency test's echo, a cache line: mapped host memory in GPU mode (h for the host, d
 * for the GPU), plain memory in CPU mode. */
struct flags {
	struct {
		_Atomic uint64_t v;
		char pad[120];
	} ack;
};

struct qctx {
	const struct qopts *o;
	double timeout_s;
	struct eb_gpuq q;
	int gpu, sms;
	struct flags *h, *d;
};

/* Where the consumer thread (which also echoes the floor's pings) runs with GPU producers:
 * a core near the GPU it keeps, as the proxy's thread (it moved the push-to-seen p50 by up to
 * 0.4 us between runs left to the scheduler). */
struct qpin {
	int cpu;      /* -1: unpinned */
	void *was;    /* the thread's mask before, restored after */
	char why[64]; /* how the CPU was chosen, or why none */
};

/* want: --consumer-cpu; user_bound: a launcher or taskset bound the process. EB_OK, or a
 * status after one line. */
int eb_q_pin_consumer(struct qpin *p, int want, int user_bound);
void eb_q_unpin_consumer(struct qpin *p);

/* Lost + duplicated + torn + unknown commands. */
uint64_t eb_q_tally_wrong(const struct tally *t);

/* The latency test's figures, per round trip: the whole, and from the push (the producer's
 * clock, moved onto the host's) to the consumer seeing the command. */
struct qlat {
	double *rtt_ns, *seen_ns;
	double clock_unc_ns; /* the GPU clock's uncertainty on the host's (0 for CPU threads) */
};

/* Producers for one configuration: on the GPU blocks x threads, on the CPU threads; per
 * commands each, all consumed and checked into *t. With lat: one producer, one command in
 * flight, each echoed through the flags' ack word, its round trip and push-to-seen in *lat. */
int eb_q_run_producers(struct qctx *c, int blocks, int threads, uint32_t per, struct qlat *lat,
		       struct tally *t);

/* The latency test's echo flags (mapped host memory for GPU producers). */
int eb_q_alloc_flags(struct qctx *c);
void eb_q_free_flags(struct qctx *c);

#endif
