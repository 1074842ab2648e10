/* efabench proxy's parts: its options and per-rank state (what every proxy_*.c file shares),
 * the set-up of buffers, keys and the proxy thread (proxy_setup.c), CPU-initiated writes
 * (proxy_cpu.c) and puts through the proxy from GPU or CPU producers (proxy_produce.c). */
#ifndef EB_BENCH_PROXY_STATE_H
#define EB_BENCH_PROXY_STATE_H

#include "harness/bench.h"
#include "gpu/floor.h"
#include "efabench/proxy_thread.h"

enum { MODE_BW, MODE_LAT, MODE_RATE };
enum { T_CPU, T_CPU_RATE, T_BLOCK, T_NBI }; /* low byte of a variant's tag; producers above */

#define MAX_CFG 6

struct popts {
	int mode, on_cpu, log2n, batch, active;
	int bad_put, stall_proxy; /* testing aids */
	long slow_ns;		  /* testing aid: the proxy thread's time per command */
	int cpu;		  /* --proxy-cpu: a CPU, or EB_CPU_AUTO / EB_CPU_NONE */
	const char *producers;
	int nprod[MAX_CFG]; /* rate mode: producers per configuration; 0 = one block per SM */
	int ncfg;
	struct eb_variant vars[EB_MAX_VARIANTS];
	char names[EB_MAX_VARIANTS][24];
	int nvars;
};

struct pstate {
	struct eb_payload src, dst; /* rank 0 reads src; targets receive into dst */
	size_t slot;
	struct eb_proxy *px;
	struct eb_xfer *x; /* [nchan]: CPU-initiated puts */
	int window;
	uint64_t *expect; /* target: chunks counted per channel so far (CPU variants) */
	struct eb_imm_wait *waits;
	int sms0;	    /* rank 0's SMs: how many producers "all" means */
	double floor_us[2]; /* GPU<->CPU floor round trip, p50 and p99 (latency mode) */
	int cpu;	    /* the proxy thread's CPU, -1 when not pinned */
	char pin_why[48];   /* and why (rank 0's, for the header) */
	int spread; /* --check: each put of a phase-timed phase lands in a slot of its own */
	/* GPU producers' clock against the host's, measured before and after each timed run */
	struct eb_gpu_clock gpu_clk;
};

/* --check: at most this many bytes of slots for the puts of a phase, then they are reused. */
#define EB_PX_SPREAD_BYTES (64ull << 20)

static inline const struct popts *eb_px_opts(const struct eb_ctx *c)
{
	return c->o->own;
}

/* Producers of a variant: 1, or the rate configuration's count (0 = every SM of rank 0). */
static inline int eb_px_producers(const struct eb_ctx *c, const struct pstate *st)
{
	int n = (c->var->tag >> 8) & 0xffff;

	return (c->var->tag & 0xff) == T_NBI && n == 0 ? st->sms0 : n > 0 ? n : 1;
}

/* Bytes the puts of a phase of c->iters iterations cover, from offset 0, in slots of S that
 * they go round: a phase-timed phase (NBI, rate) has a slot per put in flight (--active), so
 * that the check after it sees every put of the last window in bytes of its own, and with
 * --check a slot per put (every producer's share rounded up); else S. Within the slots' cap. */
static inline size_t eb_px_span(const struct eb_ctx *c, const struct pstate *st)
{
	int np = eb_px_producers(c, st);
	long puts = (c->var->tag & 0xff) == T_NBI ? (c->iters + np - 1) / np * np : c->iters;
	size_t in_flight = c->pt->flags & EB_PT_PHASE_TIMED ? (size_t)eb_px_opts(c)->active : 1;
	int spread = (c->pt->flags & EB_PT_PHASE_TIMED) && st->spread;

	return eb_payload_slots(c->bytes, st->slot, spread, in_flight, puts);
}

/* Where a put's time goes (proxy_stages.c): the events and stages, and after a phase the
 * sampled puts' events to the schedule (timed 0: warm-up, dropped), the stamps cleared. */
#define EB_PX_NSTAGES 5
#define EB_PX_NEVENTS 6
extern const char *const eb_px_events[EB_PX_NEVENTS];
extern const struct eb_op_stage eb_px_stages[EB_PX_NSTAGES];
void eb_px_stage_events(struct eb_ctx *c, struct pstate *st, int timed);
/* Rank 0 with GPU producers and stages on: the GPU clock's offset now, as measurement `which`
 * of gpu_clk. */
int eb_px_gpu_clock(struct eb_ctx *c, struct pstate *st, int which);

/* The benchmark's hooks (proxy_setup.c). */
int eb_px_setup(struct eb_ctx *c);
void eb_px_teardown(struct eb_ctx *c);
int eb_px_prepare(struct eb_ctx *c);
int eb_px_verify(struct eb_ctx *c, uint64_t *wrong);
const struct eb_payload *eb_px_landing(struct eb_ctx *c, size_t *off, size_t *len);
/* A phase of CPU-initiated writes, either side (proxy_cpu.c). */
int eb_px_cpu_run(struct eb_ctx *c, struct pstate *st, long n, double *samples);
/* The calling thread onto the proxy thread's CPU while that thread is not running; what
 * eb_topo_thread_back (efabench/topo.h) needs to put it back (NULL: it was not moved). */
void *eb_px_to_proxy_cpu(const struct pstate *st);
/* A phase through the proxy: rank 0's producers and their puts, a target's signals
 * (proxy_produce.c). */
int eb_px_init(struct eb_ctx *c, struct pstate *st, long n, double *samples);
int eb_px_target(struct eb_ctx *c, struct pstate *st, long n);

#endif
