#define _GNU_SOURCE /* cpu_set_t in efabench/topo.h */
#include "proxy_state.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "core/log.h"

/* ---- CPU-initiated writes ---- */

/* One put as the CPU issues it: chunks over the variant's channels, then its completions. */
static int cpu_put(struct eb_ctx *c, struct pstate *st)
{
	struct eb_xfer *xs[64];
	int k, n = eb_layout_write(c->var->layout, st->x, c->e->nchan, 0, c->peer,
				   eb_payload_at(&st->src, 0), c->bytes, c->chunk, st->src.reg.mr,
				   eb_region_key(&st->dst.reg, c->peer, 0), 0, EB_IMM(0, 0));

	for (k = 0; k < n; k++)
		xs[k] = &st->x[k];
	return eb_xfer_wait(xs, n, EB_DEADLINE_LAZY);
}

/* n single-chunk writes with a window of them in flight, the way small messages go fastest. */
static int cpu_rate(struct eb_ctx *c, struct pstate *st, long n)
{
	const struct eb_rkey *k = eb_region_key(&st->dst.reg, c->peer, 0);

	return eb_xfer_burst_slots(c->e, 0, c->peer, eb_payload_at(&st->src, 0), c->bytes,
				   eb_region_desc(&st->src.reg, 0), k->addr, k->key, EB_IMM(0, 0),
				   n, (long)(eb_px_span(c, st) / c->bytes), 0, st->window,
				   eb_engine_deadline(c->e));
}

/* The target of a CPU-initiated phase: every chunk of n puts counted on its channel. */
static int cpu_target(struct eb_ctx *c, struct pstate *st, long n)
{
	int ch, nw, rc = EB_OK;
	long i;

	/* A put at a time, each with its own deadline: the phase may outlast --timeout, a
	 * silent rank 0 may not. */
	for (i = 0; i < n && rc == EB_OK; i++) {
		for (ch = 0, nw = 0; ch < c->e->nchan; ch++) {
			uint64_t k = (c->var->tag & 0xff) == T_CPU_RATE
					 ? (ch == 0 ? 1 : 0)
					 : eb_layout_chunks(c->var->layout, c->e->nchan, 0, c->rank,
							    c->bytes, c->chunk, ch);

			if (k == 0)
				continue;
			st->expect[ch] += k;
			st->waits[nw++] =
			    (struct eb_imm_wait){.peer = 0, .chan = ch, .count = st->expect[ch]};
		}
		rc = eb_xfer_wait_imm(c->e, NULL, 0, st->waits, nw, EB_DEADLINE_LAZY);
	}
	return rc;
}

static int cpu_phase(struct eb_ctx *c, struct pstate *st, long n, double *samples)
{
	uint64_t t0 = eb_now_ns(), t;
	long i;
	int rc;

	if (c->role == EB_ROLE_TARGET)
		return cpu_target(c, st, n);
	if ((c->var->tag & 0xff) == T_CPU_RATE) {
		rc = cpu_rate(c, st, n);
		if (rc == EB_OK && samples != NULL) /* phase-timed: one sample */
			samples[0] = (double)(eb_now_ns() - t0) * 1e-9 / (double)n;
		return rc;
	}
	for (i = 0; i < n; i++) {
		rc = cpu_put(c, st);
		if (rc != EB_OK)
			return rc;
		t = eb_now_ns();
		if (samples != NULL)
			samples[i] = (double)(t - t0) * 1e-9;
		t0 = t;
	}
	return EB_OK;
}

/* The calling thread onto the proxy thread's CPU while that thread is not running (where it
 * cannot move, it runs where it is): what eb_topo_thread_back needs to put it back. */
void *eb_px_to_proxy_cpu(const struct pstate *st)
{
	void *was = NULL;

	if (st->cpu >= 0)
		(void)eb_topo_move_thread(st->cpu, &was);
	return was;
}

/* The CPU posts (and a target progresses) from the proxy thread's CPU: on shm every write
 * passes a lock between the two ranks' threads, and what that costs depends on which two
 * cores hold it (4 KiB writes of unpinned threads: 15.7-22.5 Gbps between runs on one host).
 * The ratio to the proxy should not. */
int eb_px_cpu_run(struct eb_ctx *c, struct pstate *st, long n, double *samples)
{
	void *was = eb_px_to_proxy_cpu(st);
	int rc = cpu_phase(c, st, n, samples);

	eb_topo_thread_back(was);
	return rc;
}
