/* Memory registration that honours every mr_mode bit the provider asked for, with the least
 * access each buffer needs. GPU memory goes through DMA-BUF where the libfabric headers and
 * runtime (>= 1.20), the provider and the GPU allow, else fi_mr_regattr with FI_HMEM_CUDA. */
#ifndef EFABENCH_MR_H
#define EFABENCH_MR_H

#include "efabench/chan.h"
#include "efabench/mem.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a peer needs to write into a registered buffer. */
struct eb_rkey {
	uint64_t addr; /* the buffer's virtual address under FI_MR_VIRT_ADDR, else 0 */
	uint64_t key;
};

enum eb_reg_path {
	EB_REG_NONE,	  /* not registered: the provider reads local host memory as it is */
	EB_REG_HOST,	  /* host (or pinned host) memory */
	EB_REG_DMABUF,	  /* GPU memory exported as a DMA-BUF (FI_MR_DMABUF) */
	EB_REG_HMEM_CUDA, /* GPU memory by address, iface FI_HMEM_CUDA */
};

const char *eb_reg_path_name(enum eb_reg_path p); /* "none", "host", "dmabuf", "hmem-cuda" */

struct eb_mr {
	struct fid_mr *mr; /* NULL when the provider needs no registration for this use */
	void *desc;	   /* for local operations (fi_mr_desc), may be NULL */
	struct eb_rkey rkey;
	enum eb_reg_path path;
};

/* What a buffer is for (bits, or'ed). The layer that registers turns them into access flags,
 * one table for every benchmark (eb_mr_access): a target also takes FI_RECV, since efa's
 * emulated writes (a read by the target, libfabric 1.18.1-2.1) need local write access to it;
 * a source also takes FI_SEND, since from 2.5 that is what gives the remote read a longread
 * fallback needs. */
enum eb_use {
	EB_USE_SOURCE = 1u << 0, /* read by this rank's writes */
	EB_USE_TARGET = 1u << 1, /* written by peers' writes (with immediate data) */
	EB_USE_SEND = 1u << 2,	 /* read by this rank's sends */
	EB_USE_RECV = 1u << 3,	 /* written by this rank's receives */
};

/* The access flags of the uses. */
uint64_t eb_mr_access(unsigned use);

/* Register buf for use (enum eb_use bits). Local-only uses of host memory are registered only
 * where FI_MR_LOCAL asks for it. */
int eb_mr_reg(struct eb_chan *c, void *buf, size_t len, unsigned use, struct eb_mr *mr);

/* The same for [off, off + len) of any memory kind. GPU memory needs a channel opened with
 * FI_HMEM; when neither DMA-BUF nor FI_HMEM_CUDA works, one line says what the provider lacks
 * and EB_ENOTSUP comes back. */
int eb_mr_reg_mem(struct eb_chan *c, struct eb_mem *m, size_t off, size_t len, unsigned use,
		  struct eb_mr *mr);
void eb_mr_dereg(struct eb_mr *mr);

/* Quietly: does registering GPU memory through this path (EB_REG_DMABUF or EB_REG_HMEM_CUDA)
 * work on this channel? EB_OK, or the reason's status (EB_ENOTSUP where this build or the
 * runtime lacks the path). */
int eb_mr_try_gpu(struct eb_chan *c, struct eb_mem *m, enum eb_reg_path path);

#ifdef __cplusplus
}
#endif

#endif
