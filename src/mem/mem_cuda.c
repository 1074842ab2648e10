/* Pinned and device memory (CUDA). Pinned memory is host memory and is filled and checked by
 * the CPU; device memory by GPU kernels (src/gpu/mem_kernels.cu). */
#include "mem_ops.h"
#include "efabench/buf.h"
#include "efabench/pattern_mix.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef EB_HAVE_CUDA
#include "mem_kernels.h"

#include <cuda_runtime_api.h>

/* Driver calls reached through the runtime, so no libcuda link is needed. */
typedef int (*cu_handle_fn)(void *handle, unsigned long long dptr, size_t size, int type,
			    unsigned long long flags);
typedef int (*cu_attr_fn)(int *value, int attr, int dev);
typedef int (*cu_ptr_attr_fn)(const void *value, int attr, unsigned long long ptr);
#define CU_POINTER_ATTRIBUTE_SYNC_MEMOPS      6
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD   1
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124

static void *driver_fn(const char *name)
{
	enum cudaDriverEntryPointQueryResult q;
	void *fn = NULL;

	if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) !=
		cudaSuccess ||
	    q != cudaDriverEntryPointSuccess)
		return NULL;
	return fn;
}

static int cuda_fail(cudaError_t err, const char *what, const char *detail)
{
	eb_err("%s%s%s: %s", what, detail ? " " : "", detail ? detail : "",
	       cudaGetErrorString(err));
	return err == cudaErrorMemoryAllocation ? EB_ENOMEM : EB_ESYS;
}

int eb_mem_have_cuda(void)
{
	return 1;
}

int eb_mem_gpu_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
}

const char *eb_mem_gpu_absent(void)
{
	static char why[160];
	cudaError_t err;
	int n = 0;

	err = cudaGetDeviceCount(&n);
	if (err == cudaSuccess && n > 0)
		return NULL;
	cudaGetLastError();
	if (err == cudaSuccess || err == cudaErrorNoDevice)
		return "no CUDA-capable device";
	snprintf(why, sizeof(why), "%s: %s",
		 err == cudaErrorInsufficientDriver ? "no usable CUDA driver" : "CUDA fails",
		 cudaGetErrorString(err));
	return why;
}

int eb_mem_use_gpu(int gpu)
{
	cudaError_t err = cudaSetDevice(gpu);

	if (err != cudaSuccess) {
		eb_err("cannot use GPU %d: %s", gpu, cudaGetErrorString(err));
		return EB_ESYS;
	}
	return EB_OK;
}

int eb_mem_gpu_pci(int gpu, char *bdf, size_t len)
{
	char id[32];
	unsigned dom, bus, dev, fn;

	if (cudaDeviceGetPCIBusId(id, sizeof(id), gpu) != cudaSuccess ||
	    sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
		cudaGetLastError();
		return EB_ESYS;
	}
	snprintf(bdf, len, "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
	return EB_OK;
}

int eb_mem_gpu_name(int gpu, char *name, size_t len, int *sms)
{
	struct cudaDeviceProp p;

	if (cudaGetDeviceProperties(&p, gpu) != cudaSuccess) {
		cudaGetLastError();
		return EB_ESYS;
	}
	snprintf(name, len, "%s", p.name);
	*sms = p.multiProcessorCount;
	return EB_OK;
}

int eb_mem_gpu_room(int gpu, uint64_t *free_bytes, uint64_t *total)
{
	size_t f = 0, t = 0;

	if (cudaSetDevice(gpu) != cudaSuccess || cudaMemGetInfo(&f, &t) != cudaSuccess) {
		cudaGetLastError();
		return EB_ESYS;
	}
	*free_bytes = f;
	*total = t;
	return EB_OK;
}

static int current_gpu(void)
{
	int dev = -1;

	return cudaGetDevice(&dev) == cudaSuccess ? dev : -1;
}

static int pinned_alloc(struct eb_mem *m, size_t len, const char *what)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded = (len + page - 1) / page * page;
	cudaError_t err;

	m->alloc = m->ptr = eb_buf_alloc_host(len, what);
	if (m->ptr == NULL)
		return EB_ENOMEM;
	/* Registered in place: the buffer keeps its huge pages and alignment. */
	err = cudaHostRegister(m->ptr, rounded, cudaHostRegisterMapped | cudaHostRegisterPortable);
	if (err == cudaSuccess)
		err = cudaHostGetDevicePointer(&m->dev_ptr, m->ptr, 0);
	if (err != cudaSuccess) {
		eb_buf_free_host(m->alloc);
		m->alloc = m->ptr = NULL;
		return cuda_fail(err, "cudaHostRegister of", what);
	}
	m->gpu = current_gpu();
	return EB_OK;
}

