/* The one probe of GPU-memory registration: does a provider register GPU memory, and how. */
#ifndef EFABENCH_GPU_REG_H
#define EFABENCH_GPU_REG_H

#include "efabench/fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What became of one try to register GPU memory with a provider. */
enum eb_greg_state {
	EB_GREG_NOT_TRIED, /* no GPU here, or this build has no CUDA: why says which */
	EB_GREG_NO_PROV,   /* the provider is not in this libfabric */
	EB_GREG_NO_HMEM,   /* the provider offers no FI_HMEM entry: GPU memory only --staged */
	EB_GREG_FAILED,	   /* no probe buffer, NIC or channel: why says which */
	EB_GREG_NO_P2P,	   /* the provider refuses peer-to-peer access (no GPUDirect RDMA) */
	EB_GREG_TRIED,	   /* dmabuf and hmem_cuda hold the answers */
};

struct eb_gpu_reg {
	char prov[32];
	enum eb_greg_state state;
	/* EB_GREG_TRIED: 1 when DMA-BUF registration works, 0 when it failed, -1 when it could
	 * not be tried (dmabuf_why says why: a runtime before 1.20, no DMA-BUF export) */
	int dmabuf;
	int hmem_cuda; /* EB_GREG_TRIED: 1 when fi_mr_regattr with FI_HMEM_CUDA works */
	int p2p;       /* EB_GREG_TRIED: enum eb_p2p, how the provider reaches GPU memory */
	char why[256]; /* one line for every state but a success */
	char dmabuf_why[96];
};

/* The one probe of GPU-memory registration: a 64 KiB buffer on `gpu`, a channel on prov's
 * first NIC (chosen by fo, FI_HMEM asked for), then DMA-BUF and FI_HMEM_CUDA tried in turn.
 * Quiet about what it finds (r says it, with a reason); EB_OK when both paths were tried,
 * else the status of what stopped it. Makes `gpu` this process's CUDA device. */
int eb_gpu_reg_probe(const char *prov, const struct eb_fabric_opts *fo, int single_host, int gpu,
		     struct eb_gpu_reg *r);

#ifdef __cplusplus
}
#endif

#endif
