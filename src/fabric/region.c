#include "efabench/region.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

static void empty(struct eb_region *r, struct eb_engine *e, int chan)
{
	memset(r, 0, sizeof(*r));
	r->e = e;
	r->chan = chan;
	r->mem.dmabuf_fd = -1;
	r->mem.gpu = -1;
}

int eb_region_reg(struct eb_region *r, struct eb_engine *e, struct eb_mem *m, unsigned use,
		  int exchange)
{
	int has = m != NULL && m->ptr != NULL && m->len > 0, rc;

	empty(r, e, -1);
	r->mr = calloc((size_t)e->nchan, sizeof(*r->mr));
	if (exchange)
		r->rkeys = calloc((size_t)e->nchan * (size_t)e->size, sizeof(*r->rkeys));
	if (r->mr == NULL || (exchange && r->rkeys == NULL)) {
		eb_err("out of memory for the registrations of %zu channels", (size_t)e->nchan);
		eb_region_close(r);
		return EB_ENOMEM;
	}
	rc = eb_engine_reg_mem(e, has ? m : NULL, 0, has ? m->len : 0, use, r->mr, r->rkeys);
	if (rc != EB_OK) {
		eb_region_close(r);
		return rc;
	}
	if (has) /* after registering: it may have exported the memory (a DMA-BUF's fd) */
		r->mem = *m;
	return EB_OK;
}

int eb_region_alloc(struct eb_region *r, struct eb_engine *e, enum eb_mem_kind kind, size_t len,
		    unsigned use, int exchange, const char *what)
{
	struct eb_mem m;
	int rc = eb_mem_alloc(&m, kind, len, what);

	if (rc != EB_OK) {
		empty(r, e, -1);
		return rc;
	}
	rc = eb_region_reg(r, e, &m, use, exchange);
	if (rc != EB_OK) {
		eb_mem_free(&m);
		return rc;
	}
	r->owned = 1;
	return EB_OK;
}

int eb_region_reg_one(struct eb_region *r, struct eb_engine *e, int chan, struct eb_mem *m,
		      unsigned use)
{
	int rc;

	empty(r, e, chan);
	r->mr = calloc(1, sizeof(*r->mr));
	if (r->mr == NULL) {
		eb_err("out of memory for a registration");
		return EB_ENOMEM;
	}
	rc = eb_mr_reg_mem(&e->chan[chan], m, 0, m->len, use, r->mr);
	if (rc != EB_OK) {
		eb_region_close(r);
		return rc;
	}
	r->mem = *m;
	return EB_OK;
}

int eb_region_local(struct eb_region *r, struct eb_engine *e, int chan, void *buf, size_t len,
		    unsigned use)
{
	struct eb_mem m = {.kind = EB_MEM_HOST, .ptr = buf, .len = len, .gpu = -1, .dmabuf_fd = -1};

	return eb_region_reg_one(r, e, chan, &m, use);
}

void eb_region_close(struct eb_region *r)
{
	struct eb_engine *e = r->e;

	if (r->mr != NULL && r->chan >= 0)
		eb_mr_dereg(r->mr);
	else if (r->mr != NULL && e != NULL)
		eb_engine_dereg(e, r->mr);
	if (r->owned)
		eb_mem_free(&r->mem);
	free(r->mr);
	free(r->rkeys);
	empty(r, e, -1);
}
