/* Does a provider register GPU memory, and by which path? The one probe info, doctor and the
 * harness ask. */
#include "efabench/chan.h"
#include "efabench/gpu_reg.h"
#include "efabench/versions.h"
#include "efabench/mem.h"
#include "efabench/mr.h"
#include "efabench/status.h"

#include <stdio.h>
#include <string.h>

static int failed(struct eb_gpu_reg *r, int rc, const char *what)
{
	r->state = EB_GREG_FAILED;
	snprintf(r->why, sizeof(r->why), "%s: %s", what, eb_strerror(rc));
	return rc;
}

/* NO_PROV or NO_HMEM when prov has no FI_HMEM entry; EB_OK when it has one. */
static int has_hmem(const char *prov, struct eb_gpu_reg *r)
{
	struct fi_info *list = NULL;
	struct eb_versions v;
	int rc;

	eb_versions_get(&v);
	rc = eb_fabric_query(prov, 1, &list);
	if (rc == EB_OK && list != NULL) {
		fi_freeinfo(list);
		return EB_OK;
	}
	if (rc == EB_OK)
		rc = eb_fabric_query(prov, 0, &list);
	if (rc != EB_OK) /* fi_getinfo said why */
		return failed(r, rc, "fi_getinfo failed");
	if (list == NULL) {
		r->state = EB_GREG_NO_PROV;
		snprintf(r->why, sizeof(r->why), "libfabric %u.%u has no usable %s provider",
			 v.fi_major, v.fi_minor, prov);
		return EB_ENOTSUP;
	}
	fi_freeinfo(list);
	r->state = EB_GREG_NO_HMEM;
	snprintf(r->why, sizeof(r->why),
		 "libfabric %u.%u's %s offers no FI_HMEM: GPU buffers only through --staged",
		 v.fi_major, v.fi_minor, prov);
	return EB_ENOTSUP;
}

/* DMA-BUF, then FI_HMEM_CUDA, on a channel on the first NIC. */
static int try_paths(const char *prov, const struct eb_fabric_opts *fo, int single_host,
		     struct eb_mem *m, struct eb_gpu_reg *r)
{
	struct eb_versions v;
	struct eb_nic *nics;
	struct eb_chan ch;
	int n, rc;

	rc = eb_fabric_nics(prov, fo, single_host, &nics, &n);
	if (rc != EB_OK)
		return failed(r, rc, "no NIC of the provider to try on");
	rc = eb_chan_open(&ch, &nics[0], 0, 1, &(struct eb_chan_cfg){.quiet = 1});
	if (rc == EB_ENOTSUP) {
		eb_versions_get(&v);
		r->state = EB_GREG_NO_P2P;
		snprintf(r->why, sizeof(r->why),
			 "libfabric %u.%u's %s cannot reach GPU memory peer to peer (GPUDirect "
			 "RDMA: no nvidia-peermem or DMA-BUF?) and would copy it through host "
			 "memory: GPU buffers only through --staged",
			 v.fi_major, v.fi_minor, prov);
		goto free_nics;
	}
	if (rc != EB_OK) {
		failed(r, rc, "cannot open a channel on its first NIC");
		goto free_nics;
	}
	r->state = EB_GREG_TRIED;
	r->p2p = (int)ch.p2p;
	rc = eb_mr_try_gpu(&ch, m, EB_REG_DMABUF);
	r->dmabuf = rc == EB_OK ? 1 : rc == EB_ENOTSUP ? -1 : 0;
	if (r->dmabuf < 0) {
		eb_versions_get(&v);
		if (fi_version() < FI_VERSION(1, 20))
			snprintf(r->dmabuf_why, sizeof(r->dmabuf_why),
				 "libfabric %u.%u predates DMA-BUF registration (1.20)", v.fi_major,
				 v.fi_minor);
		else
			snprintf(r->dmabuf_why, sizeof(r->dmabuf_why),
				 "CUDA gives no DMA-BUF handle for this GPU memory");
	}
	r->hmem_cuda = eb_mr_try_gpu(&ch, m, EB_REG_HMEM_CUDA) == EB_OK;
	rc = EB_OK;
	if (r->dmabuf <= 0 && !r->hmem_cuda) {
		eb_versions_get(&v);
		snprintf(r->why, sizeof(r->why),
			 "libfabric %u.%u lists FI_HMEM for %s but registers no GPU memory: built "
			 "without CUDA (use --staged; AWS's EFA installer ships one with it)",
			 v.fi_major, v.fi_minor, prov);
		rc = EB_ENOTSUP;
	}
	eb_chan_close(&ch);
free_nics:
	eb_fabric_free_nics(nics, n);
	return rc;
}

int eb_gpu_reg_probe(const char *prov, const struct eb_fabric_opts *fo, int single_host, int gpu,
		     struct eb_gpu_reg *r)
{
	struct eb_fabric_opts hfo = *fo;
	struct eb_mem m = {.dmabuf_fd = -1};
	const char *absent;
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(r->prov, sizeof(r->prov), "%s", prov);
	rc = has_hmem(prov, r);
	if (rc != EB_OK)
		return rc;
	absent = eb_mem_gpu_absent();
	if (absent != NULL || gpu >= eb_mem_gpu_count()) {
		r->state = EB_GREG_NOT_TRIED;
		snprintf(r->why, sizeof(r->why), "no GPU %d to try on (%s)", gpu,
			 absent != NULL ? absent : "beyond the GPUs CUDA sees");
		return EB_ENOTSUP;
	}
	rc = eb_mem_use_gpu(gpu);
	if (rc == EB_OK)
		rc = eb_mem_alloc(&m, EB_MEM_DEVICE, 1u << 16, "a probe buffer");
	if (rc != EB_OK)
		return failed(r, rc, "cannot allocate memory on the GPU");
	hfo.provider = prov;
	hfo.hmem = 1;
	rc = try_paths(prov, &hfo, single_host, &m, r);
	eb_mem_free(&m);
	return rc;
}
