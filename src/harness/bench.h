/* What a benchmark is made of: the points it measures, its hooks over one iteration, and what
 * it records of each point. The harness (harness.h) owns the schedule: it runs every point's
 * warm-up and aligned timed iterations through the one loop, verifies, computes statistics,
 * sums #wrong over every rank, gathers each rank's figures and hands records to src/report. */
#ifndef EB_HARNESS_BENCH_H
#define EB_HARNESS_BENCH_H

#include "cmd.h"
#include "efabench/engine.h"
#include "efabench/layout.h"
#include "efabench/mem.h"
#include "efabench/region.h"
#include "efabench/stage.h"
#include "efabench/stats.h"
#include "report/rec.h"
#include "report/sheet.h"

#include <stddef.h>
#include <stdint.h>

#define EB_MAX_VARIANTS 8

enum eb_role { EB_ROLE_IDLE, EB_ROLE_INIT, EB_ROLE_TARGET, EB_ROLE_ALL };

/* Which memory a run moves: the variant names follow the seeds' (SinglePin, SingleDMA). */
enum eb_memsel { EB_SEL_HOST, EB_SEL_PINNED, EB_SEL_DEVICE, EB_SEL_STAGED, EB_NSEL };

/* Who talks to whom in a point's turns, where the benchmark names no turn hook of its own. */
enum eb_flow {
	EB_FLOW_ALL,	/* every rank at once (in a sweep: every rank -> every other rank) */
	EB_FLOW_PAIRS,	/* rank 0 -> rank k, one k at a time, k = 1..N-1 */
	EB_FLOW_FANOUT, /* rank 0 -> every rank k at once */
	EB_FLOW_ONE,	/* rank 0 alone, the others idle */
};

#define EB_MAX_SPANS 8

/* How a point is timed and what rank 0 keeps of it (struct eb_pt's flags). */
enum {
	/* The run hook times n iterations at once (GPU clocks, one launch for many), not the
	 * loop; with --check, one at a time. */
	EB_PT_SELF_TIMED = 1u << 0,
	/* The run hook times only the whole phase: one sample per phase. The timed iterations
	 * are cut into --phases phases and their spread is reported, never a per-iteration
	 * percentile; with --check such a phase stays whole (the benchmark lands each
	 * iteration in a place of its own and checks them all after it). */
	EB_PT_PHASE_TIMED = 1u << 1,
	/* Every rank's samples reach rank 0 (m->samples): the point's pooled statistics and
	 * figures across ranks per iteration. */
	EB_PT_SAMPLES = 1u << 2,
	/* Every rank waits at a barrier before checking what arrived (the writers are on
	 * other ranks and nothing else tells the target they are done). */
	EB_PT_SETTLE = 1u << 3,
	/* Every iteration (warm-up too) starts at a barrier, not only the phase's first. */
	EB_PT_ALIGN_EACH = 1u << 4,
	/* A header point: its figures are facts of the run, stated in the header and the JSON
	 * head before the first table (a floor, the copy engines' time). */
	EB_PT_HEAD = 1u << 5,
	/* Every rank's report hook may hand rank 0 bytes of its own (eb_report_bytes). */
	EB_PT_GATHER = 1u << 6,
};

/* A point: one thing measured. Its coordinates are the benchmark's own (a size, a variant, a
 * launch shape, an initiator, a direction...); its hooks read them from c->pt. A point runs
 * in turns: in each, the turn hook gives every rank its role and peer, and each rank that
 * measures in it (role INIT or ALL) gives one group of samples. */
struct eb_pt {
	uint64_t size; /* S: bytes a rank sends to one peer per iteration (0: not sized) */
	int var;       /* the benchmark's first coordinate (a variant, shape, initiator...) */
	int step;      /* its second (a direction, a phase, a kind...) */
	int turns;     /* groups of ranks that take turns, 1 at least */
	long warmup, iters;
	unsigned flags;	   /* EB_PT_* */
	double scale;	   /* the figures' seconds per sample times this (0.5: one way); 0: 1 */
	enum eb_flow flow; /* roles in each turn, without a turn hook */
	const char *name;  /* the progress line's */
	const struct eb_variant *variant; /* the sweep's (c->var while it runs) */
	/* A point that measures something else than the benchmark's operation (a header point
	 * timing the copy engines) names hooks of its own: its enter, leave, turn, prepare,
	 * iter, run, verify, report, landing and record replace the benchmark's (eb_pt_hooks).
	 * NULL: the benchmark's. */
	const struct eb_bench *own;
};

