/* doctor on EFA: what this libfabric's efa provider does on this host, and what an EFA run meets
 * first. The fabric a run takes (efa, though 2.1+ lists efa-direct first), known faults of this
 * version, whether the device reads and writes itself or libfabric emulates it, the variables
 * efabench wants unset (fork safety) or set (1.17's device RDMA), /dev/shm against the segments
 * the channels' shared-memory endpoints make (measured on one), and each NIC's link speed with
 * its source against what the instance type comes with (older efa drivers report 100 Gbps on
 * 200 and 400 Gbps NICs). */
#include "doctor_efa.h"
#include "core/shmseg.h"
#include "efabench/chan.h"
#include "efabench/status.h"

#include <dirent.h>
#include <rdma/fi_endpoint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* efa's endpoint options (fi_ext.h from 1.18): whether reads and writes are emulated. */
#define EFA_OPT_BASE	      (-(0xefa << 16))
#define EFA_OPT_EMULATED_READ (EFA_OPT_BASE + 1)
#define EFA_OPT_EMULATED_WRIT (EFA_OPT_BASE + 2)

const struct eb_instance *eb_instance_of(const char *type)
{
	static const struct eb_instance known[] = {
	    {"p4d.24xlarge", 4, 100},  {"p4de.24xlarge", 4, 100},  {"p5.48xlarge", 32, 100},
	    {"p5e.48xlarge", 32, 100}, {"p5en.48xlarge", 16, 200}, {"p6-b200.48xlarge", 8, 400},
	    {"trn1.32xlarge", 8, 100}, {"trn1n.32xlarge", 16, 100}};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(type, known[i].type) == 0)
			return &known[i];
	return NULL;
}

const char *eb_efa_known_fault(int major, int minor, int revision, int device_write)
{
	if (major == 1 && minor == 18 && revision == 0 && device_write != 0)
		return "libfabric 1.18.0's efa device RDMA write is broken (the target's region "
		       "gets no remote write access, a receive packet leaks per write; fixed in "
		       "1.18.1): upgrade libfabric";
	return NULL;
}

void eb_prov_version(uint32_t v, int *major, int *minor, int *revision)
{
	*major = (int)FI_MAJOR(v) / 100;
	*minor = (int)FI_MAJOR(v) % 100;
	*revision = (int)FI_MINOR(v) / 10;
}

void eb_instance_type(char *type, size_t len)
{
	const char *root = getenv("EB_SYSFS_ROOT");
	char path[256];

	snprintf(path, sizeof(path), "%s/sys/devices/virtual/dmi/id/product_name",
		 root ? root : "");
	eb_doctor_first_line(path, type, len);
}

/* Bytes of this process's shm segments in /dev/shm ("<pid>:..."), as their sizes say. */
static double shm_bytes(void)
{
	char prefix[24], path[512];
	double sum = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir = opendir("/dev/shm");

	if (dir == NULL)
		return 0;
	snprintf(prefix, sizeof(prefix), "%d:", (int)getpid());
	while ((d = readdir(dir)) != NULL) {
		if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
		if (stat(path, &st) == 0)
			sum += (double)st.st_size;
	}
	closedir(dir);
	return sum;
}

/* A bool endpoint option: 1, 0, or -1 where the runtime lacks it. */
static int get_bool(struct eb_chan *c, int name)
{
	bool v = false;
	size_t len = sizeof(v);

	if (fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, name, &v, &len) != 0)
		return -1;
	return v ? 1 : 0;
}

/* The fabric a run takes on efa, and the others efa lists for the same devices. */
static void check_fabric(const struct eb_nic *nic, const char *others, struct eb_checks *s)
{
	if (others[0] != '\0')
		eb_check_add(s, "efa fabric", EB_PASS, 0, 0,
			     "a run takes fabric %s; efa also lists %s for these devices (--fabric "
			     "efa-direct: aws-ofi-nccl's path on p5en; sends up to the MTU only)",
			     nic->fabric, others);
	else
		eb_check_add(s, "efa fabric", EB_PASS, 0, 0, "a run takes fabric %s", nic->fabric);
}

