#include "efabench/chan.h"
#include "efabench/status.h"
#include "core/log.h"
#include "core/shmseg.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Endpoint options of later libfabric releases by their values, which fi_endpoint.h keeps
 * fixed, so that a build on older headers still asks a runtime that has them. */
enum {
	OPT_CUDA_API_PERMITTED = 10,	  /* 1.18 */
	OPT_SHARED_MEMORY_PERMITTED = 11, /* 1.20 */
	OPT_MAX_MSG_SIZE = 12,		  /* 1.22, and the rest */
	OPT_MAX_RMA_SIZE = 14,
	OPT_INJECT_MSG_SIZE = 16,
	OPT_INJECT_RMA_SIZE = 18,
};
#if FI_MAJOR_VERSION > 1 || FI_MINOR_VERSION >= 22
_Static_assert(OPT_MAX_RMA_SIZE == FI_OPT_MAX_RMA_SIZE &&
		   OPT_INJECT_RMA_SIZE == FI_OPT_INJECT_RMA_SIZE &&
		   OPT_SHARED_MEMORY_PERMITTED == FI_OPT_SHARED_MEMORY_PERMITTED,
	       "libfabric's endpoint option values moved");
#endif

/* efa RDM cuts a write into segments of at most 1 GiB, each posted with the write's
 * immediate data: a target would count several arrivals for one write. */
#define EFA_MAX_RMA ((size_t)1 << 30)
#define CQ_MAX	    ((size_t)1 << 22)

#define FAIL(call, rc)                                                                             \
	eb_err("%s on %s domain %s: %s (%d)", call, c->nic.prov, c->nic.domain,                    \
	       fi_strerror((int)-(rc)), (int)(rc))

/* shm names its segment after the creating process's pid. One left in /dev/shm by a process
 * that died earlier with the pid this one has now makes libfabric (1.17) refuse the endpoint
 * (EBUSY: it takes the creator for alive, since we are), a failure that follows pid reuse, in
 * containers' small pid spaces above all. Before this process's first shm endpoint, every
 * segment with its pid is such a leftover; efa's RDM endpoint opens an shm endpoint of its
 * own for same-host peers. */
static void sweep_own_segments(const struct eb_nic *nic)
{
	static int swept;
	int n;

	if (swept || (strcmp(nic->prov, "shm") != 0 && strcmp(nic->prov, "efa") != 0))
		return;
	swept = 1;
	n = eb_shmseg_unlink(getpid());
	if (n > 0) /* routine where pids recycle fast: said with -v only */
		eb_dbg(
		    "removed %d shm segment%s that an earlier process with this pid (%d) left in "
		    "/dev/shm",
		    n, n == 1 ? "" : "s", (int)getpid());
}

const char *eb_p2p_name(enum eb_p2p p)
{
	static const char *const names[] = {"none", "p2p-required", "no-cuda-calls", "provider",
					    "cuda-copies"};

	return names[p];
}

size_t eb_cq_size(int nranks, int window, const struct fi_info *info)
{
	size_t n = (size_t)(nranks > 0 ? nranks : 1), w = (size_t)(window > 0 ? window : 1);
	size_t need = 2 * (2 * n * w + n), floor = 0;

	if (info != NULL && info->tx_attr != NULL && info->rx_attr != NULL)
		floor = info->tx_attr->size + info->rx_attr->size;
	if (need < floor)
		need = floor;
	return need < CQ_MAX ? need : CQ_MAX;
}

/* A size_t endpoint option, where the runtime has it. */
static int get_size(struct eb_chan *c, int name, size_t *v)
{
	size_t got = 0, len = sizeof(got);

	if (fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, name, &got, &len) != 0 || len != sizeof(got))
		return 0;
	*v = got;
	return 1;
}

/* A testing aid's smaller value, under EFABENCH_TESTING=1 only. */
static void shrink(const char *name, size_t *v)
{
	const char *t = getenv("EFABENCH_TESTING"), *s = getenv(name);
	char *end;
	unsigned long long x;

	if (t == NULL || strcmp(t, "1") != 0 || s == NULL || *s == '\0')
		return;
	x = strtoull(s, &end, 10);
	if (*end == '\0' && x < *v)
		*v = (size_t)x;
}

