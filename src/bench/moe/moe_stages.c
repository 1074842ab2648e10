/* moe's events and stages: an op's start, then per leg the rank's side done and the last
 * arrival after it, so that each leg splits into what this rank spent sending and what it then
 * waited for the others. */
#include "moe_stages.h"
#include "core/clock.h"

/* [op * 5]: start, then leg 0 sent, in, leg 1 sent, in. */
const char *const eb_moe_events[MOE_NEVENTS] = {
    "dispatch", "dispatch 0 sent", "dispatch 0 in", "dispatch 1 sent", "dispatch 1 in",
    "combine",	"combine 0 sent",  "combine 0 in",  "combine 1 sent",  "combine 1 in"};

const struct eb_stage eb_moe_stages[MOE_NSTAGES] = {
    {"dispatch 0 send", 0, 1, "producer"}, {"dispatch 0 wait", 1, 2, "arrival"},
    {"dispatch 1 send", 2, 3, "producer"}, {"dispatch 1 wait", 3, 4, "arrival"},
    {"combine 0 send", 5, 6, "producer"},  {"combine 0 wait", 6, 7, "arrival"},
    {"combine 1 send", 7, 8, "producer"},  {"combine 1 wait", 8, 9, "arrival"},
};

void eb_moe_stamp_next(const struct eb_ctx *c, struct mstate *st)
{
	st->stamp_id = (++st->stamps << 20) | (uint64_t)c->rank;
}

void eb_moe_stamp(struct eb_ctx *c, const struct mstate *st, int which, int at, int leg)
{
	int ev = which * 5 + (at == MOE_AT_START ? 0 : 1 + 2 * leg + (at == MOE_AT_IN));

	if (c->o->stages_every > 0)
		eb_event(c, ev, st->stamp_id, eb_now_ns(), 0);
}
