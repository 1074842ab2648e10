/* Host side of the command queue: placement of every word, the consumer, completion. */
#include "efabench/gpuq.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

#ifdef EB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* Control words a producer or the consumer writes each get a cache line of their own. */
struct ctl_line {
	EB_Q_ATOMIC(uint64_t) v;
	char pad[120];
};

struct ctl {
	struct ctl_line consumed, completed, error;
};

static void point(struct eb_gpuq_dev *d, struct eb_q_slot *slots, struct ctl *c)
{
	d->slots = slots;
	d->consumed = &c->consumed.v;
	d->completed = &c->completed.v;
	d->error = (EB_Q_ATOMIC(uint32_t) *)&c->error.v;
}

static int create_cpu(struct eb_gpuq *q, size_t slot_bytes)
{
	void *slots = NULL, *c = NULL, *prod = NULL;

	/* posix_memalign: aligned_alloc wants sizes that are multiples of the alignment. */
	if (posix_memalign(&slots, 4096, slot_bytes) != 0 ||
	    posix_memalign(&c, 128, sizeof(struct ctl)) != 0 ||
	    posix_memalign(&prod, 128, 2 * sizeof(struct ctl_line)) != 0) {
		free(slots);
		free(c);
		free(prod);
		eb_err("cannot allocate a queue of %zu bytes", slot_bytes);
		return EB_ENOMEM;
	}
	memset(slots, 0, slot_bytes);
	memset(c, 0, sizeof(struct ctl));
	memset(prod, 0, 2 * sizeof(struct ctl_line));
	point(&q->host, slots, c);
	q->host.head = &((struct ctl_line *)prod)[0].v;
	q->host.tail_cache = &((struct ctl_line *)prod)[1].v;
	q->dev = q->host;
	q->alloc[0] = slots;
	q->alloc[1] = c;
	q->alloc[2] = prod;
	return EB_OK;
}

#ifdef EB_HAVE_CUDA
#define CUDA_TRY(call, what)                                                                       \
	do {                                                                                       \
		cudaError_t err_ = (call);                                                         \
		if (err_ != cudaSuccess) {                                                         \
			eb_err("%s: %s", what, cudaGetErrorString(err_));                          \
			goto free_all;                                                             \
		}                                                                                  \
	} while (0)

static int create_gpu(struct eb_gpuq *q, size_t slot_bytes)
{
	struct eb_q_slot *slots = NULL, *dslots = NULL;
	struct ctl *c = NULL, *dc = NULL;
	struct ctl_line *prod = NULL;
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		eb_err("GPU producers need a CUDA GPU, and none is visible");
		return EB_ENOTSUP;
	}
	if (q->place == EB_GPUQ_MANAGED) {
		CUDA_TRY(cudaMallocManaged((void **)&slots, slot_bytes, cudaMemAttachGlobal),
			 "cudaMallocManaged for the queue slots");
		dslots = slots;
	} else {
		/* Mapped and portable, never write-combined: the consumer reads every slot. */
		CUDA_TRY(cudaHostAlloc((void **)&slots, slot_bytes,
				       cudaHostAllocMapped | cudaHostAllocPortable),
			 "cudaHostAlloc for the queue slots");
		CUDA_TRY(cudaHostGetDevicePointer((void **)&dslots, slots, 0),
			 "cudaHostGetDevicePointer for the queue slots");
	}
	memset(slots, 0, slot_bytes);
	CUDA_TRY(
	    cudaHostAlloc((void **)&c, sizeof(*c), cudaHostAllocMapped | cudaHostAllocPortable),
	    "cudaHostAlloc for the queue's control words");
	memset(c, 0, sizeof(*c));
	CUDA_TRY(cudaHostGetDevicePointer((void **)&dc, c, 0),
		 "cudaHostGetDevicePointer for the control words");
	/* Claims and the producers' cached tail stay on the GPU, where their atomics are cheap. */
	CUDA_TRY(cudaMalloc((void **)&prod, 2 * sizeof(*prod)), "cudaMalloc for the queue head");
	CUDA_TRY(cudaMemset(prod, 0, 2 * sizeof(*prod)), "cudaMemset of the queue head");
	point(&q->host, slots, c);
	q->host.head = NULL; /* lives on the GPU */
	q->host.tail_cache = NULL;
	point(&q->dev, dslots, dc);
	q->dev.head = &prod[0].v;
	q->dev.tail_cache = &prod[1].v;
	q->alloc[0] = slots;
	q->alloc[1] = c;
	q->alloc[2] = prod;
	return EB_OK;

