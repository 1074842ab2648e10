/* One cell of a pair measurement: the buffers every rank keeps for it, and a measurement of
 * rank me <-> peer on one channel (write bandwidth and 8-byte latency, every write acknowledged,
 * the last one checked byte for byte). pairs.h schedules cells into tournament rounds. */
#ifndef EB_BENCH_PAIRS_CELL_H
#define EB_BENCH_PAIRS_CELL_H

#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/mr.h"
#include "efabench/region.h"
#include "efabench/xfer.h"
#include "report/matrix_view.h"

#include <stddef.h>
#include <stdint.h>

struct eb_pairs {
	struct eb_engine *e;
	struct eb_region src, dst; /* size + 64: the last 64 bytes carry the latency writes */
	size_t size, chunk;
	int window;
	uint64_t *ctl;		  /* [chan][2]: a message out, a message in */
	struct eb_region ctl_reg; /* ctl on every channel */
	struct eb_xfer data, small, tx, rx;
};

/* Buffers of size bytes of kind mem on every channel, keys exchanged (collective). */
int eb_pairs_open(struct eb_pairs **p, struct eb_engine *e, size_t size, enum eb_mem_kind mem,
		  size_t chunk, int window);
void eb_pairs_close(struct eb_pairs *p);

/* Measure me <-> peer on chan: me writes when initiator, else it is the target. Both sides
 * call it with the same arguments but `initiator`; the initiator fills out (the target fills
 * out->wrong). iters writes of size (after warm writes), lat_iters 8-byte round trips. */
int eb_pairs_cell(struct eb_pairs *p, int peer, int initiator, int chan, long warm, long iters,
		  long lat_iters, double timeout_s, struct eb_cell *out);

#endif
