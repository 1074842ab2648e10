/* What `efabench matrix` measured, as plain data for the report layer: one cell per (channel,
 * source, target), the ranks that measured, their hosts and the schedule. */
#ifndef EB_REPORT_MATRIX_VIEW_H
#define EB_REPORT_MATRIX_VIEW_H

#include <stdint.h>

/* One measured cell: src wrote to dst on channel chan. */
struct eb_cell {
	int32_t src, dst, chan, status; /* status: 0, or a negative status of the measurement */
	double gbps;			/* 8 * size / mean seconds per acknowledged write */
	double lat_us;			/* mean microseconds of an 8-byte write + acknowledgement */
	uint64_t wrong;			/* wrong 8-byte words at the target */
	double secs;			/* the cell's wall time on this rank */
};

struct eb_matrix_view {
	int n;		   /* ranks */
	int nm;		   /* of them measuring */
	const int *mem;	   /* [nm]: the measuring ranks */
	const char **host; /* [n]: each rank's host */
	int nch;
	const char **nics; /* [nch] */
	int rounds;
	const int *partner; /* [rounds][nm]: index into mem of the partner, -1 sitting out;
			     * NULL: not printed */
	long warm, iters, lat_iters;
	uint64_t size;
	double flag, expect; /* flag cells below flag x typical, or below expect Gbps (> 0) */
	const char *per;     /* "gpu", "host" or "rank" */
	/* After the measurement: */
	const struct eb_cell *grid; /* [(chan * n + src) * n + dst] */
	const double *typical;	    /* [nch] */
	double elapsed_s, cells_s;
	const char *csv, *json;
};

/* The plan: who measures, the schedule (each round's pairs where partner is given). */
void eb_matrix_plan(const struct eb_matrix_view *m);
/* The grids per channel, the per-host summary, the flagged cells, the footer and the files;
 * *wrong gets the wrong words of every cell. EB_OK or the files' status. */
int eb_matrix_report(const struct eb_matrix_view *m, uint64_t *wrong);

#endif