/* The limits of one operation: the endpoint's options, else the entry's attributes. */
static void read_limits(struct eb_chan *c, const struct fi_info *info)
{
	struct eb_limits *l = &c->lim;
	const char *no_sas = getenv("EFABENCH_TEST_NO_SAS"), *t = getenv("EFABENCH_TESTING");

	l->max_msg = info->ep_attr->max_msg_size;
	l->max_rma = info->ep_attr->max_msg_size;
	l->inject_msg = info->tx_attr->inject_size;
	l->inject_rma = info->tx_attr->inject_size;
	l->sas = (info->tx_attr->msg_order & FI_ORDER_SAS) != 0;
	(void)get_size(c, OPT_MAX_MSG_SIZE, &l->max_msg);
	(void)get_size(c, OPT_MAX_RMA_SIZE, &l->max_rma);
	(void)get_size(c, OPT_INJECT_MSG_SIZE, &l->inject_msg);
	(void)get_size(c, OPT_INJECT_RMA_SIZE, &l->inject_rma);
	if (strcmp(c->nic.prov, "efa") == 0 && l->max_rma > EFA_MAX_RMA)
		l->max_rma = EFA_MAX_RMA;
	shrink("EFABENCH_TEST_MAX_MSG", &l->max_msg);
	shrink("EFABENCH_TEST_MAX_RMA", &l->max_rma);
	shrink("EFABENCH_TEST_INJECT_RMA", &l->inject_rma);
	if (t != NULL && strcmp(t, "1") == 0 && no_sas != NULL && strcmp(no_sas, "1") == 0)
		l->sas = 0;
}

/* GPU memory must reach the NIC peer to peer: ask before the endpoint is enabled. A provider
 * that knows the option and refuses it would move GPU memory through host bounce buffers
 * (efa >= 1.18 without nvidia-peermem or DMA-BUF): EB_ENOTSUP after one line. */
static int ask_p2p(struct eb_chan *c, int quiet)
{
	int req = FI_HMEM_P2P_REQUIRED, rc;

	if (!(c->caps & FI_HMEM))
		return EB_OK;
	rc = fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &req, sizeof(req));
	if (rc == 0) {
		c->p2p = EB_P2P_REQUIRED;
		return EB_OK;
	}
	if (rc == -FI_ENOPROTOOPT || rc == -FI_ENOSYS) {
		_Bool no = 0; /* the option takes a bool */

		rc = fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT, OPT_CUDA_API_PERMITTED, &no,
			       sizeof(no));
		c->p2p = rc == 0		? EB_P2P_NO_CUDA
			 : rc == -FI_EOPNOTSUPP ? EB_P2P_CUDA_COPIES
						: EB_P2P_PROVIDER;
		if (c->p2p != EB_P2P_CUDA_COPIES || strcmp(c->nic.prov, "efa") != 0)
			return EB_OK;
	}
	c->p2p = EB_P2P_CUDA_COPIES;
	if (!quiet)
		eb_err("%s domain %s (libfabric %u.%u) cannot reach GPU memory peer to peer "
		       "(GPUDirect RDMA: no nvidia-peermem or DMA-BUF?): it would copy it through "
		       "host memory; use --staged to measure that path explicitly",
		       c->nic.prov, c->nic.domain, FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	return EB_ENOTSUP;
}

/* Same-host peers through the NIC: the provider's shared-memory path off, where it has the
 * switch (1.20+). Whether it took is recorded, for the header. */
static void ask_nic_only(struct eb_chan *c, const struct fi_info *info)
{
	_Bool no = 0;

	c->shm_off = !(info->caps & FI_LOCAL_COMM) ||
		     fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT, OPT_SHARED_MEMORY_PERMITTED, &no,
			       sizeof(no)) == 0;
}

/* The endpoint, bound to the channel's CQ and AV, enabled, and its address; 0, or after one
 * line the provider's error with nothing left open. */
static int open_ep(struct eb_chan *c, struct fi_info *info, const struct eb_chan_cfg *cfg)
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
	if (rc == 0 && (rc = ask_p2p(c, cfg != NULL && cfg->quiet)) != EB_OK) {
		fi_close(&c->ep->fid);
		return rc;
	}
	if (rc == 0 && cfg != NULL && cfg->nic_only)
		ask_nic_only(c, info);
	if (rc == 0 && (rc = fi_enable(c->ep)) != 0)
		FAIL("fi_enable", rc);
	if (rc == 0)
		read_limits(c, info);
	c->namelen = sizeof(c->name);
	if (rc == 0 && (rc = fi_getname(&c->ep->fid, c->name, &c->namelen)) != 0)
		FAIL("fi_getname", rc);
	if (rc != 0)
		fi_close(&c->ep->fid);
	return rc;
}

