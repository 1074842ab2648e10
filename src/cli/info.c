/* efabench info: what this machine offers, before anyone benchmarks it. */
#include "efabench/boot.h"
#include "../bench/cmd.h"
#include "efabench/chan.h"
#include "efabench/fabric.h"
#include "efabench/mem.h"
#include "efabench/mr.h"
#include "efabench/status.h"
#include "efabench/topo.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <stdio.h>
#include <string.h>

#ifdef EB_HAVE_HWLOC
#include <hwloc.h>
#endif
#ifdef EB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void print_libs(void)
{
	uint32_t v = fi_version();

	printf("efabench %s\n", EB_VERSION_STRING);
	printf("libfabric: runtime %u.%u, built against %u.%u\n", FI_MAJOR(v), FI_MINOR(v),
	       FI_MAJOR_VERSION, FI_MINOR_VERSION);
	printf("MPI bootstrap: %s\n", eb_boot_have_mpi() ? "built in" : "not built");
#ifdef EB_HAVE_CUDA
	{
		int n = 0, i;

		if (cudaGetDeviceCount(&n) != cudaSuccess)
			n = 0;
		printf("CUDA: built in (GPU memory, queue producers, ipc); %d GPU%s visible\n", n,
		       n == 1 ? "" : "s");
		for (i = 0; i < n; i++) {
			struct cudaDeviceProp p;

			if (cudaGetDeviceProperties(&p, i) == cudaSuccess)
				printf("  GPU %d: %s, %d SMs, PCI %04x:%02x:%02x\n", i, p.name,
				       p.multiProcessorCount, p.pciDomainID, p.pciBusID,
				       p.pciDeviceID);
		}
	}
#else
	printf("CUDA: not built (efabench queue runs CPU producers only)\n");
#endif
#ifdef EB_HAVE_HWLOC
	{
		hwloc_topology_t topo;

		if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
			printf("hwloc: %d package(s), %d NUMA node(s), %d core(s)\n",
			       hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
			       hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE),
			       hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
			hwloc_topology_destroy(topo);
		}
	}
#else
	printf("hwloc: not built\n");
#endif
}

static void mr_bits(uint64_t m, char *buf, size_t len)
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

static const char *dist_name[] = {"same PCIe switch", "same root complex", "same NUMA node", "far",
				  "unknown"};

static const char *yes_no(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "unknown";
}

/* Each GPU: PCI, NUMA node, what the driver allows, and the NICs of the default provider
 * nearest it (the ones a rank on that GPU uses). */
static void print_gpus(void)
{
	struct eb_fabric_opts fo = {.timeout_s = 1};
	char prov[32], bdf[16];
	struct eb_nic *nics;
	int g, k, n, ngpus = eb_mem_gpu_count(), dmabuf, gdr;

	if (ngpus == 0)
		return;
	printf("\nGPUs, their NUMA nodes and nearest NICs:\n");
	if (eb_fabric_choose(&fo, 1, prov, sizeof(prov)) != EB_OK)
		prov[0] = '\0';
	for (g = 0; g < ngpus; g++) {
		if (eb_mem_gpu_pci(g, bdf, sizeof(bdf)) != EB_OK)
			snprintf(bdf, sizeof(bdf), "?");
		eb_mem_gpu_caps(g, &dmabuf, &gdr);
		printf("  GPU %d  PCI %s  NUMA node %d  DMA-BUF export: %s  GPUDirect RDMA: %s\n",
		       g, bdf, eb_topo_numa_of(bdf), yes_no(dmabuf), yes_no(gdr));
		fo.near_pci = bdf;
		if (prov[0] == '\0' || eb_fabric_nics(prov, &fo, 1, &nics, &n) != EB_OK)
			continue;
		printf("    %s NICs a rank on it uses:", prov);
		for (k = 0; k < n; k++)
			printf(" %s (%s%s%s)", nics[k].domain,
			       nics[k].pci[0] ? nics[k].pci : "no PCI", nics[k].pci[0] ? ", " : "",
			       nics[k].pci[0] ? dist_name[nics[k].dist] : "");
		printf("\n");
		eb_fabric_free_nics(nics, n);
	}
}

/* Per provider offering FI_HMEM: does it really register GPU memory, by which path? Tried
 * with a small buffer on GPU 0 and the provider's first NIC. */
