#include "efabench/layout.h"
#include "efabench/status.h"

#include <string.h>

const char *eb_layout_name(enum eb_layout l)
{
	return l == EB_LAYOUT_SINGLE ? "single" : l == EB_LAYOUT_SPLIT ? "split" : "round-robin";
}

int eb_layout_parse(const char *name, enum eb_layout *l)
{
	if (strcmp(name, "single") == 0)
		*l = EB_LAYOUT_SINGLE;
	else if (strcmp(name, "split") == 0)
		*l = EB_LAYOUT_SPLIT;
	else if (strcmp(name, "round-robin") == 0 || strcmp(name, "rr") == 0)
		*l = EB_LAYOUT_RR;
	else
		return EB_EINVAL;
	return EB_OK;
}

int eb_layout_slice(enum eb_layout l, int nchan, int src, int dst, size_t len, int ch, size_t *off,
		    size_t *n)
{
	size_t base;

	switch (l) {
	case EB_LAYOUT_SINGLE:
		*off = 0;
		*n = len;
		return ch == 0;
	case EB_LAYOUT_RR:
		*off = 0;
		*n = len;
		return ch == (src + dst) % nchan;
	case EB_LAYOUT_SPLIT:
		base = len / (size_t)nchan;
		*off = base * (size_t)ch;
		*n = ch == nchan - 1 ? len - *off : base;
		return *n > 0;
	}
	return 0;
}

uint64_t eb_layout_chunks(enum eb_layout l, int nchan, int src, int dst, size_t len, size_t chunk,
			  int ch)
{
	size_t off, n;

	if (!eb_layout_slice(l, nchan, src, dst, len, ch, &off, &n))
		return 0;
	return eb_xfer_nchunks(n, chunk);
}

int eb_layout_write(enum eb_layout l, struct eb_xfer *xs, int nchan, int src, int dst,
		    const char *buf, size_t len, size_t chunk, const struct eb_mr *mrs,
		    const struct eb_rkey *rkeys, uint64_t roff, uint32_t imm)
{
	int ch, armed = 0;
	size_t off, n;

	for (ch = 0; ch < nchan; ch++) {
		if (!eb_layout_slice(l, nchan, src, dst, len, ch, &off, &n))
			continue;
		/* Each channel's registration of the peer's buffer has its own key. */
		eb_xfer_write(&xs[armed++], ch, dst, buf + off, n, chunk, mrs[ch].desc,
			      rkeys[ch].addr + roff + off, rkeys[ch].key, imm);
	}
	return armed;
}

int eb_layout_write_pooled(struct eb_xfer *xs, struct eb_xfer_pool *pool, int nchan, int dst,
			   const char *buf, size_t len, size_t chunk, const struct eb_mr *mrs,
			   const struct eb_rkey *rkeys, uint64_t roff, uint32_t imm)
{
	int ch;

	for (ch = 0; ch < nchan; ch++)
		eb_xfer_write_pooled(&xs[ch], pool, ch, dst, buf, len, chunk, mrs[ch].desc,
				     rkeys[ch].addr + roff, rkeys[ch].key, imm);
	/* At most half the chunks go out at once, evenly; the rest to whichever channel frees
	 * a slot first. Without the cap the first channel's window would take them all. */
	pool->cap = (int)((pool->nchunks + 2 * (size_t)nchan - 1) / (2 * (size_t)nchan));
	if (pool->cap > xs[0].window)
		pool->cap = xs[0].window;
	return nchan;
}
