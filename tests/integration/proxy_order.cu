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

static int gpu_here(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("proxy_order: no CUDA GPU here (skipped)\n");
		return 0;
	}
	return 1;
}
