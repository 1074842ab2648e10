/* doctor's checks of this host's GPUs: how many, their NVLinks, the NICs nearest each, whether
 * the provider registers GPU memory. Run by one rank per host; what it measures of them is in
 * doctor_gpu_points.c. */
#include "checks.h"
#include "efabench/fabric.h"
#include "efabench/facts.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "gpu/nvlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count(const struct dopts *d, struct eb_checks *s)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	int n;

	if (!eb_mem_have_cuda()) {
		eb_check_add(s, "gpus", d->expect_gpus >= 0 ? EB_FAIL : EB_SKIP, 0,
			     (double)d->expect_gpus, "this efabench was built without CUDA%s",
			     d->expect_gpus >= 0 ? ": it cannot count GPUs" : "");
		return 0;
	}
	n = eb_mem_gpu_count();
	if (d->expect_gpus >= 0 && n != d->expect_gpus)
		eb_check_add(s, "gpus", EB_FAIL, n, (double)d->expect_gpus,
			     "CUDA sees %d GPU%s, %ld expected%s%s%s", n, n == 1 ? "" : "s",
			     d->expect_gpus, vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "",
			     vis ? ")" : "");
	else if (n == 0)
		eb_check_add(s, "gpus", EB_SKIP, 0, 0, "no GPU visible (none, or no driver)");
	else
		eb_check_add(s, "gpus", EB_PASS, n,
			     d->expect_gpus >= 0 ? (double)d->expect_gpus : 0, "CUDA sees %d GPU%s",
			     n, n == 1 ? "" : "s");
	return n < EB_DOC_MAX_GPUS ? n : EB_DOC_MAX_GPUS;
}

/* Every GPU should have as many active links as the best of them. */
static void nvlinks(struct eb_dgpus *g, struct eb_checks *s)
{
	int i, most = 0, known = 0;
	char what[32];

	for (i = 0; i < g->n; i++) {
		if (eb_nvlink_peak(g->pci[i], &g->links[i], &g->gbytes[i]) != EB_OK)
			g->links[i] = -1;
		else
			known++;
		if (g->links[i] > most)
			most = g->links[i];
	}
	if (known == 0) {
		eb_check_add(s, "nvlink", EB_SKIP, 0, 0,
			     "NVML (libnvidia-ml.so.1) not found or does not know the GPUs");
		return;
	}
	for (i = 0; i < g->n; i++) {
		snprintf(what, sizeof(what), "GPU %d nvlink", i);
		if (g->links[i] < 0)
			eb_check_add(s, what, EB_WARN, 0, most, "NVML does not know %s", g->pci[i]);
		else if (g->links[i] < most)
			eb_check_add(s, what, EB_FAIL, g->links[i], most,
				     "%d of the %d links other GPUs have are active", g->links[i],
				     most);
		else if (most == 0)
			eb_check_add(s, what, g->n > 1 ? EB_WARN : EB_PASS, 0, 0,
				     "no active NVLink%s",
				     g->n > 1 ? ": peers talk over PCIe" : "");
		else
			eb_check_add(s, what, EB_PASS, g->links[i] * g->gbytes[i], 0,
				     "%d links x %.1f GB/s = %.0f GB/s per direction", g->links[i],
				     g->gbytes[i], g->links[i] * g->gbytes[i]);
	}
}

/* Each GPU has NICs on its PCIe switch or root complex (what a rank on it uses). */
static void nearest_nics(const struct eb_opts *o, const char *prov, int single_host,
			 const struct eb_dgpus *g, struct eb_checks *s)
{
	static const char *const dist[] = {"same PCIe switch", "same root complex",
					   "same NUMA node", "another NUMA node", "unknown"};
	struct eb_fabric_opts fo = o->fab;
	struct eb_nic *nics;
	char what[32];
	int i, n;

	for (i = 0; i < g->n; i++) {
		snprintf(what, sizeof(what), "GPU %d nics", i);
		fo.near_pci = g->pci[i];
		if (eb_fabric_nics(prov, &fo, single_host, &nics, &n) != EB_OK)
			continue;
		if (nics[0].pci[0] == '\0')
			eb_check_add(s, what, EB_SKIP, 0, 0, "%s NICs have no PCI address (%s)",
				     prov, nics[0].domain);
		else
			eb_check_add(s, what, nics[0].dist <= EB_TOPO_ROOT ? EB_PASS : EB_WARN, n,
				     0, "%d nearest: %s first (%s)%s", n, nics[0].domain,
				     dist[nics[0].dist],
				     nics[0].dist <= EB_TOPO_ROOT
					 ? ""
					 : ": its traffic crosses the CPU's interconnect");
		eb_fabric_free_nics(nics, n);
	}
}

/* Does the provider register GPU memory (DMA-BUF or FI_HMEM_CUDA)? Tried on GPU 0. */
static void registration(const struct eb_opts *o, const char *prov, int single_host,
			 struct eb_checks *s)
{
	int need = strcmp(prov, "efa") == 0 ? EB_FAIL : EB_WARN, db, gdr;
	struct eb_gpu_reg r;

	eb_mem_gpu_caps(0, &db, &gdr);
	if (eb_gpu_reg_probe(prov, &o->fab, single_host, 0, &r) != EB_OK)
		eb_check_add(s, "gpu memory", r.state == EB_GREG_FAILED ? EB_FAIL : need, 0, 0,
			     "%s", r.why);
	else
		eb_check_add(s, "gpu memory", EB_PASS, 0, 0,
			     "%s registers GPU memory: DMA-BUF %s%s%s, FI_HMEM_CUDA %s "
			     "(driver: DMA-BUF %s, GPUDirect RDMA %s)",
			     prov,
			     r.dmabuf > 0   ? "yes"
			     : r.dmabuf < 0 ? "not tried"
					    : "no",
			     r.dmabuf < 0 ? " (" : "", r.dmabuf < 0 ? r.dmabuf_why : "",
			     r.hmem_cuda ? "yes" : "no", db > 0 ? "yes" : "no",
			     gdr > 0 ? "yes" : "no");
}

void eb_doctor_gpus(const struct eb_opts *o, const struct dopts *d, const char *prov,
		    int single_host, struct eb_dgpus *g, struct eb_checks *s)
{
	int i;

	g->n = count(d, s);
	for (i = 0; i < g->n; i++)
		if (eb_mem_gpu_pci(i, g->pci[i], sizeof(g->pci[i])) != EB_OK)
			snprintf(g->pci[i], sizeof(g->pci[i]), "?");
	if (g->n == 0)
		return;
	nvlinks(g, s);
	if (prov[0] != '\0') {
		nearest_nics(o, prov, single_host, g, s);
		registration(o, prov, single_host, s);
	}
}
