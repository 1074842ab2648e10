/* eb_pattern_fill / eb_pattern_check: round trips, slices, single-byte damage, wrong
 * source, target, epoch or offset, and poisoned buffers. */
#include "check.h"
#include "efabench/pattern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_BAD 0xdeadbeefcafef00dull

static const size_t lens[] = {0, 1, 7, 8, 9, 4095, 65537};
static const uint64_t bases[] = {0, 8, 4096, 1ull << 40};

#define NLENS  (sizeof(lens) / sizeof(lens[0]))
#define NBASES (sizeof(bases) / sizeof(bases[0]))

static uint64_t words_of(size_t len)
{
	return (len + 7) / 8;
}

static void test_round_trip(unsigned char *buf)
{
	struct eb_pattern p = {.src = 3, .dst = 5, .epoch = 42};
	size_t i, j;

	for (i = 0; i < NLENS; i++) {
		for (j = 0; j < NBASES; j++) {
			uint64_t bad = NO_BAD;

			/* Bytes past len must be left alone. */
			memset(buf, 0xa5, lens[i] + 16);
			eb_pattern_fill(&p, buf, lens[i], bases[j]);
			CHECK(eb_pattern_check(&p, buf, lens[i], bases[j], &bad) == 0);
			CHECK(bad == NO_BAD);
			CHECK(buf[lens[i]] == 0xa5 && buf[lens[i] + 15] == 0xa5);
			CHECK(eb_pattern_check(&p, buf, lens[i], bases[j], NULL) == 0);
		}
	}
	/* eb_pattern_word agrees with the filled bytes. */
	eb_pattern_fill(&p, buf, 4096, 8192);
	for (i = 0; i < 4096; i += 8) {
		uint64_t w;

		memcpy(&w, buf + i, 8);
		if (w != eb_pattern_word(&p, 8192 + i)) {
			CHECK(w == eb_pattern_word(&p, 8192 + i));
			break;
		}
	}
	CHECK(i == 4096);
}

static void test_slices(unsigned char *whole, unsigned char *parts)
{
	struct eb_pattern p = {.src = 1, .dst = 0, .epoch = 7};
	static const size_t cuts[] = {0, 8, 16, 4104, 40000, 65528, 65537};
	size_t i, len = 65537;

	eb_pattern_fill(&p, whole, len, 0);
	memset(parts, 0, len);
	for (i = 0; i + 1 < sizeof(cuts) / sizeof(cuts[0]); i++)
		eb_pattern_fill(&p, parts + cuts[i], cuts[i + 1] - cuts[i], cuts[i]);
	CHECK(memcmp(whole, parts, len) == 0);
	for (i = 0; i + 1 < sizeof(cuts) / sizeof(cuts[0]); i++)
		CHECK(eb_pattern_check(&p, whole + cuts[i], cuts[i + 1] - cuts[i], cuts[i], NULL) ==
		      0);
	/* A slice filled at a payload offset matches the same bytes of a whole fill. */
	eb_pattern_fill(&p, parts, 1000, 4096);
	CHECK(memcmp(parts, whole + 4096, 1000) == 0);
}

static void flip_one(unsigned char *buf, size_t len, uint64_t base, size_t pos)
{
	struct eb_pattern p = {.src = 2, .dst = 9, .epoch = 1000};
	uint64_t bad = NO_BAD, wrong;

	eb_pattern_fill(&p, buf, len, base);
	buf[pos] ^= 0x10;
	wrong = eb_pattern_check(&p, buf, len, base, &bad);
	CHECK(wrong == 1);
	CHECK(bad == base + pos / 8 * 8);
	if (wrong != 1 || bad != base + pos / 8 * 8)
		fprintf(stderr, "  len %zu base %llu flipped byte %zu: %llu wrong, first at %llu\n",
			len, (unsigned long long)base, pos, (unsigned long long)wrong,
			(unsigned long long)bad);
	buf[pos] ^= 0x10;
	CHECK(eb_pattern_check(&p, buf, len, base, NULL) == 0);
}

static void test_one_flip(unsigned char *buf)
{
	static const size_t pos65537[] = {0, 1, 7, 8, 15, 4095, 4096, 65527, 65528, 65535, 65536};
	size_t i, j;

	for (j = 0; j < NBASES; j++) {
		for (i = 0; i < sizeof(pos65537) / sizeof(pos65537[0]); i++)
			flip_one(buf, 65537, bases[j], pos65537[i]);
		/* Every byte of a short buffer with a partial tail word (bytes 8..12). */
		for (i = 0; i < 13; i++)
			flip_one(buf, 13, bases[j], i);
		flip_one(buf, 1, bases[j], 0);
		for (i = 0; i < 7; i++)
			flip_one(buf, 7, bases[j], i);
	}
}

static void test_two_flips(unsigned char *buf)
{
	struct eb_pattern p = {.src = 0, .dst = 1, .epoch = 3};
	uint64_t bad = NO_BAD;

	eb_pattern_fill(&p, buf, 4096, 0);
	buf[100] ^= 1;
	buf[3000] ^= 1;
	CHECK(eb_pattern_check(&p, buf, 4096, 0, &bad) == 2);
	CHECK(bad == 96);
	/* Two bytes of one word are still one wrong word. */
	eb_pattern_fill(&p, buf, 4096, 0);
	buf[16] ^= 1;
	buf[23] ^= 0x80;
	bad = NO_BAD;
	CHECK(eb_pattern_check(&p, buf, 4096, 0, &bad) == 1);
	CHECK(bad == 16);
}