/* What one rank did in one turn of a point, as every rank reports it. */
struct eb_turn_rep {
	int32_t active;	    /* it measured: role INIT or ALL */
	int32_t peer;	    /* -1: none, or all at once */
	uint64_t wrong;	    /* wrong words it found, warm-up included */
	double secs;	    /* the turn's wall time on this rank */
	struct eb_stats st; /* its samples' statistics (scaled), when active */
	double own[4];	    /* the benchmark's own figures of this rank (its report hook) */
	struct eb_stats span[EB_MAX_SPANS]; /* each span's statistics (n 0: none) */
	uint64_t own_len;		    /* bytes of its own it reported (EB_PT_GATHER) */
};

/* One measuring rank of one turn. */
struct eb_group {
	int rank, peer, turn;
	struct eb_stats st; /* seconds per iteration (per phase's iteration when phase-timed) */
};

/* A series over the groups that measured it: every group's samples pooled, the largest over
 * the groups in each iteration (every iteration starts at a barrier, so the i-th sample of
 * every group is the same iteration), and the groups with the largest and the smallest p50. */
struct eb_over {
	struct eb_stats all;  /* pooled (samples gathered, or one group alone; else n 0) */
	struct eb_stats each; /* per iteration, the slowest group's (gathered and aligned) */
	int slow, fast;	      /* indexes in eb_meas.rep; -1: no report has samples */
};

/* A stage of a sampled operation (a put): the time from one of its events to another, each
 * event stamped where the operation passed it (eb_event), on whichever rank and thread. A part
 * lies inside the nearest stage before it that is no part: the stages that are no parts add up
 * to the operation, and the parts of one say where its time went. */
struct eb_op_stage {
	const char *name;
	int from, to;	   /* indexes into the benchmark's events */
	const char *bound; /* what bounds the operation where this stage dominates (verdict) */
	int part;
};

#define EB_MAX_STAGES 24

/* Where a point's sampled operations spent their time (rank 0): each stage's statistics over
 * the samples that passed both its events, and the whole operation's (first event to last). */
struct eb_stages {
	struct eb_stats st[EB_MAX_STAGES];
	struct eb_stats whole;
	long samples;	    /* operations sampled */
	double clock_us;    /* the clocks' uncertainty across ranks and GPU (0: one clock) */
	const char *clocks; /* how they were aligned */
};

/* The most CPU time a hypervisor took from one host in a point's visits (steal.h): seconds
 * summed over its CPUs and their share of its CPUs' time; read 0: no host could tell. */
struct eb_steal_meas {
	int read;
	double secs, pct;
	char host[64];
};

/* A point as rank 0 has it after every rank reported. */
struct eb_meas {
	const struct eb_pt *pt;
	int nranks, turns;
	struct eb_turn_rep *rep; /* [turn][rank] */
	struct eb_group *groups; /* the active reports, turn by turn, rank by rank */
	int ngroups;
	struct eb_stats all;  /* every group's samples pooled (EB_PT_SAMPLES or one rank alone) */
	struct eb_stats each; /* per iteration, the slowest group's (EB_PT_SAMPLES, aligned) */
	int slow, fast; /* the reports (eb_meas.rep) with the largest and the smallest p50 (-1) */
	struct eb_over span[EB_MAX_SPANS]; /* each span over the groups that timed it */
	double *samples; /* [group][per] when gathered; per: iterations (or phases) */
	long per;
	int phases;	/* > 0: phase-timed: every statistic is of phases' seconds per iteration */
	uint64_t wrong; /* every rank's, every turn */
	/* EB_PT_GATHER: each rank's bytes of its own, [turn][rank], and their lengths */
	char **blob;
	size_t *blob_len;
	char *blob_data;
	/* Rank 0: what each rank's NICs carried in the point (nics.h), nnic lines */
	struct eb_nic_meas *nic;
	int nnic;
	struct eb_stages stages;    /* rank 0, where the benchmark names stages */
	struct eb_steal_meas steal; /* rank 0 */
	char bound[16], why[320];   /* rank 0: what bounds it and why (verdict.h) */
};

struct eb_bench;
struct eb_nic_meas;
struct eb_sweep;
struct eb_spans;
struct eb_blob;
struct eb_events;
struct eb_clocks;
struct eb_trace;