/* --poll block where the provider's CQs have no file descriptor: a choice it cannot honour. */
static int refuse_block(const struct eb_chan *c, const char *call, int rc)
{
	eb_err("--poll block: %s domain %s gives no file descriptor to wait on (%s: %s); use "
	       "--poll yield",
	       c->nic.prov, c->nic.domain, call, fi_strerror(-rc));
	return EB_EINVAL;
}

static int close_refused(struct eb_chan *c, const char *call, int rc)
{
	fi_close(&c->cq->fid);
	c->cq = NULL;
	return refuse_block(c, call, rc);
}

/* The channel's CQ; with block, one whose wait object is a file descriptor (c->wait_fd). */
static int open_cq(struct eb_chan *c, struct fi_cq_attr *attr, int block)
{
	int rc;

	attr->wait_obj = block ? FI_WAIT_FD : FI_WAIT_NONE;
	rc = fi_cq_open(c->domain, attr, &c->cq, NULL);
	if (rc != 0 && block) { /* the wait object refused, or the size? */
		attr->wait_obj = FI_WAIT_NONE;
		if (fi_cq_open(c->domain, attr, &c->cq, NULL) == 0)
			return close_refused(c, "fi_cq_open with FI_WAIT_FD", rc);
		attr->wait_obj = FI_WAIT_FD;
	}
	if (rc != 0 && attr->size > 0) { /* more than the provider allows: its own size */
		eb_warn("%s domain %s refused a completion queue of %zu entries (%s): opened at "
			"its default size, which completions in flight may overflow",
			c->nic.prov, c->nic.domain, attr->size, fi_strerror(-rc));
		attr->size = c->cq_size = 0;
		rc = fi_cq_open(c->domain, attr, &c->cq, NULL);
	}
	if (rc != 0) {
		FAIL("fi_cq_open", rc);
		return EB_EFABRIC;
	}
	if (!block)
		return EB_OK;
	rc = fi_control(&c->cq->fid, FI_GETWAIT, &c->wait_fd);
	if (rc == 0) { /* an empty queue must be one to wait on (efa refuses CQs it cannot arm) */
		struct fid *cq = &c->cq->fid;
		int tw = fi_trywait(c->fabric, &cq, 1);

		if (tw != FI_SUCCESS && tw != -FI_EAGAIN)
			return close_refused(c, "fi_trywait", tw);
		return EB_OK;
	}
	return close_refused(c, "fi_control FI_GETWAIT", rc);
}

int eb_chan_open(struct eb_chan *c, const struct eb_nic *nic, int index, int nranks,
		 const struct eb_chan_cfg *cfg)
{
	struct fi_info *info = nic->info;
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)nranks};
	int rc, refused = EB_EFABRIC;

	memset(c, 0, sizeof(*c));
	c->index = index;
	c->nic = *nic;
	c->mr_mode = info->domain_attr->mr_mode;
	c->caps = info->caps;
	c->next_key = 1;
	c->cq_size = cfg != NULL ? cfg->cq_size : 0;
	cq_attr.size = c->cq_size;
	c->peers = calloc((size_t)nranks, sizeof(*c->peers));
	c->sent = calloc((size_t)nranks, sizeof(*c->sent));
	if (c->peers == NULL || c->sent == NULL) {
		free(c->peers);
		free(c->sent);
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
	rc = open_cq(c, &cq_attr, cfg != NULL && cfg->block);
	if (rc != EB_OK) {
		refused = rc; /* EB_EINVAL where --poll block cannot be honoured */
		goto close_domain;
	}
	rc = fi_av_open(c->domain, &av_attr, &c->av, NULL);
	if (rc != 0) {
		FAIL("fi_av_open", rc);
		goto close_cq;
	}
	sweep_own_segments(nic);
	rc = open_ep(c, info, cfg);
	if (rc == 0)
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
	free(c->sent);
	memset(c, 0, sizeof(*c));
	return rc == EB_ENOTSUP ? EB_ENOTSUP : refused;
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

int eb_chan_probe_limits(const struct eb_nic *nic, int block, struct eb_limits *lim)
{
	struct eb_chan c;
	int rc = eb_chan_open(&c, nic, 0, 1, &(struct eb_chan_cfg){.quiet = 1, .block = block});

	if (rc != EB_OK)
		return rc;
	*lim = c.lim;
	eb_chan_close(&c);
	return EB_OK;
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
	free(c->sent);
	memset(c, 0, sizeof(*c));
}
