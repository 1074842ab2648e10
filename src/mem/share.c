/* Memory the processes of one host share: a rank stores straight into a peer's buffer (NVLink
 * between GPUs, or plain memory between processes) instead of going through the fabric. Host
 * and pinned memory live in POSIX shared-memory segments named like libfabric shm's
 * ("<pid>:<uid>:..."), so that a launcher that finds a rank dead removes them with shm's;
 * device memory goes through CUDA IPC. */
#define _GNU_SOURCE
#include "mem_ops.h"
#include "efabench/status.h"
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t whole_pages(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

/* A mapping of segment `name`, created (owner) or opened; its fd closed again. */
static void *map_segment(const char *name, size_t len, int create, const char *what)
{
	int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
	void *p = MAP_FAILED;

	if (fd < 0) {
		eb_err("shm_open %s for %s: %s", name, what, strerror(errno));
		return NULL;
	}
	if (create && ftruncate(fd, (off_t)whole_pages(len)) != 0)
		eb_err("sizing %s for %s to %zu bytes: %s", name, what, len, strerror(errno));
	else if ((p = mmap(NULL, whole_pages(len), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		 MAP_FAILED)
		eb_err("mapping %s for %s: %s", name, what, strerror(errno));
	close(fd);
	if (p == MAP_FAILED && create)
		shm_unlink(name);
	return p == MAP_FAILED ? NULL : p;
}

/* Undo a half-made shared buffer, leaving it as eb_mem_free would. */
static void drop(struct eb_mem *m)
{
	eb_mem_share_free(m);
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
}

int eb_mem_alloc_shared(struct eb_mem *m, enum eb_mem_kind kind, size_t len, const char *what)
{
	static unsigned made;
	int rc;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->len = len > 0 ? len : 1;
	m->gpu = -1;
	m->dmabuf_fd = -1;
	if (kind == EB_MEM_DEVICE) /* cudaMalloc'd memory is exported as it is */
		return eb_mem_device_ops.alloc(m, m->len, what);
	snprintf(m->seg, sizeof(m->seg), "/%d:%u:efabench-%u", (int)getpid(), (unsigned)getuid(),
		 made++);
	m->alloc = m->ptr = map_segment(m->seg, m->len, 1, what);
	if (m->ptr == NULL)
		return EB_ESYS;
	m->shared = EB_SHARE_SEG;
	if (kind != EB_MEM_PINNED)
		return EB_OK;
	rc = eb_mem_cuda_register(m->ptr, whole_pages(m->len), &m->dev_ptr, what);
	if (rc != EB_OK)
		drop(m);
	return rc;
}

void eb_mem_export(const struct eb_mem *m, struct eb_mem_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->kind = (int32_t)m->kind;
	h->len = m->len;
	if (m->kind == EB_MEM_DEVICE)
		eb_mem_ipc_export(m, h->id, &h->off);
	else
		snprintf((char *)h->id, sizeof(h->id), "%s", m->seg);
}

int eb_mem_import(struct eb_mem *m, const struct eb_mem_handle *h, const char *what)
{
	int rc;

	memset(m, 0, sizeof(*m));
	m->kind = (enum eb_mem_kind)h->kind;
	m->len = h->len;
	m->gpu = -1;
	m->dmabuf_fd = -1;
	if (m->kind == EB_MEM_DEVICE) {
		rc = eb_mem_ipc_import(h->id, &m->alloc, what);
		if (rc == EB_OK) {
			m->dev_ptr = (char *)m->alloc + h->off;
			m->shared = EB_SHARE_IPC;
		}
		return rc;
	}
	m->alloc = m->ptr = map_segment((const char *)h->id, m->len, 0, what);
	if (m->ptr == NULL)
		return EB_ESYS;
	m->shared = EB_SHARE_MAP;
	if (m->kind != EB_MEM_PINNED)
		return EB_OK;
	rc = eb_mem_cuda_register(m->ptr, whole_pages(m->len), &m->dev_ptr, what);
	if (rc != EB_OK)
		drop(m);
	return rc;
}

void eb_mem_unshare(struct eb_mem *m)
{
	if (m->shared == EB_SHARE_SEG && m->seg[0] != '\0')
		shm_unlink(m->seg);
	m->seg[0] = '\0';
}

int eb_mem_share_free(struct eb_mem *m)
{
	switch (m->shared) {
	case EB_SHARE_SEG:
	case EB_SHARE_MAP:
		if (m->kind == EB_MEM_PINNED && m->dev_ptr != NULL)
			eb_mem_cuda_unregister(m->ptr);
		munmap(m->alloc, whole_pages(m->len));
		eb_mem_unshare(m);
		return 1;
	case EB_SHARE_IPC:
		eb_mem_ipc_close(m->alloc);
		return 1;
	default:
		return 0;
	}
}
