/* What a benchmark on the harness is made of: its variants, the context its hooks get, its
 * payloads, and the hooks themselves (harness.h runs them). */
#ifndef EB_BENCH_BENCH_H
#define EB_BENCH_BENCH_H

#include "cmd.h"
#include "efabench/engine.h"
#include "efabench/layout.h"
#include "efabench/mem.h"
#include "efabench/region.h"
#include "efabench/stage.h"
#include "efabench/stats.h"
#include "report/run.h"

#include <stddef.h>
#include <stdint.h>

#define EB_MAX_VARIANTS 8

enum eb_role { EB_ROLE_IDLE, EB_ROLE_INIT, EB_ROLE_TARGET, EB_ROLE_ALL };

/* Which memory a run moves: the variant names follow the seeds' (SinglePin, SingleDMA). */
enum eb_memsel { EB_SEL_HOST, EB_SEL_PINNED, EB_SEL_DEVICE, EB_SEL_STAGED, EB_NSEL };

/* In a variant's tag: the benchmark's run hook times it, not the harness. */
#define EB_SELF_TIMED (1 << 30)
/* In a variant's tag: the run hook times only the whole phase (one sample per call: the phase
 * over its iterations). The harness cuts the timed iterations into --phases phases and reports
 * their spread, never a per-iteration percentile. With --check such a phase stays whole: the
 * benchmark lands each iteration of it in a place of its own and checks them all after it. */
#define EB_PHASE_TIMED (1 << 29)

struct eb_variant {
	const char *name[EB_NSEL]; /* column name in the table, per memory selection */
	enum eb_layout layout;
	enum eb_flow flow;
	int tag; /* the benchmark's own: which way this variant runs (and EB_SELF_TIMED) */
	int ref; /* 1 + the index of the variant it is compared with (a ratio table); 0: none */
};

struct eb_ctx {
	struct eb_boot *boot; /* NULL when the benchmark runs alone */
	struct eb_engine *e;  /* NULL unless the benchmark uses the fabric */
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
	/* Memory: the payloads' kind, staged or not, this rank's GPU (-1: none), how the
	 * payloads were registered, and the copies of staged transfers. */
	enum eb_memsel sel;
	enum eb_mem_kind mem;
	int staged, serial, gpu;
	int user_bound;	  /* the process was bound to fewer CPUs than are online when it started */
	char gpu_pci[16]; /* its PCI address, "" when unknown */
	enum eb_reg_path path;
	struct eb_stage *stage;
	struct eb_land *land; /* staged RMA targets: arrivals copied to the GPU as they land */
};

/* A payload: what the benchmark fills and checks (pay), and what the NIC moves: the same
 * buffer, or a pinned bounce buffer when staged. */
struct eb_payload {
	struct eb_mem pay, bounce;
	int staged;
	struct eb_region reg; /* what the NIC moves, registered (eb_payload_reg) */
};

/* Allocate len bytes of the run's memory kind (plus the bounce buffer when staged). */
int eb_payload_alloc(struct eb_ctx *c, struct eb_payload *p, size_t len, const char *what);
void eb_payload_free(struct eb_payload *p);
/* What the NIC reads and writes, and its address at off. */
struct eb_mem *eb_payload_nic(struct eb_payload *p);
char *eb_payload_at(struct eb_payload *p, size_t off);
/* Register what the NIC moves on every channel and gather every rank's keys (collective, as
 * eb_engine_reg_mem); the registration path is recorded for the header. */
int eb_payload_reg(struct eb_ctx *c, struct eb_payload *p, uint64_t access, int exchange);
/* Register on one channel only, for local use (sends, receives). */
int eb_payload_reg_one(struct eb_ctx *c, struct eb_payload *p, int chan, uint64_t access);
/* Fill or check [off, off + len) of p in pieces, answering the bootstrap's liveness questions
 * between them: a rank busy with a large buffer still counts as there. */
int eb_payload_fill(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
		    const struct eb_pattern *pat);
uint64_t eb_payload_check(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
			  const struct eb_pattern *pat);
