/* Provider choice and NIC discovery from fi_getinfo. */
#define _GNU_SOURCE /* strverscmp */
#include "efabench/fabric.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/log.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eb_fabric_window(const char *prov, long asked)
{
	return asked > 0 ? (int)asked : eb_fabric_is_socket_prov(prov) ? 16 : 4;
}

struct fi_info *eb_fabric_hints(const char *prov, int hmem)
{
	struct fi_info *h = fi_allocinfo();

	if (h == NULL) {
		eb_err("fi_allocinfo: out of memory");
		return NULL;
	}
	h->caps = FI_MSG | FI_RMA;
	h->ep_attr->type = FI_EP_RDM;
	/* Our requests start with a struct fi_context2, so both context modes are fine. */
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode =
	    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	if (hmem) {
		h->caps |= FI_HMEM;
		h->domain_attr->mr_mode |= FI_MR_HMEM;
	}
	if (prov != NULL) {
		h->fabric_attr->prov_name = strdup(prov);
		if (h->fabric_attr->prov_name == NULL) {
			fi_freeinfo(h);
			eb_err("strdup: out of memory");
			return NULL;
		}
	}
	return h;
}

uint32_t eb_fabric_api_pick(uint32_t headers, uint32_t runtime)
{
	uint32_t dmabuf = FI_VERSION(1, 20), want = runtime < dmabuf ? runtime : dmabuf;

	/* efa turns device RDMA on by default only for API 1.18 and later (p4d's reads, GPU
	 * memory): a 1.17 build on a 1.18 or 1.19 runtime asks for the runtime's. */
	return want > headers ? want : headers;
}

uint32_t eb_fabric_api_version(void)
{
	return eb_fabric_api_pick(EB_FI_VERSION, fi_version());
}

int eb_fabric_usable(const struct fi_info *i)
{
	return i->domain_attr != NULL && i->domain_attr->cq_data_size >= EB_MIN_CQ_DATA &&
	       (i->caps & (FI_MSG | FI_RMA)) == (FI_MSG | FI_RMA);
}

static int query(const char *prov, int hmem, int remote_only, struct fi_info **list)
{
	struct fi_info *hints = eb_fabric_hints(prov, hmem);
	int rc;

	*list = NULL;
	if (hints == NULL)
		return EB_ENOMEM;
	if (remote_only)
		hints->caps |= FI_REMOTE_COMM;
	rc = fi_getinfo(eb_fabric_api_version(), NULL, NULL, 0, hints, list);
	fi_freeinfo(hints);
	if (rc != 0 && rc != -FI_ENODATA) {
		eb_err("fi_getinfo(%s): %s", prov ? prov : "any provider", fi_strerror(-rc));
		return EB_EFABRIC;
	}
	if (rc != 0)
		*list = NULL;
	return EB_OK;
}

int eb_fabric_query(const char *prov, int hmem, struct fi_info **list)
{
	return query(prov, hmem, 0, list);
}

int eb_fabric_query_opts(const char *prov, const struct eb_fabric_opts *o, struct fi_info **list)
{
	return query(prov, o->hmem, o->nic_only, list);
}

