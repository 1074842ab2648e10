/* GPU side of `efabench queue`: producer and latency kernels, callable from C (their mapped
 * words and waiting: gpu/floor_kernel.h). */
#ifndef EB_BENCH_QUEUE_KERNELS_H
#define EB_BENCH_QUEUE_KERNELS_H

#include "efabench/gpuq_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* blocks x threads producers, each pushing per commands (lo = producer << 32 | seq), then a
 * quiet on its last position. Asynchronous; eb_fk_wait reports how it went. */
int eb_qk_produce(struct eb_gpuq_dev q, int blocks, int threads, uint32_t per);

/* One thread: for i < iters, push command i and wait until *ack (mapped host word written by
 * the consumer) reaches i + 1; pushed[i] (mapped) gets the GPU's clock as it pushes and
 * rtt_ns[i] (mapped) the round trip. Asynchronous. */
int eb_qk_latency(struct eb_gpuq_dev q, uint64_t *ack, uint64_t *pushed, uint64_t *rtt_ns,
		  int iters);

#ifdef __cplusplus
}
#endif

#endif