/* Known faults of this version, and what the device does itself. */
static void check_rdma(struct eb_chan *c, const struct eb_nic *nic, struct eb_checks *s)
{
	int maj, min, rev, rd = get_bool(c, EFA_OPT_EMULATED_READ),
			   wr = get_bool(c, EFA_OPT_EMULATED_WRIT);
	const char *env = getenv("FI_EFA_USE_DEVICE_RDMA"), *fault;

	eb_prov_version(nic->info->fabric_attr->prov_version, &maj, &min, &rev);
	fault = eb_efa_known_fault(maj, min, rev, wr < 0 ? -1 : !wr);
	if (fault != NULL)
		eb_check_add(s, "efa version", EB_FAIL, 0, 0, "%s", fault);
	else
		eb_check_add(s, "efa version", EB_PASS, 0, 0, "efa of libfabric %d.%d.%d", maj, min,
			     rev);
	if (rd < 0 && FI_VERSION(maj, min) < FI_VERSION(1, 18) && env == NULL)
		eb_check_add(
		    s, "efa rdma", EB_WARN, 0, 0,
		    "libfabric %d.%d leaves device RDMA off unless FI_EFA_USE_DEVICE_RDMA=1 "
		    "(p4d's reads; GPU memory): set it on devices that read",
		    maj, min);
	else if (rd < 0)
		eb_check_add(s, "efa rdma", EB_SKIP, 0, 0,
			     "this libfabric does not say whether the device reads and writes");
	else
		eb_check_add(s, "efa rdma", EB_PASS, 0, 0, "device RDMA read: %s, write: %s%s",
			     rd ? "emulated" : "yes", wr ? "emulated" : "yes",
			     wr ? " (writes go as messages, or from 64 KiB host / ~8 KiB GPU as a "
				  "read by the target: its progress counts)"
				: "");
}

/* Fork safety is efa's, not efabench's: it forks its ranks before any device is opened. */
static void check_env(struct eb_checks *s)
{
	static const char *const vars[] = {"FI_EFA_FORK_SAFE", "RDMAV_FORK_SAFE"};
	char set[64] = "";
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL)
			snprintf(set + strlen(set), sizeof(set) - strlen(set), "%s%s",
				 set[0] ? ", " : "", vars[i]);
	if (set[0] != '\0')
		eb_check_add(
		    s, "efa env", EB_WARN, 0, 0,
		    "%s set: efabench needs no fork safety (it forks its ranks before "
		    "opening any device); with FI_EFA_USE_HUGE_PAGE=1 libfabric 2.x aborts "
		    "at start: leave them unset",
		    set);
	else
		eb_check_add(s, "efa env", EB_PASS, 0, 0, "no fork-safety variable set");
}

/* /dev/shm's room for what the run's channels map there: one channel measured. */
static void check_shm(double seg, const char *prov, int nchan, int host_ranks, struct eb_checks *s)
{
	double need = seg * nchan * (host_ranks > 0 ? host_ranks : 1), room;
	struct statvfs v;

	if (seg <= 0) {
		eb_check_add(s, "/dev/shm", EB_PASS, 0, 0,
			     "%s's endpoint made no segment there (no shared-memory path)", prov);
		return;
	}
	if (statvfs("/dev/shm", &v) != 0) {
		eb_check_add(s, "/dev/shm", EB_WARN, 0, need, "cannot read its size");
		return;
	}
	room = (double)v.f_bavail * (double)v.f_frsize;
	eb_check_add(s, "/dev/shm",
		     need > room	 ? EB_FAIL
		     : need > 0.8 * room ? EB_WARN
					 : EB_PASS,
		     room, need,
		     "%.0f MiB free; %d channel%s x %d rank%s here x %.1f MiB per endpoint = "
		     "%.0f MiB%s",
		     room / (1 << 20), nchan, nchan == 1 ? "" : "s", host_ranks,
		     host_ranks == 1 ? "" : "s", seg / (1 << 20), need / (1 << 20),
		     need > room ? ": raise it (docker --shm-size; efa: --nic-only)" : "");
}

/* Segments a killed rank left (shm's are 16 MiB and more) hold memory until someone removes
 * them. Only named here: a process of a container sharing /dev/shm under its own pids looks
 * gone too. */
