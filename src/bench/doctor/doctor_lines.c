/* efabench doctor's output (rank 0): the plan, one PASS / WARN / FAIL line per check and rank,
 * the tally, and a record per check. */
#include "doctor_net.h"
#include "efabench/status.h"

#include <stdio.h>

const char *eb_verdict_name(int v)
{
	static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};

	return v >= 0 && v <= EB_SKIP ? names[v] : "?";
}

void eb_doctor_plan(const struct dctx *x, struct eb_sheet *s)
{
	const struct dopts *d = x->d;
	const struct summary *me = &x->all[0];
	char nics[512] = "";
	size_t used = 0;
	int k;

	eb_fact_say(s, "efabench doctor",
		    "%d rank%s, provider %s; checks on every rank: libfabric, provider (EFA where "
		    "EFA hardware is), NICs and links, ulimit -l, huge pages; one rank per host: "
		    "GPUs (--expect-gpus), NVLinks, nearest NICs, GPU memory registration",
		    x->n, x->n == 1 ? "" : "s", x->prov[0] ? x->prov : "(none usable)");
	if (d->no_measure) {
		eb_fact_say(s, "measurements", "none (--no-measure)");
		return;
	}
	for (k = 0; k < me->nnics && used < sizeof(nics); k++)
		used += (size_t)snprintf(nics + used, sizeof(nics) - used, " %s%s", me->nic[k].name,
					 me->nic[k].up ? "" : " (unusable)");
	eb_fact_say(s, "measurements",
		    "GPU copy engines between every GPU pair (256 MiB) against NVLink peak x "
		    "%.2f, each GPU's floor against %.1f us; NIC write bandwidth in %ld "
		    "tournament round%s x every NIC x 2 directions (%llu-byte writes, %ld timed) "
		    "against link x %.2f",
		    d->min_nvlink, d->max_floor_us, d->peers, d->peers == 1 ? "" : "s",
		    (unsigned long long)d->size, d->iters, d->min_link);
	eb_fact_say(s, "NICs on rank 0", "%s", nics);
}

/* The run: ranks, provider, what was measured, in the header and the JSON head. */
static void facts(const struct dctx *x, struct eb_sheet *s)
{

	char line[320];
	int n = snprintf(line, sizeof(line), "efabench doctor: %d rank%s, provider %s", x->n,
			 x->n == 1 ? "" : "s", x->prov[0] ? x->prov : "(none usable)");

	if (x->grid != NULL)
		snprintf(line + n, sizeof(line) - (size_t)n,
			 "; %d round%s x %d NIC%s x 2 directions in %.2f s", x->rounds,
			 x->rounds == 1 ? "" : "s", x->nch, x->nch == 1 ? "" : "s", x->elapsed_s);
	else if (!x->d->no_measure)
		snprintf(line + n, sizeof(line) - (size_t)n, "; bandwidth %s", x->skip);
	eb_head_fact(&s->head, NULL, "%s", line);
	if (x->grid != NULL && x->left[0] != '\0')
		eb_fact_say(s, "not measured, unusable on a rank", "%s", x->left);
	eb_fact_int(s, "ranks", NULL, x->n);
	eb_fact_str(s, "provider", NULL, x->prov);
	eb_fact_int(s, "rounds", NULL, x->grid != NULL ? x->rounds : 0);
	eb_fact_int(s, "rounds_most", NULL, x->d->peers); /* --peers: the tournament's cap */
	eb_fact_num(s, "min_link", NULL, x->d->min_link, NULL);
	eb_fact_int(s, "size", NULL, (long long)x->d->size);
	eb_fact_int(s, "iters", NULL, x->d->iters);
	for (int r = 0; r < x->n; r++)
		eb_rec_strs(&s->doc.head, "hosts", x->all[r].host);
}

static void record(struct eb_sheet *s, int r, const char *host, const struct eb_check *c)
{
	struct eb_rec *rec = eb_sheet_rec(s);

	if (rec == NULL)
		return;
	eb_rec_int(rec, "rank", r);
	eb_rec_str(rec, "host", host);
	eb_rec_str(rec, "check", c->name);
	eb_rec_str(rec, "verdict", eb_verdict_name(c->verdict));
	eb_rec_num(rec, "value", c->value);
	eb_rec_num(rec, "limit", c->limit);
	eb_rec_str(rec, "reason", c->why);
}

int eb_doctor_report(const struct dctx *x, struct eb_sheet *s)
{
	const char *verdict;
	int r, k, count[4] = {0};

	facts(x, s);
	for (r = 0; r < x->n; r++) {
		char title[96];

		snprintf(title, sizeof(title), "rank %d (%s)", r, x->all[r].host);
		eb_sheet_title(s, title);
		for (k = 0; k < x->per[r].n; k++) {
			const struct eb_check *c = &x->per[r].c[k];

			count[c->verdict]++;
			if (!x->d->brief || c->verdict == EB_WARN || c->verdict == EB_FAIL)
				eb_sheet_text(s, "%s  %-20s %s", eb_verdict_name(c->verdict),
					      c->name, c->why);
			record(s, r, x->all[r].host, c);
		}
	}
	verdict = count[EB_FAIL] ? "FAIL" : count[EB_WARN] ? "WARN" : "PASS";
	eb_sheet_say(s, NULL);
	eb_sheet_say(s, "%s: %d FAIL, %d WARN, %d PASS, %d SKIP", verdict, count[EB_FAIL],
		     count[EB_WARN], count[EB_PASS], count[EB_SKIP]);
	for (r = 0; r < x->n; r++)
		for (k = 0; k < x->per[r].n; k++)
			if (x->per[r].c[k].verdict == EB_FAIL)
				eb_sheet_say(s, "FAIL rank %d (%s) %s: %s", r, x->all[r].host,
					     x->per[r].c[k].name, x->per[r].c[k].why);
	eb_rec_str(&s->doc.head, "verdict", verdict);
	eb_rec_int(&s->doc.head, "fail", count[EB_FAIL]);
	eb_rec_int(&s->doc.head, "warn", count[EB_WARN]);
	return count[EB_FAIL] > 0 ? EB_EVERIFY : EB_OK;
}
