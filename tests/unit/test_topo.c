/* The topology module against a fake sysfs tree shaped like an AWS p5 host: 2 NUMA nodes of
 * 2 root complexes each; under each root port a PCIe switch with 1 GPU and 4 EFA NICs; one
 * more NIC on another switch of the first root complex; a virtio NIC and a device whose
 * firmware gives no NUMA node; and virtual interfaces without a device. Links are relative,
 * as the kernel makes them, so lookups go through realpath as they do on a real host. */
#define _GNU_SOURCE /* cpu_set_t, nftw */
#include "check.h"
#include "efabench/status.h"
#include "efabench/topo.h"

#include <ftw.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOTS	     4 /* root complexes */
#define NICS_PER_GPU 4
#define ALL_NICS     (ROOTS * NICS_PER_GPU + 1)
#define BUS(r)	     (0x10 + 0x20 * (r)) /* first bus number of root complex r */
#define ROOT_NIC     "0000:1a:00.0"	 /* the NIC on root 0's second switch */
#define VIRTIO_PCI   "0000:00:05.0"
#define NO_NUMA_PCI  "0000:00:06.0"
#define ABSENT_PCI   "0000:ee:00.0"

static char root[] = "/tmp/eb-topo-XXXXXX";

static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* root + "/" + the formatted path; one static buffer, so use before the next call. */
static const char *at(const char *fmt, ...)
{
	static char path[4096];
	int n = snprintf(path, sizeof(path), "%s/", root);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path + n, sizeof(path) - (size_t)n, fmt, ap);
	va_end(ap);
	return path;
}

/* mkdir -p of the directory that holds rel (a path under root). */
static void mkparents(const char *rel)
{
	char path[4096];
	char *p;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return; /* the put() after it fails and says so */
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
}

