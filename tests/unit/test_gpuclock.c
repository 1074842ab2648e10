/* The GPU clock's offset from round trips (eb_clock_place) and a GPU time on the host's clock
 * (eb_gpu_clock_host), at the clocks' real magnitudes: %globaltimer counts from 1970 (about
 * 1.77e18 ns), CLOCK_MONOTONIC from boot. A double there holds every 256th nanosecond only,
 * and the clocks drift apart by tens of nanoseconds over one ping-pong: both are checked to
 * the nanosecond. */
#include "check.h"
#include "gpu/floor.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define TRIPS 2048
#define GPU0  1765432109876543211ull		 /* a %globaltimer reading (ns since 1970) */
#define OFF0  (-(int64_t)GPU0 + 5000000000123ll) /* the host at 5,000 s after boot */
#define DRIFT 25e-6				 /* 25 us/s, as an H100 against CLOCK_MONOTONIC */

/* The host's time at GPU time x, to the nanosecond. */
static uint64_t host_at(uint64_t x)
{
	return (uint64_t)((int64_t)x + OFF0 + llround(DRIFT * (double)(x - GPU0)));
}

/* Trip i's half round trip, 600 to 2,647 ns, all different: the shortest quarter is those
 * under 1,112. */
static uint64_t half(int i)
{
	return 600 + (uint64_t)((i * 1237) % TRIPS);
}

/* A ping-pong whose legs differ by skew ns (the ping's leg longer), with its true answer. */
static void check_place(int64_t skew)
{
	static uint64_t sent[TRIPS], back[TRIPS], echo[TRIPS];
	double drift = 0, at = 0;
	int64_t want_off, want_at;
	struct eb_clock_point p;
	int i, kept = 0;

	for (i = 0; i < TRIPS; i++) {
		uint64_t x;

		sent[i] = GPU0 + (uint64_t)i * 3000 + (uint64_t)((i * 7919) % 500);
		x = sent[i] + half(i) + (uint64_t)skew; /* the echo, on the GPU's clock */
		echo[i] = host_at(x);
		back[i] = sent[i] + 2 * half(i);
		if (half(i) < 600 + TRIPS / 4) {
			drift += DRIFT * (double)(x - GPU0);
			at += (double)(echo[i] - echo[0]);
			kept++;
		}
	}
	/* Each kept trip's offset is the true one at its echo plus skew: the clock's line is
	 * straight, so their mean is the true offset at their mean time, plus skew. */
	want_off = OFF0 + llround(drift / kept) + skew;
	want_at = (int64_t)echo[0] + llround(at / kept);
	CHECK(eb_clock_place(sent, back, echo, TRIPS, &p) == 0);
	CHECK(llabs(p.off_ns - want_off) <= 1);
	CHECK(llabs(p.at_ns - want_at) <= 1);
	CHECK(p.unc_ns == 600 + TRIPS / 4 - 1); /* the longest kept trip's half */
	CHECK((double)llabs(p.off_ns - (want_off - skew)) <= p.unc_ns);
}

static void check_host(void)
{
	struct eb_gpu_clock k = {.at = {5000000000123ll, 0}, .off = {OFF0, 0}, .unc_ns = 1500};
	uint64_t t = GPU0 + 4000000001ull; /* an odd nanosecond: a double would round it */

	CHECK(eb_gpu_clock_host(&k, t) == (uint64_t)((int64_t)t + OFF0));
	/* A second measurement 10 ms later found 250 ns more: 5 ms after the first, half that. */
	k.at[1] = k.at[0] + 10000000;
	k.off[1] = OFF0 + 250;
	t = (uint64_t)(k.at[0] + 5000000 - OFF0) + 1;
	CHECK(eb_gpu_clock_host(&k, t) == (uint64_t)(k.at[0] + 5000000 + 1 + 125));
}

int main(void)
{
	struct eb_clock_point p;
	uint64_t none = 0;

	CHECK(eb_clock_place(&none, &none, &none, 0, &p) < 0); /* no trip: refused */
	check_place(0);
	check_place(200);
	check_place(-150);
	check_host();
	return check_done();
}
