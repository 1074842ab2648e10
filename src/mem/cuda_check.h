/* What every CUDA file of efabench shares: the check of a CUDA call's result, and the SM
 * count of the current GPU. */
#ifndef EB_GPU_CUDA_CHECK_H
#define EB_GPU_CUDA_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when err (a cudaError_t) is success; else one line naming what failed and EB_ENOMEM
 * (allocations) or EB_ESYS. */
int eb_cuda_check(int err, const char *what);

/* The current GPU's SM count, or EB_ESYS after one line. */
int eb_gpu_sms(void);

#ifdef __cplusplus
}
#endif

#endif
