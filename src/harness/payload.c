/* Payload buffers for the harness's benchmarks: one memory kind per run, registered with the
 * fabric, and for staged runs a pinned bounce buffer with the copies to and from the GPU
 * pipelined chunk by chunk. */
#include "bench.h"
#include "core/clock.h"
#include "core/log.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

int eb_payload_alloc(struct eb_ctx *c, struct eb_payload *p, size_t len, const char *what)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->bounce.dmabuf_fd = -1;
	p->staged = c->staged;
	rc = eb_mem_alloc(&p->pay, c->mem, len, what);
	if (rc != EB_OK || !p->staged)
		return rc;
	rc = eb_mem_alloc(&p->bounce, EB_MEM_PINNED, len, what);
	if (rc != EB_OK)
		goto free_pay;
	return EB_OK;

free_pay:
	eb_mem_free(&p->pay);
	return rc;
}

/* A failed eb_mem_alloc_shared leaves nothing behind to free. */
int eb_payload_alloc_shared(struct eb_ctx *c, struct eb_payload *p, size_t len, const char *what)
{
	memset(p, 0, sizeof(*p));
	p->bounce.dmabuf_fd = -1;
	return eb_mem_alloc_shared(&p->pay, c->mem, len, what);
}

void eb_payload_free(struct eb_payload *p)
{
	eb_region_close(&p->reg);
	eb_mem_free(&p->pay);
	eb_mem_free(&p->bounce);
}

struct eb_mem *eb_payload_nic(struct eb_payload *p)
{
	return p->staged ? &p->bounce : &p->pay;
}

char *eb_payload_at(struct eb_payload *p, size_t off)
{
	return (char *)eb_payload_nic(p)->ptr + off;
}

static void note_path(struct eb_ctx *c, enum eb_reg_path path)
{
	if (path > c->path)
		c->path = path;
}

int eb_payload_reg(struct eb_ctx *c, struct eb_payload *p, unsigned use, int exchange)
{
	int rc = eb_region_reg(&p->reg, c->e, eb_payload_nic(p), use, exchange);

	if (rc == EB_OK && p->reg.mem.ptr != NULL)
		note_path(c, p->reg.mr[0].path);
	return rc;
}

int eb_payload_reg_one(struct eb_ctx *c, struct eb_payload *p, int chan, unsigned use)
{
	int rc = eb_region_reg_one(&p->reg, c->e, chan, eb_payload_nic(p), use);

	if (rc == EB_OK)
		note_path(c, p->reg.mr[0].path);
	return rc;
}

/* About 50 ms of pattern work on the host: well inside the 2 s a liveness question waits. */
#define PIECE ((size_t)256 << 20)

static size_t piece(size_t done, size_t len)
{
	return len - done < PIECE ? len - done : PIECE;
}

int eb_payload_fill(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
		    const struct eb_pattern *pat)
{
	size_t k = 0;
	int rc;

	do {
		rc = eb_mem_fill(&p->pay, off + k, piece(k, len), pat, k);
		k += piece(k, len);
		if (rc == EB_OK && k < len)
			rc = eb_boot_check(c->e->boot);
	} while (rc == EB_OK && k < len);
	return rc;
}

uint64_t eb_payload_check(struct eb_ctx *c, const struct eb_payload *p, size_t off, size_t len,
			  const struct eb_pattern *pat)
{
	uint64_t wrong = 0;
	size_t k = 0;

	do {
		wrong += eb_mem_check(&p->pay, off + k, piece(k, len), pat, k, NULL);
		k += piece(k, len);
		if (k < len)
			(void)eb_boot_check(c->e->boot); /* a lost peer fails the next collective */
	} while (k < len);
	return wrong;
}

int eb_payload_stage(struct eb_ctx *c, struct eb_payload *p, struct eb_xfer *xs, int n)
{
	int i, rc = EB_OK;

	for (i = 0; i < n && p->staged && rc == EB_OK; i++) {
		size_t off = (size_t)(xs[i].buf - (char *)p->bounce.ptr);

		rc = eb_xfer_stage(&xs[i], c->stage, (char *)p->pay.ptr + off, c->serial);
	}
	return rc;
}

/* ---- staged RMA targets ---- */

struct span {
	size_t off, len;
};

struct eb_land {
	struct eb_ctx *c;
	struct eb_payload *p;
	size_t slot;
	struct span *q; /* copies waiting for a free staging slot (a ring) */
	size_t qhead, qtail, qcap;
	int *tickets; /* copies in flight */
	int nt, tcap;
	int failed;
};

