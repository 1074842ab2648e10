#include "proxy_stamps.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

int eb_pstamps_open(struct eb_pstamps *s, int gpu, uint32_t every, uint32_t n, int ranks)
{
	size_t i;
	int rc;

	memset(s, 0, sizeof(*s));
	s->mem.dmabuf_fd = -1;
	if (every == 0)
		return EB_OK;
	s->every = every;
	s->n = n > 0 ? n : 1;
	s->ranks = ranks;
	/* GPU producers write their stamps over PCIe: pinned and mapped. */
	rc = eb_mem_alloc(&s->mem, gpu ? EB_MEM_PINNED : EB_MEM_HOST,
			  sizeof(*s->ring) * (size_t)s->n, "the stamps of sampled puts");
	if (rc != EB_OK)
		return rc;
	s->ring = s->mem.ptr;
	memset(s->ring, 0, sizeof(*s->ring) * (size_t)s->n);
	s->sampled = calloc((size_t)ranks, sizeof(*s->sampled));
	s->count = calloc((size_t)ranks * EB_STAMP_WRAP, sizeof(*s->count));
	s->last = calloc((size_t)ranks, sizeof(*s->last));
	if (s->sampled == NULL || s->count == NULL || s->last == NULL) {
		eb_err("out of memory for the proxy's stamps");
		eb_pstamps_close(s);
		return EB_ENOMEM;
	}
	for (i = 0; i < (size_t)ranks; i++)
		s->last[i] = -1;
	return EB_OK;
}

void eb_pstamps_close(struct eb_pstamps *s)
{
	if (s->ring != NULL)
		eb_mem_free(&s->mem);
	free(s->sampled);
	free(s->count);
	free(s->last);
	free(s->arr);
	memset(s, 0, sizeof(*s));
	s->mem.dmabuf_fd = -1;
}

struct eb_put_stamp *eb_pstamps_dev(const struct eb_pstamps *s)
{
	return s->ring == NULL ? NULL : s->mem.dev_ptr != NULL ? s->mem.dev_ptr : s->mem.ptr;
}

uint32_t eb_pstamps_tag(struct eb_pstamps *s, struct eb_put_stamp *st, int peer, size_t nchunks)
{
	uint32_t k = s->sampled[peer]++;

	st->peer = (uint32_t)peer;
	st->sample = k;
	return EB_STAMP_TAG | (k % EB_STAMP_WRAP) << 8 |
	       (uint32_t)(nchunks < EB_STAMP_CHUNKS ? nchunks : EB_STAMP_CHUNKS);
}

/* The sample index a tag's 7 bits name: the one nearest after the latest that arrived (tags
 * arrive about in order: a put 64 samples or more late is not told apart). */
static int64_t whole_index(int64_t last, uint32_t low)
{
	int64_t base = last < 0 ? 0 : last - (int64_t)EB_STAMP_WRAP / 2, k;

	k = base - base % (int64_t)EB_STAMP_WRAP + (int64_t)low;
	return k < base ? k + (int64_t)EB_STAMP_WRAP : k;
}

void eb_pstamps_chunk(struct eb_pstamps *s, int src, uint32_t tag)
{
	uint32_t low = (tag >> 8) & (EB_STAMP_WRAP - 1), n = tag & 0xffu;
	uint16_t *c;
	int64_t k;

	if (!(tag & EB_STAMP_TAG) || s->count == NULL || src < 0 || src >= s->ranks ||
	    n >= EB_STAMP_CHUNKS)
		return;
	c = &s->count[(size_t)src * EB_STAMP_WRAP + low];
	if (++*c < n)
		return;
	*c = 0; /* every chunk of the put is here */
	k = whole_index(s->last[src], low);
	s->last[src] = k > s->last[src] ? k : s->last[src];
	if (s->narr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct eb_arrival *a = realloc(s->arr, cap * sizeof(*a));

		if (a == NULL) {
			s->lost = 1;
			return;
		}
		s->arr = a;
		s->cap = cap;
	}
	s->arr[s->narr++] = (struct eb_arrival){(uint32_t)src, (uint32_t)k, eb_now_ns()};
}

void eb_pstamps_clear(struct eb_pstamps *s)
{
	if (s->ring != NULL)
		memset(s->ring, 0, sizeof(*s->ring) * (size_t)s->n);
	s->narr = 0;
}
