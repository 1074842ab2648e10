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

struct eb_chan {
	int index;
	int nic_index;	   /* channels outnumbering NICs share them round-robin */
	struct eb_nic nic; /* borrowed from the engine's NIC list */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t *peers; /* [nranks] */
	uint64_t mr_mode;
	uint64_t caps; /* the fi_info's: FI_HMEM when opened for GPU memory */
	size_t max_msg;
	int ordered_sends; /* FI_ORDER_SAS: chunks of one message land in post order */
	uint64_t next_key; /* for providers without FI_MR_PROV_KEY */
	char name[EB_ADDR_MAX];
	size_t namelen;
	size_t inject_size; /* tx_attr's: writes up to it may go by fi_inject_writedata */
};

int eb_chan_open(struct eb_chan *c, const struct eb_nic *nic, int index, int nranks);
/* names: nranks addresses of EB_ADDR_MAX bytes, lens their lengths. */
int eb_chan_connect(struct eb_chan *c, const char *names, const uint32_t *lens, int nranks);
void eb_chan_close(struct eb_chan *c);
/* Close the endpoint alone (not where memory regions are bound to it, FI_MR_ENDPOINT): what was
 * still posted on it goes with it, before its buffers and requests are freed. */
void eb_chan_close_ep(struct eb_chan *c);

#ifdef __cplusplus
}
#endif

#endif
