/* moe's events and stages: an op's start, then per leg the moments its producers had packed
 * (moe_stages.h), had pushed every put of the items that cross the fabric and had made
 * everything (stores into same-host peers and its own slots included), the rank's side done and
 * the last arrival after it, so that each leg splits into what this rank spent sending (packing,
 * pushing, storing, then completing) and what it then waited for the others. */
#include "moe_stages.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdlib.h>

enum { PER_OP = 11 }; /* start, then per leg: packed, pushed, made, sent, in */

/* [op * 11]: start, then per leg packed, pushed, made, sent, in. */
const char *const eb_moe_events[MOE_NEVENTS] = {
    "dispatch",		"dispatch 0 packed", "dispatch 0 pushed", "dispatch 0 made",
    "dispatch 0 sent",	"dispatch 0 in",     "dispatch 1 packed", "dispatch 1 pushed",
    "dispatch 1 made",	"dispatch 1 sent",   "dispatch 1 in",	  "combine",
    "combine 0 packed", "combine 0 pushed",  "combine 0 made",	  "combine 0 sent",
    "combine 0 in",	"combine 1 packed",  "combine 1 pushed",  "combine 1 made",
    "combine 1 sent",	"combine 1 in"};

/* A leg from event `begin` (the op's start or the leg before's in), its events from `at`. */
#define LEG(name, begin, at)                                                                       \
	{name " send", begin, at + 3, "producer", 0}, {name " pack", begin, at, "producer", 1},    \
	    {name " push", at, at + 1, "producer", 1},                                             \
	    {name " store", at + 1, at + 2, "producer", 1},                                        \
	    {name " complete", at + 2, at + 3, "proxy", 1},                                        \
	{                                                                                          \
		name " wait", at + 3, at + 4, "arrival", 0                                         \
	}

const struct eb_op_stage eb_moe_stages[MOE_NSTAGES] = {
    LEG("dispatch 0", 0, 1), LEG("dispatch 1", 5, 6), LEG("combine 0", 11, 12),
    LEG("combine 1", 16, 17)};

void eb_moe_stamp_next(const struct eb_ctx *c, struct mstate *st)
{
	st->stamp_id = (++st->stamps << 20) | (uint64_t)c->rank;
}

void eb_moe_stamp_at(struct eb_ctx *c, struct mstate *st, int which, int at, int leg, uint64_t ns)
{
	int ev = which * PER_OP + (at == MOE_AT_START ? 0 : 1 + 5 * leg + (at - MOE_AT_PACKED));

	if (at == MOE_AT_START || at == MOE_AT_IN)
		st->leg_start = ns;
	if (c->o->stages_every > 0)
		eb_event(c, ev, st->stamp_id, ns, 0);
}

void eb_moe_stamp(struct eb_ctx *c, struct mstate *st, int which, int at, int leg)
{
	eb_moe_stamp_at(c, st, which, at, leg, eb_now_ns());
}

/* The producer whose stamp k (0 pushed, 1 made) is the latest; -1 if none stamped. */
static int latest(const struct mstate *st, int k)
{
	int p, last = -1;

	for (p = 0; st->made != NULL && p < st->producers; p++)
		if (st->made[3 * p + k] != 0 &&
		    (last < 0 || st->made[3 * p + k] > st->made[3 * last + k]))
			last = p;
	return last;
}

/* GPU producers: a stamp kept until the phase ends. */
static int keep(struct mstate *st, struct moe_late l)
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
	st->late[st->nlate++] = l;
	return EB_OK;
}

int eb_moe_stamp_made(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	int k, p, rc = EB_OK, ev = which * PER_OP + 1 + 5 * leg;

	for (k = 0; k < 2 && rc == EB_OK; k++) {
		uint64_t t, pack;

		if ((p = latest(st, k)) < 0)
			continue;
		t = st->made[3 * p + k];
		pack = st->made[3 * p + 2];
		if (st->init == INIT_GPU) {
			if (k == 0)
				rc = keep(st, (struct moe_late){.id = st->stamp_id,
								.t = pack,
								.ev = ev,
								.base = st->leg_start,
								.cap = t});
			if (rc == EB_OK)
				rc = keep(st, (struct moe_late){
						  .id = st->stamp_id, .t = t, .ev = ev + 1 + k});
			continue;
		}
		if (k == 0)
			eb_moe_stamp_at(c, st, which, MOE_AT_PACKED, leg,
					st->leg_start + pack < t ? st->leg_start + pack : t);
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
	for (i = 0; rc == EB_OK && i < st->nlate; i++) {
		const struct moe_late *l = &st->late[i];
		uint64_t ns = eb_gpu_clock_host(&st->gclk, l->base ? l->cap : l->t);

		if (l->base != 0 && l->base + l->t < ns)
			ns = l->base + l->t;
		eb_event(c, l->ev, l->id, ns, 0);
	}
	if (rc == EB_OK && st->gclk.unc_ns > c->gpu_clock_unc_ns)
		c->gpu_clock_unc_ns = st->gclk.unc_ns;
	st->nlate = 0;
	return rc;
}
