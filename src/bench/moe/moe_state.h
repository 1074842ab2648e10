/* efabench moe's parts: options and per-rank state shared by moe.c (the subcommand, its
 * schedule and records), moe_setup.c (regions, engines, proxy threads), moe_phase.c (one
 * dispatch or combine by each initiator), moe_data.c (what is sent and how it is checked)
 * and moe_pool.c (CPU producers). */
#ifndef EB_BENCH_MOE_STATE_H
#define EB_BENCH_MOE_STATE_H

#include "harness/bench.h"
#include "moe_hosts.h"
#include "moe_plan.h"
#include "moe_pool.h"
#include "moe_route.h"
#include "efabench/a2av.h"
#include "efabench/proxy_thread.h"
#include "moe_work.h"
#include "report/sheet.h"

enum { MOE_DECODE, MOE_PREFILL };
enum { MOE_BF16, MOE_FP8 };
enum { INIT_GPU, INIT_CPU, INIT_A2AV, INIT_MPI, INIT_N }; /* who moves the bytes */
#define MOE_CE INIT_N	 /* the copy engines' header points: their var */
enum { MOE_SPAN_CROSS }; /* the leg between hosts, timed alone (moe_cross.c) */
enum { PH_DISPATCH, PH_COMBINE, PH_PAIR, PH_N }; /* what a timed iteration is */
#define INIT_ALL ((1u << INIT_GPU) | (1u << INIT_CPU) | (1u << INIT_A2AV) | (1u << INIT_MPI))
/* Initiators whose puts go through proxy threads (the others are baselines). */
#define INIT_PROXIED(i) ((i) == INIT_GPU || (i) == INIT_CPU)

struct mopts {
	int preset, dtype, mode;	   /* mode: EB_MOE_*, -1 until the preset's is chosen */
	int tokens, hidden, topk, experts; /* 0: the preset's */
	const char *route;
	long seed;
	int hosts;	   /* --hosts N: N emulated hosts of consecutive ranks (0: by host name) */
	int intra;	   /* MOE_INTRA_*: how same-host peers are reached */
	int proxy_threads; /* 0: one per NIC used */
	int rx_threads;	   /* a receiving thread beside each proxy thread: asked for */
	int no_rx_threads; /* none, asked for (neither: where the cores allow) */
	int producers;	   /* 0: 1 CPU thread per proxy thread; GPU blocks: gpu_blocks */
	uint64_t piece;	   /* prefill: bytes per packed write at most (0: --chunk) */
	unsigned initiators;
	int inits_given; /* --initiators on the command line (else: all that can run here) */
	struct eb_route_spec spec;
};

enum { MOE_INTRA_AUTO, MOE_INTRA_IPC, MOE_INTRA_FABRIC };

/* Same-host peers reached by stores: their destination regions and flag words mapped here,
 * as this process's CPU and GPU reach them ([ranks], NULL where a peer is not). */
struct mpeers {
	struct eb_mem flags;	 /* this rank's flag words: [leg][source][proxy thread] */
	struct eb_mem *mem;	 /* [2 ranks]: each peer's destination region, then flag words */
	void *block;		 /* the arrays below */
	char **cpu, **gpu;	 /* a peer's destination region */
	uint64_t **fcpu, **fgpu; /* its flag words */
	char **gpu_dev;		 /* gpu and fgpu copied to GPU memory, for GPU producers */
	uint64_t **fgpu_dev;
	int n; /* peers mapped */
};

/* One initiator's proxy threads, each on an engine of its own (the harness's engine is the
 * baseline's): a proxy's posted receives live as long as its endpoint, and a GPU producer's
 * queue head lives in GPU memory, where CPU threads cannot push, so the kinds never share.
 * With receiving threads, [nq + k] is proxy k's partner: the endpoints peers' proxy k writes
 * to, progressed by a proxy of their own that takes no commands. */
struct mside {
	struct eb_engine eng[2 * EB_MOE_MAX_Q];
	struct eb_region src_reg[2 * EB_MOE_MAX_Q], dst_reg[2 * EB_MOE_MAX_Q];
	struct eb_proxy *px[2 * EB_MOE_MAX_Q];
};

struct mstate {
	const struct mopts *mo;
	unsigned inits; /* the initiators this run measures (INIT_* bits) */
	struct eb_route rt;
	struct eb_moe_hosts hosts;
	struct eb_moe_plan plan;
	struct eb_payload src, dst; /* regions as the plan lays them out */
	struct mpeers peers;
	int nq;		      /* proxy threads per initiator */
	int rx;		      /* a receiving thread beside each proxy thread */
	int blocks;	      /* GPU producers: blocks per rank */
	int npx;	      /* and receiving threads: nq, or 2 nq */
	struct mside side[2]; /* [INIT_GPU], [INIT_CPU] */
	struct eb_moe_work w;
	struct eb_moe_phase dev[2][2]; /* each leg's item arrays on the GPU */
	int have_dev;
	struct eb_moe_pool *pool;
	uint64_t *tickets, *tickets_dev; /* the producers' counters (moe_work.h) */
	int producers;			 /* of the current initiator */
	void *block;			 /* expect, host, vals, sum and tickets, one allocation */
	uint64_t *expect;    /* [phase][leg][ranks] signal sums awaited per source (cumulative) */
	uint64_t runs[2][2]; /* each leg's runs so far: what same-host flags are set to */
	struct eb_a2av a2a;  /* the baseline's writes and what it awaits (cumulative) */
	int *mpi_v;	/* MPI_Alltoallv's [phase][leg][scount, sdispl, rcount, rdispl][ranks] */
	char *host;	/* a host copy of a region for checking GPU memory */
	uint16_t *vals; /* an expert output as bf16, for filling and checking */
	float *sum;	/* sums got and expected, a slot's sum, then a scratch row per selection */
	int init;	/* the current initiator */
	int phase;	/* the current timed phase */
	uint64_t wrong_tokens, wrong_sums;
	uint64_t puts_mark; /* the proxy threads' puts when the current point started */
	double base[PH_N];  /* rank 0: the all-to-all-v's p50 per phase (0: not measured) */
	int have_ce;	    /* the copy engines were timed (GPU memory, same-host peers) */
	double ce_s[2];	    /* their time for the same-host bytes: the slowest rank's p50 */
	double ce_bytes[2]; /* the same-host bytes per rank (mean) */
	struct mce {	    /* while their points run: the streams, each peer and its bytes */
		struct eb_mem_ce *ce;
		char **to;
		uint64_t *len;
	} ce;
	/* Over several hosts in two legs, the leg of each phase in which bytes cross between
	 * hosts (-1: one leg, or none crosses). */
	int cross_leg[2];
};

