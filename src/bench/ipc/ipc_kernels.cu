#include "ipc_kernels.h"
#include "mem/cuda_check.h"
#include "core/log.h"
#include "efabench/status.h"

#include <cuda_runtime.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __device__ uint64_t gpu_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

int eb_ik_probe(int want, int *ngpus, int *bad_a, int *bad_b)
{
	int n = 0, a, b, ok;

	*bad_a = *bad_b = -1;
	if (eb_cuda_check(cudaGetDeviceCount(&n), "cannot count CUDA GPUs") != 0) {
		*ngpus = 0;
		return EB_ESYS;
	}
	*ngpus = n;
	for (a = 0; a < want && a < n; a++)
		for (b = 0; b < want && b < n; b++) {
			if (a == b)
				continue;
			if (eb_cuda_check(cudaDeviceCanAccessPeer(&ok, a, b),
					  "cudaDeviceCanAccessPeer"))
				return EB_ESYS;
			if (!ok && *bad_a < 0) {
				*bad_a = a;
				*bad_b = b;
			}
		}
	return 0;
}

int eb_ik_use(int ordinal, struct eb_ik_gpu *g)
{
	struct cudaDeviceProp p;
	char what[64];
	int rc;

	snprintf(what, sizeof(what), "cannot use GPU %d", ordinal);
	rc = eb_cuda_check(cudaSetDevice(ordinal), what);
	if (rc == 0)
		rc = eb_cuda_check(cudaGetDeviceProperties(&p, ordinal), what);
	if (rc == 0)
		rc = eb_cuda_check(cudaDeviceGetPCIBusId(g->pci, sizeof(g->pci), ordinal), what);
	if (rc != 0)
		return rc;
	g->ordinal = ordinal;
	g->sms = p.multiProcessorCount;
	g->smem_optin = p.sharedMemPerBlockOptin;
	snprintf(g->name, sizeof(g->name), "%s", p.name);
	return 0;
}

void *eb_ik_alloc(size_t bytes)
{
	void *p = NULL;
	char what[96];

	snprintf(what, sizeof(what), "cudaMalloc of %zu bytes", bytes);
	return eb_cuda_check(cudaMalloc(&p, bytes), what) == 0 ? p : NULL;
}

void eb_ik_free(void *p)
{
	if (p != NULL)
		cudaFree(p);
}

int eb_ik_export(void *p, unsigned char handle[EB_IK_HANDLE_BYTES])
{
	cudaIpcMemHandle_t h;
	int rc = eb_cuda_check(cudaIpcGetMemHandle(&h, p), "cudaIpcGetMemHandle");

	static_assert(sizeof(h) == EB_IK_HANDLE_BYTES, "IPC handle size");
	if (rc == 0)
		memcpy(handle, &h, sizeof(h));
	return rc;
}

int eb_ik_import(const unsigned char handle[EB_IK_HANDLE_BYTES], void **p)
{
	cudaIpcMemHandle_t h;

	memcpy(&h, handle, sizeof(h));
	return eb_cuda_check(cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess),
			     "cudaIpcOpenMemHandle (a peer's buffer)");
}

void eb_ik_unimport(void *p)
{
	if (p != NULL)
		eb_cuda_check(cudaIpcCloseMemHandle(p), "cudaIpcCloseMemHandle");
}

/* len bytes from the host into device memory, landed when this returns. cudaMemcpy from
 * pageable memory returns once the bytes are staged, before the DMA into the GPU completes
 * (CUDA's API synchronization behavior): a flag reset that way could land after a peer's
 * kernel set it, which under other GPU work it did. */
static int put_landed(void *dst, const void *src, size_t len, const char *what)
{
	int rc = eb_cuda_check(cudaMemcpy(dst, src, len, cudaMemcpyHostToDevice), what);

	return rc != 0 ? rc : eb_cuda_check(cudaDeviceSynchronize(), what);
}

int eb_ik_flip(void *buf, size_t off)
{
	unsigned char b;
	int rc = eb_cuda_check(
	    cudaMemcpy(&b, (unsigned char *)buf + off, 1, cudaMemcpyDeviceToHost), "corrupt: read");

	b = (unsigned char)~b;
	return rc != 0 ? rc : put_landed((unsigned char *)buf + off, &b, 1, "corrupt: write");
}

int eb_ik_put_u64(void *dst, uint64_t v)
{
	return put_landed(dst, &v, 8, "write a flag");
}

int eb_ik_get_u64(const void *src, uint64_t *v)
{
	return eb_cuda_check(cudaMemcpy(v, src, 8, cudaMemcpyDeviceToHost), "read a flag");
}