/* Data written for pattern `w` checked as pattern `r`: every word must be wrong. */
static void all_wrong(unsigned char *buf, const struct eb_pattern *w, const struct eb_pattern *r,
		      size_t len, uint64_t base)
{
	uint64_t bad = NO_BAD, wrong;

	eb_pattern_fill(w, buf, len, base);
	wrong = eb_pattern_check(r, buf, len, base, &bad);
	CHECK(wrong == words_of(len));
	CHECK(bad == base);
	if (wrong != words_of(len))
		fprintf(stderr,
			"  wrote (%u,%u,%llu) read (%u,%u,%llu) len %zu: %llu wrong of %llu\n",
			w->src, w->dst, (unsigned long long)w->epoch, r->src, r->dst,
			(unsigned long long)r->epoch, len, (unsigned long long)wrong,
			(unsigned long long)words_of(len));
}

static void test_mismatch(unsigned char *buf)
{
	const struct eb_pattern ref = {.src = 1, .dst = 2, .epoch = 5};
	struct eb_pattern o;
	size_t i;
	static const size_t mlens[] = {8, 4096, 65536, 4099};

	for (i = 0; i < sizeof(mlens) / sizeof(mlens[0]); i++) {
		o = ref;
		o.src = 0;
		all_wrong(buf, &o, &ref, mlens[i], 0);
		o = ref;
		o.src = 2;
		o.dst = 1; /* swapped roles */
		all_wrong(buf, &o, &ref, mlens[i], 0);
		o = ref;
		o.dst = 3;
		all_wrong(buf, &o, &ref, mlens[i], 4096);
		o = ref;
		o.epoch = 4; /* the stale previous epoch */
		all_wrong(buf, &o, &ref, mlens[i], 0);
		o = ref;
		o.epoch = 6;
		all_wrong(buf, &o, &ref, mlens[i], 8);
	}
}

static void test_shift(unsigned char *buf)
{
	const struct eb_pattern p = {.src = 4, .dst = 1, .epoch = 77};
	size_t len = 65536;
	uint64_t bad = NO_BAD;

	/* The payload landed 8 bytes early: buf + 8 holds what belongs at 0 ... */
	eb_pattern_fill(&p, buf, len + 8, 0);
	CHECK(eb_pattern_check(&p, buf + 8, len, 0, &bad) == len / 8);
	CHECK(bad == 0);
	/* ... or 8 bytes late. */
	bad = NO_BAD;
	CHECK(eb_pattern_check(&p, buf, len, 8, &bad) == len / 8);
	CHECK(bad == 8);
	/* Same with a copy moved 8 bytes off. */
	eb_pattern_fill(&p, buf, len, 0);
	memmove(buf + 8, buf, len - 8);
	CHECK(eb_pattern_check(&p, buf + 8, len - 8, 8, NULL) == (len - 8) / 8);
	/* Even a partial tail word differs. */
	eb_pattern_fill(&p, buf, 64 + 8, 0);
	CHECK(eb_pattern_check(&p, buf + 8, 61, 0, NULL) == 8);
}

static void test_poison(unsigned char *buf)
{
	static const uint64_t epochs[] = {
	    0, 1, 2, 7, 1000, 1ull << 29, 1ull << 32, 1ull << 63, UINT64_MAX - 1};
	struct eb_pattern poison = {.src = 1, .dst = 0, .epoch = EB_EPOCH_POISON};
	size_t i;

	for (i = 0; i < sizeof(epochs) / sizeof(epochs[0]); i++) {
		struct eb_pattern real = poison;

		real.epoch = epochs[i];
		all_wrong(buf, &poison, &real, 4096, 0);
		all_wrong(buf, &poison, &real, 24, 1ull << 30);
	}
	/* And the poisoned buffer does pass the poison check itself. */
	eb_pattern_fill(&poison, buf, 4096, 0);
	CHECK(eb_pattern_check(&poison, buf, 4096, 0, NULL) == 0);
}

/* A buffer that was never written (all zero) must not pass as any pattern. */
static void test_zero_buffer(unsigned char *buf)
{
	static const struct eb_pattern ps[] = {
	    {.src = 0, .dst = 1, .epoch = 0},
	    {.src = 1, .dst = 0, .epoch = 0},
	    {.src = 0, .dst = 1, .epoch = 1},
	    {.src = 0, .dst = 0, .epoch = 1},
	};
	size_t i;

	memset(buf, 0, 4096);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		CHECK(eb_pattern_check(&ps[i], buf, 4096, 0, NULL) == 512);
}

int main(void)
{
	unsigned char *a = malloc(65537 + 64), *b = malloc(65537 + 64);

	if (a == NULL || b == NULL)
		return 1;
	test_round_trip(a);
	test_slices(a, b);
	test_one_flip(a);
	test_two_flips(a);
	test_mismatch(a);
	test_shift(a);
	test_poison(a);
	test_zero_buffer(a);
	free(a);
	free(b);
	return check_done();
}
