#include "progress.h"
#include "core/clock.h"

#include <stdio.h>
#include <unistd.h>

void eb_progress_start(struct eb_progress *p, int on, const char *what, double total)
{
	p->on = on && isatty(STDERR_FILENO);
	p->shown = 0;
	p->total = total;
	p->done = 0;
	p->t0 = eb_now_ns();
	p->what = what;
}

void eb_progress_step(struct eb_progress *p, const char *step, double work)
{
	double secs = (double)(eb_now_ns() - p->t0) * 1e-9;

	if (!p->on)
		return;
	/* Time left: the time so far per unit done, times the units left (none known yet: "-"). */
	if (p->done > 0 && p->total > p->done)
		fprintf(stderr, "\r\033[K[%s] %s  %.0f%%  ~%.0f s left", p->what, step,
			100.0 * p->done / p->total, secs / p->done * (p->total - p->done));
	else
		fprintf(stderr, "\r\033[K[%s] %s", p->what, step);
	fflush(stderr);
	p->done += work;
	p->shown = 1;
}

void eb_progress_clear(struct eb_progress *p)
{
	if (!p->on || !p->shown)
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	p->shown = 0;
}
