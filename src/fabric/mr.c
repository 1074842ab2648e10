#include "efabench/mr.h"
#include "efabench/status.h"
#include "core/log.h"

#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/uio.h>

/* FI_MR_DMABUF and struct fi_mr_dmabuf arrived in libfabric 1.20, whose ABI for them is fixed:
 * older headers get them here, and a 1.20+ runtime (asked for API 1.20, prov.c) takes them
 * whatever headers built us. */
#ifndef FI_MR_DMABUF
#define FI_MR_DMABUF (1ULL << 40)
struct fi_mr_dmabuf {
	int fd;
	uint64_t offset;
	size_t len;
	void *base_addr;
};
#endif

/* The DMA-BUF description takes mr_iov's place (a union from 1.20 on). */
static void set_dmabuf(struct fi_mr_attr *a, const struct fi_mr_dmabuf *db)
{
	memcpy(&a->mr_iov, &db, sizeof(db));
}

/* The attributes as a runtime at API 1.19+ reads them: older headers end before hmem_data;
 * the zeroed tail stands for it and anything later. */
struct mr_attr {
	struct fi_mr_attr a;
	void *tail[8];
};

/* Whether DMA-BUF registration can be asked for: the runtime has it and we asked for its API. */
static int dmabuf_runtime(void)
{
	return fi_version() >= FI_VERSION(1, 20) && eb_fabric_api_version() >= FI_VERSION(1, 20);
}

const char *eb_reg_path_name(enum eb_reg_path p)
{
	static const char *const names[] = {"none", "host", "dmabuf", "hmem-cuda"};

	return names[p];
}

uint64_t eb_mr_access(unsigned use)
{
	uint64_t a = 0;

	if (use & EB_USE_SOURCE)
		a |= FI_WRITE | FI_SEND;
	if (use & EB_USE_TARGET)
		a |= FI_REMOTE_WRITE | FI_RECV;
	if (use & EB_USE_SEND)
		a |= FI_SEND;
	if (use & EB_USE_RECV)
		a |= FI_RECV;
	return a;
}

static uint64_t pick_key(struct eb_chan *c)
{
	/* Keys we pick must be unique within the domain. */
	return (c->mr_mode & FI_MR_PROV_KEY) ? 0 : c->next_key++;
}

/* Bind (FI_MR_ENDPOINT), then take the descriptor and the key peers will use. */
static int finish(struct eb_chan *c, void *addr, uint64_t access, struct eb_mr *m)
{
	int rc = 0;

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
	/* Local-only regions need no key (shm gives none for GPU memory used locally). */
	if (m->rkey.key == FI_KEY_NOTAVAIL && !(access & (FI_REMOTE_WRITE | FI_REMOTE_READ)))
		m->rkey.key = 0;
	if (m->rkey.key == FI_KEY_NOTAVAIL) {
		eb_err("%s domain %s returned no key for a memory region", c->nic.prov,
		       c->nic.domain);
		goto close_mr;
	}
	m->rkey.addr = (c->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)addr : 0;
	return EB_OK;

close_mr:
	fi_close(&m->mr->fid);
	memset(m, 0, sizeof(*m));
	return EB_EFABRIC;
}

int eb_mr_reg(struct eb_chan *c, void *buf, size_t len, unsigned use, struct eb_mr *m)
{
	uint64_t access = eb_mr_access(use);
	int rc;

	memset(m, 0, sizeof(*m));
	if (!(access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) && !(c->mr_mode & FI_MR_LOCAL))
		return EB_OK; /* the provider reads local buffers without a registration */
	rc = fi_mr_reg(c->domain, buf, len, access, 0, pick_key(c), 0, &m->mr, NULL);
	if (rc != 0) {
		eb_err("fi_mr_reg of %zu bytes on %s domain %s: %s", len, c->nic.prov,
		       c->nic.domain, fi_strerror(-rc));
		return EB_EFABRIC;
	}
	m->path = EB_REG_HOST;
	return finish(c, buf, access, m);
}

