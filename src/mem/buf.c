#define _DEFAULT_SOURCE /* madvise */
#include "efabench/buf.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Large buffers get 2 MiB alignment and transparent huge pages where the kernel offers them
 * on request: fewer TLB misses and page pins per transfer, and run-to-run numbers that do not
 * depend on whether the kernel happened to back a buffer with huge pages. */
#define HUGE_ALIGN (2u << 20)

void *eb_buf_alloc_host(size_t len, const char *what)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t rounded;
	void *p = NULL;

	if (page <= 0)
		page = 4096;
	if (len >= HUGE_ALIGN)
		page = HUGE_ALIGN;
	rounded = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	if (rounded == 0)
		rounded = (size_t)page;
	if (posix_memalign(&p, (size_t)page, rounded) != 0) {
		eb_err("cannot allocate %zu bytes for %s", len, what);
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	if (len >= HUGE_ALIGN)
		(void)madvise(p, rounded, MADV_HUGEPAGE); /* advice only: fine if refused */
#endif
	/* Touch every page now so first-touch faults never land in a timed loop. */
	memset(p, 0, rounded);
	return p;
}

void eb_buf_free_host(void *buf)
{
	free(buf);
}
