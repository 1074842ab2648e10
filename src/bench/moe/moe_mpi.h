/* efabench moe's MPI baseline (moe_mpi.c): MPI_Alltoallv's counts and displacements for each
 * leg, the same bytes as the a2av's between the same offsets (collective, with the mpi
 * initiator); one leg's call. */
#ifndef EB_BENCH_MOE_MPI_H
#define EB_BENCH_MOE_MPI_H

#include "moe_state.h"

int eb_moe_mpi_plan(struct eb_ctx *c, struct mstate *st);
int eb_moe_mpi_leg(struct eb_ctx *c, struct mstate *st, int which, int leg);

#endif
