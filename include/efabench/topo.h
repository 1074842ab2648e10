/* PCI and NUMA topology from Linux sysfs: which NICs sit nearest a GPU, and the CPUs of a NUMA
 * node, so that each rank uses its own GPU's NICs and cores. Best effort: what sysfs does not
 * say is "unknown", never an error that stops a run.
 *
 * Every path is read under $EB_SYSFS_ROOT when it is set (unset: the real /sys), so tests can
 * build a fake tree in a temporary directory. */
#ifndef EFABENCH_TOPO_H
#define EFABENCH_TOPO_H

#include <sched.h>
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How close two PCI devices are, nearest first: the order eb_topo_order sorts by. */
enum eb_topo_dist {
	EB_TOPO_SWITCH,	 /* below one PCIe switch: peer traffic need not cross the root port */
	EB_TOPO_ROOT,	 /* same root complex (host bridge) */
	EB_TOPO_NUMA,	 /* different root complexes of one NUMA node */
	EB_TOPO_FAR,	 /* another NUMA node, or a node sysfs does not know */
	EB_TOPO_UNKNOWN, /* either device has no PCI path */
};

/* PCI address ("0000:53:00.0") of a network interface, or of the nearest PCI device above it
 * (a virtio or USB NIC hangs below one). EB_ENOTSUP when it has none (lo, veth), EB_EINVAL
 * when there is no such interface or bdf cannot hold the address. */
int eb_topo_pci_of_netdev(const char *ifname, char *bdf, size_t len);

/* The same for an RDMA device; libfabric's EFA domain names ("rdmap79s0-rdm", "-dgrm") are
 * accepted as they are. */
int eb_topo_pci_of_ibdev(const char *name, char *bdf, size_t len);

/* A NIC's link as sysfs reports it: a network interface's operstate and speed, or an RDMA
 * device's port 1 state and rate (EFA domain names accepted as they are). */
struct eb_topo_link {
	int up;		/* 1 up (ACTIVE), 0 not */
	double gbps;	/* 0 when sysfs does not say */
	char state[24]; /* as sysfs spells it: "up", "down", "ACTIVE", "DOWN" */
};
/* EB_OK, EB_ENOTSUP when sysfs has neither kind of device of that name, EB_EINVAL for a name
 * that cannot be one. */
int eb_topo_link(const char *name, struct eb_topo_link *l);
/* NUMA node of a PCI device; -1 when unknown (no such device, or a firmware that does not
 * say). */
int eb_topo_numa_of(const char *bdf);

/* How close two PCI devices are; EB_TOPO_UNKNOWN when either is NULL or not found. */
enum eb_topo_dist eb_topo_distance(const char *bdf_a, const char *bdf_b);

/* Fills order[0..n) with a permutation of 0..n-1 that lists the NICs nearest the GPU first,
 * keeping the given order among equals, so every rank of a host picks the same way. NULL
 * entries (and a NULL gpu_bdf) are unknown and go last. */
void eb_topo_order(const char *gpu_bdf, const char *const *nic_bdf, int n, int *order);

#ifdef CPU_SETSIZE /* cpu_set_t and its macros exist only with _GNU_SOURCE */
/* The CPUs of a NUMA node (empty for a node without CPUs). EB_ENOTSUP when sysfs has no such
 * node or it lists CPUs beyond CPU_SETSIZE, EB_EINVAL for a list that does not parse. */
int eb_topo_numa_cpus(int numa, cpu_set_t *set);
#endif

/* Binds the calling thread, and the threads it starts afterwards, to the CPUs of a NUMA node:
 * call it before starting threads. A mask already narrower than the online CPUs is a
 * launcher's or taskset's choice and wins. Returns 1 when it bound, 0 when it left the mask
 * alone, a negative status on failure; why (may be NULL) says which in a few words. */
int eb_topo_bind(int numa, char *why, size_t len);

/* eb_topo_bind's decision from the CPUs in the mask now and the CPUs online: 1 to bind, 0 to
 * leave the mask alone (why says why). Apart so that it can be tested. */
int eb_topo_should_bind(int numa, int cur_cpus, int online_cpus, char *why, size_t len);

/* 1 when the process may run on fewer CPUs than are online (a launcher, taskset or cgroup
 * bound it), 0 when on all of them. */
int eb_topo_bound(void);

/* --cpu-map: a comma list with one entry per local rank, each a CPU or a range (2,3 or
 * 0-7,8-15); local rank i runs on entry i. */
#ifdef CPU_SETSIZE
/* The number of entries (EB_EINVAL when map does not parse); entry i into set when i is one
 * and set is not NULL (set is emptied otherwise). */
int eb_topo_map_entry(const char *map, int i, cpu_set_t *set);
#endif
/* Before forking nranks local ranks (0: ranks started elsewhere, where only the syntax can be
 * checked): map parses, has an entry per rank, and names only CPUs this process may run on.
 * EB_EINVAL with why otherwise. */
int eb_topo_map_check(const char *map, int nranks, char *why, size_t len);
/* Pins the calling thread, and the threads it starts afterwards, to entry local_rank of map:
 * call it before starting threads. EB_EINVAL (why says why) when there is none or the kernel
 * refuses it. */
int eb_topo_pin(const char *map, int local_rank, char *why, size_t len);

/* A CPU for a helper thread of local rank `local_rank` (a proxy): one of the local_rank-th
 * core from the top of the process's mask (hyperthreads of a core, from sysfs, count once),
 * so ranks sharing a NUMA node take different cores and stay clear of the low ones the
 * scheduler fills first. -1 when the mask cannot be read. */
int eb_topo_helper_cpu(int local_rank);

/* The calling thread on CPU `cpu` alone: 0, or the error pthread_setaffinity_np gave. */
int eb_topo_pin_thread(int cpu);
/* The same, keeping where the thread ran: *was for eb_topo_thread_back (NULL when the thread
 * was not moved); 0, or the error that kept it where it was. */
int eb_topo_move_thread(int cpu, void **was);
/* The thread back where eb_topo_move_thread found it; was freed (NULL: nothing to do). */
void eb_topo_thread_back(void *was);

/* The memory this host can give new allocations without swapping: /proc/meminfo's
 * MemAvailable, in bytes (0 when unknown). */
uint64_t eb_topo_mem_available(void);

#ifdef __cplusplus
}
#endif

#endif
