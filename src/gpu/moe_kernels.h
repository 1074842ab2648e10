/* GPU producers of `efabench moe`, callable from C. */
#ifndef EB_GPU_MOE_KERNELS_H
#define EB_GPU_MOE_KERNELS_H

#include "moe_work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A phase's item arrays copied to device memory (dev's pointers are device addresses). */
int eb_mk_upload(const struct eb_moe_phase *host, int ranks, int64_t items,
		 struct eb_moe_phase *dev);
void eb_mk_free(struct eb_moe_phase *dev);

/* n zeroed counters in GPU memory for the producers' tickets. */
int eb_mk_tickets(uint64_t **t, size_t n);
void eb_mk_free_tickets(uint64_t *t);

/* Launch w->producers blocks running eb_moe_produce; asynchronous. */
int eb_mk_launch(const struct eb_moe_work *w);

/* 1 when the blocks have finished (*failed set when any failed), 0 while they run, or a
 * negative status after one line. */
int eb_mk_done(int *failed);

/* CPU producers over GPU memory: items [a, b) of w->gph copied within the rank (own: to its
 * destination region, else packed) by one kernel queued on the calling thread's stream, and
 * the wait for everything the thread queued. 0 or -1 after one line. */
int eb_mk_gather(const struct eb_moe_work *w, int own, int64_t a, int64_t b);
int eb_mk_sync(void);

#ifdef __cplusplus
}
#endif

#endif
