/* proxy_order.c with one GPU thread as the producer: it puts from pinned memory and overwrites
 * it from the GPU; rank 1 checks on the CPU. Exit 77 where no GPU is. */
#define EB_ORDER_GPU 1
#define EB_ORDER_FN  __device__ static
#define EB_ORDER_HD  __host__ __device__
#define GPU	     1
#define SRC_MEM	     EB_MEM_PINNED
#define SRC_PTR(m)   ((char *)(m).dev_ptr)

#include <cuda_runtime.h>
#include <stdio.h>

static int gpu_here(void);
struct eb_proxy_dev;
struct args;
static int sender(const struct eb_proxy_dev *d, char *src, const struct args *a);
static int ready(const struct eb_proxy_dev *d, int k);

#include "proxy_order.c"

__device__ static void overwrite_gpu(char *p, size_t len)
{
	for (size_t i = 0; i < len / 8; i++)
		((uint64_t *)p)[i] = 0xeeeeeeeeeeeeeeeeull;
	__threadfence_system();
}

__global__ void order_kernel(struct eb_proxy_dev d, char *src, size_t bytes, int *rc)
{
	*rc = produce(&d, src, bytes, overwrite_gpu);
}

static int sender(const struct eb_proxy_dev *d, char *src, const struct args *a)
{
	int *rc = NULL, r;

	if (cudaMallocManaged(&rc, sizeof(int)) != cudaSuccess)
		return 1;
	*rc = -1;
	order_kernel<<<1, 1>>>(*d, src, a->bytes, rc);
	r = cudaDeviceSynchronize() == cudaSuccess ? *rc : 1;
	cudaFree(rc);
	return r;
}

__global__ void ready_kernel(struct eb_proxy_dev d, int k, int *rc)
{
	*rc = eb_signal_nbi(&d, 0, NCASES + k, 1, EB_SIGNAL_ADD) | eb_quiet(&d);
}

/* Rank 1 tells rank 0 it is ready for case k (a GPU thread: the queue is the GPU's). */
static int ready(const struct eb_proxy_dev *d, int k)
{
	int *rc = NULL, r;

	if (cudaMallocManaged(&rc, sizeof(int)) != cudaSuccess)
		return 1;
	*rc = -1;
	ready_kernel<<<1, 1>>>(*d, k, rc);
	r = cudaDeviceSynchronize() == cudaSuccess ? *rc : 1;
	cudaFree(rc);
	return r;
}

/* In a child process: CUDA initialised here would be lost to the forked ranks. */
static int count_gpus(const void *arg, void *out)
{
	(void)arg;
	if (cudaGetDeviceCount((int *)out) != cudaSuccess)
		*(int *)out = 0;
	return 0;
}

static int gpu_here(void)
{
	int n = 0;

	if (eb_launch_probe(count_gpus, NULL, &n, sizeof(n)) != 0 || n == 0) {
		printf("proxy_order: no CUDA GPU here (skipped)\n");
		return 0;
	}
	return 1;
}