struct eb_ctx {
	const struct eb_bench *b;
	struct eb_boot *boot; /* NULL when the benchmark runs alone */
	struct eb_engine *e;  /* NULL unless the benchmark uses the fabric */
	const struct eb_opts *o;
	const void *own; /* the subcommand's own options (o->own), as the benchmark's struct */
	int rank, nranks;
	enum eb_role role;
	int peer; /* the other rank of the current turn; -1 when idle or talking to all */
	int turn;
	char label[64]; /* the turn hook's name for the turn, for the progress line ("": none) */
	const struct eb_pt *pt;
	const struct eb_variant *var; /* the sweep's current variant (NULL elsewhere) */
	struct eb_sweep *sweep;	      /* the sweep's state, where its hooks run */
	struct eb_spans *spans;	      /* the current turn's spans (NULL: warm-up, none kept) */
	struct eb_blob *blob;	      /* the current report's own bytes (EB_PT_GATHER) */
	struct eb_events *events;     /* the current point's events (NULL: warm-up, none kept) */
	struct eb_clocks *clocks;     /* every rank's clock against rank 0's (with events) */
	struct eb_trace *trace;	      /* rank 0, --trace */
	double gpu_clock_unc_ns;      /* a GPU's clock against the host's: the benchmark's */
	size_t bytes;		      /* pt->size */
	size_t chunk;		      /* bytes per operation, resolved from opts and the provider */
	size_t chunk_asked; /* what opts and the provider's tuning gave, where chunk is less: the
			       provider's largest write (0: chunk is that) */
	int window;	    /* chunks in flight per channel, likewise */
	long iters;	    /* of the current phase */
	uint64_t epoch;
	void *priv; /* the benchmark's state */
	/* Memory: the payloads' kind, staged or not, this rank's GPU (-1: none), how the
	 * payloads were registered, and the copies of staged transfers. */
	enum eb_memsel sel;
	enum eb_mem_kind mem;
	int staged, serial, gpu;
	int failed;	  /* teardown: the run failed, so stop at once */
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
/* The same in memory the processes of this host can map (eb_mem_alloc_shared), never staged. */
int eb_payload_alloc_shared(struct eb_ctx *c, struct eb_payload *p, size_t len, const char *what);
void eb_payload_free(struct eb_payload *p);
/* What the NIC reads and writes, and its address at off. */
struct eb_mem *eb_payload_nic(struct eb_payload *p);
char *eb_payload_at(struct eb_payload *p, size_t off);
/* Register what the NIC moves on every channel and gather every rank's keys (collective, as
 * eb_engine_reg_mem); the registration path is recorded for the header. */
int eb_payload_reg(struct eb_ctx *c, struct eb_payload *p, unsigned use, int exchange);
/* Register on one channel only, for local use (sends, receives). */
int eb_payload_reg_one(struct eb_ctx *c, struct eb_payload *p, int chan, unsigned use);
/* Fill or check [off, off + len) of p in pieces, answering the bootstrap's liveness questions
 * between them: a rank busy with a large buffer still counts as there. */
int eb_payload_fill(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
		    const struct eb_pattern *pat);
uint64_t eb_payload_check(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
			  const struct eb_pattern *pat);
/* Bytes of S-byte slots that a timed phase's writes go round, so that the check after it sees
 * each write still in flight in bytes of its own: `in_flight` slots (or, spread, as many as
 * fit: one per write), within `room` bytes and never more than the phase's `writes`. */
size_t eb_payload_slots(size_t bytes, size_t room, int spread, size_t in_flight, long writes);
/* Staged runs: the n armed transfers that move [off..] of p copy through the GPU (outgoing:
 * before they post; receives: as chunks arrive). A no-op when not staged. */
int eb_payload_stage(struct eb_ctx *c, struct eb_payload *p, struct eb_xfer *xs, int n);
/* Staged RMA targets: from now on, chunks written into p from any source are copied to the GPU
 * as they land; slot > 0 puts source s's data at s * slot. eb_payload_landed waits for those
 * copies (serial: makes them) once every chunk has arrived. */
int eb_payload_land(struct eb_ctx *c, struct eb_payload *p, size_t slot);
int eb_payload_landed(struct eb_ctx *c, uint64_t deadline);
void eb_payload_unland(struct eb_ctx *c);

/* A sweep variant: how a column of the seeds' table moves its bytes. */
struct eb_variant {
	const char *name[EB_NSEL]; /* column name in the table, per memory selection */
	enum eb_layout layout;
	enum eb_flow flow;
	int tag;	   /* the benchmark's own (which way this variant runs) */
	unsigned pt_flags; /* EB_PT_SELF_TIMED, EB_PT_PHASE_TIMED */
	int ref; /* 1 + the index of the variant it is compared with (a ratio table); 0: none */
};

/* What the sweep's hooks (sweep.h) read of a benchmark whose points are its sizes x
 * variants: the variants (or variants_of the options) and how t is read. */
struct eb_sweep_def {
	int nvariants;
	struct eb_variant variants[EB_MAX_VARIANTS];
	int (*variants_of)(const struct eb_opts *o, const struct eb_variant **vars);
	int one_way; /* t is half of each timed iteration (ping-pong) */
};

/* What the harness opens for a benchmark before its setup. */
#define EB_USES_FABRIC 1u /* the engine, its channels on the NICs near the rank's GPU */
/* The head of its header and JSON (eb_fabric_head): a benchmark on the fabric, off the sweep,
 * whose payloads are eb_payload's and whose points run the options' warm-up and iterations. */
#define EB_USES_HEAD 2u

/* A benchmark: its points and the hooks the schedule calls for them. The sweep (sweep.h)
 * provides the plan, header and records of the benchmarks whose points are sizes x variants;
 * the others name their own. */
struct eb_bench {
	const char *metric; /* how its figures are defined, for the header */
	unsigned uses;	    /* EB_USES_* */
	int min_ranks;	    /* fewer ranks are refused before anything is opened (0: any) */
	/* Its rows are known before any runs (the progress line can tell the time left). */
	int ahead;
	/* The spans its iterations time (eb_span), by index; at most EB_MAX_SPANS. */
	const char *const *spans;
	int nspans;
	/* The sweep's, where its hooks are the sweep's. */
	const struct eb_sweep_def *sweep;
	/* The events it stamps on a sample of its operations (eb_event), and the stages between
	 * them (at most EB_MAX_STAGES): the schedule sets them side by side and says where an
	 * operation's time goes. */
	const char *const *events;
	int nevents;
	const struct eb_op_stage *stages;
	int nstages;

