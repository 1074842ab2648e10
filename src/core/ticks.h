/* Per-iteration timestamps cheaper than clock_gettime: the TSC where the kernel keeps its own
 * time with it (then it is invariant and synchronised across cores), else CLOCK_MONOTONIC.
 * Ticks have no fixed unit: a caller scales them by a span it also timed with eb_now_ns. */
#ifndef EB_CORE_TICKS_H
#define EB_CORE_TICKS_H

#include "clock.h"

#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

extern int eb_ticks_tsc; /* set by eb_ticks_init */

/* Decide once per process; returns the source's name ("tsc" or "clock_gettime"). */
const char *eb_ticks_init(void);

static inline uint64_t eb_ticks(void)
{
#if defined(__x86_64__)
	if (eb_ticks_tsc)
		return __rdtsc();
#endif
	return eb_now_ns();
}

#endif
