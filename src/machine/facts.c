/* Machine facts gathered into struct eb_facts: libfabric's RDM entries, GPUs, topology. */
#include "efabench/facts.h"
#include "efabench/boot.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/log.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EB_HAVE_HWLOC
#include <hwloc.h>
#endif

void eb_mr_mode_str(uint64_t m, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {{FI_MR_LOCAL, "LOCAL"},	    {FI_MR_VIRT_ADDR, "VIRT_ADDR"},
		    {FI_MR_ALLOCATED, "ALLOCATED"}, {FI_MR_PROV_KEY, "PROV_KEY"},
		    {FI_MR_ENDPOINT, "ENDPOINT"},   {FI_MR_HMEM, "HMEM"}};
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]) && used < len; i++)
		if (m & bits[i].bit)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 bits[i].name);
	if (used == 0)
		snprintf(buf, len, "none");
}

static void addr_format_name(uint32_t af, char *buf, size_t len)
{
	static const char *const names[] = {[FI_FORMAT_UNSPEC] = "unspec",
					    [FI_SOCKADDR] = "sockaddr",
					    [FI_SOCKADDR_IN] = "sockaddr_in",
					    [FI_SOCKADDR_IN6] = "sockaddr_in6",
					    [FI_SOCKADDR_IB] = "sockaddr_ib",
					    [FI_ADDR_PSMX] = "psmx",
					    [FI_ADDR_GNI] = "gni",
					    [FI_ADDR_BGQ] = "bgq",
					    [FI_ADDR_MLX] = "mlx",
					    [FI_ADDR_STR] = "str",
					    [FI_ADDR_PSMX2] = "psmx2",
					    [FI_ADDR_IB_UD] = "ib_ud",
					    [FI_ADDR_EFA] = "efa"};

	if (af < sizeof(names) / sizeof(names[0]) && names[af] != NULL)
		snprintf(buf, len, "%s", names[af]);
	else
		snprintf(buf, len, "%u", af);
}

static void row_of(const struct fi_info *i, struct eb_prov_row *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->prov, sizeof(r->prov), "%s", i->fabric_attr->prov_name);
	snprintf(r->domain, sizeof(r->domain), "%s", i->domain_attr->name);
	snprintf(r->fabric, sizeof(r->fabric), "%s",
		 i->fabric_attr->name ? i->fabric_attr->name : "-");
	addr_format_name(i->addr_format, r->addr_format, sizeof(r->addr_format));
	r->msg = (i->caps & FI_MSG) != 0;
	r->rma = (i->caps & FI_RMA) != 0;
	r->rma_event = (i->caps & FI_RMA_EVENT) != 0;
	r->hmem = (i->caps & FI_HMEM) != 0;
	r->ordered_sas = (i->tx_attr->msg_order & FI_ORDER_SAS) != 0;
	r->usable = eb_fabric_usable(i);
	r->cq_data = i->domain_attr->cq_data_size;
	r->mr_mode = i->domain_attr->mr_mode;
	r->link_gbps = eb_fabric_link_gbps(i);
}

/* A row is one (provider, domain, fabric, address format). fi_getinfo repeats entries: the
 * rxm utility provider lists each entry of its core provider once per core listing (on
 * libfabric 1.17, every tcp;ofi_rxm entry three times), and shm lists its one domain twice;
 * the repeats differ in nothing fi_getinfo lets us tell apart (caps, mode, protocol, sizes
 * equal). The fabric name is the network of the entry's address (a subnet such as
 * 192.0.2.0/24, fe80::/64, or the provider's own name for shm and efa) and the address
 * format tells IPv4 from IPv6 on one interface, so together they name the address. The first
 * entry of each key is kept: libfabric lists a provider's preferred entry first. */
static int same_key(const struct eb_prov_row *a, const struct eb_prov_row *b)
{
	return strcmp(a->prov, b->prov) == 0 && strcmp(a->domain, b->domain) == 0 &&
	       strcmp(a->fabric, b->fabric) == 0 && strcmp(a->addr_format, b->addr_format) == 0;
}

static int gather_rows(struct eb_facts *f)
{
	struct fi_info *list, *i;
	int n = 0, k, rc = eb_fabric_query(NULL, 0, &list);

	if (rc != EB_OK)
		return rc;
	for (i = list; i != NULL; i = i->next)
		n++;
	f->rows = calloc((size_t)(n > 0 ? n : 1), sizeof(*f->rows));
	if (f->rows == NULL) {
		eb_err("out of memory for %d provider entries", n);
		rc = EB_ENOMEM;
		goto free_list;
	}
	for (i = list; i != NULL; i = i->next) {
		row_of(i, &f->rows[f->nrows]);
		for (k = 0; k < f->nrows && !same_key(&f->rows[k], &f->rows[f->nrows]); k++)
			;
		if (k == f->nrows)
			f->nrows++;
	}
free_list:
	fi_freeinfo(list);
	return rc;
}

