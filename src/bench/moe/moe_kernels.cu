#include "moe_kernels.h"
#include "mem/cuda_check.h"
#include "efabench/status.h"

#include <cuda_runtime.h>
#include <string.h>

/* Threads per producer block: enough to keep a packing block's loads in flight. */
#ifndef EB_MOE_THREADS
#define EB_MOE_THREADS 512
#endif

static cudaStream_t stream;
static cudaEvent_t done;
/* The last launch in which a block failed, in mapped host memory: read where it lies once the
 * launch is done, and never reset (a copy or a memset per launch each cost a call and a turn
 * of the GPU's queue on a path timed in microseconds). */
static volatile unsigned *failed_h;
static unsigned *failed_d, launches;
static __thread cudaStream_t mine; /* a CPU producer's stream */

__global__ void __launch_bounds__(EB_MOE_THREADS)
    moe_kernel(struct eb_moe_work w, volatile unsigned *failed, unsigned launch)
{
	if (eb_moe_produce(&w, (int)blockIdx.x) != 0 && threadIdx.x == 0)
		*failed = launch;
}

extern "C" int eb_mk_put(void **dev, const void *host, size_t n)
{
	int rc = eb_cuda_check(cudaMalloc(dev, n > 0 ? n : 8), "cudaMalloc for moe's items");

	if (rc == 0 && host == NULL)
		rc = eb_cuda_check(cudaMemset(*dev, 0, n > 0 ? n : 8), "cudaMemset");
	else if (rc == 0 && n > 0)
		rc = eb_cuda_check(cudaMemcpy(*dev, host, n, cudaMemcpyHostToDevice),
				   "cudaMemcpy of moe's items");
	return rc;
}

extern "C" void eb_mk_release(void *dev)
{
	if (dev != NULL)
		cudaFree(dev);
}

static int setup_stream(void)
{
	int rc = 0;

	if (stream != NULL)
		return 0;
	rc = eb_cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
			   "cudaStreamCreate");
	rc = rc != 0 ? rc
		     : eb_cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
				     "cudaEventCreate");
	rc = rc != 0 ? rc
		     : eb_cuda_check(cudaHostAlloc((void **)&failed_h, sizeof(*failed_h),
						   cudaHostAllocMapped),
				     "cudaHostAlloc for the producers' status");
	if (rc == 0)
		*failed_h = 0;
	return rc != 0 ? rc
		       : eb_cuda_check(
			     cudaHostGetDevicePointer((void **)&failed_d, (void *)failed_h, 0),
			     "cudaHostGetDevicePointer");
}

extern "C" int eb_mk_upload(const struct eb_moe_items *host, int ranks, int64_t items, int64_t refs,
			    struct eb_moe_items *dev)
{
	size_t n = sizeof(uint64_t) * (size_t)items, n32 = sizeof(uint32_t) * (size_t)items;
	size_t r = (size_t)refs;
	int rc;

	*dev = *host;
	dev->off = NULL;
	dev->src = dev->packed = dev->len = dev->dst = dev->row_at = NULL;
	dev->rows = dev->first = NULL;
	dev->row_w = NULL;
	rc = eb_mk_put((void **)&dev->off, host->off, sizeof(int64_t) * ((size_t)ranks + 1));
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->src, host->src, n);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->packed, host->packed, n);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->len, host->len, n);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->dst, host->dst, n);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->rows, host->rows, n32);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->first, host->first, n32);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->row_at, host->row_at, sizeof(uint64_t) * r);
	rc = rc != 0 ? rc : eb_mk_put((void **)&dev->row_w, host->row_w, r);
	rc = rc != 0 ? rc : setup_stream();
	if (rc != 0)
		eb_mk_free(dev);
	return rc;
}

extern "C" void eb_mk_free(struct eb_moe_items *dev)
{
	cudaFree((void *)dev->off);
	cudaFree((void *)dev->src);
	cudaFree((void *)dev->packed);
	cudaFree((void *)dev->len);
	cudaFree((void *)dev->dst);
	cudaFree((void *)dev->rows);
	cudaFree((void *)dev->first);
	cudaFree((void *)dev->row_at);
	cudaFree((void *)dev->row_w);
	dev->off = NULL;
	dev->src = dev->packed = dev->len = dev->dst = dev->row_at = NULL;
	dev->rows = dev->first = NULL;
	dev->row_w = NULL;
}

