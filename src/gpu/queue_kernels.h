/* GPU side of `efabench queue`: producer, latency and floor kernels, callable from C. */
#ifndef EB_GPU_QUEUE_KERNELS_H
#define EB_GPU_QUEUE_KERNELS_H

#include "efabench/gpuq_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* blocks x threads producers, each pushing per commands (lo = producer << 32 | seq), then a
 * quiet on its last position. Asynchronous; eb_qk_wait reports how it went. */
int eb_qk_produce(struct eb_gpuq_dev q, int blocks, int threads, uint32_t per);

/* One thread: for i < iters, push command i and wait until *ack (mapped host word written by
 * the consumer) reaches i + 1; rtt_ns[i] (mapped) gets each round trip. Asynchronous. */
int eb_qk_latency(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *rtt_ns, int iters);

/* The floor: one thread writes i + 1 to *ping, waits for *pong == i + 1 (the host echoes it),
 * rtt_ns[i] gets the round trip. All mapped host memory. Asynchronous. */
int eb_qk_floor(uint64_t *ping, uint64_t *pong, uint64_t *rtt_ns, int iters);

/* Wait for the kernels launched; 0 or a negative status after printing the CUDA error. */
int eb_qk_wait(void);

/* Mapped, zeroed host memory and its device address; free with eb_qk_free_mapped. */
void *eb_qk_alloc_mapped(size_t bytes, void **dev);
void eb_qk_free_mapped(void *p);

#ifdef __cplusplus
}
#endif

#endif
