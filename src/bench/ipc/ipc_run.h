/* efabench ipc's measurements: every launch shape swept per direction and size through the
 * one loop, then the best kernel measured again beside a fresh copy-engine run. */
#ifndef EB_BENCH_IPC_RUN_H
#define EB_BENCH_IPC_RUN_H

#include "ipc_links.h"

#ifdef EB_HAVE_CUDA
/* The launch shapes --methods, --grid and --block ask for. */
void ipc_build_shapes(struct ipc_ctx *c);
/* The floor, every direction and size; rank 0 prints and writes the files. */
int ipc_run_all(struct ipc_ctx *c);
#endif

#endif
