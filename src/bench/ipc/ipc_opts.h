/* `efabench ipc`: GPU-to-GPU copies over NVLink through CUDA IPC, one rank per GPU: its own
 * options and the launch shapes they ask for. */
#ifndef EB_BENCH_IPC_OPTS_H
#define EB_BENCH_IPC_OPTS_H

#include "harness/cmd.h"

#include <stdint.h>

enum ipc_pairs {
	IPC_FIRST, /* GPU 0 -> GPU 1 */
	IPC_EACH,  /* every ordered pair, one at a time */
	IPC_ALL,   /* every GPU to every other, all at once */
};

enum { IPC_WRITE, IPC_READ, IPC_NDIRS };

/* Copy methods, in the order of enum eb_ik_method and of --methods' words. */
enum { IPC_CE, IPC_ST, IPC_TMA };

struct ipc_opts {
	struct eb_opt_list grids; /* 0 stands for "all": one block per SM */
	struct eb_opt_list blocks;
	int pairs;	  /* enum ipc_pairs */
	unsigned methods; /* bit per IPC_CE, IPC_ST, IPC_TMA */
	unsigned dirs;	  /* bit per IPC_WRITE, IPC_READ */
	uint64_t tma_chunk;
	int tma_stages;
	int copies;	  /* copies of the buffer per launch; t = a launch's time / copies */
	double link_gbps; /* NVLink per GPU and direction when NVML reports none */
	int no_gate;	  /* launches queued without the gate (tools that serialize them) */
};

/* One launch shape: the copy engine, or a kernel method with its grid and block. */
struct ipc_shape {
	int method; /* IPC_CE, IPC_ST, IPC_TMA */
	int grid, block;
	char name[24];
};

#endif
