/* efabench moe's options and per-rank state, which its files share: moe.c (the hooks),
 * moe_setup.c (regions, engines, proxy threads), moe_op.c (one dispatch or combine by
 * each initiator), moe_data.c (what is sent and how it is checked), moe_pool.c (CPU
 * producers), moe_figures.c and moe_facts.c (what rank 0 reports). Each declares its own
 * functions in a header of its name; the model (routing, hosts, plan) is in model/. */
#ifndef EB_BENCH_MOE_STATE_H
#define EB_BENCH_MOE_STATE_H

#include "gpu/floor.h"
#include "harness/bench.h"
#include "model/plan.h"
#include "moe_pool.h"
#include "efabench/a2av.h"
#include "efabench/proxy_thread.h"
#include "moe_work.h"
#include "report/sheet.h"

enum { MOE_DECODE, MOE_PREFILL };
enum { MOE_BF16, MOE_FP8 };
enum { INIT_GPU, INIT_CPU, INIT_A2AV, INIT_MPI, INIT_N }; /* who moves the bytes */
#define MOE_CE INIT_N				 /* the copy engines' header points: their var */
enum { MOE_SPAN_CROSS };			 /* the leg between hosts, timed alone (plan.h) */
enum { OP_DISPATCH, OP_COMBINE, OP_PAIR, OP_N }; /* what a timed iteration is */
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
	int cpu_producers;    /* CPU producer threads: --producers, else one per proxy thread */
	uint64_t piece;	      /* bytes a packed write carries at most: --piece, else the chunk */
	int64_t pieces[2];    /* the same in tokens (dispatch) and rows (combine), 1 at least */
	int ce_wanted;	      /* the copy engines are timed (moe_ce.h) */
	struct mside side[2]; /* [INIT_GPU], [INIT_CPU] */
	struct eb_proxy **px; /* the current initiator's (side[init].px; NULL: not proxied) */
	struct eb_moe_work w;
	struct eb_moe_items dev[2][2]; /* each leg's item arrays on the GPU */
	int have_dev;
	struct eb_moe_pool *pool;
	uint64_t *tickets, *tickets_dev; /* the producers' counters (moe_work.h) */
	int producers;			 /* of the current initiator */
	int queues;			 /* the queues they push to (eb_moe_queues) */
	void *block;			 /* expect, host, vals, sum and tickets, one allocation */
	uint64_t *expect;    /* [op][leg][ranks] signal sums awaited per source (cumulative) */
	uint64_t runs[2][2]; /* each leg's runs so far: what same-host flags are set to */
	struct eb_a2av a2a;  /* the baseline's writes and what it awaits (cumulative) */
	int *mpi_v;	     /* MPI_Alltoallv's [op][leg][scount, sdispl, rcount, rdispl][ranks] */
	char *host;	     /* a host copy of a region for checking GPU memory */
	uint16_t *vals;	     /* an expert output as bf16, for filling and checking */
	float *sum; /* sums got and expected, a slot's sum, then a scratch row per selection */
	int init;   /* the current initiator */
	int op;	    /* the current timed op: dispatch, combine or the pair */
	uint64_t wrong_tokens, wrong_sums;
	uint64_t puts_mark; /* the proxy threads' puts when the current point started */
	double base[OP_N];  /* rank 0: the all-to-all-v's p50 per op (0: not measured) */
	int have_ce;	    /* the copy engines were timed (GPU memory, same-host peers) */
	double ce_s[2];	    /* their time for the same-host bytes: the slowest rank's p50 */
	double ce_bytes[2]; /* the same-host bytes per rank (mean) */
	struct mce {	    /* while their points run: the streams, each peer and its bytes */
		struct eb_mem_ce *ce;
		char **to;     /* [n] same-host peers mapped here */
		uint64_t *len; /* [op][n] this rank's bytes to each */
		const char *from;
		int n;
	} ce;
	int crossed[OP_N]; /* the op's leg between hosts is timed (pair: both ops'; plan.h) */
	uint64_t stamps, stamp_id; /* iterations stamped; the current one's sample (--stages) */
	uint64_t leg_start; /* when the current leg began: its op's start, or the leg before's in */
	uint64_t *made;	    /* w.made as the host reads it (moe_stages.h) */
	/* GPU producers: the GPU clock around a timed phase, and the made stamps of its
	 * iterations, moved onto the host's clock and handed over at its end */
	struct eb_gpu_clock gclk;
	struct moe_late {
		uint64_t id, t;
		int ev;
		/* the packed stamp: base (the leg's start, host ns) + t (ns), at most the pushed
		 * stamp `cap` (GPU time); base 0: t is a GPU time */
		uint64_t base, cap;
	} * late;
	size_t nlate, late_cap;
};

#endif
