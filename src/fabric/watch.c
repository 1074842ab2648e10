/* A rank stuck inside one libfabric call ends itself. shm spins on the lock of a peer's
 * region, and a peer stopped while holding it holds the call for ever: no deadline inside
 * efabench is ever looked at again, and the job would wait for its launcher to kill the rank.
 * Each engine counts its provider calls (odd: inside one, eb_engine.h); a thread started with
 * the first engine looks at every open engine's count every WATCH_MS, and when one has stayed
 * inside the same call for the engine's timeout plus a second, says so and ends the rank. The
 * thread ends with the last engine, joined, so that nothing of it outlives the run. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "efabench/engine.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/shmseg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MS 100

struct watched {
	struct eb_engine *e;
	uint64_t seq;	/* the count at the last look */
	uint64_t since; /* when it was first seen inside that call */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct watched *list;
static int nlist, cap, stop;
static pthread_t thread;
static pid_t started_in; /* the process whose thread runs (a fork has none); 0: none */

/* One look at e: how long it has been inside the same provider call (0: not inside one). */
static double stuck_for(struct watched *w, uint64_t now)
{
	uint64_t seq = __atomic_load_n(&w->e->prov_seq, __ATOMIC_RELAXED);

	if (!(seq & 1) || seq != w->seq) {
		w->seq = seq;
		w->since = now;
		return 0.0;
	}
	return (double)(now - w->since) / 1e9;
}

static void end_rank(const struct eb_engine *e, double secs)
{
	eb_err("inside one libfabric call of provider %s (%s) for %.1f s, past the %.0f s "
	       "deadline: stuck on a lock a stopped or dead peer holds; ending this rank",
	       e->prov, __atomic_load_n(&e->prov_call, __ATOMIC_RELAXED), secs, e->timeout_s);
	fflush(NULL);
	eb_shmseg_unlink(getpid());
	eb_shmseg_reap(); /* the stopped peer's too: _exit runs no exit handlers */
	_exit(1);	  /* no exit handlers: libfabric's would take the same lock */
}

static void *watch(void *arg)
{
	struct timespec until;
	int i;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!stop) {
		uint64_t now;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += WATCH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wake, &lock, &until);
		now = eb_now_ns();
		for (i = 0; i < nlist && !stop; i++) {
			double secs = stuck_for(&list[i], now);

			if (secs > list[i].e->timeout_s + 1.0)
				end_rank(list[i].e, secs);
		}
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int eb_watch_add(struct eb_engine *e)
{
	int rc = EB_OK;

	pthread_mutex_lock(&lock);
	if (nlist == cap) {
		int n = cap ? 2 * cap : 8;
		struct watched *grown = realloc(list, sizeof(*grown) * (size_t)n);

		if (grown == NULL) {
			rc = EB_ENOMEM;
			goto unlock;
		}
		list = grown;
		cap = n;
	}
	list[nlist++] = (struct watched){e, 0, 0};
	if (started_in != getpid()) {
		stop = 0;
		if (pthread_create(&thread, NULL, watch, NULL) != 0) {
			nlist--;
			rc = EB_ESYS;
			goto unlock;
		}
		pthread_setname_np(thread, "efabench-watch");
		started_in = getpid();
	}
unlock:
	pthread_mutex_unlock(&lock);
	if (rc != EB_OK)
		eb_err("cannot watch the engine's provider calls (%s)", eb_strerror(rc));
	return rc;
}

void eb_watch_remove(struct eb_engine *e)
{
	int i, last;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nlist; i++)
		if (list[i].e == e) {
			list[i] = list[--nlist];
			break;
		}
	last = nlist == 0 && started_in == getpid();
	if (last) {
		stop = 1;
		started_in = 0;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (!last)
		return;
	pthread_join(thread, NULL);
	pthread_mutex_lock(&lock);
	if (nlist == 0) {
		free(list);
		list = NULL;
		cap = 0;
	}
	pthread_mutex_unlock(&lock);
}

int eb_engines_open(struct eb_engine **out, int max)
{
	int i, j, n = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nlist; i++) {
		struct eb_engine *e = list[i].e;

		for (j = n; j > 0 && out[j - 1]->seq > e->seq; j--) /* by opening order */
			if (j < max)
				out[j] = out[j - 1];
		if (j < max)
			out[j] = e;
		n += n < max;
	}
	pthread_mutex_unlock(&lock);
	return n;
}
