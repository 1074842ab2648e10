/* A baseline a user knows: the MPI library's MPI_Alltoallv moving each leg's bytes, the
 * a2av's blocks between the same offsets (its own block too), under an MPI launcher. */
#include "moe_mpi.h"
#include "efabench/status.h"
#include "core/log.h"

#include <limits.h>
#include <stdlib.h>

enum { V_SCOUNT, V_SDISPL, V_RCOUNT, V_RDISPL, V_N };

static int *vec(const struct eb_ctx *c, const struct mstate *st, int op, int leg, int which)
{
	return st->mpi_v + (((size_t)op * 2 + (size_t)leg) * V_N + (size_t)which) * c->nranks;
}

/* This rank's block for destination p in a leg: its offset in the source region, its length
 * and where it lands in p's destination region (as a2a_leg writes it). */
static void block_of(const struct eb_moe_leg *g, int p, uint64_t *from, uint64_t *len, uint64_t *to)
{
	int64_t a = g->off[p], b = g->off[p + 1];

	*len = b > a ? g->packed[b - 1] + g->len[b - 1] - g->packed[a] : 0;
	*from = b > a ? g->packed[a] : 0;
	*to = b > a ? g->dst[a] : 0;
}

/* One leg: the sending side here, the receiving side from every source's (length, offset,
 * whether any of its blocks passes what int counts and offsets hold). Every rank learns
 * whether one does, so all of them give up together instead of waiting for a rank that
 * stopped. */
static int plan_leg(struct eb_ctx *c, struct mstate *st, int op, int leg, uint64_t *out,
		    uint64_t *in)
{
	const struct eb_moe_leg *g = &st->plan.leg[op][leg];
	int *sc = vec(c, st, op, leg, V_SCOUNT), *sd = vec(c, st, op, leg, V_SDISPL);
	int *rcn = vec(c, st, op, leg, V_RCOUNT), *rd = vec(c, st, op, leg, V_RDISPL);
	uint64_t big = 0;
	int p, rc;

	for (p = 0; p < c->nranks; p++) {
		uint64_t from, len, to;

		block_of(g, p, &from, &len, &to);
		big |= from + len > INT_MAX || to + len > INT_MAX;
		sc[p] = len > INT_MAX ? 0 : (int)len;
		sd[p] = from > INT_MAX ? 0 : (int)from;
		out[3 * p] = len;
		out[3 * p + 1] = to;
	}
	for (p = 0; p < c->nranks; p++)
		out[3 * p + 2] = big;
	rc = eb_boot_alltoall(c->boot, out, in, 3 * sizeof(*out), eb_engine_deadline(c->e));
	for (p = 0; rc == EB_OK && p < c->nranks; p++) {
		if (in[3 * p + 2]) {
			if (c->rank == 0)
				eb_err(
				    "--initiators mpi: MPI_Alltoallv takes int byte counts and "
				    "offsets, and rank %d's regions pass 2 GiB in this shape; give "
				    "fewer --tokens or a smaller --hidden",
				    p);
			return EB_EINVAL;
		}
		rcn[p] = (int)in[3 * p];
		rd[p] = (int)in[3 * p + 1];
	}
	return rc;
}

int eb_moe_mpi_plan(struct eb_ctx *c, struct mstate *st)
{
	uint64_t *out = calloc(6 * (size_t)c->nranks, sizeof(*out));
	int op, leg, rc = EB_OK;

	st->mpi_v = calloc((size_t)2 * 2 * V_N * (size_t)c->nranks, sizeof(*st->mpi_v));
	if (out == NULL || st->mpi_v == NULL) {
		eb_err("out of memory for MPI_Alltoallv's counts (%d ranks)", c->nranks);
		rc = EB_ENOMEM;
	}
	for (op = 0; op < 2 && rc == EB_OK; op++)
		for (leg = 0; leg < st->plan.nlegs && rc == EB_OK; leg++)
			rc = plan_leg(c, st, op, leg, out, out + 3 * c->nranks);
	free(out);
	return rc;
}

int eb_moe_mpi_leg(struct eb_ctx *c, struct mstate *st, int which, int leg)
{
	const int *v = vec(c, st, which, leg, V_SCOUNT); /* then sdispl, rcount, rdispl */
	size_t n = (size_t)c->nranks;
	char *src = eb_payload_at(&st->src, 0), *dst = eb_payload_at(&st->dst, 0);
	uint64_t deadline = eb_engine_deadline(c->e);
	int rc = eb_boot_alltoallv(c->boot, src, v, v + n, dst, v + 2 * n, v + 3 * n, deadline);

	if (rc == EB_ENOTSUP)
		eb_err("--initiators mpi needs a job started by an MPI launcher");
	return rc;
}
