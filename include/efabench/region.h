/* A registered region: a buffer of one memory kind registered on every channel of an engine,
 * and, for remote access, every rank's key to its own region gathered (collective), made in
 * one call and undone in one. A local region is a small host buffer registered on one channel
 * for sends and receives. Every benchmark and the proxy keep their buffers this way. */
#ifndef EFABENCH_REGION_H
#define EFABENCH_REGION_H

#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/mr.h"

#ifdef __cplusplus
extern "C" {
#endif

struct eb_region {
	struct eb_engine *e;
	struct eb_mem mem; /* the buffer; freed by eb_region_close when the region allocated it */
	int owned;
	int chan;	       /* a local region's one channel; -1: every channel */
	struct eb_mr *mr;      /* [channels] (one for a local region) */
	struct eb_rkey *rkeys; /* [rank][channel] of every rank's region, where exchanged */
};

/* len bytes of kind, registered for use (enum eb_use bits) on every channel; with exchange, every
 * rank's keys gathered, so every rank must call it (what names the buffer in errors). */
int eb_region_alloc(struct eb_region *r, struct eb_engine *e, enum eb_mem_kind kind, size_t len,
		    unsigned use, int exchange, const char *what);

/* The same over memory the caller keeps (m NULL or empty: nothing of this rank's is exposed,
 * but it takes part in the exchange and learns the others' keys). */
int eb_region_reg(struct eb_region *r, struct eb_engine *e, struct eb_mem *m, unsigned use,
		  int exchange);

/* Memory the caller keeps, of any kind, registered on one channel for local operations. */
int eb_region_reg_one(struct eb_region *r, struct eb_engine *e, int chan, struct eb_mem *m,
		      unsigned use);

/* len bytes of host memory at buf, likewise (acknowledgements, control words). */
int eb_region_local(struct eb_region *r, struct eb_engine *e, int chan, void *buf, size_t len,
		    unsigned use);

/* Deregister, free what it allocated, and leave r empty (an empty region closes too). */
void eb_region_close(struct eb_region *r);

/* The descriptor for local operations on chan, and rank's key on chan. */
static inline void *eb_region_desc(const struct eb_region *r, int chan)
{
	return r->mr == NULL ? NULL : r->mr[r->chan >= 0 ? 0 : chan].desc;
}

static inline const struct eb_rkey *eb_region_key(const struct eb_region *r, int rank, int chan)
{
	return &r->rkeys[(size_t)rank * (size_t)r->e->nchan + (size_t)chan];
}

#ifdef __cplusplus
}
#endif

#endif