int eb_fabric_is_socket_prov(const char *prov)
{
	static const char *const names[] = {"tcp", "sockets", "udp", "net"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(prov, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/* Names of every provider with usable RDM entries, for error messages. */
static void list_usable(char *out, size_t len)
{
	struct fi_info *all, *i;
	size_t used = 0;

	out[0] = '\0';
	if (eb_fabric_query(NULL, 0, &all) != EB_OK)
		return;
	for (i = all; i != NULL; i = i->next) {
		const char *name = i->fabric_attr->prov_name;

		if (!eb_fabric_usable(i) || strstr(out, name) != NULL)
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", name);
		if (used >= len)
			break;
	}
	fi_freeinfo(all);
}

static int has_prov(const struct fi_info *list, const char *prefix)
{
	for (; list != NULL; list = list->next)
		if (eb_fabric_usable(list) &&
		    strncmp(list->fabric_attr->prov_name, prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

/* The provider exists for host memory but offers no FI_HMEM: say so, with the way out. */
static int refuse_hmem(const char *want)
{
	struct fi_info *plain;
	int exists;

	if (eb_fabric_query(want, 0, &plain) != EB_OK)
		return 0;
	exists = has_prov(plain, "");
	fi_freeinfo(plain);
	if (!exists)
		return 0;
	if (want != NULL)
		eb_err("provider %s (libfabric %u.%u) cannot register GPU memory: it offers no "
		       "FI_HMEM; use --staged (pinned bounce buffers) or a provider with FI_HMEM",
		       want, FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	else
		eb_err("no provider of libfabric %u.%u here can register GPU memory (none offers "
		       "FI_HMEM); use --staged (pinned bounce buffers)",
		       FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	return 1;
}

int eb_fabric_choose(const struct eb_fabric_opts *o, int single_host, char *prov, size_t len)
{
	const char *want = o->provider ? o->provider : getenv("FI_PROVIDER");
	struct fi_info *list;
	int rc;

	rc = eb_fabric_query(want, o->hmem, &list);
	if (rc != EB_OK)
		return rc;
	if (want != NULL) {
		if (!has_prov(list, "") && o->hmem && refuse_hmem(want)) {
			fi_freeinfo(list);
			return EB_EINVAL;
		}
		if (!has_prov(list, "")) {
			char found[256];

			list_usable(found, sizeof(found));
			eb_err("provider '%s' not found or lacks RDM endpoints with FI_MSG, FI_RMA "
			       "and %d-byte remote CQ data (usable here: %s)",
			       want, EB_MIN_CQ_DATA, found[0] ? found : "none");
			fi_freeinfo(list);
			return EB_EINVAL;
		}
		snprintf(prov, len, "%s", want);
	} else if (has_prov(list, "efa")) {
		snprintf(prov, len, "efa");
	} else if (single_host && has_prov(list, "shm")) {
		snprintf(prov, len, "shm");
	} else if (has_prov(list, "tcp")) {
		snprintf(prov, len, "tcp");
	} else if (o->hmem && refuse_hmem(NULL)) {
		fi_freeinfo(list);
		return EB_EINVAL;
	} else {
		eb_err("no usable libfabric provider found (need RDM endpoints with FI_MSG, "
		       "FI_RMA and remote CQ data)");
		fi_freeinfo(list);
		return EB_ENOTSUP;
	}
	fi_freeinfo(list);
	if (o->nic_only && strncmp(prov, "shm", 3) == 0) {
		eb_err("--nic-only: provider shm is shared memory, with no NIC to send through");
		return EB_EINVAL;
	}
	return EB_OK;
}

static int is_loopback(const struct fi_info *i)
{
	return strcmp(i->domain_attr->name, "lo") == 0 ||
	       (i->fabric_attr->name && strncmp(i->fabric_attr->name, "127.", 4) == 0);
}

/* The length of a domain's name as users write it: efa names its domains after the device
 * with "-rdm" (RDM endpoints) or "-dgrm" (datagram) appended; rdmap0s1 is rdmap0s1-rdm. */
static size_t base_len(const char *dom)
{
	static const char *const suffix[] = {"-rdm", "-dgrm"};
	size_t n = strlen(dom), k, m;

	for (k = 0; k < sizeof(suffix) / sizeof(suffix[0]); k++) {
		m = strlen(suffix[k]);
		if (n > m && strcmp(dom + n - m, suffix[k]) == 0)
			return n - m;
	}
	return n;
}

/* Is name (n bytes) one item of the comma list? */
static int item_listed(const char *list, const char *name, size_t n)
{
	const char *p = list;

	while (*p != '\0') {
		size_t k = strcspn(p, ",");

		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

int eb_fabric_name_matches(const char *list, const struct fi_info *i)
{
	const char *dom = i->domain_attr->name, *fab = i->fabric_attr->name;

	return item_listed(list, dom, strlen(dom)) || item_listed(list, dom, base_len(dom)) ||
	       (fab != NULL && item_listed(list, fab, strlen(fab)));
}

static double sysfs_gbps(const char *ifname)
{
	char path[160];
	long mbps = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (f == NULL)
		return 0.0;
	if (fscanf(f, "%ld", &mbps) != 1 || mbps <= 0)
		mbps = 0;
	fclose(f);
	return (double)mbps / 1000.0;
}

static int link_in_info(const struct fi_info *i)
{
	return i->nic != NULL && i->nic->link_attr != NULL && i->nic->link_attr->speed > 0;
}

double eb_fabric_link_gbps(const struct fi_info *i)
{
	if (link_in_info(i))
		return (double)i->nic->link_attr->speed / 1e9;
	return sysfs_gbps(i->domain_attr->name);
}

enum eb_link_from eb_fabric_link_from(const struct fi_info *i)
{
	if (link_in_info(i))
		return EB_LINK_FI_INFO;
	return sysfs_gbps(i->domain_attr->name) > 0 ? EB_LINK_SYSFS : EB_LINK_NONE;
}

const char *eb_link_from_name(enum eb_link_from f)
{
	static const char *const names[] = {"none", "fi_info", "sysfs", "--link-gbps"};

	return names[f];
}

/* Numbers in names in numeric order: rail2 before rail10, rdmap79s0 before rdmap113s0. */
static int cmp_nic(const void *a, const void *b)
{
	return strverscmp(((const struct eb_nic *)a)->domain, ((const struct eb_nic *)b)->domain);
}

void eb_fabric_free_nics(struct eb_nic *nics, int count)
{
	int i;

	for (i = 0; i < count; i++)
		fi_freeinfo(nics[i].info);
	free(nics);
}

/* Is entry i a better representative of its domain than the one kept so far? IPv4 first:
 * every socket provider lists a domain once per address family. */
static int prefer(const struct fi_info *i, const struct fi_info *kept)
{
	return i->addr_format == FI_SOCKADDR_IN && kept->addr_format != FI_SOCKADDR_IN;
}

/* The NIC's PCI address: fi_info's bus attributes, else sysfs by its domain's name. */
static void nic_pci(const struct fi_info *i, int sock, char *bdf, size_t len)
{
	const struct fi_bus_attr *b = i->nic != NULL ? i->nic->bus_attr : NULL;

	bdf[0] = '\0';
	if (b != NULL && b->bus_type == FI_BUS_PCI) {
		snprintf(bdf, len, "%04x:%02x:%02x.%x", b->attr.pci.domain_id, b->attr.pci.bus_id,
			 b->attr.pci.device_id, b->attr.pci.function_id);
		return;
	}
	if ((sock ? eb_topo_pci_of_netdev(i->domain_attr->name, bdf, len)
		  : eb_topo_pci_of_ibdev(i->domain_attr->name, bdf, len)) != EB_OK)
		bdf[0] = '\0';
}

/* Nearest the GPU first; unless more channels are asked for, only the nearest class. */
static int by_distance(struct eb_nic *nics, int n, const struct eb_fabric_opts *o)
{
	const char *pci[64] = {NULL};
	struct eb_nic sorted[64];
	int order[64], k, keep = n;

	if (o->near_pci == NULL || n < 1 || n > 64)
		return n;
	for (k = 0; k < n; k++) {
		pci[k] = nics[k].pci[0] ? nics[k].pci : NULL;
		nics[k].dist =
		    pci[k] ? (int)eb_topo_distance(o->near_pci, pci[k]) : EB_TOPO_UNKNOWN;
	}
	eb_topo_order(o->near_pci, pci, n, order);
	for (k = 0; k < n; k++)
		sorted[k] = nics[order[k]];
	memcpy(nics, sorted, sizeof(*nics) * (size_t)n);
	if (o->nics == NULL && sorted[0].dist != EB_TOPO_UNKNOWN)
		for (keep = 1; keep < n && nics[keep].dist == nics[0].dist; keep++)
			;
	if (o->channels > keep)
		keep = o->channels < n ? o->channels : n;
	for (k = keep; k < n; k++) /* dropped: the far ones */
		fi_freeinfo(nics[k].info);
	return keep;
}

/* Every item of --nics names some usable NIC of the list; else one line with the names that
 * exist. */
static int check_names(const struct fi_info *list, const char *prov, const char *nics)
{
	char names[512];
	size_t used = 0;
	const char *p = nics;
	const struct fi_info *i;

	while (*p != '\0') {
		size_t k = strcspn(p, ","), n;
		int found = 0;

		for (i = list; i != NULL && !found && k > 0; i = i->next) {
			const char *dom = i->domain_attr->name, *fab = i->fabric_attr->name;

			n = strlen(dom);
			found = eb_fabric_usable(i) &&
				(((k == n || k == base_len(dom)) && strncmp(p, dom, k) == 0) ||
				 (fab != NULL && strlen(fab) == k && strncmp(p, fab, k) == 0));
		}
		if (!found) {
			names[0] = '\0';
			for (i = list; i != NULL && used < sizeof(names); i = i->next) {
				const char *dom = i->domain_attr->name;

				n = base_len(dom);
				if (!eb_fabric_usable(i) || item_listed(names, dom, n))
					continue;
				used += (size_t)snprintf(names + used, sizeof(names) - used,
							 "%s%.*s", used ? "," : "", (int)n, dom);
			}
			eb_err("--nics: no NIC of provider %s is named '%.*s' (NICs here: %s%s)",
			       prov, (int)k, p, names[0] ? names : "none",
			       eb_fabric_is_socket_prov(prov)
				   ? "; a subnet such as 10.77.1.0/24 names those on it"
				   : "");
			return EB_EINVAL;
		}
		p += k + (p[k] == ',');
	}
	return EB_OK;
}

const char *eb_fabric_default(const struct fi_info *list, const char *prov)
{
	const struct fi_info *i;

	/* efa lists its efa-direct fabric first from libfabric 2.1 on (for the devices it suits);
	 * efabench is written for the efa fabric (RDM: any message size, RMA inject, its own CQ
	 * overflow list), so it takes that one unless --fabric asks for another. */
	if (strcmp(prov, "efa") != 0)
		return NULL;
	for (i = list; i != NULL; i = i->next)
		if (eb_fabric_usable(i) && i->fabric_attr->name != NULL &&
		    strcmp(i->fabric_attr->name, "efa") == 0)
			return "efa";
	return NULL;
}

/* The fabric asked for exists among the provider's usable entries; else one line with those
 * that do. */
static int check_fabric(const struct fi_info *list, const char *prov, const char *want)
{
	char names[256] = "";
	size_t used = 0;
	const struct fi_info *i;

	for (i = list; i != NULL; i = i->next) {
		const char *fab = i->fabric_attr->name;

		if (!eb_fabric_usable(i) || fab == NULL)
			continue;
		if (strcmp(fab, want) == 0)
			return EB_OK;
		if (!item_listed(names, fab, strlen(fab)) && used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? "," : "", fab);
	}
	eb_err("--fabric %s: provider %s has no such fabric with RDM endpoints, FI_MSG and "
	       "FI_RMA (its fabrics: %s)",
	       want, prov, names[0] ? names : "none");
	return EB_EINVAL;
}

/* efa-direct of libfabric 2.1 to 2.3 lets an incoming write with immediate data consume a
 * posted receive on devices without unsolicited write-recv (2.4 lists efa-direct only where
 * they have it): the acknowledgements efabench receives would be swallowed and a run hang. */
static int efa_direct_usable(const struct fi_info *list, const char *fabric)
{
	const struct fi_info *i;

	if (fabric == NULL || strcmp(fabric, "efa-direct") != 0)
		return EB_OK;
	for (i = list; i != NULL; i = i->next) {
		uint32_t v = i->fabric_attr->prov_version;
		int maj = (int)FI_MAJOR(v) / 100, min = (int)FI_MAJOR(v) % 100;

		if (i->fabric_attr->name == NULL || strcmp(i->fabric_attr->name, fabric) != 0 ||
		    maj != 2 || min < 1 || min > 3)
			continue;
		eb_err("--fabric efa-direct: in libfabric %d.%d an incoming write can consume a "
		       "posted receive (devices without unsolicited write-recv), which efabench's "
		       "acknowledgements are: take the efa fabric, or libfabric 2.4 or later",
		       maj, min);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* Keep entry i? It names a NIC of the fabric asked for, among --nics (else, for socket
 * providers, loopback on one host and never on several). */
static int wanted(const struct fi_info *i, const struct eb_fabric_opts *o, const char *fabric,
		  int sock, int single_host)
{
	if (!eb_fabric_usable(i) || i->domain_attr->name == NULL)
		return 0;
	if (fabric != NULL &&
	    (i->fabric_attr->name == NULL || strcmp(i->fabric_attr->name, fabric)))
		return 0;
	if (o->nics != NULL)
		return eb_fabric_name_matches(o->nics, i);
	return !sock || is_loopback(i) == !!single_host;
}

int eb_fabric_pick(const struct fi_info *list, const char *prov, const struct eb_fabric_opts *o,
		   int single_host, struct eb_nic **nics, int *count)
{
	int sock = eb_fabric_is_socket_prov(prov), n = 0, cap = 0, k, rc;
	const char *fabric = o->fabric != NULL ? o->fabric : eb_fabric_default(list, prov);
	struct eb_nic *out = NULL;
	const struct fi_info *i;

	*nics = NULL;
	*count = 0;
	if (o->fabric != NULL &&
	    (check_fabric(list, prov, o->fabric) != EB_OK || efa_direct_usable(list, o->fabric)))
		return EB_EINVAL;
	if (o->nics != NULL && !o->nics_some && check_names(list, prov, o->nics) != EB_OK)
		return EB_EINVAL;
	for (i = list; i != NULL; i = i->next) {
		const char *dom = i->domain_attr->name;

		if (!wanted(i, o, fabric, sock, single_host))
			continue;
		/* One entry per domain of the fabric: a NIC is a (domain, fabric) pair. */
		for (k = 0; k < n && strcmp(out[k].domain, dom) != 0; k++)
			;
		if (k < n && !prefer(i, out[k].info))
			continue;
		if (k == n) {
			if (n == cap) {
				struct eb_nic *grown;

				cap = cap ? 2 * cap : 8;
				grown = realloc(out, (size_t)cap * sizeof(*out));
				if (grown == NULL) {
					rc = EB_ENOMEM;
					eb_err("out of memory listing NICs");
					goto free_out;
				}
				out = grown;
			}
			memset(&out[n++], 0, sizeof(*out));
		}
		fi_freeinfo(out[k].info);
		out[k].info = fi_dupinfo(i);
		if (out[k].info == NULL) {
			rc = EB_ENOMEM;
			eb_err("fi_dupinfo: out of memory");
			goto free_out;
		}
		snprintf(out[k].domain, sizeof(out[k].domain), "%s", dom);
		snprintf(out[k].fabric, sizeof(out[k].fabric), "%s",
			 i->fabric_attr->name ? i->fabric_attr->name : "");
		snprintf(out[k].prov, sizeof(out[k].prov), "%s", i->fabric_attr->prov_name);
		out[k].link_gbps = o->link_gbps > 0 ? o->link_gbps : eb_fabric_link_gbps(i);
		out[k].link_from = o->link_gbps > 0 ? EB_LINK_ASKED : eb_fabric_link_from(i);
		out[k].dist = EB_TOPO_UNKNOWN;
		nic_pci(i, sock, out[k].pci, sizeof(out[k].pci));
	}
	if (n == 0) {
		eb_err("provider %s has no usable NIC%s%s%s%s", prov,
		       o->nics ? " among --nics " : "",
		       o->nics ? o->nics : (sock && single_host ? " on loopback" : ""),
		       fabric ? " in fabric " : "", fabric ? fabric : "");
		return EB_EINVAL;
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_nic);
	*count = by_distance(out, n, o);
	*nics = out;
	return EB_OK;

free_out:
	eb_fabric_free_nics(out, n);
	return rc;
}

int eb_fabric_nics(const char *prov, const struct eb_fabric_opts *o, int single_host,
		   struct eb_nic **nics, int *count)
{
	struct fi_info *list;
	int rc = eb_fabric_query_opts(prov, o, &list);

	if (rc != EB_OK)
		return rc;
	rc = eb_fabric_pick(list, prov, o, single_host, nics, count);
	fi_freeinfo(list);
	return rc;
}

int eb_fabric_validate(const struct eb_fabric_opts *o, int nranks, int single_host)
{
	struct eb_nic *nics;
	char prov[32];
	int n, rc;
	size_t eps;

	rc = eb_fabric_choose(o, single_host, prov, sizeof(prov));
	if (rc != EB_OK)
		return rc;
	rc = eb_fabric_nics(prov, o, single_host, &nics, &n);
	if (rc != EB_OK)
		return rc;
	eps = nics[0].info->domain_attr->ep_cnt;
	if (eps > 0 && (size_t)nranks > eps) {
		eb_err("provider %s can address at most %zu ranks per domain (ep_cnt); %d asked",
		       prov, eps, nranks);
		rc = EB_EINVAL;
	} else if (nranks > EB_MAX_RANKS) {
		eb_err("at most %d ranks are supported; %d asked", EB_MAX_RANKS, nranks);
		rc = EB_EINVAL;
	}
	eb_fabric_free_nics(nics, n);
	return rc;
}