extern "C" int eb_mk_tickets(uint64_t **t, size_t n)
{
	int rc = eb_cuda_check(cudaMalloc((void **)t, sizeof(**t) * n),
			       "cudaMalloc for the producers' tickets");

	return rc != 0 ? rc : eb_cuda_check(cudaMemset(*t, 0, sizeof(**t) * n), "cudaMemset");
}

extern "C" void eb_mk_free_tickets(uint64_t *t)
{
	if (t != NULL)
		cudaFree(t);
}

extern "C" int eb_mk_stamps(uint64_t **host, uint64_t **dev, size_t n)
{
	int rc = eb_cuda_check(cudaHostAlloc((void **)host, sizeof(**host) * n, cudaHostAllocMapped),
			       "cudaHostAlloc for the producers' stamps");

	if (rc == 0)
		memset(*host, 0, sizeof(**host) * n);
	return rc != 0 ? rc
		       : eb_cuda_check(cudaHostGetDevicePointer((void **)dev, *host, 0),
				       "cudaHostGetDevicePointer");
}

extern "C" void eb_mk_free_stamps(uint64_t *host)
{
	if (host != NULL)
		cudaFreeHost(host);
}

extern "C" int eb_mk_launch(const struct eb_moe_work *w)
{
	int rc;

	if (++launches == 0) /* 0 is the word's first value: no launch failed */
		launches = 1;
	moe_kernel<<<w->producers, EB_MOE_THREADS, 0, stream>>>(*w, failed_d, launches);
	rc = eb_cuda_check(cudaGetLastError(), "launching the moe producers");
	return rc != 0 ? rc : eb_cuda_check(cudaEventRecord(done, stream), "cudaEventRecord");
}

extern "C" int eb_mk_done(int *failed)
{
	cudaError_t err = cudaEventQuery(done);

	if (err == cudaErrorNotReady)
		return 0;
	if (eb_cuda_check(err, "the moe producers") != 0)
		return EB_ESYS;
	*failed |= *failed_h == launches;
	return 1;
}

/* Items [a, b) made by the grid: copies of one length as one sequence of words, otherwise a
 * block per item in turn (a sum's elements over the block's threads). An item already in
 * place (packed where it sits) is left. */
__global__ void __launch_bounds__(256)
    gather_kernel(struct eb_moe_work w, char *to, const uint64_t *to_off, int64_t a, int64_t b)
{
	const struct eb_moe_items *it = &w.items;
	const char *from = it->from_dst ? w.dst : w.src;
	int64_t i;

	if (it->same > 0 && it->rows[a] == 0 && it->rows[b - 1] == 0 &&
	    eb_moe_aligned(to, to_off[a], from, it->src[a], it->same)) {
		eb_moe_copy_same(to, to_off, from, it->src, it->same, a, b,
				 (uint64_t)blockIdx.x * blockDim.x + threadIdx.x,
				 (uint64_t)gridDim.x * blockDim.x);
		return;
	}
	for (i = a + blockIdx.x; i < b; i += gridDim.x) {
		if (it->rows[i] > 0)
			eb_moe_sum(&w, to + to_off[i], i, threadIdx.x, blockDim.x);
		else if (to + to_off[i] != from + it->src[i])
			eb_moe_copy(to + to_off[i], from + it->src[i], it->len[i]);
	}
}

extern "C" int eb_mk_gather(const struct eb_moe_work *w, char *to, int packed, int64_t a, int64_t b)
{
	struct eb_moe_work g = *w;
	int64_t blocks = b - a < 128 ? b - a : 128;

	if (mine == NULL) {
		struct cudaPointerAttributes at;

		/* A new thread's current GPU is GPU 0: the kernel must run on the regions' own. */
		if (eb_cuda_check(cudaPointerGetAttributes(&at, w->src),
				  "cudaPointerGetAttributes") != 0 ||
		    eb_cuda_check(cudaSetDevice(at.device), "cudaSetDevice") != 0 ||
		    eb_cuda_check(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking),
				  "cudaStreamCreate") != 0)
			return -1;
	}
	g.items = w->gitems; /* the leg's arrays in GPU memory */
	gather_kernel<<<(unsigned)blocks, 256, 0, mine>>>(
	    g, packed ? w->src : to, packed ? g.items.packed : g.items.dst, a, b);
	return eb_cuda_check(cudaGetLastError(), "launching a producer's copies") != 0 ? -1 : 0;
}

extern "C" int eb_mk_sync(void)
{
	if (mine == NULL)
		return 0;
	return eb_cuda_check(cudaStreamSynchronize(mine), "cudaStreamSynchronize") != 0 ? -1 : 0;
}
