/* A benchmark run as the report layer sees it: its settings resolved to names and numbers, its
 * variants, and a point per (size, variant) with the statistics measured. The harness fills it;
 * the functions below alone turn it into the seeds' table, the ratio table and the files. */
#ifndef EB_REPORT_RUN_H
#define EB_REPORT_RUN_H

#include "efabench/stats.h"
#include "head.h"
#include "rec.h"
#include "table.h"

#include <stdint.h>

#define EB_RUN_VARS  8
#define EB_RUN_CHANS 64

/* Who talks to whom in a variant's timed phase. */
enum eb_flow {
	EB_FLOW_PAIRS,	/* rank 0 -> rank k, one k at a time, k = 1..N-1 */
	EB_FLOW_FANOUT, /* rank 0 -> every rank k at once */
	EB_FLOW_ALL,	/* every rank -> every other rank at once */
};

struct eb_run_var {
	const char *name;   /* the column, as the seeds name it (SinglePin, MultiDMA...) */
	const char *layout; /* single, split, round-robin */
	enum eb_flow flow;
	int nics; /* distinct NICs a measuring rank drives: BusBW's denominator */
	int ref;  /* the selected variant its Gbps is compared with; -1: none */
};

/* One (variant, size). */
struct eb_point {
	uint64_t size;
	int var;	     /* index into the run's variants */
	double bytes;	     /* a measuring rank injects per iteration */
	double t_s;	     /* mean seconds per iteration (one-way for ping-pongs) */
	double gbps;	     /* 8 * bytes / t_s / 1e9 */
	double busbw;	     /* percent of link * NICs used; < 0 when the link speed is unknown */
	struct eb_stats all; /* every timed iteration of every group, seconds */
	/* PAIRS: pair 0 -> k at k - 1; FANOUT: the one group; ALL: rank r at r */
	struct eb_stats *groups;
	int ngroups;
	/* > 0: the variant timed whole phases; all and groups hold one sample per phase (its
	 * seconds per iteration), and the means are weighted by the phases' iterations */
	int phases;
	uint64_t wrong;
	struct eb_rec own; /* the benchmark's own figures for this point */
};

struct eb_run {
	const char *bench, *summary, *metric;
	int ranks;
	const char *launcher, *provider;
	double link_gbps; /* per NIC, 0 when unknown */
	int nchan;
	const char *nics[EB_RUN_CHANS]; /* each channel's NIC */
	long warmup, iters;
	long rounds; /* the variants of a size took turns this many times */
	uint64_t chunk;
	int window, check;
	double timeout_s;
	int yield, poll_asked, host_ranks, host_cores;
	const char *cpu_map; /* NULL: not given */
	int tsc;	     /* iterations timed by the TSC, scaled per phase */
	const char *libfabric;
	const char *mem; /* "host", "pinned", "device" */
	int staged, serial;
	const char *registration; /* how payloads were registered (the most particular of all) */
	const int32_t *gpus;	  /* each rank's GPU, -1 for none */
	struct eb_head own;	  /* the benchmark's own header lines */
	int nvars;
	struct eb_run_var vars[EB_RUN_VARS];
	int nsizes;
	struct eb_point *pts; /* [nsizes][nvars] */
	const char *csv, *json;
	struct eb_table table;
};

/* 1 when the point's mean time sits well above its median (mean > EB_SKEW x p50 over at
 * least 3 iterations timed one by one): a few stalls moved the mean its Gbps comes from. */
#define EB_SKEW 1.5
int eb_point_skewed(const struct eb_point *p);

/* The header lines and the table's head; a row per size as it completes; then the ratio table,
 * the footer and the files asked for (EB_OK or EB_ESYS). */
void eb_run_header(struct eb_run *r);
void eb_run_row(struct eb_run *r, int size_index);
int eb_run_files(struct eb_run *r, uint64_t wrong);

#endif
