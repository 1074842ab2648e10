#include "cuda_check.h"
#include "core/log.h"
#include "efabench/status.h"

#include <cuda_runtime.h>

extern "C" int eb_cuda_check(int err, const char *what)
{
	if (err == cudaSuccess)
		return EB_OK;
	eb_err("%s: %s", what, cudaGetErrorString((cudaError_t)err));
	return err == cudaErrorMemoryAllocation ? EB_ENOMEM : EB_ESYS;
}

extern "C" int eb_gpu_sms(void)
{
	int dev = 0, sms = 0;

	if (eb_cuda_check(cudaGetDevice(&dev), "cudaGetDevice") != 0 ||
	    eb_cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
			  "cudaDeviceGetAttribute") != 0)
		return EB_ESYS;
	return sms;
}
