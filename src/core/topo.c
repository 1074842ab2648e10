/* PCI and NUMA topology from sysfs. Quiet on purpose: topology is best effort, and the caller
 * knows whether a missing answer matters. */
#define _GNU_SOURCE /* cpu_set_t, sched_setaffinity */
#include "efabench/topo.h"
#include "efabench/status.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Long enough for any cpulist of CPU_SETSIZE CPUs ("0,2,4,...,1022" is under 4 KiB). */
#define LIST_MAX 8192

/* A PCI device found in sysfs: its resolved path, and where its host bridge starts in it. */
struct dev {
	char path[PATH_MAX];
	const char *host; /* "pciDDDD:BB/DDDD:BB:DD.F/...": the path from the host bridge on */
	const char *bdf;
};

static const char *sysfs_root(void)
{
	const char *root = getenv("EB_SYSFS_ROOT");

	return root != NULL ? root : "";
}

static int sysfs_path(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* out = $EB_SYSFS_ROOT followed by the formatted path; EB_EINVAL when it does not fit. */
static int sysfs_path(char *out, size_t len, const char *fmt, ...)
{
	int n = snprintf(out, len, "%s", sysfs_root());
	va_list ap;
	int m;

	if (n < 0 || (size_t)n >= len)
		return EB_EINVAL;
	va_start(ap, fmt);
	m = vsnprintf(out + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - (size_t)n ? EB_EINVAL : EB_OK;
}

/* A name that stays one path component: no way out of the directory it is looked up in. */
static int safe_name(const char *s)
{
	return s != NULL && s[0] != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

static int missing(int err)
{
	return err == ENOENT || err == ENOTDIR;
}

/* why, when the caller gave room for it. */
static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Whole file into buf, NUL-terminated. EB_ENOTSUP when it does not exist or does not fit. */
static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;
	int err, more;

	if (f == NULL)
		return missing(errno) ? EB_ENOTSUP : EB_ESYS;
	n = fread(buf, 1, len - 1, f);
	err = ferror(f);
	more = !err && n == len - 1 && fgetc(f) != EOF;
	fclose(f);
	buf[n] = '\0';
	if (err)
		return EB_ESYS;
	return more ? EB_ENOTSUP : EB_OK;
}

/* Does s[0..n) match pat, where 'x' stands for a hex digit and anything else for itself? */
static int match(const char *s, size_t n, const char *pat)
{
	size_t i;

	if (strlen(pat) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	return 1;
}

/* Hex digits at the start of s[0..n). */
static size_t hex_run(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isxdigit((unsigned char)s[i]))
		i++;
	return i;
}

/* "DDDD:BB:DD.F"; the domain may be longer than 4 digits (VMD domains have 5). */
static int is_bdf(const char *s, size_t n)
{
	size_t d = hex_run(s, n);

	return d >= 4 && match(s + d, n - d, ":xx:xx.x");
}

/* "pciDDDD:BB", a host bridge (root complex) directory under /sys/devices. */
static int is_host(const char *s, size_t n)
{
	size_t d;

	if (n < 3 || strncmp(s, "pci", 3) != 0)
		return 0;
	d = hex_run(s + 3, n - 3);
	return d >= 4 && match(s + 3 + d, n - 3 - d, ":xx");
}

/* Resolve a sysfs link; EB_ENOTSUP when it does not exist. */
static int resolve(const char *path, char *out)
{
	if (realpath(path, out) == NULL)
		return missing(errno) ? EB_ENOTSUP : EB_ESYS;
	return EB_OK;
}

/* The PCI device of a class device (class "net" or "infiniband"): the last PCI address on the
 * resolved path of its "device" link, which is the device itself or the nearest PCI device
 * above it. */
static int pci_of_class(const char *cls, const char *name, char *bdf, size_t len)
{
	const char *p, *last = NULL;
	char path[PATH_MAX], real[PATH_MAX];
	size_t n, last_n = 0;
	int rc;

	if (!safe_name(name) || bdf == NULL || len == 0)
		return EB_EINVAL;
	rc = sysfs_path(path, sizeof(path), "/sys/class/%s/%s", cls, name);
	if (rc != EB_OK)
		return rc;
	if (access(path, F_OK) != 0)
		return missing(errno) ? EB_EINVAL : EB_ESYS; /* no such interface or device */
	rc = sysfs_path(path, sizeof(path), "/sys/class/%s/%s/device", cls, name);
	if (rc == EB_OK)
		rc = resolve(path, real);
	if (rc != EB_OK)
		return rc; /* EB_ENOTSUP: a virtual device (lo, veth) has no "device" link */
	for (p = real; *p != '\0'; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (is_bdf(p, n)) {
			last = p;
			last_n = n;
		}
	}
	if (last == NULL)
		return EB_ENOTSUP; /* on a bus that is not PCI */
	if (last_n >= len)
		return EB_EINVAL;
	memcpy(bdf, last, last_n);
	bdf[last_n] = '\0';
	return EB_OK;
}

/* An RDMA device's name without libfabric's endpoint-type suffix. */
static void ib_base(const char *name, char *base, size_t len)
{
	static const char *const suffixes[] = {"-rdm", "-dgrm"};
	size_t n, i, s;

	snprintf(base, len, "%s", name);
	n = strlen(base);
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		s = strlen(suffixes[i]);
		if (n > s && strcmp(base + n - s, suffixes[i]) == 0) {
			base[n - s] = '\0';
			break;
		}
	}
}

int eb_topo_pci_of_netdev(const char *ifname, char *bdf, size_t len)
{
	return pci_of_class("net", ifname, bdf, len);
}

int eb_topo_pci_of_ibdev(const char *name, char *bdf, size_t len)
{
	char base[128];

	if (name == NULL || strlen(name) >= sizeof(base))
		return EB_EINVAL;
	/* libfabric names EFA domains after the device and the endpoint type. */
	ib_base(name, base, sizeof(base));
	return pci_of_class("infiniband", base, bdf, len);
}

/* One line of a sysfs file, without its newline. */
static int read_line(char *buf, size_t len, const char *cls, const char *name, const char *leaf)
{
	char path[512];
	int rc = sysfs_path(path, sizeof(path), "/sys/class/%s/%s/%s", cls, name, leaf);

	if (rc == EB_OK)
		rc = read_file(path, buf, len);
	buf[rc == EB_OK ? strcspn(buf, "\n") : 0] = '\0';
	return rc;
}

int eb_topo_link(const char *name, struct eb_topo_link *l)
{
	char buf[128], base[128];
	long v;

	memset(l, 0, sizeof(*l));
	if (!safe_name(name))
		return EB_EINVAL;
	/* A network interface: operstate, else the IFF_UP flag where the driver says "unknown"
	 * (loopback and some virtual devices); speed in Mb/s, -1 or unreadable when unknown. */
	if (read_line(buf, sizeof(buf), "net", name, "operstate") == EB_OK) {
		snprintf(l->state, sizeof(l->state), "%.23s", buf);
		l->up = strcmp(buf, "up") == 0;
		if (strcmp(buf, "unknown") == 0 &&
		    read_line(buf, sizeof(buf), "net", name, "flags") == EB_OK)
			l->up = (strtol(buf, NULL, 16) & 1) != 0;
		if (read_line(buf, sizeof(buf), "net", name, "speed") == EB_OK &&
		    (v = strtol(buf, NULL, 10)) > 0)
			l->gbps = (double)v / 1000.0;
		return EB_OK;
	}
	/* An RDMA device (EFA, verbs): port 1's state ("4: ACTIVE") and rate ("100 Gb/sec"). */
	ib_base(name, base, sizeof(base));
	if (!safe_name(base) ||
	    read_line(buf, sizeof(buf), "infiniband", base, "ports/1/state") != EB_OK)
		return EB_ENOTSUP;
	snprintf(l->state, sizeof(l->state), "%.23s",
		 strchr(buf, ' ') ? strchr(buf, ' ') + 1 : buf);
	l->up = strstr(buf, "ACTIVE") != NULL;
	if (read_line(buf, sizeof(buf), "infiniband", base, "ports/1/rate") == EB_OK)
		l->gbps = strtod(buf, NULL);
	return EB_OK;
}

int eb_topo_numa_of(const char *bdf)
{
	char path[PATH_MAX], text[32], *end;
	long v;

	if (!safe_name(bdf) ||
	    sysfs_path(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bdf) != EB_OK)
		return -1;
	if (read_file(path, text, sizeof(text)) != EB_OK)
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || (*end != '\0' && *end != '\n') || v < 0 || v > INT_MAX)
		return -1;
	return (int)v;
}

