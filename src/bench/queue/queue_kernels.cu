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

__global__ void latency_kernel(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *pushed, uint64_t *rtt,
			       int iters)
{
	for (int i = 0; i < iters; i++) {
		uint64_t lo = (uint64_t)i, t0 = eb_q_now_ns(), start = t0;

		if (eb_q_push(&q, lo, eb_q_check(lo)) == UINT64_MAX)
			return;
		pushed[i] = t0;
		while (eb_q_load_sys(ack) < (uint64_t)i + 1)
			if (eb_q_now_ns() - start > q.timeout_ns)
				return; /* the host sees rtt stay 0 */
		rtt[i] = eb_q_now_ns() - t0;
		eb_q_acquire();
	}
}

extern "C" int eb_qk_produce(struct eb_gpuq_dev q, int blocks, int threads, uint32_t per)
{
	produce_kernel<<<blocks, threads>>>(q, per);
	return eb_cuda_check(cudaGetLastError(), "launching the producer kernel");
}

extern "C" int eb_qk_latency(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *pushed, uint64_t *rtt,
			     int iters)
{
	latency_kernel<<<1, 1>>>(q, ack, pushed, rtt, iters);
	return eb_cuda_check(cudaGetLastError(), "launching the latency kernel");
}