static void put(const char *rel, const char *text)
{
	FILE *f;

	mkparents(rel);
	f = fopen(at("%s", rel), "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void link_to(const char *rel, const char *target)
{
	mkparents(rel);
	CHECK(symlink(target, at("%s", rel)) == 0);
}

/* A PCI device below parent (a path under sys/devices), with its numa_node file and its
 * /sys/bus/pci/devices link. parent gets the device appended, ready for its children. */
static void add_pci(char *parent, size_t len, const char *bdf, int numa)
{
	char rel[4096], target[4096], num[16];
	size_t n = strlen(parent);

	snprintf(parent + n, len - n, "/%s", bdf);
	snprintf(rel, sizeof(rel), "sys/devices/%s/numa_node", parent);
	snprintf(num, sizeof(num), "%d\n", numa);
	put(rel, num);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", bdf);
	snprintf(target, sizeof(target), "../../../devices/%s", parent);
	link_to(rel, target);
}

/* A class device (net, infiniband) of the device at devpath, linked as the kernel does:
 * class/CLS/NAME -> ../../devices/.../DEV/CLS/NAME, whose "device" -> ../../../DEV. */
static void add_class(const char *cls, const char *name, const char *devpath)
{
	char rel[4096], target[4096];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/%s/device", devpath, cls, name);
	snprintf(target, sizeof(target), "../../../%s", strrchr(devpath, '/') + 1);
	link_to(rel, target);
	snprintf(rel, sizeof(rel), "sys/class/%s/%s", cls, name);
	snprintf(target, sizeof(target), "../../devices/%s/%s/%s", devpath, cls, name);
	link_to(rel, target);
}

/* An interface with no device behind it (lo, veth). */
static void add_virtual(const char *name)
{
	char rel[256], target[256];

	snprintf(rel, sizeof(rel), "sys/devices/virtual/net/%s/mtu", name);
	put(rel, "1500\n");
	snprintf(rel, sizeof(rel), "sys/class/net/%s", name);
	snprintf(target, sizeof(target), "../../devices/virtual/net/%s", name);
	link_to(rel, target);
}

static void gpu_bdf(int r, char *out)
{
	sprintf(out, "0000:%02x:00.0", BUS(r) + 3);
}

static void nic_bdf(int r, int j, char *out)
{
	sprintf(out, "0000:%02x:00.0", BUS(r) + 4 + j);
}

/* Root complex r: host bridge, root port, switch upstream port, 5 downstream ports with the
 * GPU and the NICs, NIC j named rdmapBUSs0 (EFA's naming) and, for root 0, NIC 0 also eth0. */
static void add_root(int r)
{
	char sw[1024], dev[1024], bdf[16], name[32];
	int b = BUS(r), numa = r / 2, k;

	snprintf(sw, sizeof(sw), "pci0000:%02x", b);
	sprintf(bdf, "0000:%02x:01.0", b);
	add_pci(sw, sizeof(sw), bdf, numa);
	sprintf(bdf, "0000:%02x:00.0", b + 1);
	add_pci(sw, sizeof(sw), bdf, numa);
	for (k = 0; k <= NICS_PER_GPU; k++) {
		snprintf(dev, sizeof(dev), "%s", sw);
		sprintf(bdf, "0000:%02x:%02x.0", b + 2, k);
		add_pci(dev, sizeof(dev), bdf, numa);
		sprintf(bdf, "0000:%02x:00.0", k == 0 ? b + 3 : b + 3 + k);
		add_pci(dev, sizeof(dev), bdf, numa);
		if (k == 0)
			continue;
		snprintf(name, sizeof(name), "rdmap%ds0", b + 3 + k);
		add_class("infiniband", name, dev);
		if (r == 0 && k == 1)
			add_class("net", "eth0", dev);
	}
}

static void build_tree(void)
{
	char path[1024];
	int r;

	for (r = 0; r < ROOTS; r++)
		add_root(r);
	/* Root 0's second root port, with a switch and one NIC. */
	snprintf(path, sizeof(path), "pci0000:10");
	add_pci(path, sizeof(path), "0000:10:02.0", 0);
	add_pci(path, sizeof(path), "0000:18:00.0", 0);
	add_pci(path, sizeof(path), "0000:19:00.0", 0);
	add_pci(path, sizeof(path), ROOT_NIC, 0);
	add_class("infiniband", "rdmap26s0", path);
	/* A virtio NIC: its "device" is the virtio device below the PCI function. */
	snprintf(path, sizeof(path), "pci0000:00");
	add_pci(path, sizeof(path), VIRTIO_PCI, -1);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/virtio1");
	add_class("net", "ens5", path);
	snprintf(path, sizeof(path), "pci0000:00");
	add_pci(path, sizeof(path), NO_NUMA_PCI, -1);
	add_virtual("lo");
	add_virtual("veth0");
	put("sys/devices/system/node/node0/cpulist", "0-47,96-143\n");
	put("sys/devices/system/node/node1/cpulist", "48-95,144-191\n");
}

static void test_pci_lookup(void)
{
	char bdf[32], nic[16];

	CHECK(eb_topo_pci_of_netdev("eth0", bdf, sizeof(bdf)) == EB_OK);
	nic_bdf(0, 0, nic);
	CHECK(strcmp(bdf, nic) == 0);
	/* EFA domain names carry the endpoint type; the bare device name works too. */
	CHECK(eb_topo_pci_of_ibdev("rdmap22s0-rdm", bdf, sizeof(bdf)) == EB_OK);
	nic_bdf(0, 2, nic);
	CHECK(strcmp(bdf, nic) == 0);
	CHECK(eb_topo_pci_of_ibdev("rdmap119s0-dgrm", bdf, sizeof(bdf)) == EB_OK);
	nic_bdf(3, 3, nic);
	CHECK(strcmp(bdf, nic) == 0);
	CHECK(eb_topo_pci_of_ibdev("rdmap26s0", bdf, sizeof(bdf)) == EB_OK);
	CHECK(strcmp(bdf, ROOT_NIC) == 0);
	CHECK(eb_topo_pci_of_netdev("ens5", bdf, sizeof(bdf)) == EB_OK);
	CHECK(strcmp(bdf, VIRTIO_PCI) == 0);

	/* No device behind it, no such name, names that would leave the directory. */
	CHECK(eb_topo_pci_of_netdev("lo", bdf, sizeof(bdf)) == EB_ENOTSUP);
	CHECK(eb_topo_pci_of_netdev("veth0", bdf, sizeof(bdf)) == EB_ENOTSUP);
	CHECK(eb_topo_pci_of_netdev("eth9", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_ibdev("rdmap99s0-rdm", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_ibdev("-rdm", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_netdev("../net/eth0", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_netdev("..", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_netdev("", bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_netdev(NULL, bdf, sizeof(bdf)) == EB_EINVAL);
	CHECK(eb_topo_pci_of_ibdev(NULL, bdf, sizeof(bdf)) == EB_EINVAL);
	/* The address needs 13 bytes. */
	CHECK(eb_topo_pci_of_netdev("eth0", bdf, 12) == EB_EINVAL);
	CHECK(eb_topo_pci_of_netdev("eth0", bdf, 13) == EB_OK);
}

static void test_numa(void)
{
	char bdf[16];

	gpu_bdf(0, bdf);
	CHECK(eb_topo_numa_of(bdf) == 0);
	nic_bdf(3, 1, bdf);
	CHECK(eb_topo_numa_of(bdf) == 1);
	CHECK(eb_topo_numa_of(NO_NUMA_PCI) == -1);
	CHECK(eb_topo_numa_of(ABSENT_PCI) == -1);
	CHECK(eb_topo_numa_of("../../../devices") == -1);
	CHECK(eb_topo_numa_of(NULL) == -1);
}

static void test_distance(void)
{
	char gpu[16], gpu1[16], same_sw[16], same_numa[16], far[16];

	gpu_bdf(0, gpu);
	gpu_bdf(1, gpu1);
	nic_bdf(0, 3, same_sw);
	nic_bdf(1, 0, same_numa);
	nic_bdf(2, 2, far);
	CHECK(eb_topo_distance(gpu, same_sw) == EB_TOPO_SWITCH);
	CHECK(eb_topo_distance(gpu, ROOT_NIC) == EB_TOPO_ROOT);
	CHECK(eb_topo_distance(gpu, same_numa) == EB_TOPO_NUMA);
	CHECK(eb_topo_distance(gpu, far) == EB_TOPO_FAR);
	CHECK(eb_topo_distance(gpu, ABSENT_PCI) == EB_TOPO_UNKNOWN);
	CHECK(eb_topo_distance(gpu, NULL) == EB_TOPO_UNKNOWN);
	CHECK(eb_topo_distance(NULL, gpu) == EB_TOPO_UNKNOWN);
	/* Symmetric. */
	CHECK(eb_topo_distance(same_sw, gpu) == EB_TOPO_SWITCH);
	CHECK(eb_topo_distance(ROOT_NIC, gpu) == EB_TOPO_ROOT);
	CHECK(eb_topo_distance(far, gpu) == EB_TOPO_FAR);
	CHECK(eb_topo_distance(gpu, gpu1) == EB_TOPO_NUMA);
	/* A switch's own ports are below the switch; the root port above it is not. */
	CHECK(eb_topo_distance("0000:11:00.0", gpu) == EB_TOPO_SWITCH);
	CHECK(eb_topo_distance("0000:12:00.0", gpu) == EB_TOPO_SWITCH);
	CHECK(eb_topo_distance("0000:10:01.0", gpu) == EB_TOPO_ROOT);
	/* One host bridge, no NUMA node: still the same root complex. Different host bridges
	 * where the firmware gives no node are far, never "same node". */
	CHECK(eb_topo_distance(VIRTIO_PCI, NO_NUMA_PCI) == EB_TOPO_ROOT);
	CHECK(eb_topo_distance(gpu, VIRTIO_PCI) == EB_TOPO_FAR);
}

static void test_order_given(void)
{
	/* Every class, shuffled: indices 2, 5, 7, 9 share GPU 0's switch. */
	const char *const nics[] = {
	    "0000:55:00.0", NULL,	    "0000:17:00.0", "0000:34:00.0",
	    ROOT_NIC,	    "0000:15:00.0", ABSENT_PCI,	    "0000:14:00.0",
	    "0000:74:00.0", "0000:16:00.0", "0000:37:00.0",
	};
	const int want[] = {2, 5, 7, 9, 4, 3, 10, 0, 8, 1, 6};
	int n = (int)(sizeof(nics) / sizeof(nics[0])), order[16], i, same = 1;
	char gpu[16];

	gpu_bdf(0, gpu);
	for (i = 0; i < n; i++)
		order[i] = -1;
	eb_topo_order(gpu, nics, n, order);
	for (i = 0; i < n; i++)
		same &= order[i] == want[i];
	CHECK(same);
	if (!same)
		for (i = 0; i < n; i++)
			fprintf(stderr, "  order[%d] = %d (want %d)\n", i, order[i], want[i]);

	/* No GPU, or a GPU sysfs does not know: every NIC is unknown, the given order stays. */
	eb_topo_order(NULL, nics, n, order);
	for (i = 0, same = 1; i < n; i++)
		same &= order[i] == i;
	CHECK(same);
	eb_topo_order(ABSENT_PCI, nics, n, order);
	for (i = 0, same = 1; i < n; i++)
		same &= order[i] == i;
	CHECK(same);
	order[0] = 42;
	eb_topo_order(gpu, nics, 0, order);
	CHECK(order[0] == 42);
	eb_topo_order(gpu, nics, 1, order);
	CHECK(order[0] == 0);
}

/* The whole host, as a rank sees it: every NIC in address order, each GPU's order starts with
 * its own 4 NICs in that order and never gets nearer further on. */
static void test_order_host(void)
{
	char names[ALL_NICS][16], gpu[16];
	const char *nics[ALL_NICS];
	int order[ALL_NICS], seen[ALL_NICS], r, j, i, k = 0, ok;
	enum eb_topo_dist d, prev;

	for (r = 0; r < ROOTS; r++) {
		for (j = 0; j < NICS_PER_GPU; j++)
			nic_bdf(r, j, names[k++]);
		if (r == 0)
			snprintf(names[k++], sizeof(names[0]), "%s", ROOT_NIC);
	}
	for (i = 0; i < ALL_NICS; i++)
		nics[i] = names[i];
	for (r = 0; r < ROOTS; r++) {
		gpu_bdf(r, gpu);
		eb_topo_order(gpu, nics, ALL_NICS, order);
		memset(seen, 0, sizeof(seen));
		ok = 1;
		for (i = 0; i < ALL_NICS; i++) {
			ok &= order[i] >= 0 && order[i] < ALL_NICS && !seen[order[i]];
			if (ok)
				seen[order[i]] = 1;
		}
		CHECK(ok); /* a permutation */
		if (!ok)
			continue;
		/* Root 0's NICs start at index 0, the others' at 5 + 4 * (r - 1). */
		k = r == 0 ? 0 : NICS_PER_GPU + 1 + NICS_PER_GPU * (r - 1);
		for (j = 0; j < NICS_PER_GPU; j++)
			CHECK(order[j] == k + j);
		prev = EB_TOPO_SWITCH;
		for (i = 0; i < ALL_NICS; i++) {
			d = eb_topo_distance(gpu, nics[order[i]]);
			CHECK(d >= prev);
			CHECK(d != EB_TOPO_UNKNOWN);
			prev = d;
		}
	}
	gpu_bdf(0, gpu);
	eb_topo_order(gpu, nics, ALL_NICS, order);
	CHECK(order[NICS_PER_GPU] == NICS_PER_GPU); /* then the NIC of the same root complex */
}

/* Write node 9's cpulist and read it back. */
static int cpus_of(const char *text, cpu_set_t *set)
{
	put("sys/devices/system/node/node9/cpulist", text);
	return eb_topo_numa_cpus(9, set);
}

static void test_cpulist(void)
{
	cpu_set_t s;
	int i, ok = 1;

	CHECK(cpus_of("0-3,8,10-11\n", &s) == EB_OK);
	CHECK(CPU_COUNT(&s) == 7);
	for (i = 0; i < 16; i++)
		ok &= !!CPU_ISSET(i, &s) == (i <= 3 || i == 8 || i == 10 || i == 11);
	CHECK(ok);
	CHECK(cpus_of("5", &s) == EB_OK && CPU_COUNT(&s) == 1 && CPU_ISSET(5, &s));
	CHECK(cpus_of("1023\n", &s) == EB_OK && CPU_ISSET(1023, &s));
	/* A node of memory (or a GPU's memory) and no CPUs. */
	CHECK(cpus_of("\n", &s) == EB_OK && CPU_COUNT(&s) == 0);
	CHECK(cpus_of("", &s) == EB_OK && CPU_COUNT(&s) == 0);

	CHECK(cpus_of("3-1\n", &s) == EB_EINVAL);
	CHECK(cpus_of("1,,2\n", &s) == EB_EINVAL);
	CHECK(cpus_of("1,\n", &s) == EB_EINVAL);
	CHECK(cpus_of("1-\n", &s) == EB_EINVAL);
	CHECK(cpus_of("-1\n", &s) == EB_EINVAL);
	CHECK(cpus_of("1 2\n", &s) == EB_EINVAL);
	CHECK(cpus_of("0-3\nx", &s) == EB_EINVAL);
	CHECK(cpus_of("abc\n", &s) == EB_EINVAL);
	CHECK(cpus_of("0-1024\n", &s) == EB_ENOTSUP);
	CHECK(cpus_of("99999999999999999999\n", &s) == EB_ENOTSUP);

	CHECK(eb_topo_numa_cpus(0, &s) == EB_OK && CPU_COUNT(&s) == 96);
	CHECK(CPU_ISSET(143, &s) && !CPU_ISSET(48, &s));
	CHECK(eb_topo_numa_cpus(1, &s) == EB_OK && CPU_COUNT(&s) == 96 && CPU_ISSET(48, &s));
	CHECK(eb_topo_numa_cpus(5, &s) == EB_ENOTSUP);
	CHECK(eb_topo_numa_cpus(-1, &s) == EB_EINVAL);
}

/* --cpu-map: one entry per local rank, each a CPU or a range. */
static void test_cpu_map(void)
{
	char why[96];
	cpu_set_t s;

	CHECK(eb_topo_map_entry("2,3", -1, NULL) == 2);
	CHECK(eb_topo_map_entry("2,3", 1, &s) == 2 && CPU_COUNT(&s) == 1 && CPU_ISSET(3, &s));
	CHECK(eb_topo_map_entry("0-7,8-15", 1, &s) == 2 && CPU_COUNT(&s) == 8 && CPU_ISSET(8, &s) &&
	      CPU_ISSET(15, &s) && !CPU_ISSET(7, &s));
	CHECK(eb_topo_map_entry("4", 0, &s) == 1 && CPU_COUNT(&s) == 1 && CPU_ISSET(4, &s));
	CHECK(eb_topo_map_entry("4", 3, &s) == 1 && CPU_COUNT(&s) == 0); /* no such entry */
	CHECK(eb_topo_map_entry("1,1", 1, &s) == 2 && CPU_ISSET(1, &s)); /* shared on purpose */
	CHECK(eb_topo_map_entry("", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("1,", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry(",1", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("1,,2", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("3-1", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("1-", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("-1", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("1 2", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("0-1024", 0, &s) == EB_EINVAL);
	CHECK(eb_topo_map_entry("99999999999999999999", 0, &s) == EB_EINVAL);

	CHECK(eb_topo_map_check("0,1", 0, why, sizeof(why)) == EB_OK);
	CHECK(eb_topo_map_check("0", 2, why, sizeof(why)) == EB_EINVAL &&
	      strstr(why, "1 entry for 2 local ranks") != NULL);
	CHECK(eb_topo_map_check("x", 0, why, sizeof(why)) == EB_EINVAL);
	/* A CPU this process may not run on: the highest a cpu_set_t holds. */
	CHECK(eb_topo_map_check("0,1023", 2, why, sizeof(why)) == EB_EINVAL &&
	      strstr(why, "CPU 1023") != NULL);
	CHECK(eb_topo_pin("0", 1, why, sizeof(why)) == EB_EINVAL &&
	      strstr(why, "no entry for local rank 1") != NULL);
}

static void test_should_bind(void)
{
	char why[64];

	CHECK(eb_topo_should_bind(0, 16, 192, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "already bound to 16 of 192 CPUs") == 0);
	/* A launcher's binding wins even when we know no node. */
	CHECK(eb_topo_should_bind(-1, 16, 192, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "already bound to 16 of 192 CPUs") == 0);
	CHECK(eb_topo_should_bind(-1, 192, 192, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "NUMA node unknown") == 0);
	CHECK(eb_topo_should_bind(1, 192, 192, why, sizeof(why)) == 1);
	CHECK(eb_topo_should_bind(1, 192, 192, NULL, 0) == 1);
	CHECK(eb_topo_should_bind(1, 16, 192, NULL, 0) == 0);
	CHECK(eb_topo_should_bind(0, 4, 4, why, 8) == 1);
	CHECK(eb_topo_should_bind(0, 2, 4, why, 8) == 0 && strcmp(why, "already") == 0);
}

/* cpulist text of a CPU set. */
static void list_of(const cpu_set_t *s, char *out, size_t len)
{
	size_t used = 0;
	int c;

	out[0] = '\0';
	for (c = 0; c < CPU_SETSIZE && used < len; c++)
		if (CPU_ISSET(c, s))
			used +=
			    (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
}

/* The real eb_topo_bind, with a fake online list and nodes made of the CPUs we already have,
 * so binding for real leaves this process's mask as it was. */
static void test_bind(void)
{
	char list[8192], text[8300], why[64];
	cpu_set_t cur, after;
	int n;

	CHECK(sched_getaffinity(0, sizeof(cur), &cur) == 0);
	n = CPU_COUNT(&cur);
	list_of(&cur, list, sizeof(list));
	snprintf(text, sizeof(text), "%s\n", list);
	put("sys/devices/system/cpu/online", text);
	put("sys/devices/system/node/node2/cpulist", text);
	put("sys/devices/system/node/node3/cpulist", CPU_ISSET(1023, &cur) ? "\n" : "1023\n");

	CHECK(eb_topo_bind(2, why, sizeof(why)) == 1);
	snprintf(text, sizeof(text), "bound to NUMA node 2 (%d CPUs)", n);
	CHECK(strcmp(why, text) == 0);
	CHECK(sched_getaffinity(0, sizeof(after), &after) == 0 && CPU_EQUAL(&cur, &after));
	CHECK(eb_topo_bind(3, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "NUMA node 3 has no CPUs for us") == 0);
	CHECK(eb_topo_bind(7, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "no CPU list for NUMA node 7") == 0);
	CHECK(eb_topo_bind(-1, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "NUMA node unknown") == 0);
	put("sys/devices/system/node/node9/cpulist", "0-\n");
	CHECK(eb_topo_bind(9, why, sizeof(why)) == EB_EINVAL);

	/* One more CPU online than we may use: someone bound us already. */
	if (!CPU_ISSET(1023, &cur)) {
		snprintf(text, sizeof(text), "%s,1023\n", list);
		put("sys/devices/system/cpu/online", text);
		CHECK(eb_topo_bind(2, why, sizeof(why)) == 0);
		snprintf(text, sizeof(text), "already bound to %d of %d CPUs", n, n + 1);
		CHECK(strcmp(why, text) == 0);
	}
	CHECK(sched_getaffinity(0, sizeof(after), &after) == 0 && CPU_EQUAL(&cur, &after));
}

static const char *at_cpu(int cpu)
{
	static char rel[96];

	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		 cpu);
	return rel;
}

/* Bound or not (the online list against our mask), and helper cores counted from the top of
 * the mask, one per local rank, wrapping when ranks outnumber CPUs. */
static void test_helper_cpu(void)
{
	char list[8192], text[8300];
	int top[2] = {-1, -1}, cpu, n, k = 0;
	cpu_set_t cur;

	CHECK(sched_getaffinity(0, sizeof(cur), &cur) == 0);
	n = CPU_COUNT(&cur);
	for (cpu = CPU_SETSIZE - 1; cpu >= 0 && k < 2; cpu--)
		if (CPU_ISSET(cpu, &cur))
			top[k++] = cpu;
	CHECK(eb_topo_helper_cpu(0) == top[0]);
	CHECK(eb_topo_helper_cpu(n) == top[0]);
	if (n > 1) {
		CHECK(eb_topo_helper_cpu(1) == top[1]);
		/* The top two are hyperthreads of one core: rank 1 takes the next core (or, with
		 * no other core, shares the one there is). */
		snprintf(text, sizeof(text), "%d,%d\n", top[1], top[0]);
		put(at_cpu(top[0]), text);
		put(at_cpu(top[1]), text);
		CHECK(eb_topo_helper_cpu(0) == top[0]);
		for (cpu = top[1] - 1; cpu >= 0 && !CPU_ISSET(cpu, &cur); cpu--)
			;
		CHECK(eb_topo_helper_cpu(1) == (n > 2 ? cpu : top[0]));
		put(at_cpu(top[0]), "\n"); /* unreadable: each CPU counts alone again */
		put(at_cpu(top[1]), "\n");
		CHECK(eb_topo_helper_cpu(1) == top[1]);
	}
	list_of(&cur, list, sizeof(list));
	snprintf(text, sizeof(text), "%s\n", list);
	put("sys/devices/system/cpu/online", text);
	CHECK(eb_topo_bound() == 0);
	if (!CPU_ISSET(1023, &cur)) {
		snprintf(text, sizeof(text), "%s,1023\n", list);
		put("sys/devices/system/cpu/online", text);
		CHECK(eb_topo_bound() == 1);
	}
}

/* Link state and speed: interfaces up, down, "unknown" with IFF_UP, no speed; an RDMA port. */
static void test_link(void)
{
	struct eb_topo_link l;

	add_virtual("lnkup");
	put("sys/devices/virtual/net/lnkup/operstate", "up\n");
	put("sys/devices/virtual/net/lnkup/speed", "100000\n");
	add_virtual("lnkdown");
	put("sys/devices/virtual/net/lnkdown/operstate", "down\n");
	put("sys/devices/virtual/net/lnkdown/speed", "-1\n");
	add_virtual("lnkunk");
	put("sys/devices/virtual/net/lnkunk/operstate", "unknown\n");
	put("sys/devices/virtual/net/lnkunk/flags", "0x9\n");
	put("sys/class/infiniband/rdmatest0/ports/1/state", "4: ACTIVE\n");
	put("sys/class/infiniband/rdmatest0/ports/1/rate", "100 Gb/sec (4X EDR)\n");
	put("sys/class/infiniband/rdmatest1/ports/1/state", "1: DOWN\n");

	CHECK(eb_topo_link("lnkup", &l) == EB_OK && l.up == 1 && l.gbps == 100.0);
	CHECK(strcmp(l.state, "up") == 0);
	CHECK(eb_topo_link("lnkdown", &l) == EB_OK && l.up == 0 && l.gbps == 0);
	CHECK(strcmp(l.state, "down") == 0);
	CHECK(eb_topo_link("lnkunk", &l) == EB_OK && l.up == 1 && l.gbps == 0);
	CHECK(eb_topo_link("rdmatest0-rdm", &l) == EB_OK && l.up == 1 && l.gbps == 100.0);
	CHECK(strcmp(l.state, "ACTIVE") == 0);
	CHECK(eb_topo_link("rdmatest1", &l) == EB_OK && l.up == 0 && strcmp(l.state, "DOWN") == 0);
	CHECK(eb_topo_link("nosuchnic", &l) == EB_ENOTSUP);
	CHECK(eb_topo_link("../etc", &l) == EB_EINVAL);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	CHECK(mkdtemp(root) != NULL);
	CHECK(setenv("EB_SYSFS_ROOT", root, 1) == 0);
	build_tree();

	test_pci_lookup();
	test_numa();
	test_distance();
	test_order_given();
	test_order_host();
	test_cpulist();
	test_cpu_map();
	test_should_bind();
	test_bind();
	test_helper_cpu();
	test_link();

	CHECK(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return check_done();
}
