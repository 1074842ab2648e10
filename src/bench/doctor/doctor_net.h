/* efabench doctor's ranks: what they tell each other, and the NIC measurement (doctor_net.c):
 * agree on the NICs every rank can use, measure them in tournament rounds, blame the slow ones. */
#ifndef EB_BENCH_DOCTOR_NET_H
#define EB_BENCH_DOCTOR_NET_H

#include "checks.h"
#include "efabench/boot.h"
#include "report/matrix_view.h"

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
	const struct eb_opts *o;
	const struct dopts *d;
	struct eb_boot *boot;
	int n, me, single;
	struct summary *all;
	char prov[32];
	char nics[512];		 /* the --nics list to measure ("" without --nics) */
	int nch;		 /* channels measured on every rank, 0: none */
	char skip[200];		 /* why nothing was measured */
	char left[200];		 /* NICs left out: unusable on some rank */
	struct chan_name *names; /* [rank][chan] */
	struct eb_cell *grid;	 /* [(chan * n + src) * n + dst] */
	int rounds;
	double elapsed_s;
	struct eb_checks *per; /* rank 0: every rank's checks */
};

uint64_t eb_doctor_deadline(const struct dctx *x);
/* The NICs every rank can use: by name with --nics, else the fewest any rank has. */
void eb_doctor_agree(struct dctx *x);
/* Tournament rounds on the agreed NICs; every rank gets the grid and everyone's names. */
int eb_doctor_measure(struct dctx *x);
/* Rank 0: blame a NIC slow with every peer, warn of one slow with some. */
void eb_doctor_judge(struct dctx *x);
/* Rank 0: hosts with fewer usable NICs than the most any host has. */
void eb_doctor_compare_nics(struct dctx *x);

#endif
