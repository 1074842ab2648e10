/* efabench doctor's ranks: what they tell each other, and the NIC measurement (doctor_net.c):
 * agree on the NICs every rank can use, measure them in tournament rounds, blame the slow ones. */
#ifndef EB_BENCH_DOCTOR_NET_H
#define EB_BENCH_DOCTOR_NET_H

#include "checks.h"
#include "efabench/boot.h"
#include "bench/pairs/pairs.h"
#include "harness/bench.h"

#include <stdint.h>

/* What each rank tells the others before measuring: enough to agree on the NICs to use. */
struct summary {
	char host[64];
	int32_t nnics, blocked; /* blocked: a FAIL that makes measuring pointless or harmful */
	int32_t ngpus;		/* its host's GPUs, on the rank that checks them (else 0) */
	struct eb_dnic nic[EB_DOC_MAX_NICS];
};

/* Rank 0: a source GPU's slowest copy so far, on one rank's host. */
struct eb_dcopy {
	double worst, gb, peak; /* GB/s over the NVLink peak, GB/s, the peak (0: unknown) */
	int worst_b;		/* the peer GPU, -1: none yet */
	int failed;		/* a copy from it failed or could not map its peer */
};

/* A point's var: the NIC cells (pairs.h), every rank's checks, GPU copies and floors. */
enum { DOC_PAIRS, DOC_CHECKS, DOC_COPY, DOC_FLOOR };

/* A measured channel as each rank names it, for rank 0's lines. */
struct chan_name {
	char name[40];
	float gbps;
};

struct dctx {
	struct eb_pairs *pairs; /* first: the pair cells' hooks find it here */
	const struct eb_opts *o;
	const struct dopts *d;
	struct eb_boot *boot;
	int n, me, single;
	struct eb_checks mine;	 /* this rank's host and GPU checks */
	struct eb_dgpus gpus;	 /* its host's GPUs, on the rank that checks them */
	int maxg;		 /* GPUs measured: the most any host has (0: none measured) */
	int gpu_status;		 /* the current GPU point's outcome on this rank */
	struct eb_dcopy *copies; /* rank 0: [rank] the current source GPU's slowest copy */
	struct summary *all;
	char prov[32];
	char nics[512];		 /* the --nics list to measure ("" without --nics) */
	int nch;		 /* channels measured on every rank, 0: none */
	char skip[200];		 /* why nothing was measured */
	char left[200];		 /* NICs left out: unusable on some rank */
	struct chan_name *names; /* [rank][chan] */
	struct eb_engine e;	 /* on the agreed NICs, while measuring */
	int opened;
	const struct eb_cell *grid; /* rank 0: [(chan * n + src) * n + dst], once measured */
	int rounds;
	uint64_t t0;
	double elapsed_s;
	struct eb_checks *per; /* rank 0: every rank's checks */
};

uint64_t eb_doctor_deadline(const struct dctx *x);
/* The NICs every rank can use: by name with --nics, else the fewest any rank has. */
void eb_doctor_agree(struct dctx *x);
/* An engine on the agreed NICs, every rank's names of them, and the pair cells to measure
 * them in tournament rounds (collective). */
int eb_doctor_open(struct dctx *x);
void eb_doctor_close(struct dctx *x, int failed);
/* Rank 0: blame a NIC slow with every peer, warn of one slow with some. */
void eb_doctor_judge(struct dctx *x);
/* Rank 0: hosts with fewer usable NICs than the most any host has. */
void eb_doctor_compare_nics(struct dctx *x);
/* GPU measurements (doctor_gpu_points.c): the header points up to x->maxg GPUs (copies between
 * every ordered pair, then floors), each on that file's own hooks: the role of a rank in them
 * (the checking rank of each host with those GPUs), the run, the report and rank 0's checks. */
int eb_doctor_gpu_points(const struct dctx *x, struct eb_pt *pts, int max);
/* Rank 0: the plan (--dry-run), and every check's line, the tally and the records; the
 * report returns EB_EVERIFY when a check failed. */
void eb_doctor_plan(const struct dctx *x, struct eb_sheet *s);
int eb_doctor_report(const struct dctx *x, struct eb_sheet *s);

#endif
