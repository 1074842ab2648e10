/* eb_size_parse, eb_count_parse, eb_size_format and eb_size_sweep. */
#include "check.h"
#include "efabench/size.h"
#include "efabench/status.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)

static int parses_to(const char *text, uint64_t want)
{
	uint64_t got = 0;
	int rc = eb_size_parse(text, &got);

	if (rc != EB_OK || got != want) {
		fprintf(stderr, "  eb_size_parse(\"%s\"): rc %d, %llu (want %llu)\n", text, rc,
			(unsigned long long)got, (unsigned long long)want);
		return 0;
	}
	return 1;
}

static int rejects(const char *text)
{
	uint64_t got = 12345;
	int rc = eb_size_parse(text, &got);

	if (rc != EB_EINVAL) {
		fprintf(stderr, "  eb_size_parse(\"%s\") accepted: rc %d, %llu\n", text, rc,
			(unsigned long long)got);
		return 0;
	}
	return 1;
}

static void test_size_parse(void)
{
	uint64_t v = 0;

	CHECK(parses_to("4096", 4096));
	CHECK(parses_to("1", 1));
	CHECK(parses_to("256K", 256 * KiB));
	CHECK(parses_to("1M", MiB));
	CHECK(parses_to("1G", GiB));
	CHECK(parses_to("1T", TiB));
	CHECK(parses_to("2KiB", 2 * KiB));
	CHECK(parses_to("8MB", 8 * MiB));
	CHECK(parses_to("3GiB", 3 * GiB));
	CHECK(parses_to("16B", 16));
	CHECK(parses_to("007", 7));
	/* Lower case suffixes. */
	CHECK(parses_to("1k", KiB));
	CHECK(parses_to("1m", MiB));
	CHECK(parses_to("1g", GiB));
	CHECK(parses_to("1t", TiB));
	CHECK(parses_to("4kib", 4 * KiB));
	CHECK(parses_to("4kb", 4 * KiB));
	CHECK(parses_to("4mB", 4 * MiB));
	/* The largest values that still fit. */
	CHECK(parses_to("18446744073709551615", UINT64_MAX));
	CHECK(parses_to("16777215T", 16777215ull * TiB));
	CHECK(parses_to("17179869183G", 17179869183ull * GiB));

	CHECK(rejects(""));
	CHECK(rejects("0"));
	CHECK(rejects("0K"));
	CHECK(rejects("-1"));
	CHECK(rejects("+5"));
	CHECK(rejects(" 5"));
	CHECK(rejects("5 "));
	CHECK(rejects("1 K"));
	CHECK(rejects("1X"));
	CHECK(rejects("1.5M"));
	CHECK(rejects("K"));
	CHECK(rejects("B"));
	CHECK(rejects("1KK"));
	CHECK(rejects("1Ki"));
	CHECK(rejects("1iB"));
	CHECK(rejects("1KiBx"));
	CHECK(rejects("1BB"));
	CHECK(rejects("0x10"));
	CHECK(rejects("1e3"));
	CHECK(rejects("99999999999999999999"));
	CHECK(rejects("18446744073709551616"));
	CHECK(rejects("99999999999T"));
	CHECK(rejects("16777216T"));
	CHECK(rejects("17179869184G"));
	CHECK(eb_size_parse(NULL, &v) == EB_EINVAL);
}

static int counts_to(const char *text, long min, long want)
{
	long got = -12345;
	int rc = eb_count_parse(text, min, &got);

	if (rc != EB_OK || got != want) {
		fprintf(stderr, "  eb_count_parse(\"%s\", %ld): rc %d, %ld (want %ld)\n", text, min,
			rc, got, want);
		return 0;
	}
	return 1;
}

static int count_rejects(const char *text, long min)
{
	long got = -12345;
	int rc = eb_count_parse(text, min, &got);

	if (rc != EB_EINVAL || got != -12345) {
		fprintf(stderr, "  eb_count_parse(\"%s\", %ld) accepted: rc %d, %ld\n", text, min,
			rc, got);
		return 0;
	}
	return 1;
}

static void test_count_parse(void)
{
	CHECK(counts_to("10", 1, 10));
	CHECK(counts_to("1", 1, 1));
	CHECK(counts_to("0", 0, 0));
	CHECK(counts_to("2", 2, 2));
	CHECK(counts_to("007", 1, 7));
	CHECK(counts_to("2147483647", 1, INT_MAX));
	CHECK(counts_to("-1", -5, -1));
	CHECK(counts_to("-5", -5, -5));

	CHECK(count_rejects("0", 1));
	CHECK(count_rejects("1", 2));
	CHECK(count_rejects("-1", 0));
	CHECK(count_rejects("-6", -5));
	CHECK(count_rejects("1e3", 1));
	CHECK(count_rejects("", 0));
	CHECK(count_rejects("-", 0));
	CHECK(count_rejects("+5", 0));
	CHECK(count_rejects(" 5", 0));
	CHECK(count_rejects("5 ", 0));
	CHECK(count_rejects("5K", 0));
	CHECK(count_rejects("0x10", 0));
	CHECK(count_rejects("2147483648", 1));
	CHECK(count_rejects("4294967296", 1));
	CHECK(count_rejects("99999999999999999999999", 1));
	CHECK(count_rejects(NULL, 0));
}

