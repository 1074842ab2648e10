#include "efabench/mr.h"
#include "efabench/status.h"
#include "../core/log.h"

#include <rdma/fi_errno.h>
#include <string.h>

int eb_mr_reg(struct eb_chan *c, void *buf, size_t len, uint64_t access, struct eb_mr *m)
{
	uint64_t key = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (!(access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) && !(c->mr_mode & FI_MR_LOCAL))
		return EB_OK; /* the provider reads local buffers without a registration */
	if (!(c->mr_mode & FI_MR_PROV_KEY))
		key = c->next_key++; /* keys we pick must be unique within the domain */
	rc = fi_mr_reg(c->domain, buf, len, access, 0, key, 0, &m->mr, NULL);
	if (rc != 0) {
		eb_err("fi_mr_reg of %zu bytes on %s domain %s: %s", len, c->nic.prov,
		       c->nic.domain, fi_strerror(-rc));
		return EB_EFABRIC;
	}
	if (c->mr_mode & FI_MR_ENDPOINT) {
		rc = fi_mr_bind(m->mr, &c->ep->fid, 0);
		if (rc == 0)
			rc = fi_mr_enable(m->mr);
		if (rc != 0) {
			eb_err("binding a memory region to the endpoint of %s domain %s: %s",
			       c->nic.prov, c->nic.domain, fi_strerror(-rc));
			goto close_mr;
		}
	}
	m->desc = fi_mr_desc(m->mr);
	m->rkey.key = fi_mr_key(m->mr);
	if (m->rkey.key == FI_KEY_NOTAVAIL) {
		eb_err("%s domain %s returned no key for a memory region", c->nic.prov,
		       c->nic.domain);
		goto close_mr;
	}
	m->rkey.addr = (c->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
	return EB_OK;

close_mr:
	fi_close(&m->mr->fid);
	memset(m, 0, sizeof(*m));
	return EB_EFABRIC;
}

void eb_mr_dereg(struct eb_mr *m)
{
	if (m->mr != NULL)
		fi_close(&m->mr->fid);
	memset(m, 0, sizeof(*m));
}
