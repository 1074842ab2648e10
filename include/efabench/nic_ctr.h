/* A NIC's own counters, as its driver keeps them in sysfs: a network interface's statistics
 * (/sys/class/net/IF/statistics) for the socket providers (tcp, sockets, udp), a verbs device's
 * port counters (/sys/class/infiniband/DEV/ports/PORT/hw_counters and counters) for EFA. The
 * shm provider has no NIC, and so none. Read under $EB_SYSFS_ROOT when it is set. */
#ifndef EFABENCH_NIC_CTR_H
#define EFABENCH_NIC_CTR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EB_NIC_CTR_MAX 64

struct eb_nic_ctr {
	char from[400]; /* where they were read: a directory, or a port's two */
	int n;
	char key[EB_NIC_CTR_MAX][40];
	uint64_t v[EB_NIC_CTR_MAX];
	int tx, rx; /* the indexes of the bytes sent and received (tx_bytes, rx_bytes), -1 */
};

/* The counters of the NIC of domain `domain` (as fi_info names it: "rail0", "rdmap0s1-rdm").
 * EB_ENOTSUP, with why, where it has none readable (shm, a domain that is no device). */
int eb_nic_ctr_read(const char *domain, struct eb_nic_ctr *c, char *why, size_t len);

/* d = after - before, key by key (counters only in after count from 0). */
void eb_nic_ctr_diff(const struct eb_nic_ctr *before, const struct eb_nic_ctr *after,
		     struct eb_nic_ctr *d);

/* Whether a counter's name says errors, drops, discards or retries: one that moved is news. */
int eb_nic_ctr_is_fault(const char *key);

#ifdef __cplusplus
}
#endif

#endif
