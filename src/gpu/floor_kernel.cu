#include "floor_kernel.h"
#include "mem/cuda_check.h"
#include "efabench/gpuq_proto.h"

#include <cuda_runtime.h>
#include <string.h>

__global__ void floor_kernel(uint64_t *ping, uint64_t *pong, uint64_t *rtt, int iters,
			     uint64_t timeout_ns)
{
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = eb_q_now_ns();

		eb_q_store_sys(ping, (uint64_t)i + 1);
		while (eb_q_load_sys(pong) < (uint64_t)i + 1)
			if (eb_q_now_ns() - t0 > timeout_ns)
				return;
		rtt[i] = eb_q_now_ns() - t0;
		eb_q_acquire();
	}
}

/* The floor's ping-pong, stamping the GPU's clock as each ping leaves and its pong returns. */
__global__ void clock_kernel(uint64_t *ping, uint64_t *pong, uint64_t *g0, uint64_t *g1, int iters,
			     uint64_t timeout_ns)
{
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = eb_q_now_ns();

		g0[i] = t0;
		eb_q_store_sys(ping, (uint64_t)i + 1);
		while (eb_q_load_sys(pong) < (uint64_t)i + 1)
			if (eb_q_now_ns() - t0 > timeout_ns)
				return;
		g1[i] = eb_q_now_ns();
		eb_q_acquire();
	}
}

extern "C" int eb_fk_clock(uint64_t *ping, uint64_t *pong, uint64_t *g0, uint64_t *g1, int iters)
{
	clock_kernel<<<1, 1>>>(ping, pong, g0, g1, iters, 10ull * 1000000000ull);
	return eb_cuda_check(cudaGetLastError(), "launching the clock kernel");
}

extern "C" int eb_fk_floor(uint64_t *ping, uint64_t *pong, uint64_t *rtt, int iters)
{
	floor_kernel<<<1, 1>>>(ping, pong, rtt, iters, 10ull * 1000000000ull);
	return eb_cuda_check(cudaGetLastError(), "launching the floor kernel");
}

extern "C" int eb_fk_wait(void)
{
	return eb_cuda_check(cudaDeviceSynchronize(), "waiting for the GPU's kernels");
}

extern "C" void *eb_fk_alloc_mapped(size_t bytes, void **dev)
{
	void *p = NULL;

	if (eb_cuda_check(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
			  "cudaHostAlloc") != 0)
		return NULL;
	memset(p, 0, bytes);
	if (eb_cuda_check(cudaHostGetDevicePointer(dev, p, 0), "cudaHostGetDevicePointer") != 0) {
		cudaFreeHost(p);
		return NULL;
	}
	return p;
}

extern "C" void eb_fk_free_mapped(void *p)
{
	if (p != NULL)
		cudaFreeHost(p);
}
