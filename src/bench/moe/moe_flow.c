/* How much each rank sends each other in every leg of a phase, from the routing matrices
 * alone: the receivers' layouts and what they wait for come from here, and the plan builder
 * checks the items it makes against it. */
#include "moe_plan.h"
#include "moe_plan_int.h"

static int64_t at(const int64_t *m, int cols, int a, int b)
{
	return m[(size_t)a * (size_t)cols + (size_t)b];
}

int eb_moe_two_level(const struct eb_moe_plan *p)
{
	return p->mode == EB_MOE_NORMAL && p->hosts->n > 1;
}

int eb_moe_direct(const struct eb_moe_plan *p, int s, int d)
{
	return !eb_moe_two_level(p) || eb_moe_same_host(p->hosts, s, d);
}

int eb_moe_forwards(const struct eb_moe_plan *p, int f, int s)
{
	const struct eb_moe_hosts *h = p->hosts;

	return eb_moe_two_level(p) && !eb_moe_same_host(h, f, s) && h->local[s] == h->local[f];
}

/* Tokens of the sources that f forwards, bound for rank d (on f's host). */
static int64_t forwarded_to(const struct eb_moe_plan *p, const struct eb_route *rt, int f, int d)
{
	int64_t n = 0;
	int s;

	for (s = 0; s < p->ranks; s++)
		if (eb_moe_forwards(p, f, s))
			n += at(rt->count, p->ranks, s, d);
	return n;
}

static struct eb_moe_flow dispatch_flow(const struct eb_moe_plan *p, const struct eb_route *rt,
					int leg, int w, int d)
{
	const struct eb_moe_hosts *h = p->hosts;
	int64_t n = 0;

	if (leg == 0 && eb_moe_direct(p, w, d))
		n = at(p->mode == EB_MOE_LL ? rt->nsel : rt->count, p->ranks, w, d);
	else if (leg == 0 && eb_moe_forwards(p, d, w))
		n = at(p->hcount, h->n, w, h->host[d]);
	else if (leg == 1 && eb_moe_two_level(p) && eb_moe_same_host(h, w, d))
		n = forwarded_to(p, rt, w, d);
	return (struct eb_moe_flow){n, (uint64_t)n * p->tok_bytes};
}

static struct eb_moe_flow combine_flow(const struct eb_moe_plan *p, const struct eb_route *rt,
				       int leg, int w, int d)
{
	const struct eb_moe_hosts *h = p->hosts;
	int64_t sel = at(rt->nsel, p->ranks, d, w), rows = 0;

	if (leg == 1) {
		rows = eb_moe_forwards(p, w, d) ? at(p->hcount, h->n, d, h->host[w]) : 0;
		return (struct eb_moe_flow){rows, (uint64_t)rows * p->out_bytes};
	}
	if (p->mode == EB_MOE_RANK)
		return (struct eb_moe_flow){p->split_out ? sel : at(rt->count, p->ranks, d, w),
					    (uint64_t)sel * p->out_bytes};
	if (p->mode == EB_MOE_LL)
		return (struct eb_moe_flow){sel, (uint64_t)sel * p->out_bytes};
	if (eb_moe_direct(p, w, d))
		rows = at(rt->count, p->ranks, d, w);
	if (eb_moe_two_level(p) && eb_moe_same_host(h, w, d))
		rows += forwarded_to(p, rt, d, w);
	return (struct eb_moe_flow){rows, (uint64_t)rows * p->out_bytes};
}

struct eb_moe_flow eb_moe_flow(const struct eb_moe_plan *p, const struct eb_route *rt, int phase,
			       int leg, int from, int to)
{
	return phase == 0 ? dispatch_flow(p, rt, leg, from, to)
			  : combine_flow(p, rt, leg, from, to);
}

uint64_t eb_moe_in_base(const struct eb_moe_plan *p, const struct eb_route *rt, int phase, int leg,
			int writer, int d)
{
	uint64_t off = p->in_off[phase][leg];
	int w;

	for (w = 0; w < writer; w++)
		off += eb_moe_flow(p, rt, phase, leg, w, d).bytes;
	return off;
}

/* Each leg's arrival area: as large as the most any rank receives in it. */
void eb_moe_areas(struct eb_moe_plan *p, const struct eb_route *rt)
{
	uint64_t off = 0;
	int ph, leg, d, w;

	for (ph = 0; ph < 2; ph++)
		for (leg = 0; leg < 2; leg++) {
			uint64_t most = 0;

			for (d = 0; d < p->ranks && leg < p->nlegs; d++) {
				uint64_t in = 0;

				for (w = 0; w < p->ranks; w++)
					in += eb_moe_flow(p, rt, ph, leg, w, d).bytes;
				most = in > most ? in : most;
			}
			p->in_off[ph][leg] = off;
			off += most;
		}
	p->dst_len = off;
}

int eb_moe_path(const struct eb_moe_plan *p, int from, int to)
{
	if (from == to)
		return EB_PATH_OWN;
	return p->intra && eb_moe_same_host(p->hosts, from, to) ? EB_PATH_INTRA : EB_PATH_FABRIC;
}

void eb_moe_moved(const struct eb_moe_plan *p, const struct eb_route *rt, int phase, int r,
		  uint64_t bytes[3], int64_t items[3])
{
	int leg, d, k;

	for (k = 0; k < 3; k++)
		bytes[k] = 0, items[k] = 0;
	for (leg = 0; leg < p->nlegs; leg++)
		for (d = 0; d < p->ranks; d++) {
			struct eb_moe_flow f = eb_moe_flow(p, rt, phase, leg, r, d);

			bytes[eb_moe_path(p, r, d)] += f.bytes;
			items[eb_moe_path(p, r, d)] += f.items;
		}
}
