#include "moe_kernels.h"
#include "mem/cuda_check.h"
#include "efabench/status.h"

#include <cuda_runtime.h>

/* Threads per producer block: enough to keep a packing block's loads in flight. */
#ifndef EB_MOE_THREADS
#define EB_MOE_THREADS 512
#endif

static cudaStream_t stream;
static cudaEvent_t done;
static int *failed_d;
static __thread cudaStream_t mine; /* a CPU producer's stream */

__global__ void moe_kernel(struct eb_moe_work w, int *failed)
{
	if (eb_moe_produce(&w, (int)blockIdx.x) != 0 && threadIdx.x == 0)
		atomicExch(failed, 1);
}

static int upload(void **dev, const void *host, size_t bytes)
{
	int rc = eb_cuda_check(cudaMalloc(dev, bytes > 0 ? bytes : 8), "cudaMalloc for moe items");

	if (rc == 0 && bytes > 0)
		rc = eb_cuda_check(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice),
				   "cudaMemcpy of moe items");
	return rc;
}

extern "C" int eb_mk_upload(const struct eb_moe_phase *host, int ranks, int64_t items,
			    struct eb_moe_phase *dev)
{
	size_t n = sizeof(uint64_t) * (size_t)items;
	int rc;

	*dev = *host;
	dev->off = NULL;
	dev->src = dev->packed = dev->len = dev->dst = NULL;
	rc = upload((void **)&dev->off, host->off, sizeof(int64_t) * ((size_t)ranks + 1));
	rc = rc != 0 ? rc : upload((void **)&dev->src, host->src, n);
	rc = rc != 0 ? rc : upload((void **)&dev->packed, host->packed, n);
	rc = rc != 0 ? rc : upload((void **)&dev->len, host->len, n);
	rc = rc != 0 ? rc : upload((void **)&dev->dst, host->dst, n);
	if (rc == 0 && stream == NULL) {
		rc = eb_cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				   "cudaStreamCreate");
		rc = rc != 0
			 ? rc
			 : eb_cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
					 "cudaEventCreate");
		rc = rc != 0
			 ? rc
			 : eb_cuda_check(cudaMalloc((void **)&failed_d, sizeof(int)), "cudaMalloc");
	}
	if (rc != 0)
		eb_mk_free(dev);
	return rc;
}

extern "C" void eb_mk_free(struct eb_moe_phase *dev)
{
	cudaFree((void *)dev->off);
	cudaFree((void *)dev->src);
	cudaFree((void *)dev->packed);
	cudaFree((void *)dev->len);
	cudaFree((void *)dev->dst);
	dev->off = NULL;
	dev->src = dev->packed = dev->len = dev->dst = NULL;
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

extern "C" int eb_mk_launch(const struct eb_moe_work *w)
{
	int rc =
	    eb_cuda_check(cudaMemsetAsync(failed_d, 0, sizeof(int), stream), "cudaMemsetAsync");

	if (rc != 0)
		return rc;
	moe_kernel<<<w->producers, EB_MOE_THREADS, 0, stream>>>(*w, failed_d);
	rc = eb_cuda_check(cudaGetLastError(), "launching the moe producers");
	return rc != 0 ? rc : eb_cuda_check(cudaEventRecord(done, stream), "cudaEventRecord");
}

extern "C" int eb_mk_done(int *failed)
{
	cudaError_t err = cudaEventQuery(done);

	if (err == cudaErrorNotReady)
		return 0;
	if (eb_cuda_check(err, "the moe producers") != 0 ||
	    eb_cuda_check(cudaMemcpy(failed, failed_d, sizeof(int), cudaMemcpyDeviceToHost),
			  "reading the producers' status") != 0)
		return EB_ESYS;
	return 1;
}

/* Items [a, b) copied within a rank: of one length, by the whole grid as one sequence of
 * words; otherwise a block per item in turn. An item already in place (packed where it
 * sits) is left. */
__global__ void gather_kernel(char *to, const uint64_t *to_off, const char *from,
			      const uint64_t *from_off, const uint64_t *len, uint64_t same,
			      int64_t a, int64_t b)
{
	int64_t i;

	if (same > 0 && eb_moe_aligned(to, to_off[a], from, from_off[a], same)) {
		eb_moe_copy_same(to, to_off, from, from_off, same, a, b,
				 (uint64_t)blockIdx.x * blockDim.x + threadIdx.x,
				 (uint64_t)gridDim.x * blockDim.x);
		return;
	}
	for (i = a + blockIdx.x; i < b; i += gridDim.x)
		if (to + to_off[i] != from + from_off[i])
			eb_moe_copy(to + to_off[i], from + from_off[i], len[i]);
}

extern "C" int eb_mk_gather(const struct eb_moe_work *w, int own, int64_t a, int64_t b)
{
	const struct eb_moe_phase *g = &w->gph;
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
	gather_kernel<<<(unsigned)blocks, 256, 0, mine>>>(
	    own ? w->dst : w->src, own ? g->dst : g->packed, w->src, g->src, g->len, g->same, a, b);
	return eb_cuda_check(cudaGetLastError(), "launching a producer's copies") != 0 ? -1 : 0;
}

extern "C" int eb_mk_sync(void)
{
	if (mine == NULL)
		return 0;
	return eb_cuda_check(cudaStreamSynchronize(mine), "cudaStreamSynchronize") != 0 ? -1 : 0;
}
