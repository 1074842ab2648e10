/* CPU time a hypervisor took from a host while a point ran: /proc/stat's steal
 * (efabench/cpu_time.h), read on every rank around each visit of the point; rank 0 keeps the
 * host that lost the most. A rate that dips on a virtual machine as its steal rises may be the
 * host's doing, not the fabric's; on bare metal steal stays 0. */
#ifndef EB_HARNESS_STEAL_H
#define EB_HARNESS_STEAL_H

#include "bench.h"
#include "efabench/cpu_time.h"

/* This rank's side of a point. */
struct eb_stealrun {
	int readable; /* 0 before the first visit, 1 read, -1 not (the point has none) */
	struct eb_cpu_time before, took; /* took: the ticks of the point's visits */
};

void eb_steal_before(struct eb_stealrun *s);
void eb_steal_after(struct eb_stealrun *s);
/* Collective, after the point's last visit: rank 0's m->steal. */
int eb_steal_finish(struct eb_ctx *c, const struct eb_stealrun *s, struct eb_meas *m);

/* Rank 0: a record's cpu_steal (null where no host could tell). */
void eb_steal_record(const struct eb_steal_meas *m, struct eb_rec *r);
/* m's steal in words ("1.25 s of CPU time from host h0 (0.80 % of its CPUs' time)"); 0
 * where none was taken. */
int eb_steal_words(const struct eb_meas *m, char *buf, size_t len);

/* Rank 0, over every row of a run: how many points lost CPU time, and the one that lost most. */
struct eb_steal_tally {
	int points, read, stolen;
	double secs, pct;
	char host[64], point[64];
};

void eb_steal_tally(struct eb_steal_tally *t, const struct eb_meas *m);
/* A line after the tables where a point lost CPU time; none on bare metal. */
void eb_steal_line(struct eb_sheet *s, const struct eb_steal_tally *t);

#endif