static void pinned_free(struct eb_mem *m)
{
	cudaHostUnregister(m->alloc);
	eb_buf_free_host(m->alloc);
}

/* A cudaMemcpy between two device buffers returns before the copy is done; a provider that
 * copies GPU memory that way (shm's CUDA IPC path) would report a write complete before it
 * landed. SYNC_MEMOPS makes such copies on this allocation synchronous, as the EFA provider
 * does for its own registrations. */
static void sync_memops(const struct eb_mem *m)
{
	cu_ptr_attr_fn set = (cu_ptr_attr_fn)driver_fn("cuPointerSetAttribute");
	unsigned one = 1;

	if (set == NULL || set(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
			       (unsigned long long)(uintptr_t)m->alloc) != 0)
		eb_warn("could not make copies of GPU memory synchronous (SYNC_MEMOPS): a provider "
			"may report writes complete before they land");
}

/* Device memory starts on a host-page boundary and spans whole pages: what a DMA-BUF export
 * of the range needs. */
static int device_alloc(struct eb_mem *m, size_t len, const char *what)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded = (len + page - 1) / page * page;
	cudaError_t err = cudaMalloc(&m->alloc, rounded + page);

	if (err != cudaSuccess) {
		m->alloc = NULL;
		return cuda_fail(err, "cudaMalloc of", what);
	}
	m->ptr = m->dev_ptr = (void *)(((uintptr_t)m->alloc + page - 1) / page * page);
	m->gpu = current_gpu();
	sync_memops(m);
	err = cudaMemset(m->ptr, 0, rounded);
	if (err == cudaSuccess)
		err = cudaDeviceSynchronize();
	if (err != cudaSuccess) {
		cudaFree(m->alloc);
		m->alloc = NULL;
		return cuda_fail(err, "clearing", what);
	}
	return EB_OK;
}

static void device_free(struct eb_mem *m)
{
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	cudaFree(m->alloc);
}

static int device_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		       uint64_t base)
{
	return eb_gk_fill((char *)m->ptr + off, len, eb_pattern_seed(p->src, p->dst, p->epoch),
			  base);
}

static int device_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
			uint64_t base, uint64_t *wrong, uint64_t *first_bad)
{
	return eb_gk_check((const char *)m->ptr + off, len,
			   eb_pattern_seed(p->src, p->dst, p->epoch), base, wrong, first_bad);
}

static int device_flip(const struct eb_mem *m, size_t off)
{
	unsigned char b;
	cudaError_t err = cudaMemcpy(&b, (char *)m->ptr + off, 1, cudaMemcpyDeviceToHost);

	b ^= 0x5a;
	if (err == cudaSuccess)
		err = cudaMemcpy((char *)m->ptr + off, &b, 1, cudaMemcpyHostToDevice);
	return err == cudaSuccess ? EB_OK : cuda_fail(err, "flipping a byte of", "device memory");
}

int eb_mem_copy(const struct eb_mem *dst, size_t doff, const struct eb_mem *src, size_t soff,
		size_t len)
{
	cudaError_t err;

	if (dst->kind != EB_MEM_DEVICE && src->kind != EB_MEM_DEVICE) {
		memcpy((char *)dst->ptr + doff, (const char *)src->ptr + soff, len);
		return EB_OK;
	}
	err = cudaMemcpy((char *)dst->ptr + doff, (const char *)src->ptr + soff, len,
			 cudaMemcpyDefault);
	return err == cudaSuccess ? EB_OK : cuda_fail(err, "cudaMemcpy", NULL);
}

