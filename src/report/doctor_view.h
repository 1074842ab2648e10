/* What `efabench doctor` found, as plain data for the report layer: each rank's checks with
 * their verdicts, and the plan of what it measures. */
#ifndef EB_REPORT_DOCTOR_VIEW_H
#define EB_REPORT_DOCTOR_VIEW_H

#include <stdint.h>

enum eb_verdict { EB_PASS, EB_WARN, EB_FAIL, EB_SKIP };

const char *eb_verdict_name(int v); /* "PASS", "WARN", "FAIL", "SKIP" */

/* One check's outcome: fixed size, so that ranks can gather them. */
struct eb_check {
	char name[32];	    /* "memlock", "link rail1", "bandwidth rail1", "GPU 2 floor" */
	int32_t verdict;    /* enum eb_verdict */
	float value, limit; /* the figure and the threshold it was held to; 0 when none */
	char why[152];	    /* one line a person can act on */
};

/* A rank's checks, growing. */
struct eb_checks {
	struct eb_check *c;
	int n, cap;
};

/* A NIC as a rank sees it, for the others to agree on which ones to measure. */
struct eb_dnic {
	char name[40];
	int32_t up; /* 1 up and offered by the provider, 0 not usable, -1 no link to speak of */
	float gbps; /* link rate (--link-gbps, else the NIC's), 0 when unknown */
};

struct eb_doctor_view {
	int n;			     /* ranks */
	const char *prov;	     /* "" when none is usable */
	const char **host;	     /* [n] */
	const struct eb_checks *per; /* [n]: every rank's checks (rank 0, after measuring) */
	/* The plan */
	int no_measure, brief;
	double min_link, min_nvlink, max_floor_us;
	long rounds_asked, iters;
	uint64_t size;
	const struct eb_dnic *nic; /* rank 0's NICs */
	int nnics;
	/* What ran */
	int measured; /* the NICs were measured */
	int rounds, nch;
	double elapsed_s;
	const char *skip; /* why nothing was measured */
	const char *left; /* NICs left out: unusable on some rank ("" none) */
	const char *csv, *json;
};

/* The plan (--dry-run). */
void eb_doctor_plan(const struct eb_doctor_view *v);
/* Every check's line, the tally and the files; returns the number of FAILs (a file that could
 * not be written counts as one). */
int eb_doctor_report(const struct eb_doctor_view *v);

#endif
