/* `efabench queue`: the GPU->CPU command queue benchmark (single process, no fabric). */
#ifndef EB_BENCH_QUEUE_H
#define EB_BENCH_QUEUE_H

#include <stdint.h>

struct eb_qopts {
	int on_gpu;	       /* producers on the GPU, else CPU threads */
	int managed;	       /* slots in managed memory instead of pinned host memory */
	uint32_t log2n, batch; /* ring size, consumer publish interval */
	uint32_t per;	       /* commands per producer */
	int block;	       /* threads per block for GPU producer counts in blocks */
	int lat_iters;	       /* round trips of the latency and floor tests */
	double timeout_s;
	const char *producers; /* comma list: 1t,1w,1b,<N>b,all (GPU) or thread counts (CPU) */
	const char *json;
};

int eb_queue_run(struct eb_qopts *o);

#endif
