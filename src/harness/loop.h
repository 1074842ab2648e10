/* The one measuring loop: every timed phase of every benchmark (the harness's sweeps, ipc's
 * launch shapes, matrix and doctor's pair cells, queue's producers) runs through
 * eb_loop_phase. A phase prepares what it moves, aligns the ranks, runs its iterations back
 * to back and checks what arrived: once at the end, or after every iteration with `check`.
 * The loop times each iteration with one timestamp (it ends one and starts the next), or the
 * benchmark times itself (GPU clocks, one launch for many iterations) and hands its samples
 * over; either way the caller gets seconds per iteration for the same statistics. */
#ifndef EB_BENCH_LOOP_H
#define EB_BENCH_LOOP_H

#include <stdint.h>

struct eb_loop {
	void *arg; /* handed to every hook */
	/* Fill what goes out for the next epoch, poison what comes in (NULL: nothing). */
	int (*prepare)(void *arg);
	/* Align every rank before the clock starts (NULL: alone). */
	int (*align)(void *arg);
	/* One iteration, timed by the loop... */
	int (*iter)(void *arg, long i);
	/* ...or n iterations that time themselves: samples (NULL during warm-up) receives *got
	 * seconds per iteration (n, or one per batch where the benchmark times batches). */
	int (*run)(void *arg, long n, double *samples, long *got);
	/* After each iteration the loop timed (testing aids: corrupt what landed; NULL). */
	void (*after)(void *arg, long i);
	/* Before checking: wait until every rank's iterations are done (NULL: nothing). */
	int (*settle)(void *arg);
	/* Add the wrong words this rank received to *wrong (NULL: nothing to check). */
	int (*verify)(void *arg, uint64_t *wrong);
	int check;	/* verify after every iteration, each with its own prepare and alignment */
	int align_each; /* align before every iteration (the clock restarts after it) */
};

/* iters iterations; samples (NULL: an untimed warm-up) receives the seconds of each, and
 * *nsamples (may be NULL) how many it holds; *wrong gets the wrong words found added. */
int eb_loop_phase(const struct eb_loop *l, long iters, double *samples, long *nsamples,
		  uint64_t *wrong);

#endif
