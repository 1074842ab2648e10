/* efabench moe's leg between hosts. In normal mode over several hosts an op has two legs:
 * dispatch sends a token across the fabric once per host (leg 0), then forwards it inside the
 * host (leg 1); combine gathers rows inside the host (leg 0), then sends them across (leg 1).
 * The step's time holds both; the leg that crosses, timed on its own (a span), says whether
 * the rails are what limits it. */
#include "moe_cross.h"

/* Bytes rank r sends to other hosts in a leg of an op. */
static uint64_t crossing(const struct mstate *st, int op, int leg, int r)
{
	uint64_t n = 0;
	int d;

	for (d = 0; d < st->plan.ranks; d++)
		if (!eb_moe_same_host(&st->hosts, r, d))
			n += eb_moe_flow(&st->plan, &st->rt, op, leg, r, d).bytes;
	return n;
}

void eb_moe_cross_legs(const struct eb_ctx *c, struct mstate *st)
{
	int op, leg, r;

	for (op = 0; op < 2; op++) {
		int found = -1, legs = 0;

		for (leg = 0; leg < st->plan.nlegs && st->plan.nlegs > 1; leg++)
			for (r = 0; r < c->nranks; r++)
				if (crossing(st, op, leg, r) > 0) {
					found = leg;
					legs++;
					break;
				}
		st->cross_leg[op] = legs == 1 ? found : -1;
	}
}

double eb_moe_cross_bytes(const struct mstate *st, int op, int r)
{
	if (op == OP_PAIR)
		return eb_moe_cross_bytes(st, OP_DISPATCH, r) +
		       eb_moe_cross_bytes(st, OP_COMBINE, r);
	return st->cross_leg[op] < 0 ? 0.0 : (double)crossing(st, op, st->cross_leg[op], r);
}

int eb_moe_cross_timed(const struct mstate *st, int op)
{
	return op == OP_PAIR ? st->cross_leg[0] >= 0 && st->cross_leg[1] >= 0
			     : st->cross_leg[op] >= 0;
}
