/* Provider choice and NIC discovery: which libfabric provider, and which NICs (domains) of it
 * become channels. */
#ifndef EFABENCH_FABRIC_H
#define EFABENCH_FABRIC_H

#include <rdma/fabric.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Features every channel needs: RDM endpoints with FI_MSG and FI_RMA, and remote CQ data of at
 * least 4 bytes (a domain attribute in 1.17, not a capability bit). */
#define EB_MIN_CQ_DATA 4

/* Immediate data carries the sender rank in 16 bits. */
#define EB_MAX_RANKS 65535

struct eb_fabric_opts {
	const char *provider; /* NULL: FI_PROVIDER, else automatic */
	const char *fabric;   /* the provider's fabric by name; NULL: eb_fabric_default */
	const char *nics;     /* comma list of domain/interface names; NULL: automatic */
	int channels;	      /* 0: one per NIC found; beyond the NICs found they share */
	double link_gbps;     /* > 0 overrides the link speed the provider reports */
	double timeout_s;     /* deadline of every wait */
	int hmem;	      /* GPU memory will be registered: ask for FI_HMEM and FI_MR_HMEM */
	const char *near_pci; /* the rank's GPU: without --nics, its nearest NICs come first */
	int poll;	      /* enum eb_poll: how a wait spends the time between completions */
	int threads;	      /* busy threads per rank (a proxy adds one): 0 counts as 1 */
	int window;	      /* operations in flight per peer and channel; 0: eb_fabric_window */
	int nic_only;	      /* same-host peers through the NIC, not a shared-memory path */
	int nics_some;	      /* --nics items that match no NIC are the caller's to report */
};

/* Operations in flight per peer and channel where none is asked: 16 on socket providers
 * (their per-operation costs), 4 elsewhere. */
int eb_fabric_window(const char *prov, long asked);

/* Where a NIC's link speed came from. efa's comes from the kernel driver's port attributes,
 * which older drivers report as 100 Gbps on 200 and 400 Gbps NICs (doctor cross-checks). */
enum eb_link_from { EB_LINK_NONE, EB_LINK_FI_INFO, EB_LINK_SYSFS, EB_LINK_ASKED };
const char *eb_link_from_name(enum eb_link_from f); /* "none", "fi_info", "sysfs", "--link-gbps" */

/* A NIC is a (domain, fabric) pair: efa lists each device once per fabric (efa, efa-direct). */
struct eb_nic {
	char domain[64];
	char fabric[64];
	char prov[32];
	double link_gbps; /* 0 when unknown */
	enum eb_link_from link_from;
	char pci[16];	      /* its PCI address, "" when it has none (loopback, veth) */
	int dist;	      /* enum eb_topo_dist from the rank's GPU; EB_TOPO_UNKNOWN without */
	struct fi_info *info; /* owned: fi_dupinfo of the chosen entry */
};

/* Waits poll their completion queues; between empty polls they spin while every busy thread
 * of the ranks on this host has a core of its own, and give the core up (sched_yield) when
 * the host is oversubscribed, so the peer they wait for can run. Block (asked for only) sleeps
 * on the queues' file descriptors, where the provider has them (tcp, sockets, efa >= 2.3). */
enum eb_poll { EB_POLL_AUTO, EB_POLL_SPIN, EB_POLL_YIELD, EB_POLL_BLOCK };

/* The policy auto picks: spin when local_ranks * threads <= cores, else yield. */
enum eb_poll eb_poll_decide(enum eb_poll asked, int local_ranks, int threads, int cores);

/* The libfabric API version of the headers we were built with. */
#define EB_FI_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* The API version we ask fi_getinfo for: the headers', raised to the runtime's up to 1.20
 * (max(headers, min(runtime, 1.20))). efa enables device RDMA by default from API 1.18, and
 * DMA-BUF registration (whose 1.20 ABI mr.c defines where the headers lack it) needs 1.20,
 * whatever headers built efabench. Of what we hand libfabric, only the memory registration's
 * attributes differ between these versions; mr.c passes them at 1.20's size. */
