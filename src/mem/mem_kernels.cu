#include "mem_kernels.h"
#include "cuda_check.h"
#include "efabench/status.h"
#include "efabench/pattern_mix.h"

#include <cuda_runtime.h>
#include <stdio.h>

/* Enough blocks to cover the buffer with 4 words per thread, at most 8 per SM's worth. */
static int grid_for(size_t words)
{
	size_t g = (words + 1023) / 1024;

	return g == 0 ? 1 : g > 8192 ? 8192 : (int)g;
}

/* Payload slots start at any byte (a slot per peer of an odd size): words are stored and
 * loaded whole where the buffer is 8-byte aligned, byte by byte (little-endian, like the CPU)
 * where it is not. */
__device__ static void store_word(unsigned char *p, uint64_t x, bool aligned)
{
	if (aligned) {
		*(uint64_t *)p = x;
		return;
	}
	for (int b = 0; b < 8; b++)
		p[b] = (unsigned char)(x >> (8 * b));
}

__device__ static uint64_t load_word(const unsigned char *p, bool aligned)
{
	uint64_t x = 0;

	if (aligned)
		return *(const uint64_t *)p;
	for (int b = 0; b < 8; b++)
		x |= (uint64_t)p[b] << (8 * b);
	return x;
}

__global__ void fill_kernel(unsigned char *buf, size_t words, size_t tail_len, uint64_t seed,
			    uint64_t base, bool aligned)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	for (; i < words; i += (size_t)gridDim.x * blockDim.x)
		store_word(buf + i * 8, eb_pattern_mix(seed, base + i * 8), aligned);
	if (blockIdx.x == 0 && threadIdx.x == 0 && tail_len > 0) {
		uint64_t x = eb_pattern_mix(seed, base + words * 8);

		for (size_t b = 0; b < tail_len; b++)
			buf[words * 8 + b] = (unsigned char)(x >> (8 * b));
	}
}

/* res[0] counts wrong words, res[1] keeps the lowest wrong offset. */
__global__ void check_kernel(const unsigned char *buf, size_t words, size_t tail_len, uint64_t seed,
			     uint64_t base, bool aligned, unsigned long long *res)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long bad = 0, first = ~0ull;

	for (; i < words; i += (size_t)gridDim.x * blockDim.x)
		if (load_word(buf + i * 8, aligned) != eb_pattern_mix(seed, base + i * 8)) {
			bad++;
			first = first < base + i * 8 ? first : base + i * 8;
		}
	if (blockIdx.x == 0 && threadIdx.x == 0 && tail_len > 0) {
		uint64_t x = eb_pattern_mix(seed, base + words * 8);

		for (size_t b = 0; b < tail_len; b++)
			if (buf[words * 8 + b] != (unsigned char)(x >> (8 * b))) {
				bad++;
				first = first < base + words * 8 ? first : base + words * 8;
				break;
			}
	}
	if (bad > 0) { /* atomics only where something is wrong */
		atomicAdd(&res[0], bad);
		atomicMin(&res[1], first);
	}
}

extern "C" int eb_gk_fill(void *buf, size_t len, uint64_t seed, uint64_t base)
{
	size_t words = len / 8;

	fill_kernel<<<grid_for(words), 256>>>((unsigned char *)buf, words, len % 8, seed, base,
					      (uintptr_t)buf % 8 == 0);
	if (eb_cuda_check(cudaGetLastError(), "pattern fill kernel") != 0)
		return EB_ESYS;
	return eb_cuda_check(cudaDeviceSynchronize(), "pattern fill kernel");
}

extern "C" int eb_gk_check(const void *buf, size_t len, uint64_t seed, uint64_t base,
			   uint64_t *wrong, uint64_t *first_bad)
{
	/* One mapped result pair per process: no allocation per check. */
	static unsigned long long *res_h, *res_d;
	size_t words = len / 8;
	int rc;

	if (res_h == NULL) {
		rc = eb_cuda_check(
		    cudaHostAlloc((void **)&res_h, 2 * sizeof(*res_h), cudaHostAllocMapped),
		    "check: cudaHostAlloc");
		if (rc == 0)
			rc = eb_cuda_check(cudaHostGetDevicePointer((void **)&res_d, res_h, 0),
					   "check: cudaHostGetDevicePointer");
		if (rc != 0) {
			res_h = NULL;
			return rc;
		}
	}
	res_h[0] = 0;
	res_h[1] = ~0ull;
	check_kernel<<<grid_for(words), 256>>>((const unsigned char *)buf, words, len % 8, seed,
					       base, (uintptr_t)buf % 8 == 0, res_d);
	rc = eb_cuda_check(cudaGetLastError(), "pattern check kernel");
	if (rc == 0)
		rc = eb_cuda_check(cudaDeviceSynchronize(), "pattern check kernel");
	if (rc != 0)
		return rc;
	*wrong = res_h[0];
	if (res_h[0] != 0 && first_bad != NULL)
		*first_bad = res_h[1];
	return 0;
}
