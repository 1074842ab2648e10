/* Payload patterns: every 8-byte word is a function of (source, target, offset, epoch), so a
 * misplaced, stale or torn chunk is caught wherever it lands. */
#ifndef EFABENCH_PATTERN_H
#define EFABENCH_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_pattern {
	uint32_t src, dst;
	uint64_t epoch;
};

/* An epoch no sender ever uses: targets poison their buffers with it before each phase. */
#define EB_EPOCH_POISON UINT64_MAX

/* The word at byte offset off (a multiple of 8). */
uint64_t eb_pattern_word(const struct eb_pattern *p, uint64_t off);

/* Fill len bytes; the buffer holds the payload's bytes starting at payload offset base
 * (a multiple of 8), so slices of one payload can be filled or checked on their own. */
void eb_pattern_fill(const struct eb_pattern *p, void *buf, size_t len, uint64_t base);

/* Number of 8-byte words (the last may be partial) that differ; the byte offset of the first
 * wrong word is stored in *first_bad (untouched when none). */
uint64_t eb_pattern_check(const struct eb_pattern *p, const void *buf, size_t len, uint64_t base,
			  uint64_t *first_bad);

#ifdef __cplusplus
}
#endif

#endif