int eb_mem_dmabuf(struct eb_mem *m)
{
	cu_handle_fn fn = (cu_handle_fn)driver_fn("cuMemGetHandleForAddressRange");
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd = -1;

	if (m->kind != EB_MEM_DEVICE)
		return EB_ENOTSUP;
	if (m->dmabuf_fd >= 0)
		return EB_OK;
	if (fn == NULL ||
	    fn(&fd, (unsigned long long)(uintptr_t)m->ptr, (m->len + page - 1) / page * page,
	       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) != 0 ||
	    fd < 0)
		return EB_ENOTSUP;
	m->dmabuf_fd = fd;
	m->dmabuf_off = 0;
	return EB_OK;
}

void eb_mem_gpu_caps(int gpu, int *dmabuf, int *gdr)
{
	cu_attr_fn attr = (cu_attr_fn)driver_fn("cuDeviceGetAttribute");
	int v = 0;

	*dmabuf =
	    attr != NULL && attr(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, gpu) == 0 ? v != 0 : -1;
	*gdr = cudaDeviceGetAttribute(&v, cudaDevAttrGPUDirectRDMASupported, gpu) == cudaSuccess
		   ? v != 0
		   : -1;
}

int eb_mem_cuda_register(void *ptr, size_t len, void **dev_ptr, const char *what)
{
	cudaError_t err =
	    cudaHostRegister(ptr, len, cudaHostRegisterMapped | cudaHostRegisterPortable);

	if (err == cudaSuccess)
		err = cudaHostGetDevicePointer(dev_ptr, ptr, 0);
	return err == cudaSuccess ? EB_OK : cuda_fail(err, "cudaHostRegister of", what);
}

void eb_mem_cuda_unregister(void *ptr)
{
	cudaHostUnregister(ptr);
}

void eb_mem_ipc_export(const struct eb_mem *m, unsigned char id[64], uint64_t *off)
{
	cudaIpcMemHandle_t h;

	memset(id, 0, 64);
	*off = (uint64_t)((char *)m->ptr - (char *)m->alloc);
	if (cudaIpcGetMemHandle(&h, m->alloc) != cudaSuccess) {
		cudaGetLastError(); /* the peer's import says so: an empty handle is refused */
		return;
	}
	memcpy(id, &h, sizeof(h) < 64 ? sizeof(h) : 64);
}

int eb_mem_ipc_import(const unsigned char id[64], void **base, const char *what)
{
	cudaIpcMemHandle_t h;
	cudaError_t err;

	memcpy(&h, id, sizeof(h) < 64 ? sizeof(h) : 64);
	err = cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
	return err == cudaSuccess ? EB_OK : cuda_fail(err, "cudaIpcOpenMemHandle of", what);
}

void eb_mem_ipc_close(void *base)
{
	cudaIpcCloseMemHandle(base);
}

struct eb_mem_ce {
	int n;
	cudaStream_t s[];
};

int eb_mem_ce_open(struct eb_mem_ce **ce, int n)
{
	struct eb_mem_ce *c = calloc(1, sizeof(*c) + sizeof(cudaStream_t) * (size_t)n);
	cudaError_t err = cudaSuccess;

	if (c == NULL) {
		eb_err("out of memory for %d copy-engine streams", n);
		return EB_ENOMEM;
	}
	for (; c->n < n && err == cudaSuccess; c->n++)
		err = cudaStreamCreateWithFlags(&c->s[c->n], cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		c->n--;
		eb_mem_ce_close(c);
		return cuda_fail(err, "cudaStreamCreate", "for the copy engines");
	}
	*ce = c;
	return EB_OK;
}

int eb_mem_ce_copy(struct eb_mem_ce *ce, char *const *to, const char *from, const uint64_t *len)
{
	cudaError_t err = cudaSuccess;
	int k;

	for (k = 0; k < ce->n && err == cudaSuccess; k++)
		if (len[k] > 0)
			err = cudaMemcpyAsync(to[k], from, len[k], cudaMemcpyDeviceToDevice,
					      ce->s[k]);
	for (k = 0; k < ce->n && err == cudaSuccess; k++)
		err = cudaStreamSynchronize(ce->s[k]);
	return err == cudaSuccess ? EB_OK : cuda_fail(err, "cudaMemcpyAsync", "to a peer GPU");
}

