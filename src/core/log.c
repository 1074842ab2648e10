#include "log.h"

#include <stdio.h>

static int log_rank = -1;
static int log_verbose;

void eb_log_set_rank(int rank)
{
	log_rank = rank;
}

void eb_log_set_verbose(int verbose)
{
	log_verbose = verbose;
}

int eb_log_verbose(void)
{
	return log_verbose;
}

static void emit(const char *level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (log_rank >= 0)
		n = snprintf(line, sizeof(line), "efabench[rank %d]: %s", log_rank, level);
	else
		n = snprintf(line, sizeof(line), "efabench: %s", level);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* One fputs per line so lines of different ranks do not interleave. */
	fprintf(stderr, "%s\n", line);
}

void eb_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void eb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("warning: ", fmt, ap);
	va_end(ap);
}

void eb_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}