static int formats_as(uint64_t bytes, const char *want)
{
	char buf[24];
	const char *got;

	memset(buf, 'x', sizeof(buf));
	got = eb_size_format(bytes, buf, sizeof(buf));
	if (got != buf || strcmp(got, want) != 0) {
		fprintf(stderr, "  eb_size_format(%llu) = \"%s\" (want \"%s\")\n",
			(unsigned long long)bytes, got, want);
		return 0;
	}
	return 1;
}

static void test_size_format(void)
{
	int k;

	CHECK(formats_as(1048576, "1M"));
	CHECK(formats_as(1000, "1000"));
	CHECK(formats_as(1536, "1536"));
	CHECK(formats_as(3072, "3K"));
	CHECK(formats_as(1, "1"));
	CHECK(formats_as(0, "0"));
	CHECK(formats_as(KiB, "1K"));
	CHECK(formats_as(1536 * KiB, "1536K"));
	CHECK(formats_as(GiB, "1G"));
	CHECK(formats_as(TiB, "1T"));
	CHECK(formats_as(3 * TiB, "3T"));
	CHECK(formats_as(1ull << 50, "1024T"));
	CHECK(formats_as(UINT64_MAX, "18446744073709551615"));

	/* Whatever it prints parses back to the same number. */
	for (k = 0; k < 64; k++) {
		uint64_t vals[3] = {1ull << k, 3ull << k, (1ull << k) + 1};
		int i;

		for (i = 0; i < 3; i++) {
			char buf[24];
			uint64_t back = 0;

			if (k == 63 && i == 1)
				continue; /* 3 << 63 overflows */
			eb_size_format(vals[i], buf, sizeof(buf));
			CHECK(eb_size_parse(buf, &back) == EB_OK && back == vals[i]);
		}
	}
}

static void test_size_sweep(void)
{
	uint64_t s[80];
	int n, i;

	n = eb_size_sweep(256 * KiB, 64 * MiB, 2, s, 80);
	CHECK(n == 9);
	for (i = 0; i < n && i < 9; i++)
		CHECK(s[i] == (256 * KiB) << i);
	CHECK(eb_size_sweep(256 * KiB, 64 * MiB, 2, s, 9) == 9);
	CHECK(eb_size_sweep(256 * KiB, 64 * MiB, 2, s, 8) == EB_EINVAL);

	/* 1000 8000 64000 512000, then 3M itself because 4096000 would pass it. */
	n = eb_size_sweep(1000, 3 * MiB, 8, s, 80);
	CHECK(n == 5);
	if (n == 5) {
		CHECK(s[0] == 1000);
		CHECK(s[1] == 8000);
		CHECK(s[2] == 64000);
		CHECK(s[3] == 512000);
		CHECK(s[4] == 3 * MiB);
	}
	CHECK(eb_size_sweep(1000, 3 * MiB, 8, s, 5) == 5);
	CHECK(eb_size_sweep(1000, 3 * MiB, 8, s, 4) == EB_EINVAL);

	/* An end that the factor reaches exactly is not repeated. */
	n = eb_size_sweep(1, 8, 2, s, 80);
	CHECK(n == 4 && s[3] == 8);
	n = eb_size_sweep(1, 9, 2, s, 80);
	CHECK(n == 5 && s[3] == 8 && s[4] == 9);

	/* begin == end gives exactly one size. */
	n = eb_size_sweep(4096, 4096, 2, s, 80);
	CHECK(n == 1 && s[0] == 4096);
	n = eb_size_sweep(1, 1, 2, s, 1);
	CHECK(n == 1 && s[0] == 1);

	/* No overflow near the top of the range. */
	n = eb_size_sweep(1, UINT64_MAX, 2, s, 80);
	CHECK(n == 65);
	if (n == 65) {
		CHECK(s[63] == 1ull << 63);
		CHECK(s[64] == UINT64_MAX);
	}
	n = eb_size_sweep(1, 10, UINT64_MAX, s, 80);
	CHECK(n == 2 && s[0] == 1 && s[1] == 10);
	n = eb_size_sweep(3, UINT64_MAX, 1ull << 32, s, 80);
	CHECK(n == 3 && s[0] == 3 && s[1] == 3ull << 32 && s[2] == UINT64_MAX);

	CHECK(eb_size_sweep(2 * MiB, MiB, 2, s, 80) == EB_EINVAL);
	CHECK(eb_size_sweep(KiB, MiB, 1, s, 80) == EB_EINVAL);
	CHECK(eb_size_sweep(KiB, MiB, 0, s, 80) == EB_EINVAL);
	CHECK(eb_size_sweep(0, MiB, 2, s, 80) == EB_EINVAL);
	CHECK(eb_size_sweep(KiB, KiB, 2, s, 0) == EB_EINVAL);
}

int main(void)
{
	test_size_parse();
	test_count_parse();
	test_size_format();
	test_size_sweep();
	return check_done();
}