/* Find a PCI device and the part of its path that starts at its host bridge
 * (/sys/devices/pciDDDD:BB/...). */
static int dev_find(const char *bdf, struct dev *d)
{
	char link[PATH_MAX];
	const char *p, *prev = NULL;
	size_t n, prev_n = 0;
	int rc;

	d->host = NULL;
	d->bdf = bdf;
	if (!safe_name(bdf))
		return EB_EINVAL;
	rc = sysfs_path(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	if (rc == EB_OK)
		rc = resolve(link, d->path);
	if (rc != EB_OK)
		return rc;
	for (p = d->path; *p != '\0'; p += n + (p[n] == '/')) {
		n = strcspn(p, "/");
		if (is_host(p, n) && prev_n == 7 && strncmp(prev, "devices", 7) == 0) {
			d->host = p;
			return EB_OK;
		}
		prev = p;
		prev_n = n;
	}
	return EB_ENOTSUP;
}

/* Path components two paths share from the start. */
static int shared_depth(const char *a, const char *b)
{
	int depth = 0;
	size_t na, nb;

	for (;;) {
		na = strcspn(a, "/");
		nb = strcspn(b, "/");
		if (na == 0 || na != nb || strncmp(a, b, na) != 0)
			return depth;
		depth++;
		a += na + (a[na] == '/');
		b += nb + (b[nb] == '/');
	}
}

static enum eb_topo_dist dev_distance(const struct dev *a, const struct dev *b)
{
	int shared, na;

	if (a->host == NULL || b->host == NULL)
		return EB_TOPO_UNKNOWN;
	/* Host bridge, root port, then a switch's upstream port when there is one in common. */
	shared = shared_depth(a->host, b->host);
	if (shared >= 3)
		return EB_TOPO_SWITCH;
	if (shared >= 1)
		return EB_TOPO_ROOT;
	na = eb_topo_numa_of(a->bdf);
	return na >= 0 && na == eb_topo_numa_of(b->bdf) ? EB_TOPO_NUMA : EB_TOPO_FAR;
}

enum eb_topo_dist eb_topo_distance(const char *bdf_a, const char *bdf_b)
{
	struct dev a, b;

	if (dev_find(bdf_a, &a) != EB_OK || dev_find(bdf_b, &b) != EB_OK)
		return EB_TOPO_UNKNOWN;
	return dev_distance(&a, &b);
}

void eb_topo_order(const char *gpu_bdf, const char *const *nic_bdf, int n, int *order)
{
	struct dev gpu, nic;
	enum eb_topo_dist d;
	int i, j, key;

	if (n <= 0)
		return;
	if (nic_bdf == NULL || n > INT_MAX / (EB_TOPO_UNKNOWN + 1)) {
		for (i = 0; i < n; i++)
			order[i] = i;
		return;
	}
	dev_find(gpu_bdf, &gpu); /* gpu.host stays NULL when not found */
	/* Key = distance * n + index: sorting the keys sorts by distance, ties by index (a
	 * stable sort without scratch memory); key % n is then the index. */
	for (i = 0; i < n; i++) {
		d = EB_TOPO_UNKNOWN;
		if (gpu.host != NULL && dev_find(nic_bdf[i], &nic) == EB_OK)
			d = dev_distance(&gpu, &nic);
		order[i] = (int)d * n + i;
	}
	/* Insertion sort: a host has tens of NICs. */
	for (i = 1; i < n; i++) {
		key = order[i];
		for (j = i; j > 0 && order[j - 1] > key; j--)
			order[j] = order[j - 1];
		order[j] = key;
	}
	for (i = 0; i < n; i++)
		order[i] %= n;
}

/* The kernel's list format: "0-15,32-47\n"; an empty list is a node without CPUs. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
	long lo, hi;
	char *end;

	CPU_ZERO(set);
	while (*s != '\0' && *s != '\n') {
		if (!isdigit((unsigned char)*s))
			return EB_EINVAL;
		lo = strtol(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return EB_EINVAL;
			hi = strtol(end + 1, &end, 10);
		}
		if (hi < lo)
			return EB_EINVAL;
		if (hi >= CPU_SETSIZE)
			return EB_ENOTSUP;
		for (; lo <= hi; lo++)
			CPU_SET((size_t)lo, set);
		if (*end == ',' && isdigit((unsigned char)end[1]))
			end++;
		else if (*end != '\0' && *end != '\n')
			return EB_EINVAL;
		s = end;
	}
	return *s == '\0' || strcmp(s, "\n") == 0 ? EB_OK : EB_EINVAL;
}

int eb_topo_numa_cpus(int numa, cpu_set_t *set)
{
	char path[PATH_MAX], text[LIST_MAX];
	int rc;

	if (numa < 0 || set == NULL)
		return EB_EINVAL;
	rc = sysfs_path(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", numa);
	if (rc == EB_OK)
		rc = read_file(path, text, sizeof(text));
	if (rc == EB_OK)
		rc = parse_cpulist(text, set);
	return rc;
}

/* CPUs online: sysfs' list, else what libc says. */
static int count_online(void)
{
	char path[PATH_MAX], text[LIST_MAX];
	cpu_set_t set;

	if (sysfs_path(path, sizeof(path), "/sys/devices/system/cpu/online") == EB_OK &&
	    read_file(path, text, sizeof(text)) == EB_OK && parse_cpulist(text, &set) == EB_OK &&
	    CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int eb_topo_should_bind(int numa, int cur_cpus, int online_cpus, char *why, size_t len)
{
	if (cur_cpus > 0 && cur_cpus < online_cpus) {
		say(why, len, "already bound to %d of %d CPUs", cur_cpus, online_cpus);
		return 0;
	}
	if (numa < 0) {
		say(why, len, "NUMA node unknown");
		return 0;
	}
	return 1;
}

int eb_topo_bound(void)
{
	cpu_set_t cur;

	return sched_getaffinity(0, sizeof(cur), &cur) == 0 && CPU_COUNT(&cur) < count_online();
}

/* The CPUs sharing cpu's core, itself included (just cpu when sysfs does not say). */
static void siblings(int cpu, cpu_set_t *set)
{
	char path[PATH_MAX], text[LIST_MAX];

	if (sysfs_path(path, sizeof(path),
		       "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		       cpu) != EB_OK ||
	    read_file(path, text, sizeof(text)) != EB_OK || parse_cpulist(text, set) != EB_OK ||
	    !CPU_ISSET(cpu, set)) {
		CPU_ZERO(set);
		CPU_SET(cpu, set);
	}
}

/* The nth core of the mask counted from the top (wrapping), as the highest CPU of it in the
 * mask: hyperthreads of one core are one choice, so two helpers never share a core while
 * cores are left. */
int eb_topo_helper_cpu(int local_rank)
{
	cpu_set_t cur, seen, sib;
	int cpu, cores = 0, skip, pass;

	if (sched_getaffinity(0, sizeof(cur), &cur) != 0 || CPU_COUNT(&cur) == 0)
		return -1;
	for (pass = 0; pass < 2; pass++) {
		skip = pass == 0 ? -1 : local_rank % cores;
		CPU_ZERO(&seen);
		for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
			if (!CPU_ISSET(cpu, &cur) || CPU_ISSET(cpu, &seen))
				continue;
			if (pass == 1 && skip-- == 0)
				return cpu;
			cores += pass == 0;
			siblings(cpu, &sib);
			CPU_OR(&seen, &seen, &sib);
		}
	}
	return -1;
}

int eb_topo_pin_thread(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

int eb_topo_move_thread(int cpu, void **was)
{
	cpu_set_t *set = malloc(sizeof(*set));
	int rc = set == NULL ? ENOMEM : pthread_getaffinity_np(pthread_self(), sizeof(*set), set);

	if (rc == 0)
		rc = eb_topo_pin_thread(cpu);
	if (rc != 0) {
		free(set);
		set = NULL;
	}
	*was = set;
	return rc;
}

void eb_topo_thread_back(void *was)
{
	if (was != NULL)
		(void)pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), was);
	free(was);
}

/* One --cpu-map entry at s: "N" or "N-M"; *end after it. */
static int map_range(const char *s, const char **end, long *lo, long *hi)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return EB_EINVAL;
	*lo = *hi = strtol(s, &e, 10);
	if (*e == '-') {
		if (!isdigit((unsigned char)e[1]))
			return EB_EINVAL;
		*hi = strtol(e + 1, &e, 10);
	}
	*end = e;
	return *lo <= *hi && *hi < CPU_SETSIZE && (*e == ',' || *e == '\0') ? EB_OK : EB_EINVAL;
}

int eb_topo_map_entry(const char *map, int i, cpu_set_t *set)
{
	const char *s = map;
	long lo, hi;
	int n = 0;

	if (set != NULL)
		CPU_ZERO(set);
	for (;;) {
		if (map_range(s, &s, &lo, &hi) != EB_OK)
			return EB_EINVAL;
		for (; n == i && set != NULL && lo <= hi; lo++)
			CPU_SET((size_t)lo, set);
		n++;
		if (*s++ == '\0')
			return n;
	}
}

int eb_topo_map_check(const char *map, int nranks, char *why, size_t len)
{
	cpu_set_t cur, set;
	int n = eb_topo_map_entry(map, -1, NULL), i, cpu;

	if (n < 0) {
		say(why, len, "not a comma list of CPUs or ranges, one per local rank (e.g. 2,3)");
		return EB_EINVAL;
	}
	if (nranks <= 0)
		return EB_OK;
	if (n < nranks) {
		say(why, len, "%d entr%s for %d local ranks: give one per rank", n,
		    n == 1 ? "y" : "ies", nranks);
		return EB_EINVAL;
	}
	if (sched_getaffinity(0, sizeof(cur), &cur) != 0)
		return EB_OK; /* the ranks' own pinning reports it */
	for (i = 0; i < nranks; i++) {
		eb_topo_map_entry(map, i, &set);
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set) && !CPU_ISSET(cpu, &cur)) {
				say(why, len, "CPU %d is not one this process may run on", cpu);
				return EB_EINVAL;
			}
	}
	return EB_OK;
}

