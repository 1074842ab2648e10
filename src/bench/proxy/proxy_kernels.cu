#include "proxy_kernels.h"
#include "mem/cuda_check.h"
#include "efabench/status.h"

#include <cuda_runtime.h>
#include <stdio.h>

static cudaStream_t stream;
static cudaEvent_t done;
static int *failed_d;

__global__ void produce_kernel(struct eb_pwork w, int *failed)
{
	if (threadIdx.x == 0 && eb_pwork_run(&w, blockIdx.x) != 0)
		atomicExch(failed, 1);
}

extern "C" int eb_pk_times(struct eb_pwork *w, long n)
{
	uint64_t first = UINT64_MAX;
	int rc = eb_cuda_check(cudaMalloc((void **)&w->t, sizeof(uint64_t) * (size_t)(n + 2)),
			       "cudaMalloc for timestamps");

	if (rc == 0)
		rc = eb_cuda_check(cudaMemset(w->t, 0, sizeof(uint64_t) * (size_t)(n + 2)),
				   "cudaMemset");
	if (rc == 0)
		rc = eb_cuda_check(cudaMemcpy(w->t, &first, sizeof(first), cudaMemcpyHostToDevice),
				   "cudaMemcpy");
	if (rc == 0 && stream == NULL) {
		rc = eb_cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
				   "cudaStreamCreate");
		if (rc == 0)
			rc = eb_cuda_check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
					   "cudaEventCreate");
		if (rc == 0)
			rc = eb_cuda_check(cudaMalloc((void **)&failed_d, sizeof(int)),
					   "cudaMalloc");
	}
	return rc;
}

extern "C" void eb_pk_free_times(struct eb_pwork *w)
{
	if (w->t != NULL)
		cudaFree((void *)w->t);
	w->t = NULL;
}

extern "C" int eb_pk_launch(const struct eb_pwork *w, int producers)
{
	int rc =
	    eb_cuda_check(cudaMemsetAsync(failed_d, 0, sizeof(int), stream), "cudaMemsetAsync");

	if (rc != 0)
		return rc;
	produce_kernel<<<producers, 32, 0, stream>>>(*w, failed_d);
	rc = eb_cuda_check(cudaGetLastError(), "launching the producer kernel");
	return rc != 0 ? rc : eb_cuda_check(cudaEventRecord(done, stream), "cudaEventRecord");
}

extern "C" int eb_pk_done(const struct eb_pwork *w, long n, uint64_t *t, int *failed)
{
	cudaError_t err = cudaEventQuery(done);

	if (err == cudaErrorNotReady)
		return 0;
	if (eb_cuda_check(err, "the producer kernel") != 0 ||
	    eb_cuda_check(cudaMemcpy(t, (const void *)w->t, sizeof(uint64_t) * (size_t)(n + 2),
				     cudaMemcpyDeviceToHost),
			  "reading the timestamps") != 0 ||
	    eb_cuda_check(cudaMemcpy(failed, failed_d, sizeof(int), cudaMemcpyDeviceToHost),
			  "reading the producers' status") != 0)
		return EB_ESYS;
	return 1;
}
