/* Machine facts as data: what this build and machine offer (versions, GPUs, topology, the RDM
 * entries of every provider, which providers register GPU memory and how). Gathered here,
 * printed and written as JSON by src/report (info_out.h); nothing in this layer prints them. */
#ifndef EFABENCH_FACTS_H
#define EFABENCH_FACTS_H

#include "efabench/fabric.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this build is and what it runs on: the one place the version facts come from. */
struct eb_versions {
	const char *efabench;			 /* "0.5.0" */
	unsigned fi_major, fi_minor;		 /* the libfabric loaded at run time */
	unsigned fi_built_major, fi_built_minor; /* the headers efabench was built against */
	int mpi;				 /* the MPI bootstrap is built in */
	int cuda;				 /* CUDA is built in */
};

void eb_versions_get(struct eb_versions *v);

/* What became of one try to register GPU memory with a provider. */
enum eb_greg_state {
	EB_GREG_NOT_TRIED, /* no GPU here, or this build has no CUDA: why says which */
	EB_GREG_NO_PROV,   /* the provider is not in this libfabric */
	EB_GREG_NO_HMEM,   /* the provider offers no FI_HMEM entry: GPU memory only --staged */
	EB_GREG_FAILED,	   /* no probe buffer, NIC or channel: why says which */
	EB_GREG_TRIED,	   /* dmabuf and hmem_cuda hold the answers */
};

struct eb_gpu_reg {
	char prov[32];
	enum eb_greg_state state;
	int dmabuf;    /* EB_GREG_TRIED: 1 when DMA-BUF registration works, else 0 */
	int hmem_cuda; /* EB_GREG_TRIED: 1 when fi_mr_regattr with FI_HMEM_CUDA works */
	char why[160]; /* one line for every state but a success */
};

/* The one probe of GPU-memory registration: a 64 KiB buffer on `gpu`, a channel on prov's
 * first NIC (chosen by fo, FI_HMEM asked for), then DMA-BUF and FI_HMEM_CUDA tried in turn.
 * Quiet about what it finds (r says it, with a reason); EB_OK when both paths were tried,
 * else the status of what stopped it. Makes `gpu` this process's CUDA device. */
int eb_gpu_reg_probe(const char *prov, const struct eb_fabric_opts *fo, int single_host, int gpu,
		     struct eb_gpu_reg *r);

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
};

/* Everything above; EB_OK, or a negative status after one line (libfabric, memory). */
int eb_facts_gather(struct eb_facts *f);
void eb_facts_free(struct eb_facts *f);

#ifdef __cplusplus
}
#endif

#endif
