/* efabench doctor's ranks: what they tell each other, and the NIC measurement (doctor_net.c):
 * agree on the NICs every rank can use, measure them in tournament rounds, blame the slow ones. */
#ifndef EB_BENCH_DOCTOR_NET_H
#define EB_BENCH_DOCTOR_NET_H

#include "checks.h"
#include "efabench/boot.h"
#include "bench/pairs/pairs.h"

#include <stdint.h>

/* What each rank tells the others before measuring: enough to agree on the NICs to use. */
struct summary {
	char host[64];
	int32_t nnics, blocked; /* blocked: a FAIL that makes measuring pointless or harmful */
	struct eb_dnic nic[EB_DOC_MAX_NICS];
};

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
	struct eb_checks mine; /* this rank's host and GPU checks */
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
/* Rank 0: the plan (--dry-run), and every check's line, the tally and the records; the
 * report returns EB_EVERIFY when a check failed. */
void eb_doctor_plan(const struct dctx *x, struct eb_sheet *s);
int eb_doctor_report(const struct dctx *x, struct eb_sheet *s);

#endif
