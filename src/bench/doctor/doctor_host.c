/* doctor's checks of one host, before anything is registered or sent: libfabric and the
 * provider, the NICs and their links, the locked-memory limit, huge pages; then the GPUs. */
#include "checks.h"
#include "doctor_efa.h"
#include "efabench/fabric.h"
#include "efabench/facts.h"
#include "efabench/status.h"
#include "efabench/topo.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void eb_check_add(struct eb_checks *s, const char *name, int verdict, double value, double limit,
		  const char *fmt, ...)
{
	struct eb_check *c;
	va_list ap;

	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 32;
		struct eb_check *grown = realloc(s->c, (size_t)cap * sizeof(*grown));

		if (grown == NULL)
			return; /* a check lost to a failed allocation: the FAIL below still counts
				 */
		s->c = grown;
		s->cap = cap;
	}
	c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->verdict = verdict;
	c->value = (float)value;
	c->limit = (float)limit;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

void eb_checks_free(struct eb_checks *s)
{
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/* Providers that pin what they register: the locked-memory limit caps their buffers. */
static int pins_memory(const char *prov)
{
	static const char *const pinning[] = {"efa", "verbs", "psm2", "psm3",
					      "opx", "cxi",   "ucx",  "usnic"};
	size_t i;

	for (i = 0; i < sizeof(pinning) / sizeof(pinning[0]); i++)
		if (strncmp(prov, pinning[i], strlen(pinning[i])) == 0)
			return 1;
	return 0;
}

void eb_doctor_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* RDMA devices whose PCI vendor is Amazon's (0x1d0f): EFA hardware, whatever libfabric sees. */
static int efa_devices(char *names, size_t len)
{
	const char *root = getenv("EB_SYSFS_ROOT");
	char path[512], vendor[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	names[0] = '\0';
	snprintf(path, sizeof(path), "%s/sys/class/infiniband", root ? root : "");
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%.64s/device/vendor",
			 root ? root : "", d->d_name);
		eb_doctor_first_line(path, vendor, sizeof(vendor));
		if (strcmp(vendor, "0x1d0f") != 0)
			continue;
		if (n++ < 4)
			snprintf(names + strlen(names), len - strlen(names), "%s%.64s",
				 n > 1 ? " " : "", d->d_name);
	}
	closedir(dir);
	return n;
}

/* EFA NICs the instance type comes with, 0 when not known (its name into type). */
static int instance_nics(char *type, size_t len)
{
	const struct eb_instance *it;

	eb_instance_type(type, len);
	it = eb_instance_of(type);
	return it != NULL ? it->nics : 0;
}

static void check_libfabric(struct eb_checks *s)
{
	struct eb_versions v;
	int old;

	eb_versions_get(&v);
	old = FI_VERSION(v.fi_major, v.fi_minor) < FI_VERSION(1, 17);
	eb_check_add(s, "libfabric", old ? EB_FAIL : EB_PASS, 0, 0,
		     "runtime %u.%u, built against %u.%u%s", v.fi_major, v.fi_minor,
		     v.fi_built_major, v.fi_built_minor,
		     old ? ": efabench needs 1.17 or later" : "");
}

/* The provider that would run, and whether it is EFA where EFA hardware is. */
static int check_provider(const struct eb_opts *o, int single_host, struct eb_checks *s, char *prov,
			  size_t len)
{
	char efa[256];
	int nefa = efa_devices(efa, sizeof(efa));

	if (eb_fabric_choose(&o->fab, single_host, prov, len) != EB_OK) {
		eb_check_add(s, "provider", EB_FAIL, 0, 0, "no usable provider%s%s (see above)",
			     o->fab.provider ? " named " : "",
			     o->fab.provider ? o->fab.provider : "");
		return EB_EINVAL;
	}
	if (nefa > 0 && strcmp(prov, "efa") != 0)
		eb_check_add(s, "provider", o->fab.provider ? EB_WARN : EB_FAIL, 0, 0,
			     "%s, but this host has %d EFA device%s (%s): %s", prov, nefa,
			     nefa == 1 ? "" : "s", efa,
			     o->fab.provider ? "--provider chose another"
					     : "this libfabric has no efa provider (AWS's EFA "
					       "installer ships one)");
	else
		eb_check_add(s, "provider", EB_PASS, 0, 0, "%s%s", prov,
			     nefa > 0 ? " on EFA hardware" : " (no EFA device on this host)");
	return EB_OK;
}