free_all:
	if (slots != NULL)
		q->place == EB_GPUQ_MANAGED ? cudaFree(slots) : cudaFreeHost(slots);
	if (c != NULL)
		cudaFreeHost(c);
	if (prod != NULL)
		cudaFree(prod);
	return EB_ESYS;
}
#endif

int eb_gpuq_create(struct eb_gpuq *q, enum eb_gpuq_mode mode, enum eb_gpuq_place place,
		   uint32_t log2n, uint32_t batch, uint64_t timeout_ns)
{
	size_t slot_bytes = sizeof(struct eb_q_slot) << log2n;
	int rc;

	memset(q, 0, sizeof(*q));
	if (log2n < 1 || log2n > 24 || batch < 1) {
		eb_err("a queue needs 2 to 2^24 slots and a batch of at least 1");
		return EB_EINVAL;
	}
	q->mode = mode;
	q->place = place;
	q->batch = batch;
	if (mode == EB_GPUQ_CPU) {
		rc = create_cpu(q, slot_bytes);
	} else {
#ifdef EB_HAVE_CUDA
		rc = create_gpu(q, slot_bytes);
#else
		eb_err("GPU producers need a build with CUDA (this one has none)");
		rc = EB_ENOTSUP;
#endif
	}
	q->dev.log2n = q->host.log2n = log2n;
	q->dev.timeout_ns = q->host.timeout_ns = timeout_ns;
	return rc;
}

void eb_gpuq_destroy(struct eb_gpuq *q)
{
	if (q->mode == EB_GPUQ_CPU) {
		free(q->alloc[0]);
		free(q->alloc[1]);
		free(q->alloc[2]);
	} else {
#ifdef EB_HAVE_CUDA
		if (q->alloc[0] != NULL)
			q->place == EB_GPUQ_MANAGED ? cudaFree(q->alloc[0])
						    : cudaFreeHost(q->alloc[0]);
		if (q->alloc[1] != NULL)
			cudaFreeHost(q->alloc[1]);
		if (q->alloc[2] != NULL)
			cudaFree(q->alloc[2]);
#endif
	}
	memset(q, 0, sizeof(*q));
}

static void publish(struct eb_gpuq *q)
{
	atomic_store_explicit(q->host.consumed, q->pos, memory_order_release);
	q->published = q->pos;
}

int eb_gpuq_poll(struct eb_gpuq *q, struct eb_q_cmd *out, int max)
{
	uint64_t mask = (1ull << q->host.log2n) - 1;
	int n = 0;

	if (q->pos == EB_Q_CLOSED)
		return 0;
	while (n < max) {
		struct eb_q_slot *s = &q->host.slots[q->pos & mask];
		uint64_t want = (((q->pos >> q->host.log2n) & 1) ^ 1) << 63;
		uint64_t hi = atomic_load_explicit(&s->hi, memory_order_acquire);

		if ((hi & EB_Q_LAP_BIT) != want)
			break;
		out[n].lo = atomic_load_explicit(&s->lo, memory_order_relaxed);
		out[n].hi = hi & ~EB_Q_LAP_BIT;
		n++;
		q->pos++;
	}
	if (q->pos - q->published >= q->batch || (n == 0 && q->pos != q->published))
		publish(q);
	return n;
}

void eb_gpuq_complete(struct eb_gpuq *q, uint64_t count)
{
	atomic_store_explicit(q->host.completed, count, memory_order_release);
}

void eb_gpuq_close(struct eb_gpuq *q)
{
	q->pos = q->published = EB_Q_CLOSED;
	atomic_store_explicit(q->host.consumed, EB_Q_CLOSED, memory_order_release);
}

uint32_t eb_gpuq_errors(const struct eb_gpuq *q)
{
	return atomic_load_explicit(q->host.error, memory_order_acquire);
}
