/* The shortest program that shows efabench's GPU-initiated put API: two ranks on this host
 * (forked here); rank 0's kernel puts a buffer to rank 1 with a signal through its CPU proxy,
 * rank 1's kernel waits for the signal and checks every word. Build: cmake (built beside
 * efabench when CUDA is found), or against an installed efabench with examples/Makefile
 * (nvcc put_signal.cu $(pkg-config --cflags --libs efabench)); run: ./put_signal [bytes].
 * Exit 0 when every word arrived. */
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/mem.h"
#include "efabench/proxy_thread.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void sender(struct eb_proxy_dev d, uint64_t *src, size_t words, int *status)
{
	for (size_t i = threadIdx.x; i < words; i += blockDim.x)
		src[i] = 0x5eed0000ull + i; /* the payload: a word per index */
	__syncthreads();
	__threadfence_system(); /* the NIC reads what the threads wrote */
	if (threadIdx.x == 0)
		*status =
		    eb_put_signal_nbi(&d, 1, 0, 0, words * 8, 0, 1, EB_SIGNAL_ADD) | eb_quiet(&d);
}

__global__ void receiver(struct eb_proxy_dev d, const uint64_t *dst, size_t words, int *bad)
{
	__shared__ int ok;

	if (threadIdx.x == 0)
		ok = eb_signal_wait_until(&d, 0, EB_CMP_GE, 1) == 0;
	__syncthreads();
	for (size_t i = threadIdx.x; ok && i < words; i += blockDim.x)
		if (dst[i] != 0x5eed0000ull + i)
			atomicAdd(bad, 1);
	if (threadIdx.x == 0 && !ok)
		atomicAdd(bad, 1 << 30);
}

static int rank_main(struct eb_boot *b, void *arg)
{
	size_t bytes = *(size_t *)arg, words = bytes / 8;
	struct eb_fabric_opts fo = {.timeout_s = 30};
	struct eb_proxy_opts po = {EB_LAYOUT_SINGLE, 1 << 20, 4, 8, 10, 64, 1, 1, 30, 0};
	struct eb_mem src, dst;
	struct eb_mr src_mr[64], dst_mr[64];
	struct eb_rkey *keys = (struct eb_rkey *)calloc(64 * (size_t)b->size, sizeof(*keys));
	struct eb_proxy *p = NULL;
	struct eb_engine e;
	int *flag, rc;

	/* Pinned buffers: any libfabric can register them (--mem device needs FI_HMEM). */
	if (eb_mem_use_gpu(0) != 0 || eb_engine_open(&e, b, &fo) != 0)
		return 1;
	rc = eb_mem_alloc(&src, EB_MEM_PINNED, bytes, "the source");
	rc = rc ? rc : eb_mem_alloc(&dst, EB_MEM_PINNED, bytes, "the destination");
	rc = rc ? rc : eb_engine_reg_mem(&e, &src, 0, bytes, EB_USE_SOURCE, src_mr, NULL);
	rc = rc ? rc : eb_engine_reg_mem(&e, &dst, 0, bytes, EB_USE_TARGET, dst_mr, keys);
	struct eb_proxy_bufs pb = {(char *)src.ptr, bytes, src_mr, bytes, keys};
	rc = rc ? rc : eb_proxy_open(&p, &e, &pb, &po);
	rc = rc ? rc : eb_proxy_start(p);
	cudaMallocManaged(&flag, sizeof(int));
	*flag = 0;
	if (rc == 0 && b->rank == 0)
		sender<<<1, 256>>>(eb_proxy_dev(p), (uint64_t *)src.dev_ptr, words, flag);
	else if (rc == 0 && b->rank == 1)
		receiver<<<1, 256>>>(eb_proxy_dev(p), (const uint64_t *)dst.dev_ptr, words, flag);
	if (rc == 0 && cudaDeviceSynchronize() != cudaSuccess)
		rc = 1;
	rc = rc ? rc : eb_proxy_stop(p);
	if (rc == 0 && *flag != 0) {
		fprintf(stderr, "rank %d: %s (%d)\n", b->rank,
			b->rank == 0 ? "the put failed" : "wrong words or no signal", *flag);
		rc = 1;
	} else if (rc == 0 && b->rank == 1) {
		printf("rank 1: %zu bytes arrived with their signal, every word right\n", bytes);
	}
	eb_boot_barrier(b, eb_engine_deadline(&e));
	eb_proxy_close(p);
	eb_engine_dereg(&e, src_mr);
	eb_engine_dereg(&e, dst_mr);
	eb_mem_free(&src);
	eb_mem_free(&dst);
	eb_engine_close(&e);
	free(keys);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 4 << 20;

	return eb_launch_local(2, rank_main, &bytes, 35.0);
}