void eb_mem_ce_close(struct eb_mem_ce *ce)
{
	int k;

	for (k = 0; ce != NULL && k < ce->n; k++)
		cudaStreamDestroy(ce->s[k]);
	free(ce);
}

#else /* no CUDA in this build */

static int no_cuda(void)
{
	eb_err("pinned and device memory need a build with CUDA (this one has none)");
	return EB_ENOTSUP;
}

int eb_mem_cuda_register(void *ptr, size_t len, void **dev_ptr, const char *what)
{
	return no_cuda();
}

void eb_mem_cuda_unregister(void *ptr)
{
}

void eb_mem_ipc_export(const struct eb_mem *m, unsigned char id[64], uint64_t *off)
{
	memset(id, 0, 64);
	*off = 0;
}

int eb_mem_ce_open(struct eb_mem_ce **ce, int n)
{
	*ce = NULL;
	return no_cuda();
}

int eb_mem_ce_copy(struct eb_mem_ce *ce, char *const *to, const char *from, const uint64_t *len)
{
	return no_cuda();
}

void eb_mem_ce_close(struct eb_mem_ce *ce)
{
}

int eb_mem_ipc_import(const unsigned char id[64], void **base, const char *what)
{
	return no_cuda();
}

void eb_mem_ipc_close(void *base)
{
}

int eb_mem_have_cuda(void)
{
	return 0;
}

int eb_mem_gpu_count(void)
{
	return 0;
}

const char *eb_mem_gpu_absent(void)
{
	return "a build without CUDA";
}

int eb_mem_use_gpu(int gpu)
{
	return no_cuda();
}

int eb_mem_gpu_pci(int gpu, char *bdf, size_t len)
{
	return EB_ENOTSUP;
}

int eb_mem_gpu_name(int gpu, char *name, size_t len, int *sms)
{
	return EB_ENOTSUP;
}

int eb_mem_gpu_room(int gpu, uint64_t *free_bytes, uint64_t *total)
{
	return EB_ENOTSUP;
}

static int pinned_alloc(struct eb_mem *m, size_t len, const char *what)
{
	return no_cuda();
}

static void pinned_free(struct eb_mem *m)
{
}

static int device_alloc(struct eb_mem *m, size_t len, const char *what)
{
	return no_cuda();
}

static void device_free(struct eb_mem *m)
{
}

static int device_fill(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
		       uint64_t base)
{
	return no_cuda();
}

static int device_check(const struct eb_mem *m, size_t off, size_t len, const struct eb_pattern *p,
			uint64_t base, uint64_t *wrong, uint64_t *first_bad)
{
	return no_cuda();
}

static int device_flip(const struct eb_mem *m, size_t off)
{
	return no_cuda();
}

int eb_mem_copy(const struct eb_mem *dst, size_t doff, const struct eb_mem *src, size_t soff,
		size_t len)
{
	memcpy((char *)dst->ptr + doff, (const char *)src->ptr + soff, len);
	return EB_OK;
}

int eb_mem_dmabuf(struct eb_mem *m)
{
	return EB_ENOTSUP;
}

void eb_mem_gpu_caps(int gpu, int *dmabuf, int *gdr)
{
	*dmabuf = *gdr = -1;
}
#endif

/* Pinned memory is host memory: the CPU fills and checks it. */
const struct eb_mem_ops eb_mem_pinned_ops = {
    .alloc = pinned_alloc,
    .free = pinned_free,
    .fill = eb_mem_host_fill,
    .check = eb_mem_host_check,
    .flip = eb_mem_host_flip,
};

const struct eb_mem_ops eb_mem_device_ops = {
    .alloc = device_alloc,
    .free = device_free,
    .fill = device_fill,
    .check = device_check,
    .flip = device_flip,
};
