#include "efabench/a2av.h"
#include "efabench/status.h"
#include "core/arrays.h"

#include <stdlib.h>
#include <string.h>

int eb_a2av_init(struct eb_a2av *a, struct eb_engine *e, int nranks, size_t chunk, int window)
{
	size_t nx = (size_t)nranks * (size_t)e->nchan;

	memset(a, 0, sizeof(*a));
	a->e = e;
	a->nranks = nranks;
	a->nchan = e->nchan;
	a->chunk = chunk;
	a->x = eb_xfers_new(e, (int)nx, window);
	a->block = eb_arrays(&a->all, nx, sizeof(*a->all), &a->waits, nx, sizeof(*a->waits),
			     &a->expect, nx, sizeof(*a->expect), &a->total, (size_t)nranks,
			     sizeof(*a->total), &a->pools, (size_t)nranks, sizeof(*a->pools), NULL);
	if (a->x == NULL || a->block == NULL) {
		eb_a2av_fini(a);
		return EB_ENOMEM;
	}
	return EB_OK;
}

void eb_a2av_fini(struct eb_a2av *a)
{
	if (a->x != NULL)
		eb_xfers_free(a->x, a->nranks * a->nchan);
	free(a->block);
	memset(a, 0, sizeof(*a));
}

void eb_a2av_sync(struct eb_a2av *a, int rank)
{
	int p, ch;

	for (p = 0; p < a->nranks; p++) {
		for (ch = 0; ch < a->nchan; ch++)
			a->expect[(size_t)p * (size_t)a->nchan + (size_t)ch] =
			    p == rank ? 0 : eb_imm_count(a->e, p, ch);
		a->total[p] = p == rank ? 0 : eb_imm_count(a->e, p, EB_CHAN_ANY);
	}
}

void eb_a2av_begin(struct eb_a2av *a)
{
	a->n = 0;
	a->nw = 0;
}

int eb_a2av_write(struct eb_a2av *a, enum eb_layout l, int pooled, int rank, int peer,
		  const char *buf, size_t len, const struct eb_mr *mrs, const struct eb_rkey *rkeys,
		  uint64_t roff, uint32_t imm, struct eb_xfer **xs)
{
	struct eb_xfer *x = &a->x[(size_t)peer * (size_t)a->nchan];
	int k, armed = len == 0 ? 0
		       : pooled ? eb_layout_write_pooled(x, &a->pools[peer], a->nchan, peer, buf,
							 len, a->chunk, mrs, rkeys, roff, imm)
				: eb_layout_write(l, x, a->nchan, rank, peer, buf, len, a->chunk,
						  mrs, rkeys, roff, imm);

	for (k = 0; k < armed; k++)
		a->all[a->n++] = &x[k];
	*xs = x;
	return armed;
}

void eb_a2av_expect(struct eb_a2av *a, enum eb_layout l, int pooled, int rank, int peer, size_t len)
{
	int ch;

	if (len == 0)
		return;
	if (pooled) { /* peer's writes to me take the same pools: all its chunks, any channel */
		a->total[peer] += eb_xfer_nchunks(len, a->chunk);
		a->waits[a->nw++] = (struct eb_imm_wait){
		    .peer = peer, .chan = EB_CHAN_ANY, .count = a->total[peer]};
		return;
	}
	for (ch = 0; ch < a->nchan; ch++) {
		uint64_t *want = &a->expect[(size_t)peer * (size_t)a->nchan + (size_t)ch];
		uint64_t more = eb_layout_chunks(l, a->nchan, peer, rank, len, a->chunk, ch);

		if (more == 0)
			continue;
		*want += more;
		a->waits[a->nw++] = (struct eb_imm_wait){.peer = peer, .chan = ch, .count = *want};
	}
}

int eb_a2av_wait(struct eb_a2av *a, uint64_t deadline)
{
	return eb_xfer_wait_imm(a->e, a->all, a->n, a->waits, a->nw, deadline);
}
