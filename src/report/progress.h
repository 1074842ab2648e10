/* A progress line on stderr while a run goes: what runs now and an estimate of the time left.
 * Only when stderr is a terminal and -q was not given; rank 0 draws it. */
#ifndef EB_REPORT_PROGRESS_H
#define EB_REPORT_PROGRESS_H

#include <stdint.h>

struct eb_progress {
	int on, shown;
	double total, done; /* units of work: any measure that grows with the time a step takes */
	uint64_t t0;
	const char *what; /* the subcommand */
};

/* on: whether to draw at all (rank 0, not quiet); drawn only if stderr is a terminal too. */
void eb_progress_start(struct eb_progress *p, int on, const char *what, double total);
/* About to run `step` (e.g. "SinglePin 64M"), worth `work` units. */
void eb_progress_step(struct eb_progress *p, const char *step, double work);
/* Wipe the line (before printing to the same terminal, and at the end). */
void eb_progress_clear(struct eb_progress *p);

#endif