static void print_hmem(void)
{
	static const char *const provs[] = {"efa", "shm", "verbs", "tcp", "sockets"};
	struct eb_fabric_opts fo = {.timeout_s = 1, .hmem = 1};
	struct eb_mem m;
	size_t p;

	if (eb_mem_gpu_count() == 0 || eb_mem_use_gpu(0) != EB_OK ||
	    eb_mem_alloc(&m, EB_MEM_DEVICE, 1u << 16, "a probe buffer") != EB_OK)
		return;
	printf("\nGPU memory registration (tried on GPU 0):\n");
	for (p = 0; p < sizeof(provs) / sizeof(provs[0]); p++) {
		struct fi_info *list;
		struct eb_nic *nics;
		struct eb_chan ch;
		int n;

		fo.provider = provs[p];
		if (eb_fabric_query(provs[p], 1, &list) != EB_OK || list == NULL) {
			struct fi_info *plain = NULL;

			if (eb_fabric_query(provs[p], 0, &plain) == EB_OK && plain != NULL)
				printf("  %-8s no FI_HMEM: GPU memory only through --staged\n",
				       provs[p]);
			fi_freeinfo(plain);
			continue;
		}
		fi_freeinfo(list);
		if (eb_fabric_nics(provs[p], &fo, 1, &nics, &n) != EB_OK)
			continue;
		if (eb_chan_open(&ch, &nics[0], 0, 1) == EB_OK) {
			int db = eb_mr_try_gpu(&ch, &m, EB_REG_DMABUF);
			int hm = eb_mr_try_gpu(&ch, &m, EB_REG_HMEM_CUDA);

			printf("  %-8s FI_HMEM: DMA-BUF %s, FI_HMEM_CUDA %s%s\n", provs[p],
			       db == EB_OK ? "yes" : "no", hm == EB_OK ? "yes" : "no",
			       db != EB_OK && hm != EB_OK
				   ? " (this libfabric lacks CUDA support: use --staged)"
				   : "");
			eb_chan_close(&ch);
		}
		eb_fabric_free_nics(nics, n);
	}
	eb_mem_free(&m);
}

static int info_main(const struct eb_opts *o)
{
	struct fi_info *list, *i;
	int rc;

	print_libs();
	rc = eb_fabric_query(NULL, 0, &list);
	if (rc != EB_OK)
		return rc;
	printf("\nRDM entries (one line per provider x NIC x address format):\n");
	printf("%-14s %-10s %-18s %-4s %-4s %-7s %-9s %-5s %-9s %-28s %s\n", "provider", "domain",
	       "fabric", "MSG", "RMA", "cq_data", "RMA_EVENT", "HMEM", "ordered", "mr_mode",
	       "link");
	for (i = list; i != NULL; i = i->next) {
		char mr[96], link[24];

		mr_bits(i->domain_attr->mr_mode, mr, sizeof(mr));
		if (eb_fabric_link_gbps(i) > 0)
			snprintf(link, sizeof(link), "%.1f Gbps", eb_fabric_link_gbps(i));
		else
			snprintf(link, sizeof(link), "-");
		printf("%-14s %-10s %-18s %-4s %-4s %-7zu %-9s %-5s %-9s %-28s %s%s\n",
		       i->fabric_attr->prov_name, i->domain_attr->name,
		       i->fabric_attr->name ? i->fabric_attr->name : "-",
		       (i->caps & FI_MSG) ? "yes" : "no", (i->caps & FI_RMA) ? "yes" : "no",
		       i->domain_attr->cq_data_size, (i->caps & FI_RMA_EVENT) ? "yes" : "no",
		       (i->caps & FI_HMEM) ? "yes*" : "no",
		       (i->tx_attr->msg_order & FI_ORDER_SAS) ? "SAS" : "no", mr, link,
		       eb_fabric_usable(i) ? "" : "  (unusable: needs cq_data >= 4)");
	}
	printf("\n* FI_HMEM in caps does not prove CUDA support: libfabric says so at runtime\n"
	       "  (FI_LOG_LEVEL=info prints 'Hmem iface FI_HMEM_CUDA not supported' when absent).\n"
	       "Link speeds come from fi_info, else /sys/class/net/<domain>/speed; '-' when "
	       "neither.\n");
	fi_freeinfo(list);
	print_gpus();
	print_hmem();
	return EB_OK;
}

const struct eb_cmd eb_cmd_info = {
    .name = "info",
    .summary = "providers, NICs and link speeds, GPUs, what this build and machine offer",
    .help = "  libfabric's version and every RDM entry of every provider (what each supports\n"
	    "  among the features efabench uses), link speeds, the GPUs CUDA sees, MPI and\n"
	    "  hwloc",
    .main = info_main,
};
