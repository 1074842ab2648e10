/* Machine facts as data: what this build and machine offer (versions, GPUs, topology, the RDM
 * entries of every provider, which providers register GPU memory and how). Gathered here,
 * printed and written as JSON by src/report (info_out.h); nothing in this layer prints them. */
#ifndef EFABENCH_FACTS_H
#define EFABENCH_FACTS_H

#include "efabench/fabric.h"
#include "efabench/gpu_reg.h"
#include "efabench/versions.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One RDM entry of fi_getinfo, as reported. */
struct eb_prov_row {
	char prov[32], domain[64], fabric[64], addr_format[24];
	int msg, rma, rma_event, hmem, ordered_sas, usable;
	size_t cq_data;
	uint64_t mr_mode;
	double link_gbps; /* 0 when unknown */
};

/* The names of mr_mode's bits efabench honours, '|'-joined ("none" when no bit is set). */
void eb_mr_mode_str(uint64_t mr_mode, char *buf, size_t len);

struct eb_nic_fact {
	char domain[64], pci[16]; /* pci: "" when the NIC has none */
	int dist;		  /* enum eb_topo_dist from the GPU */
};

#define EB_FACTS_NICS 16

struct eb_gpu_fact {
	char name[128], pci[16];
	int sms, numa;
	int dmabuf, gdr;			/* what the driver reports: 1, 0, -1 when unknown */
	struct eb_nic_fact nics[EB_FACTS_NICS]; /* of the default provider, nearest first */
	int nnics;
};

/* What a run across hosts would open here without options: the provider, and for each
 * channel its NIC as a (domain, fabric) pair. */
struct eb_run_fact {
	char prov[32];
	struct {
		char domain[64], fabric[64];
	} nics[EB_FACTS_NICS];
	int nnics;
	char others[128]; /* the provider's other fabrics, comma-joined ("" when none) */
};

#define EB_FACTS_PROVS 5 /* efa, shm, verbs, tcp, sockets: those registration is tried on */

struct eb_facts {
	struct eb_versions v;
	int hwloc;			 /* built with hwloc: the three counts below hold */
	int packages, numa_nodes, cores; /* -1 when hwloc could not load the topology */
	char gpu_prov[32];		 /* the default provider, whose NICs gpus[] list */
	struct eb_gpu_fact *gpus;	 /* one per GPU CUDA sees */
	int ngpus;
	struct eb_prov_row *rows; /* every provider's RDM entries, one row per distinct entry */
	int nrows;
	struct eb_gpu_reg reg[EB_FACTS_PROVS]; /* tried on GPU 0 */
	struct eb_run_fact run;
};

/* Everything above; EB_OK, or a negative status after one line (libfabric, memory). */
int eb_facts_gather(struct eb_facts *f);
void eb_facts_free(struct eb_facts *f);

#ifdef __cplusplus
}
#endif

#endif