#define EB_MOE_NCOLS 13
extern const char *const eb_moe_init_name[];
extern const char *const eb_moe_phase_name[];
extern const struct eb_colspec eb_moe_cols[EB_MOE_NCOLS];
/* moe.c: the benchmark's hooks. */
extern const struct eb_bench eb_moe_bench;
/* moe_figures.c: a point's record (rank 0: every rank's p50/p99 and writes) and the
 * header's facts. */
void eb_moe_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		   struct eb_rec *r);
void eb_moe_facts(const struct eb_ctx *c, struct eb_sheet *sh);
/* moe_setup.c: refuses shapes the rank count does not allow (EB_EINVAL after one line on
 * rank 0), then the routing, regions, engines and proxy threads. */
int eb_moe_setup(struct eb_ctx *c, const struct mopts *mo);
void eb_moe_teardown(struct eb_ctx *c, int failed);
/* moe_ce.c: whether some host has ranks storing into each other's GPU memory (alike on every
 * rank); then a header point per phase that times the
 * copy engines for its same-host bytes (pts gets 2; else 0); their streams opened and closed
 * around them (enter, leave), an iteration, and rank 0's record of the time. */
int eb_moe_ce_wanted(const struct eb_ctx *c, const struct mstate *st);
int eb_moe_ce_points(const struct eb_ctx *c, const struct mstate *st, struct eb_pt *pts);
int eb_moe_ce_enter(struct eb_ctx *c, struct mstate *st);
void eb_moe_ce_leave(struct mstate *st);
int eb_moe_ce_iter(struct eb_ctx *c, struct mstate *st);
void eb_moe_ce_record(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s);
/* moe_mpi.c: MPI_Alltoallv's counts and displacements for each leg, the same bytes as the
 * a2av's between the same offsets (collective, with the mpi initiator); one leg's call. */
int eb_moe_mpi_plan(struct eb_ctx *c, struct mstate *st);
int eb_moe_mpi_leg(struct eb_ctx *c, struct mstate *st, int which, int leg);

/* Bytes a packed prefill write carries at most: --piece, else the resolved --chunk. */
static inline uint64_t eb_moe_piece_bytes(const struct eb_ctx *c, const struct mstate *st)
{
	return st->mo->piece ? st->mo->piece : c->chunk;
}

/* CPU producer threads per rank: --producers, else one per proxy thread. */
static inline int eb_moe_cpu_producers(const struct mstate *st)
{
	return st->mo->producers > 0 ? st->mo->producers : st->nq;
}

/* The current initiator's proxy thread k (k < nq: producers push to it), or k - nq's receiving
 * partner. */
static inline struct eb_proxy *eb_moe_px(const struct mstate *st, int k)
{
	return st->side[st->init].px[k];
}
/* moe_phase.c: start and stop the proxy threads around an initiator's phases; one
 * iteration of the current phase. */
int eb_moe_begin(struct eb_ctx *c);
int eb_moe_end(struct eb_ctx *c, int failed);
int eb_moe_iter(struct eb_ctx *c);
/* Puts this initiator's proxy threads have started so far (0 for the a2av). */
uint64_t eb_moe_puts(const struct mstate *st);
/* moe_cross.c: the leg of each phase whose bytes cross between hosts (st->cross_leg, from
 * the plan); whether a phase has one (pair: both do; its time is span MOE_SPAN_CROSS); the
 * bytes rank r sends across in it. */
void eb_moe_cross_legs(const struct eb_ctx *c, struct mstate *st);
int eb_moe_cross_timed(const struct mstate *st, int ph);
double eb_moe_cross_bytes(const struct mstate *st, int ph, int r);
/* A leg's items for the producers (host arrays), and how many a packed write holds at most: a
 * piece's worth (--piece, else --chunk, / bytes per token or output), at least one. */
struct eb_moe_phase eb_moe_host_phase(const struct eb_ctx *c, const struct mstate *st, int which,
				      int leg);
int64_t eb_moe_piece(const struct eb_ctx *c, const struct mstate *st, int which);
/* moe_peers.c: same-host peers' destination regions and flag words mapped here (map: every
 * rank exports, then maps its same-host peers', collective; else none, every peer NULL), and
 * the mappings closed. */
int eb_moe_peers_open(struct eb_ctx *c, struct mstate *st, int map);
void eb_moe_peers_close(struct mstate *st);
/* moe_data.c: fill what goes out and poison what comes in; count what arrived wrong. */
int eb_moe_prepare(struct eb_ctx *c);
int eb_moe_verify(struct eb_ctx *c, uint64_t *wrong);
/* Where a testing aid flips a byte: the tokens received, or the outputs come back (*len 0:
 * nothing arrives here). */
void eb_moe_landing(const struct eb_ctx *c, size_t *off, size_t *len);

#endif
