/* Pattern fill and check of device memory on the GPU, callable from C: the same formula as
 * the CPU's (pattern_mix.h). Synchronous on the current device; 0 or a negative status after
 * printing the CUDA error. */
#ifndef EB_GPU_MEM_KERNELS_H
#define EB_GPU_MEM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* len bytes at buf hold payload offsets base.. (base a multiple of 8) of the seed's pattern. */
int eb_gk_fill(void *buf, size_t len, uint64_t seed, uint64_t base);
/* Wrong 8-byte words (the last may be partial) and the payload offset of the first. */
int eb_gk_check(const void *buf, size_t len, uint64_t seed, uint64_t base, uint64_t *wrong,
		uint64_t *first_bad);

#ifdef __cplusplus
}
#endif

#endif
