/* doctor on EFA (doctor_efa.c): this libfabric's efa provider and what an EFA run meets first
 * on this host, and the facts they are judged by (instance types, known faults). */
#ifndef EB_BENCH_DOCTOR_EFA_H
#define EB_BENCH_DOCTOR_EFA_H

#include "checks.h"
#include "efabench/fabric.h"

/* An instance type's EFA NICs and their link speed (AWS's published figures); 0 when the type
 * is not known. */
struct eb_instance {
	const char *type;
	int nics;
	double gbps;
};
const struct eb_instance *eb_instance_of(const char *type); /* NULL when not known */
/* This host's instance type (DMI product name, under $EB_SYSFS_ROOT), "" when unknown. */
void eb_instance_type(char *type, size_t len);

/* A known fault of efa in libfabric major.minor.revision, or NULL: 1.18.0's device RDMA write
 * (no remote write access, a receive packet leaked per write; fixed in 1.18.1), where the
 * device writes (device_write: 1 yes, 0 no, -1 unknown). */
const char *eb_efa_known_fault(int major, int minor, int revision, int device_write);

/* The version a provider's fi_info names (prov_version: libfabric's own providers encode
 * major * 100 + minor and revision * 10). */
void eb_prov_version(uint32_t prov_version, int *major, int *minor, int *revision);

/* The checks, on this rank's host, for a run on prov with nchan channels and host_ranks ranks
 * here: the fabric a run takes, efa's version and device RDMA, the variables that matter,
 * /dev/shm's room for the channels' shared-memory segments, each NIC's link speed against
 * the instance type's. Only /dev/shm applies to shm; nothing to other providers. */
void eb_doctor_efa(const struct eb_opts *o, const char *prov, int single_host, int nchan,
		   int host_ranks, struct eb_checks *s);

#endif
