/* MPI bootstrap: MPI only exchanges addresses and keys. Non-blocking collectives polled
 * against a deadline keep the no-hang promise; a rank that gives up aborts the job. */
#include "efabench/boot.h"
#include "efabench/status.h"
#include "../core/clock.h"
#include "../core/log.h"

#ifdef EB_HAVE_MPI
#include <mpi.h>
#include <time.h>
#include <stdio.h>

static MPI_Comm world = MPI_COMM_NULL;

static int wait_req(MPI_Request *req, uint64_t deadline, const char *what)
{
	int done = 0;
	unsigned spins = 0;

	while (!done) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			eb_err("MPI %s failed", what);
			return EB_EPEER;
		}
		if (done)
			break;
		if ((++spins & 1023) == 0 && eb_now_ns() > deadline) {
			eb_err("MPI %s timed out waiting for the other ranks", what);
			return EB_ETIMEDOUT;
		}
		/* Ranks idle in a barrier while a pair is timed must leave the cores to it. */
		if (spins > 2000) {
			struct timespec nap = {0, 50000};

			nanosleep(&nap, NULL);
		}
	}
	return EB_OK;
}

static int mpi_allgather(struct eb_boot *b, const void *in, void *out, size_t len,
			 uint64_t deadline)
{
	MPI_Request req;

	(void)b;
	if (MPI_Iallgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, world, &req) !=
	    MPI_SUCCESS) {
		eb_err("MPI_Iallgather failed");
		return EB_EPEER;
	}
	return wait_req(&req, deadline, "allgather");
}

static int mpi_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline)
{
	MPI_Request req;

	(void)b;
	if (MPI_Ialltoall(in, (int)blk, MPI_BYTE, out, (int)blk, MPI_BYTE, world, &req) !=
	    MPI_SUCCESS) {
		eb_err("MPI_Ialltoall failed");
		return EB_EPEER;
	}
	return wait_req(&req, deadline, "alltoall");
}

static int mpi_check(struct eb_boot *b)
{
	/* The MPI runtime ends the whole job when a rank dies. */
	(void)b;
	return EB_OK;
}

static void mpi_finalize(struct eb_boot *b, int exit_code)
{
	(void)b;
	fflush(stdout);
	if (exit_code != 0)
		MPI_Abort(world, exit_code);
	MPI_Finalize();
}

static const struct eb_boot_ops mpi_ops = {
    .name = "mpi",
    .allgather = mpi_allgather,
    .alltoall = mpi_alltoall,
    .check = mpi_check,
    .finalize = mpi_finalize,
};

int eb_boot_mpi_init(struct eb_boot *b)
{
	MPI_Comm local;

	if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
		eb_err("MPI_Init failed");
		return EB_EPEER;
	}
	world = MPI_COMM_WORLD;
	MPI_Comm_rank(world, &b->rank);
	MPI_Comm_size(world, &b->size);
	MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &b->local_rank);
	MPI_Comm_size(local, &b->local_size);
	MPI_Comm_free(&local);
	b->ops = &mpi_ops;
	b->impl = NULL;
	eb_log_set_rank(b->rank);
	return EB_OK;
}

int eb_boot_have_mpi(void)
{
	return 1;
}

#else

int eb_boot_mpi_init(struct eb_boot *b)
{
	(void)b;
	eb_err("started by an MPI launcher, but this efabench was built without MPI; "
	       "rebuild with MPI or run without mpirun (--np N)");
	return EB_ENOTSUP;
}

int eb_boot_have_mpi(void)
{
	return 0;
}

#endif
