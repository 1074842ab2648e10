#include "efabench/pattern.h"

#include <string.h>

static inline uint64_t seed_of(const struct eb_pattern *p)
{
	/* The odd constant keeps (0, 0, 0) from seeding an all-zero word at offset 0. */
	uint64_t x =
	    ((uint64_t)p->src << 32 | p->dst) * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;

	return x ^ (p->epoch * 0xc2b2ae3d27d4eb4full) ^ (p->epoch >> 29);
}

/* A multiply-xorshift mix: cheap enough to fill and check at memory speed, strong enough
 * that neighbouring offsets, ranks and epochs never produce the same word by accident. */
static inline uint64_t mix(uint64_t seed, uint64_t off)
{
	uint64_t x = seed + off * 0xd6e8feb86659fd93ull;

	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	return x;
}

uint64_t eb_pattern_word(const struct eb_pattern *p, uint64_t off)
{
	return mix(seed_of(p), off);
}

void eb_pattern_fill(const struct eb_pattern *p, void *buf, size_t len, uint64_t base)
{
	uint64_t seed = seed_of(p);
	unsigned char *b = buf;
	size_t i, words = len / 8;

	for (i = 0; i < words; i++) {
		uint64_t w = mix(seed, base + i * 8);

		memcpy(b + i * 8, &w, 8);
	}
	if (len % 8 != 0) {
		uint64_t w = mix(seed, base + words * 8);

		memcpy(b + words * 8, &w, len % 8);
	}
}

uint64_t eb_pattern_check(const struct eb_pattern *p, const void *buf, size_t len, uint64_t base,
			  uint64_t *first_bad)
{
	uint64_t seed = seed_of(p), wrong = 0;
	const unsigned char *b = buf;
	size_t i, words = len / 8;

	for (i = 0; i < words; i++) {
		uint64_t w = mix(seed, base + i * 8), got;

		memcpy(&got, b + i * 8, 8);
		if (got != w && wrong++ == 0 && first_bad != NULL)
			*first_bad = base + i * 8;
	}
	if (len % 8 != 0) {
		uint64_t w = mix(seed, base + words * 8);

		if (memcmp(&w, b + words * 8, len % 8) != 0 && wrong++ == 0 && first_bad != NULL)
			*first_bad = base + words * 8;
	}
	return wrong;
}