	/* The points of row `row` (0, 1, ...) into pts (at most max), their count (0: no more
	 * rows), or a negative status. Called on every rank just before the row runs, so a row
	 * may depend on what earlier rows measured (collectives allowed). The points of a row
	 * take turns --rounds times. */
	int (*plan)(struct eb_ctx *c, int row, struct eb_pt *pts, int max);
	/* Optional: do the points fit what one operation may carry (the limits every rank
	 * agreed on, of provider and fabric nic)? EB_EINVAL, after one line naming the limit
	 * when say, if not. Asked by the launcher's probe before any rank starts, and by every
	 * rank before its setup (rank 0 says it). */
	int (*fits)(const struct eb_opts *o, const struct eb_limits *lim, const struct eb_nic *nic,
		    int say);
	/* The benchmark's state, zeroed in c->priv before setup and freed after teardown. */
	size_t priv_size;
	/* Allocate and register for every point (collective); free. */
	int (*setup)(struct eb_ctx *c);
	void (*teardown)(struct eb_ctx *c);
	/* Optional, after setup: what rank 0's header needs of every rank (collective). */
	int (*gather)(struct eb_ctx *c);
	/* Optional: before the first point of a run of points with the same var, and after its
	 * last (failed: a rank failed, stop at once). Every rank enters together and leaves
	 * once every rank is done with the var (the harness's barriers). Collective. */
	int (*enter)(struct eb_ctx *c);
	int (*leave)(struct eb_ctx *c, int failed);
	/* Optional: every rank's role and peer in turn c->turn (NULL: the point's flow). */
	void (*turn)(struct eb_ctx *c);
	/* Fill what this rank sends for c->epoch, poison what it receives; collective-free. */
	int (*prepare)(struct eb_ctx *c);
	/* One timed iteration, i counting from 0 within the phase, timed by the loop... */
	int (*iter)(struct eb_ctx *c, long i);
	/* ...or n iterations that time themselves: samples (NULL during warm-up) gets *got
	 * seconds (per iteration, or one per phase when phase-timed). */
	int (*run)(struct eb_ctx *c, long n, double *samples, long *got);
	/* Add the wrong words in what this rank received for c->epoch to *wrong; a status (a
	 * check that could not run is an error, not a count). */
	int (*verify)(struct eb_ctx *c, uint64_t *wrong);
	/* Optional: this rank's own figures of turn c->turn, once its last phase ran (and, on a
	 * point flagged EB_PT_GATHER, bytes of its own for rank 0: eb_report_bytes). */
	void (*report)(struct eb_ctx *c, struct eb_turn_rep *rep);
	/* Testing aid (--corrupt-at): where what this rank receives lands, its offset and
	 * length (NULL: nothing lands here). */
	const struct eb_payload *(*landing)(struct eb_ctx *c, size_t *off, size_t *len);
	/* Rank 0: facts of its own for the header and JSON (after setup and gather). */
	void (*facts)(const struct eb_ctx *c, struct eb_sheet *s);
	/* Rank 0: a point's record (every figure of it); a point whose figures are facts of the
	 * run rather than a row (a header point) states them in s and leaves r empty. */
	void (*record)(const struct eb_ctx *c, const struct eb_meas *m, struct eb_sheet *s,
		       struct eb_rec *r);
	/* Rank 0, optional: the table's rows from the records of a row, n > 0 (NULL: a row of
	 * cols per record). */
	void (*row)(const struct eb_ctx *c, struct eb_sheet *s, const struct eb_rec *const *recs,
		    int n);
	/* Its flat table: a row per record (NULL: no such table). The header and the table's
	 * head print before the first row with a point that is not a header point. */
	const struct eb_colspec *cols;
	int ncols;
	/* Rank 0, optional: after the last row, tables and notes of its own over the records;
	 * a status every rank then leaves with (EB_EVERIFY: a check failed). */
	int (*close)(const struct eb_ctx *c, struct eb_sheet *s);
};

/* The hooks that run point pt: its own, else the benchmark's. */
static inline const struct eb_bench *eb_pt_hooks(const struct eb_bench *b, const struct eb_pt *pt)
{
	return pt->own != NULL ? pt->own : b;
}

/* A span: add secs to span k (of b->spans) in the current turn, as an iteration of it (or a
 * sample of a stage). Kept per rank with the warm-up dropped, and summarised like the point's
 * own time (eb_meas.span). */
void eb_span(struct eb_ctx *c, int k, double secs);
/* Event ev (of b->events) of sampled operation id (the same id on every rank that stamps it)
 * at t_ns on this rank's CLOCK_MONOTONIC (eb_now_ns), by its thread tid (0: the rank's own).
 * Kept during timed phases only. */
void eb_event(struct eb_ctx *c, int ev, uint64_t id, uint64_t t_ns, int tid);
/* In a report hook of a point flagged EB_PT_GATHER: len bytes of this rank's own that reach
 * rank 0 (eb_meas.blob); EB_ENOMEM. */
int eb_report_bytes(struct eb_ctx *c, const void *data, size_t len);

/* Rank 0: the channels' facts (provider, fabric, NICs, link, same-host path, limits of one
 * operation, GPU memory's path), for the header and JSON settings of every benchmark on the
 * fabric; the sweep states them itself. */
void eb_fabric_facts(const struct eb_ctx *c, struct eb_sheet *s);
/* Rank 0: the head the harness writes for a benchmark on the fabric that is not on the sweep
 * (whose own holds these and more), before the benchmark's facts: its name and summary; JSON
 * "settings" (bench, ranks, launcher, provider, channel NICs, warm-up, iterations, chunk,
 * window, how waits poll and the count that chose it, timer, libfabric, memory); the
 * channels' facts; the payloads' memory and registration. */
void eb_fabric_head(const struct eb_ctx *c, struct eb_sheet *s);
/* Rank 0: the chunk, and what was asked where the provider's largest write cut it. */
void eb_chunk_fact(const struct eb_ctx *c, struct eb_sheet *s);
/* The link speed BusBW divides by: 0 (BusBW '-') where no NIC carried the bytes, every peer
 * being on this host and reached through shared memory. */
double eb_fabric_link_for_busbw(const struct eb_engine *e);

/* Chunk and window: --chunk/--window when given, else what measured best for the provider
 * (the harness resolves them into c->chunk and c->window for every fabric benchmark). */
void eb_harness_tune(const struct eb_opts *o, const char *prov, size_t *chunk, int *window);

/* A benchmark's hooks, for functions named <p>_setup, <p>_teardown, ... <p>_landing. */
#define EB_BENCH_HOOKS(p)                                                                          \
	.setup = p##_setup, .teardown = p##_teardown, .prepare = p##_prepare, .iter = p##_iter,    \
	.verify = p##_verify, .landing = p##_landing

#endif
