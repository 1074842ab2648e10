#include "arrays.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#define ALIGN alignof(max_align_t)

static size_t rounded(size_t n)
{
	return (n + ALIGN - 1) / ALIGN * ALIGN;
}

void *eb_arrays(void *where, ...)
{
	va_list ap, again;
	size_t total = 0, off = 0;
	char *block;
	void *w;

	va_start(ap, where);
	va_copy(again, ap);
	for (w = where; w != NULL; w = va_arg(ap, void *)) {
		size_t n = va_arg(ap, size_t), size = va_arg(ap, size_t);

		total += rounded(n * size);
	}
	va_end(ap);
	block = calloc(1, total > 0 ? total : 1);
	for (w = where; w != NULL; w = va_arg(again, void *)) {
		size_t n = va_arg(again, size_t), size = va_arg(again, size_t);

		*(void **)w = block != NULL ? block + off : NULL;
		off += rounded(n * size);
	}
	va_end(again);
	return block;
}
