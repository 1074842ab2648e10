/* A channel is one NIC: its own fabric, domain, RDM endpoint, completion queue and address
 * vector, with every rank inserted (fi_addr = rank). */
#ifndef EFABENCH_CHAN_H
#define EFABENCH_CHAN_H

#include "efabench/fabric.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EB_ADDR_MAX 256

/* What one operation may carry, from the provider: the endpoint's own options where the
 * runtime has them (FI_OPT_MAX_MSG_SIZE, FI_OPT_MAX_RMA_SIZE, FI_OPT_INJECT_*_SIZE, libfabric
 * >= 1.22; efa-direct's sends stop at the MTU, which only its option says), else fi_info's.
 * Under EFABENCH_TESTING=1, EFABENCH_TEST_MAX_MSG, EFABENCH_TEST_MAX_RMA,
 * EFABENCH_TEST_INJECT_RMA (bytes) and EFABENCH_TEST_NO_SAS=1 shrink what the provider says,
 * so that what efa allows can be run on shm and tcp. */
struct eb_limits {
	size_t max_msg;	   /* largest send */
	size_t max_rma;	   /* largest write; on efa at most 1 GiB (its RDM splits larger writes,
			      each piece with the immediate data) */
	size_t inject_msg; /* sends up to it may go by fi_inject */
	size_t inject_rma; /* writes up to it may go by fi_inject_writedata; 0: none may */
	int sas;	   /* FI_ORDER_SAS: sends land in post order */
};

/* How GPU memory on this channel reaches the NIC, as the provider agreed to it before the
 * endpoint was enabled. */
enum eb_p2p {
	EB_P2P_NONE,	    /* not opened for GPU memory */
	EB_P2P_REQUIRED,    /* FI_OPT_FI_HMEM_P2P = FI_HMEM_P2P_REQUIRED taken: GPUDirect */
	EB_P2P_NO_CUDA,	    /* FI_OPT_CUDA_API_PERMITTED = false taken: no CUDA copies */
	EB_P2P_PROVIDER,    /* the provider has neither option: its own way (shm: CUDA IPC) */
	EB_P2P_CUDA_COPIES, /* the provider says it needs CUDA calls to move GPU memory */
};
const char *eb_p2p_name(enum eb_p2p p);

/* What the channel asks of its provider beyond the entry's attributes. */
struct eb_chan_cfg {
	size_t cq_size; /* entries of the completion queue; 0: the provider's default */
	int nic_only;	/* same-host peers through the NIC too: no shared-memory path */
	int quiet;	/* a provider that refuses peer-to-peer GPU access: EB_ENOTSUP unsaid */
	int block;	/* a CQ with a file descriptor to sleep on (--poll block) */
};

struct eb_chan {
	int index;
	int nic_index;	   /* channels outnumbering NICs share them round-robin */
	struct eb_nic nic; /* borrowed from the engine's NIC list */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	int wait_fd; /* the CQ's, opened with cfg->block; else unset */
	struct fid_av *av;
	fi_addr_t *peers; /* [nranks] */
	/* [nranks] payload bytes posted to each rank (writes, sends, injects): what efabench
	 * put on this NIC, beside what the NIC's own counters saw (eb_chan_sent) */
	uint64_t *sent;
	uint64_t mr_mode;
	uint64_t caps; /* the fi_info's: FI_HMEM when opened for GPU memory */
	struct eb_limits lim;
	size_t cq_size;	   /* asked for; 0: the provider's default */
	enum eb_p2p p2p;   /* GPU memory's path (EB_P2P_NONE without FI_HMEM) */
	int shm_off;	   /* the provider was told not to use shared memory (nic_only) */
	uint64_t next_key; /* for providers without FI_MR_PROV_KEY */
	char name[EB_ADDR_MAX];
	size_t namelen;
};

/* The completions one channel may hold at once when every one of nranks ranks keeps window
 * operations in flight to every other on it, each landing with immediate data, plus a receive
 * per peer: 2 x that, never below what the entry's queues hold (tx + rx size). efa-direct's
 * device CQ drops completions that overflow it. */
size_t eb_cq_size(int nranks, int window, const struct fi_info *info);

/* n more payload bytes posted to rank peer on c. Added by the thread that drives the channel,
 * read by others between points: relaxed, and no slower than a plain add. */
static inline void eb_chan_sent(struct eb_chan *c, int peer, uint64_t n)
{
	__atomic_store_n(&c->sent[peer], __atomic_load_n(&c->sent[peer], __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* cfg may be NULL (the provider's defaults). */
int eb_chan_open(struct eb_chan *c, const struct eb_nic *nic, int index, int nranks,
		 const struct eb_chan_cfg *cfg);
/* names: nranks addresses of EB_ADDR_MAX bytes, lens their lengths. */
int eb_chan_connect(struct eb_chan *c, const char *names, const uint32_t *lens, int nranks);
void eb_chan_close(struct eb_chan *c);
/* The limits of one operation on a channel opened alone on nic and closed again: what a
 * launcher can know before any rank starts; with block, EB_EINVAL after one line where the
 * provider has no CQ to sleep on. */
int eb_chan_probe_limits(const struct eb_nic *nic, int block, struct eb_limits *lim);
/* Close the endpoint alone (not where memory regions are bound to it, FI_MR_ENDPOINT): what was
 * still posted on it goes with it, before its buffers and requests are freed. */
void eb_chan_close_ep(struct eb_chan *c);

#ifdef __cplusplus
}
#endif

#endif
