/* Several zeroed arrays in one allocation, so that arrays made together are freed together:
 * one failure path and one free instead of a chain of each. */
#ifndef EB_CORE_ARRAYS_H
#define EB_CORE_ARRAYS_H

#include <stddef.h>

/* Arguments are (void *where, size_t n, size_t size) triples ending with NULL, where is the
 * address of an array pointer: each gets n zeroed elements of size bytes, aligned for any
 * type. Returns the block to free (the arrays go with it), or NULL when out of memory (every
 * pointer set to NULL). */
void *eb_arrays(void *where, ...);

#endif
