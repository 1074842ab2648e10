/* efabench moe's ops, dispatch and combine (moe_op.c): start and stop the proxy threads around an
 * initiator's points; one iteration of the current op; the puts this initiator's proxy
 * threads have started so far (0 for the a2av); a leg's items for the producers (host
 * arrays, with st->pieces: how many a packed write holds at most). */
#ifndef EB_BENCH_MOE_OP_H
#define EB_BENCH_MOE_OP_H

#include "moe_state.h"

int eb_moe_begin(struct eb_ctx *c);
int eb_moe_end(struct eb_ctx *c, int failed);
int eb_moe_iter(struct eb_ctx *c);
uint64_t eb_moe_puts(const struct mstate *st);
struct eb_moe_items eb_moe_host_items(const struct eb_ctx *c, const struct mstate *st, int which,
				      int leg);

#endif
