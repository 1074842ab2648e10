/* MPI bootstrap: MPI only exchanges addresses and keys. Non-blocking collectives polled
 * against a deadline keep the no-hang promise; a rank that gives up aborts the job. */
#include "efabench/boot.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/shmseg.h"

#ifdef EB_HAVE_MPI
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static MPI_Comm world = MPI_COMM_NULL;
/* Our own copy of the world for liveness questions, apart from collectives. A rank that timed
 * out in a collective asks every other rank "are you there?" (PING); ranks answer (PONG) from
 * their collective waits and from the engine's liveness checks, so only a stopped or hung rank
 * stays silent, and the one that asked can name it. */
static MPI_Comm ctl = MPI_COMM_NULL;
enum { TAG_PING = 0x5eb1, TAG_PONG = 0x5eb2 };
#define ANSWER_S 2.0 /* how long an asker waits for answers */

/* Answer every question waiting. */
static void answer(void)
{
	MPI_Status st;
	int flag = 0, dummy;

	while (ctl != MPI_COMM_NULL &&
	       MPI_Iprobe(MPI_ANY_SOURCE, TAG_PING, ctl, &flag, &st) == MPI_SUCCESS && flag) {
		MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, TAG_PING, ctl, MPI_STATUS_IGNORE);
		/* A one-int message goes out eagerly: the asker is waiting for it. */
		MPI_Send(&dummy, 1, MPI_INT, st.MPI_SOURCE, TAG_PONG, ctl);
	}
}

/* Which ranks do not answer within ANSWER_S? Printed (when: why we asked); their count. */
static int name_silent(const char *what, const char *when)
{
	static const int ping; /* outlives the sends a silent rank never takes */
	int me, n, r, flag, got = 0, pong, *seen;
	MPI_Request *reqs;
	MPI_Status st;
	uint64_t until = eb_deadline(ANSWER_S);
	char who[256] = "";
	size_t used = 0;

	MPI_Comm_rank(ctl, &me);
	MPI_Comm_size(ctl, &n);
	seen = calloc((size_t)n, sizeof(*seen));
	reqs = calloc((size_t)n, sizeof(*reqs));
	if (seen == NULL || reqs == NULL)
		goto free_bufs;
	for (r = 0; r < n; r++) {
		reqs[r] = MPI_REQUEST_NULL;
		if (r != me)
			MPI_Isend(&ping, 1, MPI_INT, r, TAG_PING, ctl, &reqs[r]);
	}
	seen[me] = 1;
	while (got < n - 1 && eb_now_ns() < until) {
		answer(); /* others may be asking too */
		if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PONG, ctl, &flag, &st) == MPI_SUCCESS && flag) {
			MPI_Recv(&pong, 1, MPI_INT, st.MPI_SOURCE, TAG_PONG, ctl,
				 MPI_STATUS_IGNORE);
			got += !seen[st.MPI_SOURCE];
			seen[st.MPI_SOURCE] = 1;
		}
	}
	for (r = 0; r < n; r++) {
		if (!seen[r] && used < sizeof(who) - 12)
			used += (size_t)snprintf(who + used, sizeof(who) - used, " %d", r);
		if (reqs[r] != MPI_REQUEST_NULL)
			MPI_Request_free(&reqs[r]); /* a silent rank may never take it */
	}
	if (used > 0)
		eb_err("MPI %s: rank%s%s did not answer within %.0f s %s (stopped or hung)", what,
		       n - 1 - got == 1 ? "" : "s", who, ANSWER_S, when);
free_bufs:
	free(seen);
	free(reqs);
	return seen == NULL || reqs == NULL ? 0 : n - 1 - got;
}

/* Until req completes or the deadline passes. A collective may wait long (a phase's whole
 * length): with ask_s set, every ask_s it asks whether every rank is still there, so a stopped
 * rank ends the wait at once instead of at the deadline. */
static int wait_req(struct eb_boot *b, MPI_Request *req, uint64_t deadline, const char *what)
{
	uint64_t ask_ns = b->ask_s > 0 ? (uint64_t)(b->ask_s * 1e9) : 0;
	uint64_t next_ask = ask_ns > 0 ? eb_now_ns() + ask_ns : UINT64_MAX;
	int done = 0;
	unsigned spins = 0;

	while (!done) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			eb_err("MPI %s failed", what);
			return EB_EPEER;
		}
		if (done)
			break;
		if ((spins & 15) == 0)
			eb_boot_idle(b);
		if ((++spins & 1023) == 0) {
			uint64_t now = eb_now_ns();

			answer();
			if (now > deadline) {
				eb_err("MPI %s timed out waiting for the other ranks", what);
				name_silent(what, "after it timed out");
				return EB_ETIMEDOUT;
			}
			if (now > next_ask && now + ask_ns < deadline) {
				if (name_silent(what, "while we waited") > 0)
					return EB_EPEER;
				next_ask = eb_now_ns() + ask_ns;
			}
		}
		/* Ranks idle in a barrier while a pair is timed must leave the cores to it. */
		if (spins > 2000) {
			struct timespec nap = {0, 50000};

			nanosleep(&nap, NULL);
		}
	}
	return EB_OK;
}

