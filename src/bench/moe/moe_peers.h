/* efabench moe's same-host peers (moe_peers.c): their destination regions and flag words
 * mapped here (map: every rank exports, then maps its same-host peers', collective; else
 * none, every peer NULL), and the mappings closed. */
#ifndef EB_BENCH_MOE_PEERS_H
#define EB_BENCH_MOE_PEERS_H

#include "moe_state.h"

int eb_moe_peers_open(struct eb_ctx *c, struct mstate *st, int map);
void eb_moe_peers_close(struct mstate *st);

#endif
