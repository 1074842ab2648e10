/* efabench moe's hosts: which ranks share a host, so that same-host peers store into each
 * other's memory (NVLink between GPUs) and only other hosts go through the fabric. A rank's
 * host is its host name as the launcher gives it ($EFABENCH_HOST in the test bed's network
 * namespaces), or, with --hosts N, one of N groups of consecutive ranks on one machine. */
#ifndef EB_BENCH_MOE_HOSTS_H
#define EB_BENCH_MOE_HOSTS_H

#include "efabench/boot.h"

#include <stdint.h>

struct eb_moe_hosts {
	int ranks, n; /* ranks, hosts */
	int per;      /* ranks per host when every host has as many, else 0 */
	int most;     /* ranks on the fullest host */
	int emulated; /* --hosts: groups of ranks on one machine */
	void *block;
	int32_t *host;	  /* [ranks] its host, numbered in order of first rank */
	int32_t *local;	  /* [ranks] its index among its host's ranks */
	int32_t *rank_at; /* [n][most] the rank of (host, local index), -1: none */
};

/* Collective. emulate > 0: that many hosts of consecutive ranks, which must all run on one
 * machine (EB_EINVAL after one line on rank 0 otherwise); 0: by host name. */
int eb_moe_hosts_build(struct eb_moe_hosts *h, struct eb_boot *b, int rank, int ranks, int emulate,
		       uint64_t deadline);
void eb_moe_hosts_free(struct eb_moe_hosts *h);
/* Without a launcher: ranks in groups of ceil(ranks / n) consecutive ranks (the last may
 * hold fewer). EB_ENOMEM. */
int eb_moe_hosts_groups(struct eb_moe_hosts *h, int ranks, int n);

static inline int eb_moe_same_host(const struct eb_moe_hosts *h, int a, int b)
{
	return h->host[a] == h->host[b];
}

/* The rank with `of`'s local index on host `host` (-1: that host has none). */
static inline int eb_moe_peer_on(const struct eb_moe_hosts *h, int host, int of)
{
	return h->local[of] < h->most ? h->rank_at[host * h->most + h->local[of]] : -1;
}

#endif
