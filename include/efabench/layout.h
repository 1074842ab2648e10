/* Channel layouts: how one buffer from rank src to rank dst is spread over the channels.
 *   single       the whole buffer on channel 0
 *   split        cut across every channel: floor(len / nchan) bytes each, the remainder on
 *                the last; each slice chunked and windowed on its own channel
 *   round-robin  the whole buffer on channel (src + dst) % nchan, the same on both sides, so
 *                a rank's transfers to different peers use different NICs */
#ifndef EFABENCH_LAYOUT_H
#define EFABENCH_LAYOUT_H

#include "efabench/xfer.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum eb_layout { EB_LAYOUT_SINGLE, EB_LAYOUT_SPLIT, EB_LAYOUT_RR };

const char *eb_layout_name(enum eb_layout l);
/* "single", "split", "round-robin" (or "rr"); EB_EINVAL for anything else. */
int eb_layout_parse(const char *name, enum eb_layout *l);

/* The part of a len-byte buffer that channel ch carries: 1 and (*off, *n), or 0 when the
 * channel carries nothing. */
int eb_layout_slice(enum eb_layout l, int nchan, int src, int dst, size_t len, int ch, size_t *off,
		    size_t *n);

/* Chunks (immediate data arrivals) channel ch carries for that transfer. */
uint64_t eb_layout_chunks(enum eb_layout l, int nchan, int src, int dst, size_t len, size_t chunk,
			  int ch);

/* Arm one write transfer per channel the layout uses, from buf (local registrations mrs, one
 * per channel) to the peer's buffer described by rkeys (one per channel) at byte offset
 * roff; xs must hold nchan initialised transfers. Returns how many were armed. */
int eb_layout_write(enum eb_layout l, struct eb_xfer *xs, int nchan, int src, int dst,
		    const char *buf, size_t len, size_t chunk, const struct eb_mr *mrs,
		    const struct eb_rkey *rkeys, uint64_t roff, uint32_t imm);

/* The split layout balanced: one pooled write per channel (eb_xfer_write_pooled), so the
 * channels take the buffer's chunks as their windows free up and finish together. Returns
 * nchan; the target counts arrivals over all channels. */
int eb_layout_write_pooled(struct eb_xfer *xs, struct eb_xfer_pool *pool, int nchan, int dst,
			   const char *buf, size_t len, size_t chunk, const struct eb_mr *mrs,
			   const struct eb_rkey *rkeys, uint64_t roff, uint32_t imm);

#ifdef __cplusplus
}
#endif

#endif
