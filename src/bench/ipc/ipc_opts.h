/* `efabench ipc`: GPU-to-GPU copies over NVLink through CUDA IPC, one rank per GPU: its own
 * options; what it measures is src/report/ipc_view.h's to print. */
#ifndef EB_BENCH_IPC_OPTS_H
#define EB_BENCH_IPC_OPTS_H

#include "harness/cmd.h"
#include "report/ipc_view.h"

#include <stdint.h>

struct ipc_opts {
	struct eb_opt_list grids; /* 0 stands for "all": one block per SM */
	struct eb_opt_list blocks;
	int pairs;	  /* enum ipc_pairs */
	unsigned methods; /* bit per IPC_CE, IPC_ST, IPC_TMA */
	unsigned dirs;	  /* bit per IPC_WRITE, IPC_READ */
	uint64_t tma_chunk;
	int tma_stages;
	double link_gbps; /* NVLink per GPU and direction when NVML reports none */
	int no_gate;	  /* launches queued without the gate (tools that serialize them) */
};

#endif