int eb_topo_pin(const char *map, int local_rank, char *why, size_t len)
{
	cpu_set_t set;
	int n = eb_topo_map_entry(map, local_rank, &set);

	if (n <= local_rank) {
		say(why, len, "no entry for local rank %d (%d given)", local_rank, n < 0 ? 0 : n);
		return EB_EINVAL;
	}
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		say(why, len, "local rank %d: sched_setaffinity: %s", local_rank, strerror(errno));
		return EB_EINVAL;
	}
	say(why, len, "local rank %d pinned to %d CPU%s", local_rank, CPU_COUNT(&set),
	    CPU_COUNT(&set) == 1 ? "" : "s");
	return EB_OK;
}

int eb_topo_bind(int numa, char *why, size_t len)
{
	cpu_set_t cur, node;
	int rc;

	if (sched_getaffinity(0, sizeof(cur), &cur) != 0) {
		say(why, len, "sched_getaffinity: %s", strerror(errno));
		return EB_ESYS;
	}
	rc = eb_topo_should_bind(numa, CPU_COUNT(&cur), count_online(), why, len);
	if (rc != 1)
		return rc;
	rc = eb_topo_numa_cpus(numa, &node);
	if (rc == EB_ENOTSUP) {
		say(why, len, "no CPU list for NUMA node %d", numa);
		return 0;
	}
	if (rc != EB_OK) {
		say(why, len, "unreadable CPU list for NUMA node %d", numa);
		return rc;
	}
	/* Only CPUs we may run on: a cgroup's cpuset can hide some of the node's. */
	CPU_AND(&node, &node, &cur);
	if (CPU_COUNT(&node) == 0) {
		say(why, len, "NUMA node %d has no CPUs for us", numa);
		return 0;
	}
	if (sched_setaffinity(0, sizeof(node), &node) != 0) {
		say(why, len, "sched_setaffinity: %s", strerror(errno));
		return EB_ESYS;
	}
	say(why, len, "bound to NUMA node %d (%d CPUs)", numa, CPU_COUNT(&node));
	return 1;
}

uint64_t eb_topo_mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return (uint64_t)kb * 1024;
}
