/* The floor's GPU side, callable from C: the ping-pong kernel, the mapped host words it (and
 * the queue's kernels) read and write while the host does, and waiting for the kernels. */
#ifndef EB_GPU_FLOOR_KERNEL_H
#define EB_GPU_FLOOR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The floor: one thread writes i + 1 to *ping, waits for *pong == i + 1 (the host echoes it),
 * rtt_ns[i] gets the round trip. All mapped host memory. Asynchronous. */
int eb_fk_floor(uint64_t *ping, uint64_t *pong, uint64_t *rtt_ns, int iters);

/* The same ping-pong, g0[i] and g1[i] (mapped) getting the GPU's %globaltimer as ping i
 * leaves and its pong is seen. Asynchronous. */
int eb_fk_clock(uint64_t *ping, uint64_t *pong, uint64_t *g0, uint64_t *g1, int iters);

/* Wait for the kernels launched; 0 or a negative status after printing the CUDA error. */
int eb_fk_wait(void);

/* Mapped, zeroed host memory and its device address; free with eb_fk_free_mapped. */
void *eb_fk_alloc_mapped(size_t bytes, void **dev);
void eb_fk_free_mapped(void *p);

#ifdef __cplusplus
}
#endif

#endif
