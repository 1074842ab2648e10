/* Monotonic time in nanoseconds and absolute deadlines built from it. */
#ifndef EB_CORE_CLOCK_H
#define EB_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t eb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t eb_deadline(double seconds)
{
	return eb_now_ns() + (uint64_t)(seconds * 1e9);
}

/* Milliseconds left until deadline, clamped to [0, cap_ms] for poll(). */
static inline int eb_ms_left(uint64_t deadline, int cap_ms)
{
	uint64_t now = eb_now_ns();
	uint64_t ms;

	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > (uint64_t)cap_ms ? cap_ms : (int)ms;
}

#endif
