#include "steal.h"
#include "core/clock.h"
#include "efabench/boot.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eb_steal_before(struct eb_stealrun *s)
{
	if (s->readable >= 0)
		s->readable = eb_cpu_time_read(&s->before) == EB_OK ? 1 : -1;
}

void eb_steal_after(struct eb_stealrun *s)
{
	struct eb_cpu_time now;

	if (s->readable <= 0 || eb_cpu_time_read(&now) != EB_OK) {
		s->readable = -1; /* a point partly read is not read */
		return;
	}
	s->took.total += now.total - s->before.total;
	s->took.steal += now.steal - s->before.steal;
}

/* A rank's side, as it travels. */
struct wire {
	char host[64];
	int32_t readable, pad;
	uint64_t total, steal;
};

int eb_steal_finish(struct eb_ctx *c, const struct eb_stealrun *s, struct eb_meas *m)
{
	struct wire mine = {
	    .readable = s->readable > 0, .total = s->took.total, .steal = s->took.steal};
	struct wire *all = calloc((size_t)c->nranks, sizeof(*all));
	int r, rc;

	if (all == NULL)
		return EB_ENOMEM;
	eb_host_name(mine.host, sizeof(mine.host));
	/* one fixed-size record a rank: a single collective */
	rc = c->boot != NULL ? eb_boot_allgather(c->boot, &mine, all, sizeof(mine),
						 eb_deadline(c->o->fab.timeout_s))
			     : (all[0] = mine, EB_OK);
	if (rc != EB_OK || c->rank != 0) {
		free(all);
		return rc;
	}
	for (r = 0; r < c->nranks; r++) {
		struct wire w = all[r];
		double pct;

		w.host[sizeof(w.host) - 1] = '\0';
		if (!w.readable)
			continue;
		pct = w.total > 0 ? 100.0 * (double)w.steal / (double)w.total : 0;
		if (m->steal.read && (double)w.steal * eb_cpu_tick_s() <= m->steal.secs)
			continue;
		m->steal.read = 1;
		m->steal.secs = (double)w.steal * eb_cpu_tick_s();
		m->steal.pct = pct;
		snprintf(m->steal.host, sizeof(m->steal.host), "%s", w.host);
	}
	free(all);
	return EB_OK;
}

void eb_steal_record(const struct eb_steal_meas *m, struct eb_rec *r)
{
	if (!m->read) {
		eb_rec_null(r, "cpu_steal");
		eb_rec_to(r, EB_NOT_CSV);
		return;
	}
	eb_rec_obj(r, "cpu_steal");
	eb_rec_num(r, "ms", m->secs * 1e3);
	eb_rec_num(r, "pct", m->pct);
	if (m->secs > 0)
		eb_rec_str(r, "host", m->host);
	else
		eb_rec_null(r, "host"); /* no host lost any: naming one would mislead */
	eb_rec_end(r);
}

/* A CPU time: ms under a second. */
static void duration(char *buf, size_t len, double secs)
{
	if (secs < 1)
		snprintf(buf, len, "%.0f ms", secs * 1e3);
	else
		snprintf(buf, len, "%.2f s", secs);
}

int eb_steal_words(const struct eb_meas *m, char *buf, size_t len)
{
	char t[32];

	if (!m->steal.read || m->steal.secs <= 0)
		return 0;
	duration(t, sizeof(t), m->steal.secs);
	snprintf(buf, len, "%s of CPU time from host %s (%.2f %% of its CPUs' time)", t,
		 m->steal.host, m->steal.pct);
	return 1;
}

void eb_steal_tally(struct eb_steal_tally *t, const struct eb_meas *m)
{
	t->points++;
	if (!m->steal.read)
		return;
	t->read++;
	if (m->steal.secs <= 0)
		return;
	t->stolen++;
	if (m->steal.secs <= t->secs)
		return;
	t->secs = m->steal.secs;
	t->pct = m->steal.pct;
	snprintf(t->host, sizeof(t->host), "%s", m->steal.host);
	snprintf(t->point, sizeof(t->point), "%s", m->pt->name != NULL ? m->pt->name : "");
}

void eb_steal_line(struct eb_sheet *s, const struct eb_steal_tally *t)
{
	char most[32];

	if (t->stolen == 0)
		return;
	duration(most, sizeof(most), t->secs);
	eb_sheet_say(s, NULL);
	eb_sheet_say(s,
		     "CPU steal: a hypervisor took CPU time from a host in %d of %d points; the "
		     "most: %s from host %s, %.2f %% of its CPUs' time, in point %s (/proc/stat; "
		     "JSON cpu_steal)",
		     t->stolen, t->points, most, t->host, t->pct, t->point);
}
