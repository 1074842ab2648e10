/* What bounds a result, from its figures: the link, where BusBW is 90 % or more and the NICs'
 * own counters saw at least what efabench posted through them; else, where the benchmark
 * stamps stages, what the stage that dominates a sampled operation names (proxy: the producer
 * and the queue, the proxy, the provider and NIC, the completion's way back; moe: a leg's
 * producers, or the arrivals it then waits for); else not the link, where BusBW
 * is below 90 %; nothing without a link speed or stages. Below the link the CPU time a
 * hypervisor took from a host meanwhile is named too. docs/methods.md states the rules. */
#include "verdict.h"
#include "nics.h"
#include "stages.h"
#include "steal.h"

#include <stdio.h>
#include <string.h>

#define LINK_PCT 90.0
#define COUNTED	 0.95 /* a NIC's counters saw at least this share of efabench's bytes */

/* Whether every read NIC that carried efabench's bytes counted them (1), none could tell (-1),
 * or one counted less (0). */
static int counters_agree(const struct eb_meas *m)
{
	int i, seen = 0;

	for (i = 0; i < m->nnic; i++) {
		const struct eb_nic_meas *x = &m->nic[i];

		if (x->owner != x->rank || !x->readable || !x->has_tx || x->sent == 0)
			continue;
		seen = 1;
		if ((double)x->tx < COUNTED * (double)x->sent)
			return 0;
	}
	return seen ? 1 : -1;
}

/* Below the link, the CPU time a hypervisor took meanwhile is part of why. */
static void stolen(struct eb_meas *m)
{
	char words[120];
	size_t n = strlen(m->why);

	if (m->bound[0] == '\0' || strcmp(m->bound, "link") == 0 ||
	    !eb_steal_words(m, words, sizeof(words)) || n + 4 >= sizeof(m->why))
		return;
	snprintf(m->why + n, sizeof(m->why) - n, "; a hypervisor took %s", words);
}

void eb_verdict(const struct eb_ctx *c, struct eb_meas *m, const struct eb_rec *r)
{
	const struct eb_field *f = eb_rec_field(r, "busbw_pct");
	int busbw = f != NULL && f->kind == EB_V_NUM, agree = counters_agree(m);
	int whole = eb_stages_top(c, &m->stages, 0), top = eb_stages_top(c, &m->stages, 1);
	double pct = busbw ? f->d : 0;

	if (busbw && pct >= LINK_PCT && agree != 0) {
		snprintf(m->bound, sizeof(m->bound), "link");
		snprintf(m->why, sizeof(m->why), "BusBW %.1f %% of the links%s", pct,
			 agree > 0 ? ", and the NICs counted what efabench posted" : "");
	} else if (top >= 0) {
		const struct eb_stats *s = &m->stages.st[top];
		int n;

		snprintf(m->bound, sizeof(m->bound), "%s", c->b->stages[top].bound);
		n = snprintf(m->why, sizeof(m->why),
			     "stage %s%s%s dominates: p50 %.2f of the operation's %.2f us",
			     c->b->stages[whole].name, top != whole ? ", within it " : "",
			     top != whole ? c->b->stages[top].name : "", s->p50 * 1e6,
			     m->stages.whole.p50 * 1e6);
		if (busbw && n > 0 && (size_t)n < sizeof(m->why))
			snprintf(m->why + n, sizeof(m->why) - (size_t)n, "; BusBW %.1f %%", pct);
	} else if (busbw) {
		snprintf(m->bound, sizeof(m->bound), "not the link");
		snprintf(m->why, sizeof(m->why), "BusBW %.1f %%%s", pct,
			 agree == 0 ? "; a NIC counted less than efabench posted" : "");
	} /* else nothing to judge by: no link speed (--link-gbps), no stages */
	stolen(m);
}

void eb_verdict_record(const struct eb_meas *m, struct eb_rec *r)
{
	if (m->bound[0] == '\0')
		return;
	eb_rec_obj(r, "verdict");
	eb_rec_str(r, "bound", m->bound);
	eb_rec_str(r, "why", m->why);
	eb_rec_end(r);
}

void eb_verdict_lines(struct eb_sheet *s, const struct eb_meas *m, int n)
{
	int i, any = 0;

	for (i = 0; i < n; i++)
		if (m[i].bound[0] != '\0') {
			if (!any++) {
				eb_sheet_say(s, NULL);
				eb_sheet_say(s, "What bounds each result (the last row's points):");
			}
			eb_sheet_say(s, "%s: %s (%s)", m[i].pt->name != NULL ? m[i].pt->name : "",
				     m[i].bound, m[i].why);
		}
}
