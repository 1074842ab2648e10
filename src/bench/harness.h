/* The harness owns loops, timing, verification and printing; a benchmark only says how to
 * set up, fill, run one iteration and check. */
#ifndef EB_BENCH_HARNESS_H
#define EB_BENCH_HARNESS_H

#include "cmd.h"
#include "efabench/engine.h"
#include "efabench/layout.h"
#include "efabench/stats.h"

#include <stddef.h>
#include <stdint.h>

#define EB_MAX_VARIANTS 4

struct eb_rec;
struct eb_result;

/* Who talks to whom in one timed phase. */
enum eb_flow {
	EB_FLOW_PAIRS,	/* rank 0 -> rank k, one k at a time, k = 1..N-1 */
	EB_FLOW_FANOUT, /* rank 0 -> every rank k at once */
	EB_FLOW_ALL,	/* every rank -> every other rank at once */
};

enum eb_role { EB_ROLE_IDLE, EB_ROLE_INIT, EB_ROLE_TARGET, EB_ROLE_ALL };

struct eb_variant {
	const char *name; /* column name in the table */
	enum eb_layout layout;
	enum eb_flow flow;
};

struct eb_ctx {
	struct eb_engine *e;
	const struct eb_opts *o;
	int rank, nranks;
	enum eb_role role;
	int peer; /* the other rank of the current pair; -1 when idle or talking to all */
	const struct eb_variant *var;
	size_t bytes; /* S of the current size */
	size_t chunk; /* bytes per operation, resolved from opts and the provider */
	int window;   /* chunks in flight per channel, likewise */
	long iters;   /* of the current phase */
	uint64_t epoch;
	void *priv; /* the benchmark's state */
};

struct eb_bench {
	const char *metric; /* one line: how t and Gbps are defined for it */
	int nvariants;
	struct eb_variant variants[EB_MAX_VARIANTS];
	int one_way; /* t is half of each timed iteration (ping-pong) */
	/* Allocate and register for the largest size; collective. */
	int (*setup)(struct eb_ctx *c);
	void (*teardown)(struct eb_ctx *c);
	/* Fill what this rank sends for c->epoch, poison what it receives; collective-free. */
	int (*prepare)(struct eb_ctx *c);
	/* One timed iteration, i counting from 0 within the phase. */
	int (*iter)(struct eb_ctx *c, long i);
	/* Wrong words in what this rank received for c->epoch. */
	uint64_t (*verify)(struct eb_ctx *c);
	/* Where the data this rank receives lands (for fault injection). */
	void *(*landing)(struct eb_ctx *c);
	/* Optional: figures of its own for a result record (rank 0, after the harness's). */
	void (*extra)(const struct eb_ctx *c, const struct eb_result *res, struct eb_rec *rec);
};

/* A benchmark's hooks, for functions named <p>_setup, <p>_teardown, ... <p>_landing. */
#define EB_BENCH_HOOKS(p)                                                                          \
	.setup = p##_setup, .teardown = p##_teardown, .prepare = p##_prepare, .iter = p##_iter,    \
	.verify = p##_verify, .landing = p##_landing

/* Chunk and window: --chunk/--window when given, else what measured best for the provider:
 * 512K x 16 on the socket providers (tcp;ofi_rxm writes of 1 MiB and more run ~40 % slower on
 * loopback), 1M x 4 on the others. */
void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window);

/* The benchmark's variants whose layout is in the layouts mask (0: all); returns how many. */
int eb_harness_select(const struct eb_bench *b, unsigned layouts, const struct eb_variant **vars);

/* Before the embedded launcher forks: there are two ranks or more, the provider and NICs exist
 * (checked in a child process). The rank count, or minus an exit status after one line. */
int eb_harness_probe(const struct eb_opts *o);

/* Run the benchmark on this rank; rank 0 prints and writes files. Returns a status. */
int eb_harness_run(const struct eb_bench *b, const struct eb_opts *o, struct eb_boot *boot);

/* Results rank 0 keeps for one (variant, size). */
struct eb_result {
	uint64_t size;
	const struct eb_variant *var;
	double t_s;	     /* mean seconds per iteration (one-way for ping-pongs) */
	double gbps;	     /* 8 * bytes a measuring rank injects per iteration / t_s / 1e9 */
	double busbw;	     /* percent of link * NICs used; < 0 when the link speed is unknown */
	int nics;	     /* distinct NICs a measuring rank drives in this variant */
	struct eb_stats all; /* every timed iteration of every group, seconds */
	/* PAIRS: pair 0 -> k at k - 1; FANOUT: the one group; ALL: rank r at r */
	struct eb_stats *groups;
	int ngroups;
	uint64_t wrong;
};

/* Distinct NICs rank 0 drives in the variant (BusBW's denominator counts these). */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks);

/* Bytes a measuring rank injects per iteration of the variant. */
double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks);

#endif
