/* GPU producers of `efabench moe`, callable from C. */
#ifndef EB_BENCH_MOE_KERNELS_H
#define EB_BENCH_MOE_KERNELS_H

#include "moe_work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A leg's item arrays copied to device memory (dev's pointers are device addresses): items
 * and refs summed rows. */
int eb_mk_upload(const struct eb_moe_items *host, int ranks, int64_t items, int64_t refs,
		 struct eb_moe_items *dev);
void eb_mk_free(struct eb_moe_items *dev);
/* n bytes copied to (or allocated zeroed in, when host is NULL) GPU memory; eb_mk_release. */
int eb_mk_put(void **dev, const void *host, size_t n);
void eb_mk_release(void *dev);

/* n zeroed counters in GPU memory for the producers' tickets. */
int eb_mk_tickets(uint64_t **t, size_t n);
void eb_mk_free_tickets(uint64_t *t);

/* n zeroed stamps in mapped host memory: *host for the host, *dev for the GPU's blocks. */
int eb_mk_stamps(uint64_t **host, uint64_t **dev, size_t n);
void eb_mk_free_stamps(uint64_t *host);

/* Launch w->producers blocks running eb_moe_produce; asynchronous. */
int eb_mk_launch(const struct eb_moe_work *w);

/* 1 when the blocks have finished (*failed set when any failed), 0 while they run, or a
 * negative status after one line. */
int eb_mk_done(int *failed);

/* CPU producers over GPU memory: items [a, b) of w->gitems made by one kernel queued on the
 * calling thread's stream, at `to` (a GPU address) at their dst offsets, or packed in the
 * source region; and the wait for everything the thread queued. 0 or -1 after one line. */
int eb_mk_gather(const struct eb_moe_work *w, char *to, int packed, int64_t a, int64_t b);
int eb_mk_sync(void);

#ifdef __cplusplus
}
#endif

#endif