/* A collective that did not finish still owns its buffers: MPI may read and write them until
 * the job ends (even while a failing rank asks who is still there). Each collective runs on a
 * copy of its own; a copy whose collective failed stays here, reachable, until the exit. */
static void **orphans;
static size_t norphans;

static void keep_orphan(void *buf)
{
	void **more = realloc(orphans, (norphans + 1) * sizeof(*orphans));

	if (more == NULL)
		return; /* better leaked than freed under MPI */
	orphans = more;
	orphans[norphans++] = buf;
}

static int collective(struct eb_boot *b, int gather, const void *in, size_t in_len, void *out,
		      size_t out_len, int blk, uint64_t deadline)
{
	const char *what = gather ? "allgather" : "alltoall";
	char *buf = malloc(in_len + out_len);
	MPI_Request req;
	int rc;

	if (buf == NULL)
		return EB_ENOMEM;
	memcpy(buf, in, in_len);
	rc = gather ? MPI_Iallgather(buf, blk, MPI_BYTE, buf + in_len, blk, MPI_BYTE, world, &req)
		    : MPI_Ialltoall(buf, blk, MPI_BYTE, buf + in_len, blk, MPI_BYTE, world, &req);
	if (rc != MPI_SUCCESS) {
		eb_err("MPI %s could not start", what);
		free(buf);
		return EB_EPEER;
	}
	rc = wait_req(b, &req, deadline, what);
	if (rc != EB_OK) {
		keep_orphan(buf);
		return rc;
	}
	memcpy(out, buf + in_len, out_len);
	free(buf);
	return EB_OK;
}

static int mpi_allgather(struct eb_boot *b, const void *in, void *out, size_t len,
			 uint64_t deadline)
{
	return collective(b, 1, in, len, out, len * (size_t)b->size, (int)len, deadline);
}

static int mpi_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline)
{
	size_t all = blk * (size_t)b->size;

	return collective(b, 0, in, all, out, all, (int)blk, deadline);
}

/* MPI_Alltoallv has no deadline of its own and a non-blocking one would be another algorithm
 * (and our polling in its time): a thread of its own ends this rank when a call has not
 * returned by the deadline it was armed with. Arming costs a store, inside the timed call. */
static _Atomic uint64_t a2av_until; /* 0: no call in progress */
static _Atomic uint64_t a2av_since;
static pthread_once_t a2av_once = PTHREAD_ONCE_INIT;
static int a2av_watching;

