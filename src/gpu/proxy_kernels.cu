#include "proxy_kernels.h"

#include <cuda_runtime.h>
#include <stdio.h>

#define PK_ESYS (-6) /* EB_ESYS of efabench/status.h, which is C */

static int check(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return 0;
	fprintf(stderr, "efabench: error: %s: %s\n", what, cudaGetErrorString(err));
	return PK_ESYS;
}

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
	int rc = check(cudaMalloc((void **)&w->t, sizeof(uint64_t) * (size_t)(n + 2)),
		       "cudaMalloc for timestamps");

	if (rc == 0)
		rc = check(cudaMemset(w->t, 0, sizeof(uint64_t) * (size_t)(n + 2)), "cudaMemset");
	if (rc == 0)
		rc = check(cudaMemcpy(w->t, &first, sizeof(first), cudaMemcpyHostToDevice),
			   "cudaMemcpy");
	if (rc == 0 && stream == NULL) {
		rc = check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
			   "cudaStreamCreate");
		if (rc == 0)
			rc = check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
				   "cudaEventCreate");
		if (rc == 0)
			rc = check(cudaMalloc((void **)&failed_d, sizeof(int)), "cudaMalloc");
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
	int rc = check(cudaMemsetAsync(failed_d, 0, sizeof(int), stream), "cudaMemsetAsync");

	if (rc != 0)
		return rc;
	produce_kernel<<<producers, 32, 0, stream>>>(*w, failed_d);
	rc = check(cudaGetLastError(), "launching the producer kernel");
	return rc != 0 ? rc : check(cudaEventRecord(done, stream), "cudaEventRecord");
}

extern "C" int eb_pk_done(const struct eb_pwork *w, long n, uint64_t *t, int *failed)
{
	cudaError_t err = cudaEventQuery(done);

	if (err == cudaErrorNotReady)
		return 0;
	if (check(err, "the producer kernel") != 0 ||
	    check(cudaMemcpy(t, (const void *)w->t, sizeof(uint64_t) * (size_t)(n + 2),
			     cudaMemcpyDeviceToHost),
		  "reading the timestamps") != 0 ||
	    check(cudaMemcpy(failed, failed_d, sizeof(int), cudaMemcpyDeviceToHost),
		  "reading the producers' status") != 0)
		return PK_ESYS;
	return 1;
}

extern "C" int eb_pk_sms(void)
{
	int dev = 0, sms = 0;

	if (check(cudaGetDevice(&dev), "cudaGetDevice") != 0 ||
	    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
		  "cudaDeviceGetAttribute") != 0)
		return PK_ESYS;
	return sms;
}
