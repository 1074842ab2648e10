#include "efabench/buf.h"
#include "../core/log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *eb_buf_alloc_host(size_t len, const char *what)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t rounded;
	void *p = NULL;

	if (page <= 0)
		page = 4096;
	rounded = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	if (rounded == 0)
		rounded = (size_t)page;
	if (posix_memalign(&p, (size_t)page, rounded) != 0) {
		eb_err("cannot allocate %zu bytes for %s", len, what);
		return NULL;
	}
	/* Touch every page now so first-touch faults never land in a timed loop. */
	memset(p, 0, rounded);
	return p;
}

void eb_buf_free_host(void *buf)
{
	free(buf);
}