static void gather_topology(struct eb_facts *f)
{
	f->packages = f->numa_nodes = f->cores = -1;
#ifdef EB_HAVE_HWLOC
	{
		hwloc_topology_t topo;

		f->hwloc = 1;
		if (hwloc_topology_init(&topo) != 0)
			return;
		if (hwloc_topology_load(topo) == 0) {
			f->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
			f->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
			f->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
		}
		hwloc_topology_destroy(topo);
	}
#endif
}

/* The default provider's NICs a rank on GPU g uses, nearest first. */
static void nearest_nics(const char *prov, struct eb_gpu_fact *g)
{
	struct eb_fabric_opts fo = {.timeout_s = 1, .near_pci = g->pci};
	struct eb_nic *nics;
	int k, n;

	if (prov[0] == '\0' || eb_fabric_nics(prov, &fo, 1, &nics, &n) != EB_OK)
		return;
	for (k = 0; k < n && g->nnics < EB_FACTS_NICS; k++) {
		struct eb_nic_fact *x = &g->nics[g->nnics++];

		snprintf(x->domain, sizeof(x->domain), "%s", nics[k].domain);
		snprintf(x->pci, sizeof(x->pci), "%s", nics[k].pci);
		x->dist = nics[k].dist;
	}
	eb_fabric_free_nics(nics, n);
}

static int gather_gpus(struct eb_facts *f)
{
	struct eb_fabric_opts fo = {.timeout_s = 1};
	int g, n = eb_mem_gpu_count();

	if (n == 0)
		return EB_OK;
	f->gpus = calloc((size_t)n, sizeof(*f->gpus));
	if (f->gpus == NULL) {
		eb_err("out of memory for %d GPUs", n);
		return EB_ENOMEM;
	}
	f->ngpus = n;
	if (eb_fabric_choose(&fo, 1, f->gpu_prov, sizeof(f->gpu_prov)) != EB_OK)
		f->gpu_prov[0] = '\0';
	for (g = 0; g < n; g++) {
		struct eb_gpu_fact *x = &f->gpus[g];

		if (eb_mem_gpu_name(g, x->name, sizeof(x->name), &x->sms) != EB_OK)
			snprintf(x->name, sizeof(x->name), "?");
		if (eb_mem_gpu_pci(g, x->pci, sizeof(x->pci)) != EB_OK)
			snprintf(x->pci, sizeof(x->pci), "?");
		x->numa = eb_topo_numa_of(x->pci);
		eb_mem_gpu_caps(g, &x->dmabuf, &x->gdr);
		nearest_nics(f->gpu_prov, x);
	}
	return EB_OK;
}

/* The provider and NICs a run across hosts opens without options, and the fabrics it
 * passes over (efa-direct, on efa from libfabric 2.1). */
static void gather_run(struct eb_facts *f)
{
	struct eb_fabric_opts fo = {.timeout_s = 1};
	struct eb_run_fact *r = &f->run;
	struct eb_nic *nics;
	size_t used = 0;
	int k, n;

	if (eb_fabric_choose(&fo, 0, r->prov, sizeof(r->prov)) != EB_OK ||
	    eb_fabric_nics(r->prov, &fo, 0, &nics, &n) != EB_OK) {
		r->prov[0] = '\0';
		return;
	}
	for (k = 0; k < n && r->nnics < EB_FACTS_NICS; k++, r->nnics++) {
		snprintf(r->nics[k].domain, sizeof(r->nics[k].domain), "%s", nics[k].domain);
		snprintf(r->nics[k].fabric, sizeof(r->nics[k].fabric), "%s", nics[k].fabric);
	}
	for (k = 0; k < f->nrows; k++) {
		const struct eb_prov_row *p = &f->rows[k];

		if (!p->usable || strcmp(p->prov, r->prov) != 0 || n < 1 ||
		    strcmp(p->fabric, nics[0].fabric) == 0 ||
		    strstr(r->others, p->fabric) != NULL || eb_fabric_is_socket_prov(p->prov))
			continue;
		if (used < sizeof(r->others))
			used += (size_t)snprintf(r->others + used, sizeof(r->others) - used, "%s%s",
						 used ? "," : "", p->fabric);
	}
	eb_fabric_free_nics(nics, n);
}

/* Registration is tried with these providers, on GPU 0 and each one's first NIC. */
static void gather_reg(struct eb_facts *f)
{
	static const char *const provs[EB_FACTS_PROVS] = {"efa", "shm", "verbs", "tcp", "sockets"};
	struct eb_fabric_opts fo = {.timeout_s = 1};
	int p;

	for (p = 0; p < EB_FACTS_PROVS; p++)
		eb_gpu_reg_probe(provs[p], &fo, 1, 0, &f->reg[p]);
}

int eb_facts_gather(struct eb_facts *f)
{
	int rc;

	memset(f, 0, sizeof(*f));
	eb_versions_get(&f->v);
	gather_topology(f);
	rc = gather_rows(f);
	if (rc == EB_OK)
		rc = gather_gpus(f);
	if (rc != EB_OK) {
		eb_facts_free(f);
		return rc;
	}
	gather_reg(f);
	gather_run(f);
	return EB_OK;
}

void eb_facts_free(struct eb_facts *f)
{
	free(f->rows);
	free(f->gpus);
	memset(f, 0, sizeof(*f));
}