uint32_t eb_fabric_api_version(void);
uint32_t eb_fabric_api_pick(uint32_t headers, uint32_t runtime); /* the rule itself */

/* Hints that ask for everything above and accept every mr_mode bit we know how to honour;
 * with hmem, also FI_HMEM (only then: it changes what some providers offer for host memory).
 * prov may be NULL. NULL on allocation failure (printed). */
struct fi_info *eb_fabric_hints(const char *prov, int hmem);

/* fi_getinfo with those hints for prov (NULL: every provider); *list is NULL when nothing
 * matched. */
int eb_fabric_query(const char *prov, int hmem, struct fi_info **list);
/* The same with everything o asks of the hints: FI_HMEM, and with nic_only, FI_REMOTE_COMM
 * alone (efa then opens no shm endpoint for same-host peers). */
int eb_fabric_query_opts(const char *prov, const struct eb_fabric_opts *o, struct fi_info **list);

/* The entry has FI_MSG, FI_RMA and enough remote CQ data. */
int eb_fabric_usable(const struct fi_info *info);

/* The provider to use: opts->provider, else $FI_PROVIDER, else efa when present, shm when
 * every rank shares this host, tcp otherwise. EB_EINVAL (printed, with the providers found)
 * when the one asked for does not exist or lacks a feature. */
int eb_fabric_choose(const struct eb_fabric_opts *o, int single_host, char *prov, size_t len);

/* The fabric a run of prov takes when --fabric names none: "efa" for efa (libfabric >= 2.1
 * lists efa-direct first for the devices it suits), NULL (each NIC's first entry) elsewhere. */
const char *eb_fabric_default(const struct fi_info *list, const char *prov);

/* Does the comma list name entry i: its domain, its domain as users write it (efa's
 * rdmap0s1 for rdmap0s1-rdm), or its fabric? */
int eb_fabric_name_matches(const char *list, const struct fi_info *i);

/* eb_fabric_nics on a list already queried (fi_getinfo's, or one a test built): --fabric and
 * every --nics item must name something usable in it, else EB_EINVAL after one line listing
 * what exists. */
int eb_fabric_pick(const struct fi_info *list, const char *prov, const struct eb_fabric_opts *o,
		   int single_host, struct eb_nic **nics, int *count);

/* NICs of prov, one per domain of the chosen fabric, in a deterministic order, filtered by
 * opts->nics; ranks on one host use only loopback for socket providers. With opts->near_pci (a GPU)
 * and no --nics, the NICs nearest that GPU come first (PCIe switch, then root complex, then NUMA
 * node), and unless --channels asks for more, only those of the nearest class are kept: with 4 NICs
 * per GPU, a rank uses its 4. *nics is malloc'd; free with eb_fabric_free_nics. */
int eb_fabric_nics(const char *prov, const struct eb_fabric_opts *o, int single_host,
		   struct eb_nic **nics, int *count);
void eb_fabric_free_nics(struct eb_nic *nics, int count);

/* Everything a launcher can decide before it starts ranks: the provider exists and has what
 * we need, the NICs asked for exist, it can address nranks. Prints one line and returns
 * EB_EINVAL when not. */
int eb_fabric_validate(const struct eb_fabric_opts *o, int nranks, int single_host);

/* Link speed of the entry's NIC in Gbps: fi_info's link attributes, else the speed sysfs
 * reports for a network interface of the domain's name; 0 when neither knows. */
double eb_fabric_link_gbps(const struct fi_info *info);
enum eb_link_from eb_fabric_link_from(const struct fi_info *info);

/* 1 when the provider is one whose traffic goes over IP sockets (tcp, sockets, udp, net). */
int eb_fabric_is_socket_prov(const char *prov);

#ifdef __cplusplus
}
#endif

#endif
