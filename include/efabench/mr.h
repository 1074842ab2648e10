/* Memory registration that honours every mr_mode bit the provider asked for, with the least
 * access each buffer needs. */
#ifndef EFABENCH_MR_H
#define EFABENCH_MR_H

#include "efabench/chan.h"

#include <stddef.h>
#include <stdint.h>

/* What a peer needs to write into a registered buffer. */
struct eb_rkey {
	uint64_t addr; /* the buffer's virtual address under FI_MR_VIRT_ADDR, else 0 */
	uint64_t key;
};

struct eb_mr {
	struct fid_mr *mr; /* NULL when the provider needs no registration for this use */
	void *desc;	   /* for local operations (fi_mr_desc), may be NULL */
	struct eb_rkey rkey;
};

/* access: FI_WRITE / FI_SEND / FI_RECV for local use, FI_REMOTE_WRITE for an RMA target.
 * Local-only access is registered only where FI_MR_LOCAL asks for it. */
int eb_mr_reg(struct eb_chan *c, void *buf, size_t len, uint64_t access, struct eb_mr *mr);
void eb_mr_dereg(struct eb_mr *mr);

#endif