/* ---- the copy kernels ---- */

struct signal {
	uint64_t *flag; /* NULL: no completion signal */
	uint64_t val;
	unsigned int *arrived; /* blocks done with this launch; the last resets it */
};

/* Every block fences its stores at system scope and counts itself; the last one publishes
 * the flag, so a target that sees it also sees every byte of the launch. */
static __device__ void signal_done(const struct signal &s)
{
	if (s.flag == NULL)
		return;
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	__threadfence_system();
	if (atomicAdd(s.arrived, 1u) == gridDim.x - 1) {
		atomicExch(s.arrived, 0u);
		asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(s.flag), "l"(s.val) : "memory");
	}
}

/* Bytes past the last whole 16-byte vector: block 0 copies them one by one. */
static __device__ void copy_tail(unsigned char *dst, const unsigned char *src, size_t from,
				 size_t len)
{
	if (blockIdx.x != 0)
		return;
	for (size_t b = from + threadIdx.x; b < len; b += blockDim.x)
		dst[b] = src[b];
}

/* Grid-stride copy, eight independent 16-byte loads in flight per thread before the stores
 * (four measured 0.3 % slower at 1 GiB on two H200s, twelve the same as eight); L2-only (.cg)
 * accesses, since none of the data is reused (plain and .cs accesses measured the same over
 * NVLink). `copies` times over the same bytes. */
#define ST_UNROLL 8
__global__ void st_kernel(int4 *dst, const int4 *src, size_t n16, size_t len, int copies,
			  struct signal s)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (int r = 0; r < copies; r++) {
		size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

		for (; i + (ST_UNROLL - 1) * stride < n16; i += ST_UNROLL * stride) {
			int4 v[ST_UNROLL];
#pragma unroll
			for (int k = 0; k < ST_UNROLL; k++)
				v[k] = __ldcg(src + i + k * stride);
#pragma unroll
			for (int k = 0; k < ST_UNROLL; k++)
				__stcg(dst + i + k * stride, v[k]);
		}
		for (; i < n16; i += stride)
			__stcg(dst + i, __ldcg(src + i));
		copy_tail((unsigned char *)dst, (const unsigned char *)src, n16 * 16, len);
	}
	signal_done(s);
}

__global__ void empty_kernel(void)
{
}

static __device__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ void tma_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
		     : "memory");
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
		     "[%1], %2, [%3];" ::"r"(dst),
		     "l"(src), "r"(bytes), "r"(bar)
		     : "memory");
}

/* Wait for phase `parity` of an mbarrier; trap (the host sees the launch fail) past the
 * deadline rather than hang. */
static __device__ void tma_wait(uint32_t bar, uint32_t parity, uint64_t deadline)
{
	uint32_t done = 0;

	while (!done) {
		asm volatile(
		    "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
		    "selp.u32 %0, 1, 0, p; }"
		    : "=r"(done)
		    : "r"(bar), "r"(parity)
		    : "memory");
		if (!done && gpu_ns() > deadline)
			__trap();
	}
}

/* Bulk asynchronous copy: one thread per block streams its chunks (block b takes chunks b,
 * b + grid, ...) through `stages` shared-memory buffers: bulk loads run stages - 1 chunks
 * ahead, and each buffer is reloaded as soon as the bulk store that read it has drained it.
 * The copy engines of the SMs (TMA) then move the data; no thread touches it. */
__global__ void tma_kernel(unsigned char *dst, const unsigned char *src, size_t len, uint32_t chunk,
			   int stages, int copies, uint64_t timeout_ns, struct signal s)
{
	extern __shared__ __align__(128) unsigned char smem[];
	size_t n16 = len / 16 * 16, nchunks = (n16 + chunk - 1) / chunk;
	size_t each = nchunks > blockIdx.x ? (nchunks - blockIdx.x - 1) / gridDim.x + 1 : 0;
	/* `copies` passes over this block's chunks as one stream: the pipeline never drains */
	size_t mine = each * (size_t)copies;

	if (threadIdx.x == 0 && mine > 0) {
		uint32_t buf0 = smem_addr(smem), bar0 = smem_addr(smem + (size_t)stages * chunk);
		uint64_t deadline = gpu_ns() + timeout_ns;
		size_t k;

		for (int st = 0; st < stages; st++)
			asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * st)
				     : "memory");
		/* The bulk copies (async proxy) must see the initialised barriers. */
		asm volatile(
		    "fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
			: "memory");