static void push(struct eb_land *l, size_t off, size_t len)
{
	if (l->qtail - l->qhead == l->qcap) {
		size_t cap = l->qcap ? 2 * l->qcap : 256, i;
		struct span *q = malloc(sizeof(*q) * cap);

		if (q == NULL) {
			eb_err("out of memory queueing staged copies");
			l->failed = 1;
			return;
		}
		for (i = l->qhead; i < l->qtail; i++)
			q[i - l->qhead] = l->q[i % l->qcap];
		free(l->q);
		l->q = q;
		l->qtail -= l->qhead;
		l->qhead = 0;
		l->qcap = cap;
	}
	l->q[l->qtail++ % l->qcap] = (struct span){off, len};
}

static int land_step(struct eb_land *l);

/* The engine saw chunk `tag` of source src land on chan: queue its copy to the GPU. */
static void arrival(void *arg, int src, int chan, uint32_t tag)
{
	struct eb_land *l = arg;
	struct eb_ctx *c = l->c;
	size_t off, len, first = (size_t)tag * c->chunk;

	if (c->serial || c->var == NULL ||
	    !eb_layout_slice(c->var->layout, c->e->nchan, src, c->rank, c->bytes, chan, &off,
			     &len) ||
	    first >= len)
		return;
	push(l, (size_t)src * l->slot + off + first,
	     len - first < c->chunk ? len - first : c->chunk);
	/* Start it now, overlapped with the chunks still on the wire. */
	if (land_step(l) != EB_OK)
		l->failed = 1;
}

/* Start what is queued while staging slots are free; retire finished copies. */
static int land_step(struct eb_land *l)
{
	char *dev = l->p->pay.ptr, *host = l->p->bounce.ptr;
	int i, rc;

	while (l->qhead < l->qtail) {
		struct span s = l->q[l->qhead % l->qcap];
		int t;

		if (l->nt == l->tcap) {
			int cap = l->tcap ? 2 * l->tcap : 64, *grown;

			grown = realloc(l->tickets, sizeof(*grown) * (size_t)cap);
			if (grown == NULL)
				return EB_ENOMEM;
			l->tickets = grown;
			l->tcap = cap;
		}
		rc = eb_stage_start(l->c->stage, dev + s.off, host + s.off, s.len, 1, &t);
		if (rc == EB_AGAIN)
			break;
		if (rc != EB_OK)
			return rc;
		l->tickets[l->nt++] = t;
		l->qhead++;
	}
	for (i = 0; i < l->nt;) {
		rc = eb_stage_test(l->c->stage, l->tickets[i]);
		if (rc < 0)
			return rc;
		if (rc == 1)
			l->tickets[i] = l->tickets[--l->nt];
		else
			i++;
	}
	return l->failed ? EB_ENOMEM : EB_OK;
}

int eb_payload_land(struct eb_ctx *c, struct eb_payload *p, size_t slot)
{
	struct eb_land *l;

	if (!p->staged)
		return EB_OK;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return EB_ENOMEM;
	l->c = c;
	l->p = p;
	l->slot = slot;
	c->land = l;
	c->e->on_write = arrival;
	c->e->on_write_arg = l;
	return EB_OK;
}

void eb_payload_unland(struct eb_ctx *c)
{
	struct eb_land *l = c->land;

	if (l == NULL)
		return;
	c->e->on_write = NULL;
	free(l->q);
	free(l->tickets);
	free(l);
	c->land = NULL;
}

int eb_payload_landed(struct eb_ctx *c, uint64_t deadline)
{
	struct eb_land *l = c->land;
	int src, rc;

	if (l == NULL)
		return EB_OK;
	if (c->serial) /* everything has arrived: copy it all now */
		for (src = 0; src < c->nranks; src++)
			if (l->slot > 0 ? src != c->rank : src == 0)
				push(l, (size_t)src * l->slot, c->bytes);
	if (deadline == EB_DEADLINE_LAZY) /* copies are under way: time them from now */
		deadline = eb_deadline(c->o->fab.timeout_s);
	for (;;) {
		rc = land_step(l);
		if (rc != EB_OK || (l->qhead == l->qtail && l->nt == 0))
			return rc;
		if (eb_now_ns() > deadline) {
			eb_err("staged copies to the GPU did not finish within %.1f s",
			       c->o->fab.timeout_s);
			return EB_ETIMEDOUT;
		}
		sched_yield();
	}
}

size_t eb_payload_slots(size_t bytes, size_t room, int spread, size_t in_flight, long writes)
{
	size_t most = room / bytes;
	size_t n = spread || in_flight > most ? most : in_flight;

	return bytes * (n < (size_t)writes ? n : (size_t)writes);
}
