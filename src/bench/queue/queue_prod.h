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

/* Lost + duplicated + torn + unknown commands. */
uint64_t eb_q_tally_wrong(const struct tally *t);

/* Producers for one configuration: on the GPU blocks x threads, on the CPU threads; per
 * commands each, all consumed and checked into *t. With ack (latency): one command in flight,
 * echoed, rtt_ns[i] its round trip. */
int eb_q_run_producers(struct qctx *c, int blocks, int threads, uint32_t per, _Atomic uint64_t *ack,
		       double *rtt_ns, struct tally *t);

/* The latency test's echo flags (mapped host memory for GPU producers). */
int eb_q_alloc_flags(struct qctx *c);
void eb_q_free_flags(struct qctx *c);

#endif
