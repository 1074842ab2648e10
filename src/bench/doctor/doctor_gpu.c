/* doctor's checks of this host's GPUs: how many, their NVLinks, the NICs nearest each, whether
 * the provider registers GPU memory, then the copy engines between every pair and each GPU's
 * floor. Run by one rank per host. */
#include "checks.h"
#include "efabench/fabric.h"
#include "efabench/facts.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "gpu/ce.h"
#include "gpu/floor.h"
#include "gpu/nvlink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS    16
#define CE_BYTES    (256u << 20)
#define CE_ITERS    5
#define FLOOR_ITERS 2000

struct gpus {
	int n;
	char pci[MAX_GPUS][16];
	int links[MAX_GPUS];	 /* active NVLinks; -1 when NVML does not say */
	double gbytes[MAX_GPUS]; /* per link and direction */
};

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
	return n < MAX_GPUS ? n : MAX_GPUS;
}

/* Every GPU should have as many active links as the best of them. */
static void nvlinks(struct gpus *g, struct eb_checks *s)
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
			 const struct gpus *g, struct eb_checks *s)
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

/* Copy-engine bandwidth from each GPU to every other, against the slower end's NVLink
 * peak; one line per source GPU naming its slowest peer. */
static void copy_engines(const struct dopts *d, const struct gpus *g, struct eb_checks *s)
{
	int a, b;

	for (a = 0; a < g->n; a++) {
		double worst = -1, worst_gb = 0, worst_peak = 0, gb;
		int worst_b = -1, failed = 0;
		char what[32];

		snprintf(what, sizeof(what), "GPU %d copy", a);
		for (b = 0; b < g->n; b++) {
			double peak, ratio;

			if (a == b)
				continue;
			if (eb_ce_can_peer(a, b) != 1) {
				eb_check_add(s, what, EB_WARN, 0, 0,
					     "GPU %d cannot map GPU %d (no peer access)", a, b);
				failed = 1;
				continue;
			}
			if (eb_ce_gbytes(a, b, CE_BYTES, CE_ITERS, &gb) != EB_OK) {
				eb_check_add(s, what, EB_FAIL, 0, 0,
					     "copy GPU %d -> GPU %d failed (see above)", a, b);
				failed = 1;
				continue;
			}
			peak = g->links[a] > 0 && g->links[b] > 0
				   ? (g->links[a] * g->gbytes[a] < g->links[b] * g->gbytes[b]
					  ? g->links[a] * g->gbytes[a]
					  : g->links[b] * g->gbytes[b])
				   : 0;
			ratio = peak > 0 ? gb / peak : gb;
			if (worst < 0 || ratio < worst) {
				worst = ratio;
				worst_b = b;
				worst_gb = gb;
				worst_peak = peak;
			}
		}
		if (failed || worst_b < 0)
			continue;
		if (worst_peak <= 0)
			eb_check_add(s, what, EB_PASS, worst_gb, 0,
				     "slowest: to GPU %d, %.0f GB/s (no NVLink peak to compare)",
				     worst_b, worst_gb);
		else
			eb_check_add(s, what, worst < d->min_nvlink ? EB_FAIL : EB_PASS, worst_gb,
				     d->min_nvlink * worst_peak,
				     "slowest: to GPU %d, %.0f GB/s = %.2f x the %.0f GB/s NVLink "
				     "peak (at least %.2f wanted)",
				     worst_b, worst_gb, worst, worst_peak, d->min_nvlink);
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The GPU<->CPU floor of each GPU (median round trip) against --max-floor-us. */
static void floors(const struct eb_opts *o, const struct dopts *d, int n, struct eb_checks *s)
{
	double *rtt = malloc(FLOOR_ITERS * sizeof(*rtt));
	char what[32];
	int i;

	for (i = 0; rtt != NULL && i < n; i++) {
		double us;

		snprintf(what, sizeof(what), "GPU %d floor", i);
		if (eb_mem_use_gpu(i) != EB_OK ||
		    eb_floor_measure(1, FLOOR_ITERS, o->fab.timeout_s, rtt) != EB_OK) {
			eb_check_add(s, what, EB_FAIL, 0, d->max_floor_us,
				     "the GPU<->CPU round trip failed (see above)");
			continue;
		}
		qsort(rtt, FLOOR_ITERS, sizeof(*rtt), cmp_dbl);
		us = rtt[FLOOR_ITERS / 2] * 1e-3;
		eb_check_add(s, what, us > d->max_floor_us ? EB_FAIL : EB_PASS, us, d->max_floor_us,
			     "GPU<->CPU round trip through mapped memory: median %.2f us (at most "
			     "%.1f wanted)",
			     us, d->max_floor_us);
	}
	free(rtt);
}

void eb_doctor_gpus(const struct eb_opts *o, const struct dopts *d, const char *prov,
		    int single_host, int measure, struct eb_checks *s)
{
	struct gpus g = {0};
	int i;

	g.n = count(d, s);
	if (g.n == 0)
		return;
	for (i = 0; i < g.n; i++)
		if (eb_mem_gpu_pci(i, g.pci[i], sizeof(g.pci[i])) != EB_OK)
			snprintf(g.pci[i], sizeof(g.pci[i]), "?");
	nvlinks(&g, s);
	if (prov[0] != '\0') {
		nearest_nics(o, prov, single_host, &g, s);
		registration(o, prov, single_host, s);
	}
	if (!measure)
		return;
	if (g.n > 1)
		copy_engines(d, &g, s);
	floors(o, d, g.n, s);
}