/* One attempt at registering GPU memory; the provider's error comes back, nothing printed. */
static int reg_gpu(struct eb_chan *c, struct eb_mem *m, size_t off, size_t len, uint64_t access,
		   enum eb_reg_path path, struct eb_mr *mr)
{
	struct iovec iov = {(char *)m->ptr + off, len};
	struct mr_attr x = {.a = {.mr_iov = &iov,
				  .iov_count = 1,
				  .access = access,
				  .requested_key = pick_key(c),
				  .iface = FI_HMEM_CUDA}};
	/* cudaMalloc'd memory is device-only: shm then copies it by CUDA IPC, peer to peer,
	 * instead of through host bounce buffers (measured: 14 Gbps without the flag). */
	uint64_t flags = FI_HMEM_DEVICE_ONLY;
	struct fi_mr_dmabuf db = {.fd = m->dmabuf_fd,
				  .offset = m->dmabuf_off + off,
				  .len = len,
				  .base_addr = (char *)m->ptr - m->dmabuf_off};

	if (path == EB_REG_DMABUF) {
		set_dmabuf(&x.a, &db);
		flags |= FI_MR_DMABUF;
	}
	x.a.device.cuda = m->gpu;
	return fi_mr_regattr(c->domain, &x.a, flags, &mr->mr);
}

int eb_mr_reg_mem(struct eb_chan *c, struct eb_mem *m, size_t off, size_t len, unsigned use,
		  struct eb_mr *mr)
{
	uint64_t access = eb_mr_access(use);
	int rc = -FI_ENOSYS;

	if (m->kind != EB_MEM_DEVICE)
		return eb_mr_reg(c, (char *)m->ptr + off, len, use, mr);
	memset(mr, 0, sizeof(*mr));
	if (!(c->caps & FI_HMEM)) {
		eb_err("%s domain %s was opened without FI_HMEM: it cannot register GPU memory",
		       c->nic.prov, c->nic.domain);
		return EB_ENOTSUP;
	}
	/* DMA-BUF first where the runtime has it and CUDA exports the buffer. */
	if (dmabuf_runtime() && eb_mem_dmabuf(m) == EB_OK) {
		rc = reg_gpu(c, m, off, len, access, EB_REG_DMABUF, mr);
		mr->path = EB_REG_DMABUF;
	}
	if (rc != 0) {
		rc = reg_gpu(c, m, off, len, access, EB_REG_HMEM_CUDA, mr);
		mr->path = EB_REG_HMEM_CUDA;
	}
	if (rc != 0) {
		eb_err("%s domain %s (libfabric %u.%u) cannot register GPU memory: fi_mr_regattr "
		       "with FI_HMEM_CUDA: %s (a libfabric built without CUDA support?); use "
		       "--staged, or a libfabric with CUDA (AWS's EFA installer ships one)",
		       c->nic.prov, c->nic.domain, FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
		       fi_strerror(-rc));
		memset(mr, 0, sizeof(*mr));
		return EB_ENOTSUP;
	}
	return finish(c, (char *)m->ptr + off, access, mr);
}

void eb_mr_dereg(struct eb_mr *m)
{
	if (m->mr != NULL)
		fi_close(&m->mr->fid);
	memset(m, 0, sizeof(*m));
}

int eb_mr_try_gpu(struct eb_chan *c, struct eb_mem *m, enum eb_reg_path path)
{
	struct eb_mr mr = {0};
	int rc;

	if (path == EB_REG_DMABUF && (!dmabuf_runtime() || eb_mem_dmabuf(m) != EB_OK))
		return EB_ENOTSUP;
	if (!(c->caps & FI_HMEM))
		return EB_ENOTSUP;
	rc = reg_gpu(c, m, 0, m->len, eb_mr_access(EB_USE_SOURCE | EB_USE_TARGET), path, &mr);
	if (rc != 0)
		return EB_EFABRIC;
	eb_mr_dereg(&mr);
	return EB_OK;
}