/* The next comma-separated name of list into out; NULL at the end. */
static const char *next_name(const char *list, char *out, size_t len)
{
	size_t n = strcspn(list, ",");

	if (*list == '\0')
		return NULL;
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), list);
	return list[n] == ',' ? list + n + 1 : list + n;
}

/* One NIC: offered by the provider (k >= 0 in found) or not, and its link. */
static void check_nic(const struct eb_opts *o, const char *prov, const char *name,
		      const struct eb_nic *nic, struct eb_checks *s, struct eb_dnic *out)
{
	const char *ifname = nic != NULL ? nic->domain : name;
	struct eb_topo_link l;
	char what[40];
	int have = eb_topo_link(ifname, &l) == EB_OK;

	snprintf(what, sizeof(what), "link %.26s", name);
	snprintf(out->name, sizeof(out->name), "%.39s", name);
	out->gbps = nic != NULL ? (float)nic->link_gbps : 0;
	out->up = nic != NULL && (!have || l.up);
	if (nic == NULL && have)
		eb_check_add(s, what, EB_FAIL, 0, 0, "%s is %s (%s): provider %s does not offer it",
			     ifname, l.up ? "up" : "down", l.state, prov);
	else if (nic == NULL)
		eb_check_add(s, what, EB_FAIL, 0, 0, "no NIC, interface or subnet named %s", name);
	else if (have && !l.up)
		eb_check_add(s, what, EB_FAIL, 0, 0, "%s is down (%s)", ifname, l.state);
	else if (!have)
		eb_check_add(s, what, EB_PASS, 0, 0, "%s: no link state (not a network device)",
			     nic->domain);
	else if (nic->link_gbps > 0)
		eb_check_add(s, what, EB_PASS, nic->link_gbps, 0, "%s %s, %.0f Gbps%s", ifname,
			     l.state, nic->link_gbps, o->fab.link_gbps > 0 ? " (--link-gbps)" : "");
	else
		eb_check_add(s, what, EB_WARN, 0, 0,
			     "%s %s, speed unknown: bandwidth is judged against the others' "
			     "(give --link-gbps)",
			     ifname, l.state);
}

/* RDMA ports that are not active, where the provider may not list them at all. */
static void check_rdma_ports(struct eb_checks *s)
{
	const char *root = getenv("EB_SYSFS_ROOT");
	struct eb_topo_link l;
	struct dirent *d;
	char path[512];
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sys/class/infiniband", root ? root : "");
	dir = opendir(path);
	if (dir == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		char what[40];

		if (d->d_name[0] == '.' || eb_topo_link(d->d_name, &l) != EB_OK || l.up)
			continue;
		snprintf(what, sizeof(what), "port %.26s", d->d_name);
		eb_check_add(s, what, EB_FAIL, 0, 0, "RDMA device %s port 1 is %s", d->d_name,
			     l.state);
	}
	closedir(dir);
}

/* The NICs: --nics names each one expected, else the provider's; their count against
 * --expect-nics or what the instance type comes with. */
static int check_nics(const struct eb_opts *o, const struct dopts *d, const char *prov,
		      int single_host, struct eb_checks *s, struct eb_dnic *out)
{
	struct eb_fabric_opts fo = o->fab;
	struct eb_nic *nics = NULL;
	char name[64], type[64], list[256] = "";
	const char *p;
	int n = 0, k, count = 0, up = 0, expect = (int)d->expect_nics;

	fo.nics_some = 1; /* each name is checked below, one line each */
	if (eb_fabric_nics(prov, &fo, single_host, &nics, &n) != EB_OK)
		n = 0;
	if (o->fab.nics != NULL) {
		for (p = o->fab.nics;
		     count < EB_DOC_MAX_NICS && (p = next_name(p, name, sizeof(name))) != NULL;) {
			const struct eb_nic *nic = NULL;

			for (k = 0; k < n && nic == NULL; k++)
				if (eb_fabric_name_matches(name, nics[k].info))
					nic = &nics[k];
			check_nic(o, prov, name, nic, s, &out[count++]);
		}
	} else {
		for (k = 0; k < n && count < EB_DOC_MAX_NICS; k++)
			check_nic(o, prov, nics[k].domain, &nics[k], s, &out[count++]);
		check_rdma_ports(s);
	}
	for (k = 0; k < count; k++)
		if (out[k].up) {
			up++;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s",
				 out[k].name);
		}
	if (expect < 0 && strcmp(prov, "efa") == 0)
		expect = instance_nics(type, sizeof(type));
	else
		snprintf(type, sizeof(type), "--expect-nics");
	if (expect > 0 && up != expect)
		eb_check_add(s, "nics", up < expect ? EB_FAIL : EB_WARN, up, expect,
			     "%d usable, %d expected (%s):%s", up, expect, type, list);
	else if (up == 0)
		eb_check_add(s, "nics", EB_FAIL, 0, 0, "provider %s offers no usable NIC", prov);
	else
		eb_check_add(s, "nics", EB_PASS, up, expect > 0 ? expect : 0, "%d usable:%s", up,
			     list);
	eb_fabric_free_nics(nics, n);
	return count;
}

