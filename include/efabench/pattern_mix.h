/* The payload pattern's formula, written once for the CPU (pattern.c) and the GPU (kernels
 * that fill and verify device memory), so both sides agree on every word. */
#ifndef EFABENCH_PATTERN_MIX_H
#define EFABENCH_PATTERN_MIX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define EB_PAT_HD __host__ __device__ static inline
#else
#define EB_PAT_HD static inline
#endif

/* One seed per (source, target, epoch). The odd constant keeps (0, 0, 0) from seeding an
 * all-zero word at offset 0. */
EB_PAT_HD uint64_t eb_pattern_seed(uint32_t src, uint32_t dst, uint64_t epoch)
{
	uint64_t x = ((uint64_t)src << 32 | dst) * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;

	return x ^ (epoch * 0xc2b2ae3d27d4eb4full) ^ (epoch >> 29);
}

/* The word at byte offset off: a multiply-xorshift mix, cheap enough to fill and check at
 * memory speed, strong enough that neighbouring offsets, ranks and epochs never collide. */
EB_PAT_HD uint64_t eb_pattern_mix(uint64_t seed, uint64_t off)
{
	uint64_t x = seed + off * 0xd6e8feb86659fd93ull;

	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	return x;
}

#endif
