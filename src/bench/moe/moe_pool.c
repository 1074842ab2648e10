#define _GNU_SOURCE
#include "moe_pool.h"
#include "efabench/status.h"
#include "core/log.h"
#include "moe_work.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

struct worker {
	struct eb_moe_pool *pool;
	pthread_t th;
	int id;
};

struct eb_moe_pool {
	const struct eb_moe_work *w;
	struct worker *wk;
	int n;
	_Atomic unsigned long go;   /* ops started */
	_Atomic unsigned long done; /* threads' ops finished */
	_Atomic int failed, quit;
};

static void *work(void *arg)
{
	struct worker *k = arg;
	struct eb_moe_pool *p = k->pool;
	unsigned long seen = 0;

	eb_producer_set((uint64_t)k->id);
	for (;;) {
		unsigned long go;

		while ((go = atomic_load_explicit(&p->go, memory_order_acquire)) == seen &&
		       !atomic_load(&p->quit))
			sched_yield();
		if (atomic_load(&p->quit))
			return NULL;
		seen = go;
		if (eb_moe_produce(p->w, k->id) != 0)
			atomic_store(&p->failed, 1);
		atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
	}
}

int eb_moe_pool_start(struct eb_moe_pool **pp, int n, const struct eb_moe_work *w)
{
	struct eb_moe_pool *p = calloc(1, sizeof(*p));
	int i;

	*pp = NULL;
	if (p == NULL || (p->wk = calloc((size_t)n, sizeof(*p->wk))) == NULL) {
		free(p);
		eb_err("out of memory for %d producer threads", n);
		return EB_ENOMEM;
	}
	p->w = w;
	for (i = 0; i < n; i++) {
		p->wk[i] = (struct worker){.pool = p, .id = i};
		if (pthread_create(&p->wk[i].th, NULL, work, &p->wk[i]) != 0) {
			eb_err("cannot start producer thread %d", i);
			p->n = i;
			eb_moe_pool_stop(p);
			return EB_ESYS;
		}
		pthread_setname_np(p->wk[i].th, "efabench-prod");
	}
	p->n = n;
	*pp = p;
	return EB_OK;
}

void eb_moe_pool_go(struct eb_moe_pool *p)
{
	atomic_fetch_add_explicit(&p->go, 1, memory_order_release);
}

int eb_moe_pool_done(struct eb_moe_pool *p, int *failed)
{
	unsigned long want = atomic_load(&p->go) * (unsigned long)p->n;

	if (atomic_load_explicit(&p->done, memory_order_acquire) < want)
		return 0;
	*failed |= atomic_load(&p->failed);
	return 1;
}

void eb_moe_pool_stop(struct eb_moe_pool *p)
{
	int i;

	if (p == NULL)
		return;
	atomic_store(&p->quit, 1);
	for (i = 0; i < p->n; i++)
		pthread_join(p->wk[i].th, NULL);
	free(p->wk);
	free(p);
}
