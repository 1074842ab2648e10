/* The GPU<->CPU floor: the round trip of one word each way through mapped host memory, the
 * least any GPU-to-CPU protocol can take on this machine (in CPU mode, a CPU thread plays the
 * GPU over plain memory). */
#ifndef EB_GPU_FLOOR_H
#define EB_GPU_FLOOR_H

#include <stdint.h>

/* iters round trips into rtt_ns: on_gpu 1, a kernel on the current GPU pings through mapped
 * memory; 0, a CPU thread does. 0 or a negative status after one line. */
int eb_floor_measure(int on_gpu, int iters, double timeout_s, double *rtt_ns);

/* One measurement of a GPU's clock against the host's. The clocks count nanoseconds from far
 * apart (%globaltimer from 1970, CLOCK_MONOTONIC from boot): offsets and times stay integers,
 * as a double near 1.7e18 holds only every 256th nanosecond. */
struct eb_clock_point {
	int64_t off_ns; /* to add to a GPU time (%globaltimer) for the host's CLOCK_MONOTONIC */
	int64_t at_ns;	/* the host time that offset holds at */
	double unc_ns;	/* how far the offset may be off */
};

/* The current GPU's clock against the host's: each round trip's host echo taken as its middle,
 * the mean over the shortest quarter of 2,048 trips placed at the mean time of their echoes,
 * within half the longest trip of that quarter. EB_ENOTSUP without CUDA. */
int eb_floor_gpu_clock(double timeout_s, struct eb_clock_point *p);

/* The offset of n round trips: GPU stamps as ping i left (sent) and its pong came back (back),
 * the host's as it echoed (echo), the echo taken as the trip's middle; the mean over the
 * shortest quarter, at the mean time of their echoes, within half the longest of them. 0, or
 * EB_EINVAL (n < 1) or EB_ENOMEM after one line. */
int eb_clock_place(const uint64_t *sent, const uint64_t *back, const uint64_t *echo, int n,
		   struct eb_clock_point *p);

/* A GPU's clock on the host's as a line through two measurements, before (0) and after (1) a
 * run: the two drift apart by microseconds per second. */
struct eb_gpu_clock {
	int64_t at[2], off[2]; /* host time of each measurement, and the offset it found */
	double unc_ns;	       /* the larger uncertainty of the two */
};

/* Measurement `which` of k, now. 0 or a negative status after one line. */
int eb_gpu_clock_mark(struct eb_gpu_clock *k, int which, double timeout_s);

/* GPU time t (%globaltimer ns) on the host's clock: the offset on the line at its time (the
 * first measurement's alone while the second is missing). */
uint64_t eb_gpu_clock_host(const struct eb_gpu_clock *k, uint64_t t);

/* Round trips a floor's p50 and p99 are taken over where nothing else says. */
#define EB_FLOOR_ROUND_TRIPS 10000

/* As a run hook's samples: n round trips, the seconds of each into samples (NULL: measured
 * and dropped, as in a warm-up). 0 or a negative status after one line. */
int eb_floor_samples(int on_gpu, long n, double timeout_s, double *samples);

#endif