static void check_leftovers(struct eb_checks *s)
{
	uint64_t size, held;
	int n = eb_shmseg_gone(&size, &held);

	if (n == 0)
		eb_check_add(s, "shm leftovers", EB_PASS, 0, 0,
			     "no segment in /dev/shm of a process of yours that is gone");
	else
		eb_check_add(s, "shm leftovers", EB_WARN, n, 0, /* fits why[152] */
			     "%d segment%s of gone processes (killed ranks'): %.1f of %.0f MiB in "
			     "memory; when no job of yours runs: rm /dev/shm/<pid>:%u:*",
			     n, n == 1 ? "" : "s", (double)held / (1 << 20),
			     (double)size / (1 << 20), (unsigned)getuid());
}

/* Each NIC's speed, where it came from, and the instance type's figure. */
static void check_links(const struct eb_nic *nics, int n, struct eb_checks *s)
{
	char type[64], what[32];
	const struct eb_instance *it;
	int k;

	eb_instance_type(type, sizeof(type));
	it = eb_instance_of(type);
	for (k = 0; k < n; k++) {
		const struct eb_nic *x = &nics[k];

		snprintf(what, sizeof(what), "speed %.25s", x->domain);
		if (it != NULL && x->link_from == EB_LINK_FI_INFO && x->link_gbps < it->gbps)
			eb_check_add(
			    s, what, EB_WARN, x->link_gbps, it->gbps,
			    "the efa driver reports %.0f Gbps, a %s NIC runs at %.0f (older "
			    "drivers report 100): BusBW and --min-link use the reported; "
			    "give --link-gbps %.0f",
			    x->link_gbps, type, it->gbps, it->gbps);
		else
			eb_check_add(s, what, EB_PASS, x->link_gbps, it ? it->gbps : 0,
				     "%.0f Gbps from %s%s%s", x->link_gbps,
				     eb_link_from_name(x->link_from), it ? ", as a " : "",
				     it ? type : "");
	}
}

/* efa's other fabrics for the devices of nics (efa-direct), comma-joined. */
static void other_fabrics(const char *prov, const struct eb_fabric_opts *fo, const char *mine,
			  char *out, size_t len)
{
	struct fi_info *list, *i;
	size_t used = 0;

	out[0] = '\0';
	if (eb_fabric_query(prov, fo->hmem, &list) != EB_OK)
		return;
	for (i = list; i != NULL && used < len; i = i->next) {
		const char *f = i->fabric_attr->name;

		if (f == NULL || !eb_fabric_usable(i) || strcmp(f, mine) == 0 || strstr(out, f))
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "", f);
	}
	fi_freeinfo(list);
}

void eb_doctor_efa(const struct eb_opts *o, const char *prov, int single_host, int nchan,
		   int host_ranks, struct eb_checks *s)
{
	int efa = strcmp(prov, "efa") == 0, n, rc;
	struct eb_nic *nics;
	struct eb_chan c;
	char others[96];
	double before;

	if (!efa && strncmp(prov, "shm", 3) != 0)
		return;
	if (eb_fabric_nics(prov, &o->fab, single_host, &nics, &n) != EB_OK)
		return; /* check_nics said why */
	before = shm_bytes();
	rc = eb_chan_open(&c, &nics[0], 0, 1, &(struct eb_chan_cfg){.quiet = 1});
	if (rc != EB_OK) {
		eb_check_add(s, "endpoint", EB_FAIL, 0, 0,
			     "cannot open an endpoint on %s (%s): see the line above",
			     nics[0].domain, eb_strerror(rc));
		goto free_nics;
	}
	if (efa) {
		other_fabrics(prov, &o->fab, nics[0].fabric, others, sizeof(others));
		check_fabric(&nics[0], others, s);
		check_rdma(&c, &nics[0], s);
		check_env(s);
	}
	check_shm(shm_bytes() - before, prov, nchan > 0 ? nchan : n, host_ranks, s);
	check_leftovers(s);
	eb_chan_close(&c);
	if (efa)
		check_links(nics, n, s);
free_nics:
	eb_fabric_free_nics(nics, n);
}
