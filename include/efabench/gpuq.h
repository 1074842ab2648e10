/* The GPU->CPU command queue: many producers (GPU threads, or CPU threads in CPU mode) push
 * 16-byte commands into a ring that one consumer drains in batches. Protocol and producer
 * side: gpuq_proto.h. */
#ifndef EFABENCH_GPUQ_H
#define EFABENCH_GPUQ_H

#include "efabench/gpuq_proto.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum eb_gpuq_mode {
	EB_GPUQ_GPU, /* GPU producers: control words in device / mapped host memory */
	EB_GPUQ_CPU, /* CPU producers: the same protocol on plain host memory */
};

enum eb_gpuq_place {
	EB_GPUQ_PINNED,	 /* slots in pinned, mapped host memory (not write-combined) */
	EB_GPUQ_MANAGED, /* slots in managed memory, for comparison */
};

struct eb_gpuq {
	struct eb_gpuq_dev dev;	 /* hand this to producers */
	struct eb_gpuq_dev host; /* the same words as the consumer (CPU) addresses them */
	enum eb_gpuq_mode mode;
	enum eb_gpuq_place place;
	uint64_t pos;	    /* next position the consumer reads */
	uint64_t published; /* last position written to consumed */
	uint32_t batch;	    /* publish consumed at least every batch commands */
	void *alloc[4];	    /* what destroy frees */
};

/* 2^log2n slots (1..24). Returns 0 or a negative status after printing why; EB_ENOTSUP for
 * GPU mode in a build without CUDA or on a machine without a GPU. */
int eb_gpuq_create(struct eb_gpuq *q, enum eb_gpuq_mode mode, enum eb_gpuq_place place,
		   uint32_t log2n, uint32_t batch, uint64_t timeout_ns);
void eb_gpuq_destroy(struct eb_gpuq *q);

/* Take up to max ready commands, in order (lap flag cleared). Publishes the consumer's
 * position once batch commands have been taken since the last time, and whenever the ring
 * is found empty, so producers waiting for room always learn of it. */
int eb_gpuq_poll(struct eb_gpuq *q, struct eb_q_cmd *out, int max);

/* The completed prefix grew to count commands (the work they asked for is done). */
void eb_gpuq_complete(struct eb_gpuq *q, uint64_t count);

/* Stop consuming: producers waiting for room, or in a quiet, give up at once instead of at
 * their deadline. Nothing is taken after this. */
void eb_gpuq_close(struct eb_gpuq *q);

/* EB_Q_ERR_* bits raised by producers. */
uint32_t eb_gpuq_errors(const struct eb_gpuq *q);

#ifdef __cplusplus
}
#endif

#endif
