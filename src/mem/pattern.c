#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"

#include <string.h>

static inline uint64_t seed_of(const struct eb_pattern *p)
{
	return eb_pattern_seed(p->src, p->dst, p->epoch);
}

uint64_t eb_pattern_word(const struct eb_pattern *p, uint64_t off)
{
	return eb_pattern_mix(seed_of(p), off);
}

void eb_pattern_fill(const struct eb_pattern *p, void *buf, size_t len, uint64_t base)
{
	uint64_t seed = seed_of(p);
	unsigned char *b = buf;
	size_t i, words = len / 8;

	for (i = 0; i < words; i++) {
		uint64_t w = eb_pattern_mix(seed, base + i * 8);

		memcpy(b + i * 8, &w, 8);
	}
	if (len % 8 != 0) {
		uint64_t w = eb_pattern_mix(seed, base + words * 8);

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
		uint64_t w = eb_pattern_mix(seed, base + i * 8), got;

		memcpy(&got, b + i * 8, 8);
		if (got != w && wrong++ == 0 && first_bad != NULL)
			*first_bad = base + i * 8;
	}
	if (len % 8 != 0) {
		uint64_t w = eb_pattern_mix(seed, base + words * 8);

		if (memcmp(&w, b + words * 8, len % 8) != 0 && wrong++ == 0 && first_bad != NULL)
			*first_bad = base + words * 8;
	}
	return wrong;
}