#define CHUNK_OFF(k) (((size_t)blockIdx.x + (size_t)((k) % each) * gridDim.x) * chunk)
#define CHUNK_LEN(k) ((uint32_t)(n16 - CHUNK_OFF(k) < chunk ? n16 - CHUNK_OFF(k) : chunk))
		for (k = 0; k + 1 < (size_t)stages && k < mine; k++)
			tma_load(buf0 + (uint32_t)(k % stages) * chunk, src + CHUNK_OFF(k),
				 CHUNK_LEN(k), bar0 + 8 * (uint32_t)(k % stages));
		for (k = 0; k < mine; k++) {
			uint32_t st = (uint32_t)(k % stages);
			size_t j = k + (size_t)stages - 1;

			tma_wait(bar0 + 8 * st, (uint32_t)((k / stages) & 1), deadline);
			asm volatile(
			    "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
				dst + CHUNK_OFF(k)),
			    "r"(buf0 + st * chunk), "r"(CHUNK_LEN(k))
			    : "memory");
			asm volatile("cp.async.bulk.commit_group;" ::: "memory");
			if (j < mine) {
				/* Buffer j % stages last held chunk k - 1: wait until its store
				 * has read it (store k may stay in flight). */
				asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
				tma_load(buf0 + (uint32_t)(j % stages) * chunk, src + CHUNK_OFF(j),
					 CHUNK_LEN(j), bar0 + 8 * (uint32_t)(j % stages));
			}
		}
#undef CHUNK_OFF
#undef CHUNK_LEN
		/* Stores complete and visible before the generic-proxy signal below. */
		asm volatile("cp.async.bulk.wait_group 0;\n\tfence.proxy.async.global;" ::
				 : "memory");
	}
	for (int r = 0; r < copies; r++)
		copy_tail(dst, src, n16, len);
	signal_done(s);
}

/* ---- timing ---- */

__global__ void gate_kernel(const volatile uint32_t *go, uint32_t ticket, uint64_t timeout_ns,
			    volatile uint32_t *late)
{
	uint64_t t0 = gpu_ns();

	while (*go < ticket) {
		if (gpu_ns() - t0 > timeout_ns) {
			*late = 1;
			return;
		}
		__nanosleep(256);
	}
}

struct eb_ik_timer {
	int nstreams, max_batch;
	cudaStream_t *streams;
	cudaEvent_t *ev;			 /* [nstreams][max_batch + 1] */
	uint32_t *go_h, *go_d, *late_h, *late_d; /* mapped host words */
	uint32_t ticket;
	unsigned int *arrived; /* device: one counter per stream for signal_done */
	int gate;
};

static const char *ce_api = "cudaMemcpyPeerAsync";
static int ce_plain; /* cudaMemcpyPeerAsync refused the IPC mapping: use cudaMemcpyAsync */

const char *eb_ik_ce_api(void)
{
	return ce_api;
}

void eb_ik_timer_destroy(struct eb_ik_timer *t)
{
	int i;

	if (t == NULL)
		return;
	for (i = 0; t->ev != NULL && i < t->nstreams * (t->max_batch + 1); i++)
		if (t->ev[i] != NULL)
			cudaEventDestroy(t->ev[i]);
	for (i = 0; t->streams != NULL && i < t->nstreams; i++)
		if (t->streams[i] != NULL)
			cudaStreamDestroy(t->streams[i]);
	if (t->go_h != NULL)
		cudaFreeHost(t->go_h);
	if (t->arrived != NULL)
		cudaFree(t->arrived);
	free(t->ev);
	free(t->streams);
	free(t);
}