/* Staged runs: the n armed transfers that move [off..] of p copy through the GPU (outgoing:
 * before they post; receives: as chunks arrive). A no-op when not staged. */
int eb_payload_stage(struct eb_ctx *c, struct eb_payload *p, struct eb_xfer *xs, int n);
/* Staged RMA targets: from now on, chunks written into p from any source are copied to the GPU
 * as they land; slot > 0 puts source s's data at s * slot. eb_payload_landed waits for those
 * copies (serial: makes them) once every chunk has arrived. */
int eb_payload_land(struct eb_ctx *c, struct eb_payload *p, size_t slot);
int eb_payload_landed(struct eb_ctx *c, uint64_t deadline);
void eb_payload_unland(struct eb_ctx *c);

/* What the harness sets up for a benchmark that drives the loop itself. */
#define EB_USES_FABRIC 1u /* the engine, its channels on the NICs near the rank's GPU */

struct eb_bench {
	const char *metric; /* one line: how t and Gbps are defined for it */
	/* A benchmark whose schedule is not a sweep of sizes x variants (ipc's launch shapes,
	 * matrix and doctor's tournaments of pairs, queue's producer counts) drives the one loop
	 * (loop.h) itself: the harness gives it the context (ranks, GPU, the engine where `uses`
	 * asks) and takes its status; none of the hooks below is used then. */
	int (*drive)(struct eb_ctx *c);
	unsigned uses; /* EB_USES_* */
	int nvariants;
	struct eb_variant variants[EB_MAX_VARIANTS];
	int one_way; /* t is half of each timed iteration (ping-pong) */
	/* Allocate and register for the largest size; collective. */
	int (*setup)(struct eb_ctx *c);
	void (*teardown)(struct eb_ctx *c);
	/* Fill what this rank sends for c->epoch, poison what it receives; collective-free. */
	int (*prepare)(struct eb_ctx *c);
	/* One timed iteration, i counting from 0 within the phase, timed by the harness... */
	int (*iter)(struct eb_ctx *c, long i);
	/* ...or, instead, n iterations at once that time themselves: samples (NULL during warm-up)
	 * gets n seconds per iteration. */
	int (*run)(struct eb_ctx *c, long n, double *samples);
	/* Optional: facts of its own for the header (rank 0, after setup). */
	void (*facts)(const struct eb_ctx *c, struct eb_head *h);
	/* Optional: variants that depend on the options (then variants[] is unused). */
	int (*variants_of)(const struct eb_opts *o, const struct eb_variant **vars);
	/* Wrong words in what this rank received for c->epoch. */
	uint64_t (*verify)(struct eb_ctx *c);
	/* Where the data this rank receives lands, and at which offset (for fault injection). */
	const struct eb_payload *(*landing)(struct eb_ctx *c, size_t *off);
	/* Optional: figures of its own for a point's record (rank 0, once it is measured). */
	void (*extra)(const struct eb_ctx *c, const struct eb_point *p, struct eb_rec *rec);
};

/* A benchmark's hooks, for functions named <p>_setup, <p>_teardown, ... <p>_landing. */
#define EB_BENCH_HOOKS(p)                                                                          \
	.setup = p##_setup, .teardown = p##_teardown, .prepare = p##_prepare, .iter = p##_iter,    \
	.verify = p##_verify, .landing = p##_landing

/* Chunk and window: --chunk/--window when given, else what measured best for the provider:
 * 512K x 16 on the socket providers (tcp;ofi_rxm writes of 1 MiB and more run ~40 % slower on
 * loopback), 256M x 4 for GPU memory on shm (CUDA IPC), 1M x 4 on the others. */
void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window);

/* The benchmark's variants whose layout is in --layout's mask (0: all); returns how many. */
int eb_harness_select(const struct eb_bench *b, const struct eb_opts *o,
		      const struct eb_variant **vars);

/* Distinct NICs rank 0 drives in the variant (BusBW's denominator counts these). */
int eb_variant_nics(const struct eb_engine *e, const struct eb_variant *v, int nranks);

/* Bytes a measuring rank injects per iteration of the variant. */
double eb_variant_bytes(const struct eb_variant *v, uint64_t size, int nranks);

#endif
