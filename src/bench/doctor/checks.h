/* efabench doctor's checks: what each rank runs on its own host (doctor_host.c) and the record
 * they fill, gathered to rank 0 with the measured ones (doctor.c). */
#ifndef EB_BENCH_CHECKS_H
#define EB_BENCH_CHECKS_H

#include "harness/cmd.h"

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

/* First line of a file (/proc, /sys), "" when unreadable. */
void eb_doctor_first_line(const char *path, char *buf, size_t len);

void eb_check_add(struct eb_checks *s, const char *name, int verdict, double value, double limit,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void eb_checks_free(struct eb_checks *s);

/* What doctor takes beyond the common options. */
struct dopts {
	long expect_nics, expect_gpus; /* < 0: not checked (nics: unless the instance implies) */
	double min_link, min_nvlink, max_floor_us;
	uint64_t size;
	long iters, peers; /* peers: tournament rounds at most */
	int no_measure, brief, dry_run;
};

#define EB_DOC_MAX_NICS 32

/* Host checks: libfabric, the provider, the NICs and their links, locked memory, huge
 * pages, and on efa and shm theirs (doctor_efa.h) for host_ranks ranks here; nics[] (at most
 * EB_DOC_MAX_NICS) the NICs named by --nics, else the provider's. */
void eb_doctor_host(const struct eb_opts *o, const struct dopts *d, int single_host, int host_ranks,
		    struct eb_checks *s, struct eb_dnic *nics, int *nnics, char *prov,
		    size_t prov_len);

#define EB_DOC_MAX_GPUS 16

/* This host's GPUs as one rank per host knows them. */
struct eb_dgpus {
	int n;
	char pci[EB_DOC_MAX_GPUS][16];
	int links[EB_DOC_MAX_GPUS];	/* active NVLinks; -1 when NVML does not say */
	double gbytes[EB_DOC_MAX_GPUS]; /* per link and direction */
};

/* GPU checks of this host: count, NVLinks, nearest NICs, GPU memory registration (g: what
 * they found, for the measurements of doctor_gpu_points.c). */
void eb_doctor_gpus(const struct eb_opts *o, const struct dopts *d, const char *prov,
		    int single_host, struct eb_dgpus *g, struct eb_checks *s);

#endif
