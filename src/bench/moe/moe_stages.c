/* moe's events and stages: an op's start, then per leg the moments its producers had pushed
 * every put of the items that cross the fabric and had made everything (stores into same-host
 * peers and its own slots included), the rank's side done and the last arrival after it, so
 * that each leg splits into what this rank spent sending (pushing, storing, then completing)
 * and what it then waited for the others. */
#include "moe_stages.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>

enum { PER_OP = 9 }; /* start, then per leg: pushed, made, sent, in */

/* [op * 9]: start, then per leg pushed, made, sent, in. */
const char *const eb_moe_events[MOE_NEVENTS] = {
    "dispatch",	      "dispatch 0 pushed", "dispatch 0 made",  "dispatch 0 sent",
    "dispatch 0 in",  "dispatch 1 pushed", "dispatch 1 made",  "dispatch 1 sent",
    "dispatch 1 in",  "combine",	   "combine 0 pushed", "combine 0 made",
    "combine 0 sent", "combine 0 in",	   "combine 1 pushed", "combine 1 made",
    "combine 1 sent", "combine 1 in"};

/* A leg from event `begin` (the op's start or the leg before's in), its events from `at`. */
#define LEG(name, begin, at)                                                                       \
	{name " send", begin, at + 2, "producer", 0}, {name " push", begin, at, "producer", 1},    \
	    {name " store", at, at + 1, "producer", 1},                                            \
	    {name " complete", at + 1, at + 2, "proxy", 1},                                        \
	{                                                                                          \
		name " wait", at + 2, at + 3, "arrival", 0                                         \
	}

const struct eb_op_stage eb_moe_stages[MOE_NSTAGES] = {
    LEG("dispatch 0", 0, 1), LEG("dispatch 1", 4, 5), LEG("combine 0", 9, 10),
    LEG("combine 1", 13, 14)};

void eb_moe_stamp_next(const struct eb_ctx *c, struct mstate *st)
{
	st->stamp_id = (++st->stamps << 20) | (uint64_t)c->rank;
}

void eb_moe_stamp_at(struct eb_ctx *c, const struct mstate *st, int which, int at, int leg,
		     uint64_t ns)
{
	int ev = which * PER_OP + (at == MOE_AT_START ? 0 : 1 + 4 * leg + (at - MOE_AT_PUSHED));

	if (c->o->stages_every > 0)
		eb_event(c, ev, st->stamp_id, ns, 0);
}

void eb_moe_stamp(struct eb_ctx *c, const struct mstate *st, int which, int at, int leg)
{
	eb_moe_stamp_at(c, st, which, at, leg, eb_now_ns());
}

/* The latest of the producers' stamps k (0 pushed, 1 made). */
static uint64_t latest(const struct mstate *st, int k)
{
	uint64_t last = 0;
	int p;

	for (p = 0; st->made != NULL && p < st->producers; p++)
		last = st->made[2 * p + k] > last ? st->made[2 * p + k] : last;
	return last;
}

/* GPU producers: a stamp kept until the phase ends. */
static int keep(struct mstate *st, int ev, uint64_t t)
{
	if (st->nlate == st->late_cap) {
		size_t cap = st->late_cap ? 2 * st->late_cap : 256;
		struct moe_late *v = realloc(st->late, cap * sizeof(*v));

		if (v == NULL) {
			eb_err("out of memory for the GPU producers' stamps");
			return EB_ENOMEM;
		}
		st->late = v;
		st->late_cap = cap;
	}
	st->late[st->nlate++] = (struct moe_late){.id = st->stamp_id, .t = t, .ev = ev};
	return EB_OK;
}

int eb_moe_stamp_made(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	int k, rc = EB_OK;

	for (k = 0; k < 2 && rc == EB_OK; k++) {
		uint64_t t = latest(st, k);

		if (t == 0)
			continue;
		if (st->init == INIT_GPU)
			rc = keep(st, which * PER_OP + 1 + 4 * leg + k, t);
		else
			eb_moe_stamp_at(c, st, which, MOE_AT_PUSHED + k, leg, t);
	}
	return rc;
}

int eb_moe_stamps_open(struct eb_ctx *c, struct mstate *st)
{
	st->nlate = 0;
	if (st->init != INIT_GPU || st->made == NULL)
		return EB_OK;
	return eb_gpu_clock_mark(&st->gclk, 0, c->o->fab.timeout_s);
}

int eb_moe_stamps_close(struct eb_ctx *c, struct mstate *st)
{
	size_t i;
	int rc;

	if (st->nlate == 0)
		return EB_OK;
	rc = eb_gpu_clock_mark(&st->gclk, 1, c->o->fab.timeout_s);
	for (i = 0; rc == EB_OK && i < st->nlate; i++)
		eb_event(c, st->late[i].ev, st->late[i].id,
			 eb_gpu_clock_host(&st->gclk, st->late[i].t), 0);
	if (rc == EB_OK && st->gclk.unc_ns > c->gpu_clock_unc_ns)
		c->gpu_clock_unc_ns = st->gclk.unc_ns;
	st->nlate = 0;
	return rc;
}
