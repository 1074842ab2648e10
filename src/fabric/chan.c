#include "efabench/chan.h"
#include "efabench/status.h"
#include "core/log.h"
#include "core/shmseg.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL(call, rc)                                                                             \
	eb_err("%s on %s domain %s: %s (%d)", call, c->nic.prov, c->nic.domain,                    \
	       fi_strerror((int)-(rc)), (int)(rc))

/* shm names its segment after the creating process's pid. One left in /dev/shm by a process
 * that died earlier with the pid this one has now makes libfabric (1.17) refuse the endpoint
 * (EBUSY: it takes the creator for alive, since we are), a failure that follows pid reuse, in
 * containers' small pid spaces above all. Before this process's first shm endpoint, every
 * segment with its pid is such a leftover. */
static void sweep_own_segments(const struct eb_nic *nic)
{
	static int swept;
	int n;

	if (swept || strcmp(nic->prov, "shm") != 0)
		return;
	swept = 1;
	n = eb_shmseg_unlink(getpid());
	if (n > 0) /* routine where pids recycle fast: said with -v only */
		eb_dbg(
		    "removed %d shm segment%s that an earlier process with this pid (%d) left in "
		    "/dev/shm",
		    n, n == 1 ? "" : "s", (int)getpid());
}

/* The endpoint, bound to the channel's CQ and AV, enabled, and its address; 0, or after one
 * line the provider's error with nothing left open. */
static int open_ep(struct eb_chan *c, struct fi_info *info)
{
	int rc = fi_endpoint(c->domain, info, &c->ep, NULL);

	if (rc != 0) {
		FAIL("fi_endpoint", rc);
		return rc;
	}
	/* FI_RECV also delivers the remote CQ data of writes aimed at us. */
	rc = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV);
	if (rc == 0)
		rc = fi_ep_bind(c->ep, &c->av->fid, 0);
	if (rc != 0)
		FAIL("fi_ep_bind", rc);
	if (rc == 0 && (rc = fi_enable(c->ep)) != 0)
		FAIL("fi_enable", rc);
	c->namelen = sizeof(c->name);
	if (rc == 0 && (rc = fi_getname(&c->ep->fid, c->name, &c->namelen)) != 0)
		FAIL("fi_getname", rc);
	if (rc != 0)
		fi_close(&c->ep->fid);
	return rc;
}

int eb_chan_open(struct eb_chan *c, const struct eb_nic *nic, int index, int nranks)
{
	struct fi_info *info = nic->info;
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)nranks};
	int rc;

	memset(c, 0, sizeof(*c));
	c->index = index;
	c->nic = *nic;
	c->mr_mode = info->domain_attr->mr_mode;
	c->caps = info->caps;
	c->max_msg = info->ep_attr->max_msg_size;
	c->inject_size = info->tx_attr->inject_size;
	c->ordered_sends = (info->tx_attr->msg_order & FI_ORDER_SAS) != 0;
	c->next_key = 1;
	c->peers = calloc((size_t)nranks, sizeof(*c->peers));
	if (c->peers == NULL) {
		eb_err("out of memory for the address table of channel %d", index);
		return EB_ENOMEM;
	}
	rc = fi_fabric(info->fabric_attr, &c->fabric, NULL);
	if (rc != 0) {
		FAIL("fi_fabric", rc);
		goto free_peers;
	}
	rc = fi_domain(c->fabric, info, &c->domain, NULL);
	if (rc != 0) {
		FAIL("fi_domain", rc);
		goto close_fabric;
	}
	rc = fi_cq_open(c->domain, &cq_attr, &c->cq, NULL);
	if (rc != 0) {
		FAIL("fi_cq_open", rc);
		goto close_domain;
	}
	rc = fi_av_open(c->domain, &av_attr, &c->av, NULL);
	if (rc != 0) {
		FAIL("fi_av_open", rc);
		goto close_cq;
	}
	sweep_own_segments(nic);
	if (open_ep(c, info) == 0)
		return EB_OK;
	fi_close(&c->av->fid);
close_cq:
	fi_close(&c->cq->fid);
close_domain:
	fi_close(&c->domain->fid);
close_fabric:
	fi_close(&c->fabric->fid);
free_peers:
	free(c->peers);
	memset(c, 0, sizeof(*c));
	return EB_EFABRIC;
}

int eb_chan_connect(struct eb_chan *c, const char *names, const uint32_t *lens, int nranks)
{
	int r, rc;

	/* One insert per rank: address lengths may differ between hosts. */
	for (r = 0; r < nranks; r++) {
		rc = fi_av_insert(c->av, names + (size_t)r * EB_ADDR_MAX, 1, &c->peers[r], 0, NULL);
		if (rc != 1) {
			eb_err("fi_av_insert of rank %d on %s domain %s failed (%d, %u-byte "
			       "address)",
			       r, c->nic.prov, c->nic.domain, rc, lens[r]);
			return EB_EFABRIC;
		}
	}
	return EB_OK;
}

void eb_chan_close_ep(struct eb_chan *c)
{
	if (c->ep != NULL && !(c->mr_mode & FI_MR_ENDPOINT)) {
		fi_close(&c->ep->fid);
		c->ep = NULL;
	}
}

void eb_chan_close(struct eb_chan *c)
{
	if (c->ep != NULL)
		fi_close(&c->ep->fid);
	if (c->av != NULL)
		fi_close(&c->av->fid);
	if (c->cq != NULL)
		fi_close(&c->cq->fid);
	if (c->domain != NULL)
		fi_close(&c->domain->fid);
	if (c->fabric != NULL)
		fi_close(&c->fabric->fid);
	free(c->peers);
	memset(c, 0, sizeof(*c));
}
