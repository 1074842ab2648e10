/* efabench doctor's checks: what each rank runs on its own host (doctor_host.c) and the record
 * they fill, gathered to rank 0 with the measured ones (doctor.c). */
#ifndef EB_BENCH_CHECKS_H
#define EB_BENCH_CHECKS_H

#include "harness/cmd.h"
#include "report/doctor_view.h"

#include <stdint.h>

void eb_check_add(struct eb_checks *s, const char *name, int verdict, double value, double limit,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void eb_checks_free(struct eb_checks *s);

/* What doctor takes beyond the common options. */
struct dopts {
	long expect_nics, expect_gpus; /* < 0: not checked (nics: unless the instance implies) */
	double min_link, min_nvlink, max_floor_us;
	uint64_t size;
	long iters, rounds;
	int no_measure, brief, dry_run;
};

#define EB_DOC_MAX_NICS 32

/* Host checks: libfabric, the provider, the NICs and their links, locked memory, huge
 * pages; nics[] (at most EB_DOC_MAX_NICS) the NICs named by --nics, else the provider's.
 * pins: 1 when memory registration pins pages here (locked-memory limit applies). */
void eb_doctor_host(const struct eb_opts *o, const struct dopts *d, int single_host,
		    struct eb_checks *s, struct eb_dnic *nics, int *nnics, char *prov,
		    size_t prov_len);

/* GPU checks of this host: count, NVLinks, nearest NICs, GPU memory registration, then
 * (measure) the copy engines between every GPU pair and each GPU's floor. */
void eb_doctor_gpus(const struct eb_opts *o, const struct dopts *d, const char *prov,
		    int single_host, int measure, struct eb_checks *s);

#endif