int eb_ik_timer_create(struct eb_ik_timer **out, int nstreams, int max_batch, int gate)
{
	struct eb_ik_timer *t = (struct eb_ik_timer *)calloc(1, sizeof(*t));
	int i, rc = EB_ENOMEM;

	if (t == NULL)
		return EB_ENOMEM;
	t->gate = gate;
	t->nstreams = nstreams;
	t->max_batch = max_batch;
	t->streams = (cudaStream_t *)calloc((size_t)nstreams, sizeof(cudaStream_t));
	t->ev = (cudaEvent_t *)calloc((size_t)nstreams * (max_batch + 1), sizeof(cudaEvent_t));
	if (t->streams == NULL || t->ev == NULL)
		goto destroy;
	for (i = 0; i < nstreams; i++) {
		rc = eb_cuda_check(cudaStreamCreateWithFlags(&t->streams[i], cudaStreamNonBlocking),
				   "cudaStreamCreate");
		if (rc != 0)
			goto destroy;
	}
	for (i = 0; i < nstreams * (max_batch + 1); i++) {
		rc = eb_cuda_check(cudaEventCreate(&t->ev[i]), "cudaEventCreate");
		if (rc != 0)
			goto destroy;
	}
	rc = eb_cuda_check(cudaHostAlloc((void **)&t->go_h, 256, cudaHostAllocMapped),
			   "cudaHostAlloc");
	if (rc != 0)
		goto destroy;
	memset(t->go_h, 0, 256);
	t->late_h = t->go_h + 32; /* its own cache line */
	rc = eb_cuda_check(cudaHostGetDevicePointer((void **)&t->go_d, t->go_h, 0),
			   "cudaHostGetDevicePointer");
	if (rc != 0)
		goto destroy;
	t->late_d = t->go_d + 32;
	rc = eb_cuda_check(cudaMalloc((void **)&t->arrived, sizeof(unsigned int) * nstreams),
			   "cudaMalloc");
	if (rc == 0)
		rc = eb_cuda_check(cudaMemset(t->arrived, 0, sizeof(unsigned int) * nstreams),
				   "cudaMemset");
	if (rc != 0)
		goto destroy;
	*out = t;
	return 0;
destroy:
	eb_ik_timer_destroy(t);
	return rc;
}

/* One copy-engine copy: cudaMemcpyPeerAsync, or cudaMemcpyAsync where it refuses the IPC
 * mapping (said once). */
static cudaError_t ce_copy(const struct eb_ik_op *op, cudaStream_t st)
{
	cudaError_t err;

	if (!ce_plain) {
		err = cudaMemcpyPeerAsync(op->dst, op->dst_dev, op->src, op->src_dev, op->len, st);
		if (err == cudaSuccess)
			return err;
		cudaGetLastError();
		ce_plain = 1;
		ce_api = "cudaMemcpyAsync";
		eb_warn("cudaMemcpyPeerAsync refused the IPC mapping (%s); the copy engine runs "
			"through cudaMemcpyAsync instead",
			cudaGetErrorString(err));
	}
	return cudaMemcpyAsync(op->dst, op->src, op->len, cudaMemcpyDefault, st);
}

static int launch(struct eb_ik_timer *t, int s, const struct eb_ik_op *op, uint64_t timeout_ns)
{
	cudaStream_t st = t->streams[s];
	struct signal sig = {op->flag, op->flag_val, t->arrived + s};
	cudaError_t err = cudaSuccess;
	int copies = op->copies > 1 ? op->copies : 1, r;

	switch (op->method) {
	case EB_IK_CE:
		for (r = 0; r < copies && err == cudaSuccess; r++)
			err = ce_copy(op, st);
		break;
	case EB_IK_ST:
		st_kernel<<<op->grid, op->block, 0, st>>>((int4 *)op->dst, (const int4 *)op->src,
							  op->len / 16, op->len, copies, sig);
		break;
	case EB_IK_TMA: {
		size_t smem = (size_t)op->tma_stages * op->tma_chunk + 8 * op->tma_stages;

		tma_kernel<<<op->grid, 32, smem, st>>>(
		    (unsigned char *)op->dst, (const unsigned char *)op->src, op->len,
		    (uint32_t)op->tma_chunk, op->tma_stages, copies, timeout_ns, sig);
		break;
	}
	case EB_IK_EMPTY:
		empty_kernel<<<op->grid, op->block, 0, st>>>();
		break;
	}
	if (err == cudaSuccess)
		err = cudaGetLastError();
	return eb_cuda_check(err, op->method == EB_IK_CE ? "copy-engine copy" : "kernel launch");
}

/* Poll the batch's last events against the deadline (a blocking sync could hang). */
static int wait_batch(struct eb_ik_timer *t, int nops, int b, uint64_t deadline)
{
	int s;

	for (s = 0; s < nops; s++) {
		cudaError_t err;

		while ((err = cudaEventQuery(t->ev[s * (t->max_batch + 1) + b])) ==
		       cudaErrorNotReady) {
			if (host_ns() > deadline) {
				eb_err("GPU work did not finish within the deadline (stream %d)",
				       s);
				return EB_ETIMEDOUT;
			}
			sched_yield();
		}
		if (eb_cuda_check(err, "GPU work") != 0)
			return EB_ESYS;
	}
	return 0;
}

