/* A tiny assertion helper for the unit tests: CHECK(cond) counts and reports, check_done()
 * prints the tally and gives the exit code. One test file is one translation unit. */
#ifndef EB_TESTS_CHECK_H
#define EB_TESTS_CHECK_H

#include <stdio.h>

static int check_passed;
static int check_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			fflush(stderr);                                                            \
		}                                                                                  \
	} while (0)

static inline int check_done(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	fflush(stdout);
	return check_failed == 0 ? 0 : 1;
}

#endif