/* Locked memory: what doctor registers (two buffers per NIC), and what pinning providers
 * need beyond it. Said before anything is registered. */
static void check_memlock(const struct dopts *d, const char *prov, int nnics, struct eb_checks *s)
{
	double need = 2.0 * (double)(d->size + 64) * (nnics > 0 ? nnics : 1) + (1 << 20);
	int pins = pins_memory(prov);
	struct rlimit r;

	if (getrlimit(RLIMIT_MEMLOCK, &r) != 0) {
		eb_check_add(s, "memlock", EB_WARN, 0, need, "getrlimit(RLIMIT_MEMLOCK) failed");
		return;
	}
	if (r.rlim_cur == RLIM_INFINITY)
		eb_check_add(s, "memlock", EB_PASS, 0, need, "ulimit -l unlimited");
	else if ((double)r.rlim_cur < need && pins)
		eb_check_add(s, "memlock", EB_FAIL, (double)r.rlim_cur, need,
			     "ulimit -l is %llu KiB, below the %.0f MiB doctor registers (%s pins "
			     "it): raise it, unlimited as AWS's installer sets",
			     (unsigned long long)r.rlim_cur >> 10, need / (1 << 20), prov);
	else if ((double)r.rlim_cur < need)
		eb_check_add(s, "memlock", EB_WARN, (double)r.rlim_cur, need,
			     "ulimit -l is %llu KiB, below the %.0f MiB doctor registers: %s does "
			     "not pin, but efa or verbs would fail",
			     (unsigned long long)r.rlim_cur >> 10, need / (1 << 20), prov);
	else
		eb_check_add(s, "memlock", pins ? EB_WARN : EB_PASS, (double)r.rlim_cur, need,
			     "ulimit -l is %llu MiB%s", (unsigned long long)r.rlim_cur >> 20,
			     pins ? ": enough here, but jobs registering GPU memory need "
				    "unlimited"
				  : "");
}

/* Transparent huge pages (host buffers ask for them) and reserved huge pages. */
static void check_hugepages(const char *prov, struct eb_checks *s)
{
	char thp[128], line[128], mode[32] = "unknown";
	long total = -1;
	const char *a, *b;
	FILE *f = fopen("/proc/meminfo", "r");

	eb_doctor_first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	if ((a = strchr(thp, '[')) != NULL && (b = strchr(a, ']')) != NULL)
		snprintf(mode, sizeof(mode), "%.*s", (int)(b - a - 1), a + 1);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Total: %ld", &total) == 1)
			break;
	if (f != NULL)
		fclose(f);
	if (strcmp(mode, "never") == 0)
		eb_check_add(s, "hugepages", EB_WARN, (double)total, 0,
			     "transparent huge pages off: large host buffers take 4 KiB pages "
			     "(more TLB misses, more to register)");
	else
		eb_check_add(s, "hugepages", EB_PASS, (double)total, 0,
			     "transparent huge pages: %s; %ld reserved huge pages%s", mode, total,
			     total == 0 && strcmp(prov, "efa") == 0
				 ? " (efa falls back to regular pages for its bounce buffers)"
				 : "");
}

void eb_doctor_host(const struct eb_opts *o, const struct dopts *d, int single_host, int host_ranks,
		    struct eb_checks *s, struct eb_dnic *nics, int *nnics, char *prov,
		    size_t prov_len)
{
	int up = 0, k;

	*nnics = 0;
	check_libfabric(s);
	if (check_provider(o, single_host, s, prov, prov_len) != EB_OK)
		return;
	*nnics = check_nics(o, d, prov, single_host, s, nics);
	for (k = 0; k < *nnics; k++)
		up += nics[k].up;
	check_memlock(d, prov, up, s);
	check_hugepages(prov, s);
	if (up > 0)
		eb_doctor_efa(o, prov, single_host, o->fab.channels > 0 ? o->fab.channels : up,
			      host_ranks, s);
}