static void *a2av_watch(void *arg)
{
	struct timespec nap = {0, 20000000};

	(void)arg;
	for (;;) {
		uint64_t until = atomic_load(&a2av_until);

		if (until != 0 && eb_now_ns() > until) {
			eb_err(
			    "MPI_Alltoallv did not return within %.0f s: a rank stopped or hung; "
			    "ending this rank (the MPI launcher ends the others)",
			    (double)(until - atomic_load(&a2av_since)) * 1e-9);
			fflush(NULL);
			_exit(1);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void a2av_watch_start(void)
{
	pthread_t th;

	a2av_watching = pthread_create(&th, NULL, a2av_watch, NULL) == 0;
	if (a2av_watching)
		pthread_detach(th);
}

static int mpi_alltoallv(struct eb_boot *b, const void *send, const int *scount, const int *sdispl,
			 void *recv, const int *rcount, const int *rdispl, uint64_t deadline)
{
	int rc;

	(void)b;
	pthread_once(&a2av_once, a2av_watch_start);
	if (!a2av_watching) {
		eb_err("cannot start the thread that bounds MPI_Alltoallv's wait");
		return EB_ESYS;
	}
	atomic_store(&a2av_since, eb_now_ns());
	atomic_store(&a2av_until, deadline);
	rc = MPI_Alltoallv(send, scount, sdispl, MPI_BYTE, recv, rcount, rdispl, MPI_BYTE, world);
	atomic_store(&a2av_until, 0);
	if (rc != MPI_SUCCESS) {
		eb_err("MPI_Alltoallv failed (MPI error %d)", rc);
		return EB_EPEER;
	}
	return EB_OK;
}

static int mpi_check(struct eb_boot *b)
{
	/* The MPI runtime ends the whole job when a rank dies; a rank asking who is still there
	 * gets its answer from here while we wait on the fabric. */
	(void)b;
	answer();
	return EB_OK;
}

static void mpi_finalize(struct eb_boot *b, int exit_code)
{
	(void)b;
	fflush(stdout);
	/* What this rank waited for names the transfer that did not finish, not always the rank
	 * that stopped (a stopped target can hold the initiator's posts to the others): before
	 * the job goes down, name any rank that no longer answers. */
	if (exit_code != 0 && ctl != MPI_COMM_NULL)
		name_silent("job", "after this rank failed");
	if (exit_code != 0) {
		/* MPI_Abort runs no exit handlers (nor libfabric's, which unlink this rank's
		 * segments), and mpirun may kill a stopped peer before it can remove its own on
		 * SIGTERM: this rank removes both first. */
		eb_shmseg_unlink(getpid());
		eb_shmseg_reap();
		MPI_Abort(world, exit_code);
	}
	MPI_Comm_free(&ctl);
	MPI_Finalize();
}

static const struct eb_boot_ops mpi_ops = {
    .name = "mpi",
    .allgather = mpi_allgather,
    .alltoall = mpi_alltoall,
    .check = mpi_check,
    .finalize = mpi_finalize,
    .alltoallv = mpi_alltoallv,
};

/* MPI_Init and the communicator calls after it block with no deadline: a rank stopped or hung
 * while the job starts would hold every other rank there for ever. A watchdog thread ends this
 * rank once start-up has taken longer than the deadline; the MPI launcher then ends the job. */
struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC */
	int done;
	double timeout_s;
	pthread_t th;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;
	uint64_t until = eb_deadline(w->timeout_s);
	struct timespec by = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
	int done;

	pthread_mutex_lock(&w->lock);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->lock, &by) != ETIMEDOUT)
		;
	done = w->done;
	pthread_mutex_unlock(&w->lock);
	if (!done) {
		eb_err(
		    "MPI start-up (MPI_Init and our communicators) did not finish within %.0f s: "
		    "another rank stopped or hung while the job started; ending this rank",
		    w->timeout_s);
		fflush(NULL);
		_exit(1);
	}
	return NULL;
}

static int watch_start(struct watchdog *w, double timeout_s)
{
	pthread_condattr_t attr;
	int rc;

	w->done = 0;
	w->timeout_s = timeout_s;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &attr);
	pthread_condattr_destroy(&attr);
	rc = pthread_create(&w->th, NULL, watch, w);
	if (rc != 0) {
		eb_err("cannot start the MPI start-up watchdog: %s", strerror(rc));
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->lock);
		return EB_ESYS;
	}
	return EB_OK;
}

static void watch_stop(struct watchdog *w)
{
	pthread_mutex_lock(&w->lock);
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lock);
}

/* The launcher's name for this process, for messages before MPI says it. */
static void rank_from_env(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL) {
			eb_log_set_rank(atoi(getenv(vars[i])));
			return;
		}
}

static int start(struct eb_boot *b)
{
	MPI_Comm local;

	if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
		eb_err("MPI_Init failed");
		return EB_EPEER;
	}
	world = MPI_COMM_WORLD;
	if (MPI_Comm_dup(world, &ctl) != MPI_SUCCESS) {
		eb_err("MPI_Comm_dup failed");
		return EB_EPEER;
	}
	MPI_Comm_rank(world, &b->rank);
	MPI_Comm_size(world, &b->size);
	MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &b->local_rank);
	MPI_Comm_size(local, &b->local_size);
	MPI_Comm_free(&local);
	return EB_OK;
}

int eb_boot_mpi_init(struct eb_boot *b, double timeout_s)
{
	struct watchdog w;
	int rc;

	memset(b, 0, sizeof(*b));
	rank_from_env();
	rc = watch_start(&w, timeout_s);
	if (rc != EB_OK)
		return rc;
	rc = start(b);
	watch_stop(&w);
	if (rc != EB_OK)
		return rc;
	b->ops = &mpi_ops;
	b->impl = NULL;
	b->ask_s = 0; /* the caller sets it: it knows the deadline */
	eb_log_set_rank(b->rank);
	return EB_OK;
}

int eb_boot_have_mpi(void)
{
	return 1;
}

#else

int eb_boot_mpi_init(struct eb_boot *b, double timeout_s)
{
	(void)b;
	(void)timeout_s;
	eb_err("started by an MPI launcher, but this efabench was built without MPI; "
	       "rebuild with MPI or run without mpirun (--np N)");
	return EB_ENOTSUP;
}

int eb_boot_have_mpi(void)
{
	return 0;
}

#endif
