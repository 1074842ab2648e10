/* Where a put's time goes: the events of the sampled puts (1 in --stages) as the proxy library
 * stamped them (eb_put_stamp: the producer's push and, for a blocking put, its quiet's return;
 * the proxy thread's seen, posted and done) and the target's arrivals, handed to the schedule
 * after each timed phase on the host's clock (a GPU producer's through the GPU clock's offset,
 * measured before and after the phase). */
#define _GNU_SOURCE /* cpu_set_t in efabench/topo.h */
#include "proxy_state.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/clock.h"
#include "gpu/floor.h"

enum { EV_PUSH, EV_SEEN, EV_POSTED, EV_DONE, EV_ARRIVED, EV_BACK };

const char *const eb_px_events[EB_PX_NEVENTS] = {"push", "seen",    "posted",
						 "done", "arrived", "back"};

const struct eb_op_stage eb_px_stages[EB_PX_NSTAGES] = {
    /* the producer's push until the proxy takes it */
    {"queue", EV_PUSH, EV_SEEN, "producer"},
    /* taken until its first chunk is posted */
    {"proxy", EV_SEEN, EV_POSTED, "proxy"},
    /* posted until its last chunk completes here */
    {"local completion", EV_POSTED, EV_DONE, "provider"},
    /* posted until every chunk is counted there */
    {"to the target", EV_POSTED, EV_ARRIVED, "provider"},
    /* complete until the producer's quiet sees it */
    {"back to producer", EV_DONE, EV_BACK, "completion"},
};

/* A sample's id: the target and the put's index among those sampled to it, alike on both. */
static uint64_t id_of(uint32_t peer, uint32_t sample)
{
	return (uint64_t)peer << 40 | sample;
}

int eb_px_gpu_clock(struct eb_ctx *c, struct pstate *st, int which)
{
	void *was;
	int rc;

	if (c->o->stages_every == 0 || eb_px_opts(c)->on_cpu || c->rank != 0)
		return EB_OK;
	/* On the CPU that stamps "seen" (free before the thread starts and after it stops), as
	 * queue measures on its consumer's: the two figures are compared. */
	was = eb_px_to_proxy_cpu(st);
	rc = eb_gpu_clock_mark(&st->gpu_clk, which, c->o->fab.timeout_s);
	eb_topo_thread_back(was);
	if (rc == EB_OK && (which == 0 || st->gpu_clk.unc_ns > c->gpu_clock_unc_ns))
		c->gpu_clock_unc_ns = st->gpu_clk.unc_ns;
	return rc;
}

/* A producer's stamp on the host's clock: CPU producers share it. */
static uint64_t on_host(const struct eb_ctx *c, const struct pstate *st, uint64_t t)
{
	return eb_px_opts(c)->on_cpu ? t : eb_gpu_clock_host(&st->gpu_clk, t);
}

/* Rank 0: its sampled puts' events; a producer's stamps are on its clock (GPU: shifted). */
static void initiator(struct eb_ctx *c, struct pstate *st)
{
	uint32_t n, i;
	struct eb_put_stamp *s = eb_proxy_stamps(st->px, &n);

	for (i = 0; s != NULL && i < n; i++) {
		uint64_t id = id_of(s[i].peer, s[i].sample);
		int tid = (int)s[i].producer;

		if (s[i].pos == 0 || s[i].posted == 0)
			continue; /* not sampled, or a put that moved nothing */
		if (s[i].push > 0)
			eb_event(c, EV_PUSH, id, on_host(c, st, s[i].push), tid);
		eb_event(c, EV_SEEN, id, s[i].seen, 0);
		eb_event(c, EV_POSTED, id, s[i].posted, 0);
		if (s[i].done > 0)
			eb_event(c, EV_DONE, id, s[i].done, 0);
		if (s[i].back > 0)
			eb_event(c, EV_BACK, id, on_host(c, st, s[i].back), tid);
	}
}

void eb_px_stage_events(struct eb_ctx *c, struct pstate *st, int timed)
{
	const struct eb_arrival *a;
	size_t n, i;

	if (c->o->stages_every == 0)
		return;
	if (timed && c->role == EB_ROLE_INIT)
		initiator(c, st);
	n = eb_proxy_arrivals(st->px, &a);
	for (i = 0; timed && c->role == EB_ROLE_TARGET && i < n; i++)
		eb_event(c, EV_ARRIVED, id_of((uint32_t)c->rank, a[i].sample), a[i].t, 0);
	eb_proxy_stamps_clear(st->px);
}