/* Kernels that stream through shared memory may use what their op asks for. */
static int tma_smem(const struct eb_ik_op *ops, int nops)
{
	int s, rc = 0;

	for (s = 0; s < nops && rc == 0; s++)
		if (ops[s].method == EB_IK_TMA) {
			size_t smem =
			    (size_t)ops[s].tma_stages * ops[s].tma_chunk + 8 * ops[s].tma_stages;

			rc = eb_cuda_check(
			    cudaFuncSetAttribute(
				tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
			    "TMA kernel shared memory (lower --tma-chunk or --tma-stages)");
		}
	return rc;
}

/* A batch of b launches of ops[s] on each stream s behind the gate, an event before each;
 * *queued: the streams enqueued (all of them, or up to a failure). */
static int enqueue(struct eb_ik_timer *t, const struct eb_ik_op *ops, int nops, int b,
		   uint64_t timeout_ns, int *queued)
{
	int s, i, rc = 0;

	for (s = 0; s < nops && rc == 0; s++) {
		cudaEvent_t *ev = t->ev + s * (t->max_batch + 1);

		if (t->gate) {
			gate_kernel<<<1, 1, 0, t->streams[s]>>>(t->go_d, t->ticket, timeout_ns,
								t->late_d);
			rc = eb_cuda_check(cudaGetLastError(), "gate kernel");
		}
		for (i = 0; i < b && rc == 0; i++) {
			rc =
			    eb_cuda_check(cudaEventRecord(ev[i], t->streams[s]), "cudaEventRecord");
			if (rc == 0)
				rc = launch(t, s, &ops[s], timeout_ns);
		}
		if (rc == 0)
			rc =
			    eb_cuda_check(cudaEventRecord(ev[b], t->streams[s]), "cudaEventRecord");
	}
	*queued = s;
	return rc;
}

/* The batch's seconds per launch: each launch's with one stream, else the batch's span over
 * every stream divided by its launches. */
static int batch_samples(struct eb_ik_timer *t, int nops, int b, double *samples, long *nsamples)
{
	float lo = 0, hi = 0;
	int s, i, rc = 0;

	for (i = 0; nops == 1 && i < b && rc == 0; i++) {
		float ms = 0;

		rc = eb_cuda_check(cudaEventElapsedTime(&ms, t->ev[i], t->ev[i + 1]),
				   "cudaEventElapsedTime");
		samples[(*nsamples)++] = ms * 1e-3;
	}
	if (nops == 1)
		return rc;
	for (s = 0; s < nops && rc == 0; s++) {
		float a = 0, z = 0;
		cudaEvent_t *ev = t->ev + s * (t->max_batch + 1);

		rc = eb_cuda_check(cudaEventElapsedTime(&a, t->ev[0], ev[0]),
				   "cudaEventElapsedTime");
		if (rc == 0)
			rc = eb_cuda_check(cudaEventElapsedTime(&z, t->ev[0], ev[b]),
					   "cudaEventElapsedTime");
		lo = s == 0 || a < lo ? a : lo;
		hi = s == 0 || z > hi ? z : hi;
	}
	if (rc == 0)
		samples[(*nsamples)++] = (hi - lo) * 1e-3 / b;
	return rc;
}

int eb_ik_run(struct eb_ik_timer *t, const struct eb_ik_op *ops, int nops, long n, double *samples,
	      long *nsamples, double timeout_s, int (*sync)(void *), void *arg)
{
	uint64_t timeout_ns = (uint64_t)(timeout_s * 1e9);
	long done = 0;
	int rc;

	*nsamples = 0;
	if (nops > t->nstreams)
		return EB_EINVAL;
	rc = tma_smem(ops, nops);
	while (rc == 0 && done < n) {
		int b = (int)(n - done < t->max_batch ? n - done : t->max_batch), queued, rc2;

		t->ticket++;
		*(volatile uint32_t *)t->late_h = 0;
		rc = enqueue(t, ops, nops, b, timeout_ns, &queued);
		if (rc == 0 && sync != NULL)
			rc = sync(arg);
		/* Open the gate even after a failure, so nothing queued waits for its timeout. */
		__atomic_store_n(t->go_h, t->ticket, __ATOMIC_RELEASE);
		rc2 = wait_batch(t, queued, b, host_ns() + timeout_ns);
		rc = rc != 0 ? rc : rc2;
		if (rc == 0 && *(volatile uint32_t *)t->late_h != 0) {
			eb_err(
			    "the gate kernel timed out: the host took longer than the deadline to "
			    "enqueue a batch");
			rc = EB_ETIMEDOUT;
		}
		if (rc == 0)
			rc = batch_samples(t, nops, b, samples, nsamples);
		done += b;
	}
	return rc;
}
