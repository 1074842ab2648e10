#include "queue_kernels.h"
#include "mem/cuda_check.h"
#include "efabench/status.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

__global__ void produce_kernel(struct eb_gpuq_dev q, uint32_t per)
{
	uint64_t id = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, last = 0;

	for (uint32_t s = 0; s < per; s++) {
		uint64_t lo = id << 32 | s;

		last = eb_q_push(&q, lo, eb_q_check(lo));
		if (last == UINT64_MAX)
			return; /* EB_Q_ERR_FULL is raised for the host */
	}
	if (per > 0)
		eb_q_quiet(&q, last);
}

static __device__ uint64_t load_sys(volatile uint64_t *p)
{
	uint64_t v;

	asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

static __device__ void store_sys(volatile uint64_t *p, uint64_t v)
{
	asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void latency_kernel(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *rtt, int iters)
{
	for (int i = 0; i < iters; i++) {
		uint64_t lo = (uint64_t)i, t0 = eb_q_now_ns(), start = t0;

		if (eb_q_push(&q, lo, eb_q_check(lo)) == UINT64_MAX)
			return;
		while (load_sys(ack) < (uint64_t)i + 1)
			if (eb_q_now_ns() - start > q.timeout_ns)
				return; /* the host sees rtt stay 0 */
		rtt[i] = eb_q_now_ns() - t0;
		eb_q_acquire();
	}
}

__global__ void floor_kernel(uint64_t *ping, uint64_t *pong, uint64_t *rtt, int iters,
			     uint64_t timeout_ns)
{
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = eb_q_now_ns();

		store_sys(ping, (uint64_t)i + 1);
		while (load_sys(pong) < (uint64_t)i + 1)
			if (eb_q_now_ns() - t0 > timeout_ns)
				return;
		rtt[i] = eb_q_now_ns() - t0;
		eb_q_acquire();
	}
}

extern "C" int eb_qk_produce(struct eb_gpuq_dev q, int blocks, int threads, uint32_t per)
{
	produce_kernel<<<blocks, threads>>>(q, per);
	return eb_cuda_check(cudaGetLastError(), "launching the producer kernel");
}

extern "C" int eb_qk_latency(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *rtt, int iters)
{
	latency_kernel<<<1, 1>>>(q, ack, rtt, iters);
	return eb_cuda_check(cudaGetLastError(), "launching the latency kernel");
}

extern "C" int eb_qk_floor(uint64_t *ping, uint64_t *pong, uint64_t *rtt, int iters)
{
	floor_kernel<<<1, 1>>>(ping, pong, rtt, iters, 10ull * 1000000000ull);
	return eb_cuda_check(cudaGetLastError(), "launching the floor kernel");
}

extern "C" int eb_qk_wait(void)
{
	return eb_cuda_check(cudaDeviceSynchronize(), "waiting for the queue kernels");
}

extern "C" void *eb_qk_alloc_mapped(size_t bytes, void **dev)
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

extern "C" void eb_qk_free_mapped(void *p)
{
	if (p != NULL)
		cudaFreeHost(p);
}
