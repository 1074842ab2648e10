/* Byte sizes written the way users type them: 4096, 256K, 1M, 1G (binary multiples). */
#ifndef EFABENCH_SIZE_H
#define EFABENCH_SIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse a size of at least 1 byte: digits, then an optional K, M, G or T (×1024^n),
 * optionally followed by "B" or "iB". Returns 0 or EB_EINVAL (no message printed). */
int eb_size_parse(const char *text, uint64_t *bytes);

/* Parse a positive integer count that fits in an int (iterations, ranks, windows).
 * min is the smallest value accepted. Returns 0 or EB_EINVAL. */
int eb_count_parse(const char *text, long min, long *value);

/* Shortest exact spelling: 1048576 -> "1M", 1000 -> "1000". buf needs 24 bytes. */
const char *eb_size_format(uint64_t bytes, char *buf, size_t len);

/* The sweep b, b*f, b*f^2 ... <= e, then e itself if the last step fell short of it.
 * Returns the number of sizes written (at most max), or EB_EINVAL. */
int eb_size_sweep(uint64_t begin, uint64_t end, uint64_t factor, uint64_t *sizes, int max);

#ifdef __cplusplus
}
#endif

#endif
