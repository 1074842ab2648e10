#include "info_out.h"
#include "doc.h"
#include "efabench/chan.h"
#include "efabench/status.h"
#include "efabench/topo.h"

#include <stdio.h>
#include <string.h>

static const char *const dist_name[] = {"same PCIe switch", "same root complex", "same NUMA node",
					"far", "unknown"};

static const char *dist_of(int d)
{
	return d >= 0 && d <= EB_TOPO_UNKNOWN ? dist_name[d] : "unknown";
}

static const char *yes_no(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "unknown";
}

static void print_libs(FILE *f, const struct eb_facts *x)
{
	const struct eb_versions *v = &x->v;
	int g;

	fprintf(f, "efabench %s\n", v->efabench);
	fprintf(f, "libfabric: runtime %u.%u, built against %u.%u\n", v->fi_major, v->fi_minor,
		v->fi_built_major, v->fi_built_minor);
	fprintf(f, "MPI bootstrap: %s\n", v->mpi ? "built in" : "not built");
	if (v->cuda)
		fprintf(f, "CUDA: built in (GPU memory, queue producers, ipc); %d GPU%s visible\n",
			x->ngpus, x->ngpus == 1 ? "" : "s");
	else
		fprintf(f, "CUDA: not built (efabench queue runs CPU producers only)\n");
	for (g = 0; g < x->ngpus; g++) /* the PCI address without its function */
		fprintf(f, "  GPU %d: %s, %d SMs, PCI %.*s\n", g, x->gpus[g].name, x->gpus[g].sms,
			(int)strcspn(x->gpus[g].pci, "."), x->gpus[g].pci);
	if (!x->hwloc)
		fprintf(f, "hwloc: not built\n");
	else if (x->packages >= 0)
		fprintf(f, "hwloc: %d package(s), %d NUMA node(s), %d core(s)\n", x->packages,
			x->numa_nodes, x->cores);
}

static void print_rows(FILE *f, const struct eb_facts *x)
{
	int k;

	fprintf(f, "\nRDM entries (one line per provider x NIC x address format):\n");
	fprintf(f, "%-14s %-10s %-18s %-4s %-4s %-7s %-9s %-5s %-9s %-28s %s\n", "provider",
		"domain", "fabric", "MSG", "RMA", "cq_data", "RMA_EVENT", "HMEM", "ordered",
		"mr_mode", "link");
	for (k = 0; k < x->nrows; k++) {
		const struct eb_prov_row *r = &x->rows[k];
		char mr[96], link[24];

		eb_mr_mode_str(r->mr_mode, mr, sizeof(mr));
		if (r->link_gbps > 0)
			snprintf(link, sizeof(link), "%.1f Gbps", r->link_gbps);
		else
			snprintf(link, sizeof(link), "-");
		fprintf(f, "%-14s %-10s %-18s %-4s %-4s %-7zu %-9s %-5s %-9s %-28s %s%s\n", r->prov,
			r->domain, r->fabric, r->msg ? "yes" : "no", r->rma ? "yes" : "no",
			r->cq_data, r->rma_event ? "yes" : "no", r->hmem ? "yes*" : "no",
			r->ordered_sas ? "SAS" : "no", mr, link,
			r->usable ? "" : "  (unusable: needs cq_data >= 4)");
	}
	fprintf(f, "\n* FI_HMEM in caps does not prove CUDA support: libfabric says so at runtime\n"
		   "  (FI_LOG_LEVEL=info prints 'Hmem iface FI_HMEM_CUDA not supported' when "
		   "absent).\n"
		   "Link speeds come from fi_info, else /sys/class/net/<domain>/speed; '-' when "
		   "neither.\n");
}

/* Each GPU: PCI, NUMA node, what the driver allows, and the NICs of the default provider
 * nearest it (the ones a rank on that GPU uses); then which providers register its memory. */
static void print_gpus(FILE *f, const struct eb_facts *x)
{
	int g, k;

	if (x->ngpus == 0)
		return;
	fprintf(f, "\nGPUs, their NUMA nodes and nearest NICs:\n");
	for (g = 0; g < x->ngpus; g++) {
		const struct eb_gpu_fact *p = &x->gpus[g];

		fprintf(f,
			"  GPU %d  PCI %s  NUMA node %d  DMA-BUF export: %s  GPUDirect RDMA: %s\n",
			g, p->pci, p->numa, yes_no(p->dmabuf), yes_no(p->gdr));
		if (p->nnics == 0)
			continue;
		fprintf(f, "    %s NICs a rank on it uses:", x->gpu_prov);
		for (k = 0; k < p->nnics; k++)
			fprintf(f, " %s (%s%s%s)", p->nics[k].domain,
				p->nics[k].pci[0] ? p->nics[k].pci : "no PCI",
				p->nics[k].pci[0] ? ", " : "",
				p->nics[k].pci[0] ? dist_of(p->nics[k].dist) : "");
		fprintf(f, "\n");
	}
	fprintf(f, "\nGPU memory registration (tried on GPU 0):\n");
	for (k = 0; k < EB_FACTS_PROVS; k++) {
		const struct eb_gpu_reg *r = &x->reg[k];

		if (r->state == EB_GREG_NO_HMEM)
			fprintf(f, "  %-8s no FI_HMEM: GPU memory only through --staged\n",
				r->prov);
		else if (r->state == EB_GREG_FAILED)
			fprintf(f, "  %-8s FI_HMEM: not tried (%s)\n", r->prov, r->why);
		else if (r->state == EB_GREG_NO_P2P)
			fprintf(f, "  %-8s FI_HMEM: %s\n", r->prov, r->why);
		else if (r->state == EB_GREG_TRIED)
			fprintf(f, "  %-8s FI_HMEM: path %s, DMA-BUF %s%s%s, FI_HMEM_CUDA %s%s\n",
				r->prov, eb_p2p_name((enum eb_p2p)r->p2p),
				r->dmabuf > 0	? "yes"
				: r->dmabuf < 0 ? "not tried"
						: "no",
				r->dmabuf < 0 ? ": " : "", r->dmabuf < 0 ? r->dmabuf_why : "",
				r->hmem_cuda ? "yes" : "no",
				r->dmabuf <= 0 && !r->hmem_cuda
				    ? " (this libfabric lacks CUDA support: use --staged)"
				    : "");
	}
}

/* What a run across hosts takes without options: NICs as (domain, fabric) pairs. */
static void print_run(FILE *f, const struct eb_facts *x)
{
	const struct eb_run_fact *r = &x->run;
	int k;

	if (r->prov[0] == '\0')
		return;
	fprintf(f, "\nA run across hosts opens, without options: provider %s, channels on",
		r->prov);
	for (k = 0; k < r->nnics; k++)
		fprintf(f, " %s (fabric %s)", r->nics[k].domain, r->nics[k].fabric);
	fprintf(f, "\n");
	if (r->others[0] != '\0')
		fprintf(f, "  %s also lists fabric %s for them: --fabric picks it\n", r->prov,
			r->others);
}

void eb_facts_print(FILE *f, const struct eb_facts *x)
{
	print_libs(f, x);
	print_rows(f, x);
	print_run(f, x);
	print_gpus(f, x);
}

/* ---- as a document ---- */

static void bool_or_null(struct eb_rec *r, const char *key, int v)
{
	if (v < 0)
		eb_rec_null(r, key);
	else
		eb_rec_bool(r, key, v);
}

static void head_versions(struct eb_rec *h, const struct eb_facts *x)
{
	char ver[32];

	eb_rec_str(h, "efabench", x->v.efabench);
	eb_rec_obj(h, "libfabric");
	snprintf(ver, sizeof(ver), "%u.%u", x->v.fi_major, x->v.fi_minor);
	eb_rec_str(h, "runtime", ver);
	snprintf(ver, sizeof(ver), "%u.%u", x->v.fi_built_major, x->v.fi_built_minor);
	eb_rec_str(h, "built", ver);
	eb_rec_end(h);
	eb_rec_bool(h, "mpi_bootstrap", x->v.mpi);
	eb_rec_obj(h, "cuda");
	eb_rec_bool(h, "built", x->v.cuda);
	eb_rec_int(h, "gpus", x->ngpus);
	eb_rec_end(h);
	eb_rec_obj(h, "topology");
	eb_rec_bool(h, "hwloc", x->hwloc);
	bool_or_null(h, "loaded", x->hwloc ? x->packages >= 0 : -1);
	if (x->hwloc && x->packages >= 0) {
		eb_rec_int(h, "packages", x->packages);
		eb_rec_int(h, "numa_nodes", x->numa_nodes);
		eb_rec_int(h, "cores", x->cores);
	}
	eb_rec_end(h);
}

static void head_gpus(struct eb_rec *h, const struct eb_facts *x)
{
	int g, k;

	eb_rec_items(h, "gpus");
	for (g = 0; g < x->ngpus; g++) {
		const struct eb_gpu_fact *p = &x->gpus[g];
		struct eb_rec *r = eb_rec_item(h, "gpus");

		if (r == NULL)
			return;
		eb_rec_int(r, "index", g);
		eb_rec_str(r, "name", p->name);
		eb_rec_int(r, "sms", p->sms);
		eb_rec_str(r, "pci", p->pci);
		eb_rec_int(r, "numa_node", p->numa);
		bool_or_null(r, "dmabuf_export", p->dmabuf);
		bool_or_null(r, "gpudirect_rdma", p->gdr);
		eb_rec_str(r, "nics_provider", x->gpu_prov);
		eb_rec_items(r, "nearest_nics");
		for (k = 0; k < p->nnics; k++) {
			struct eb_rec *n = eb_rec_item(r, "nearest_nics");

			if (n == NULL)
				return;
			eb_rec_str(n, "domain", p->nics[k].domain);
			eb_rec_str(n, "pci", p->nics[k].pci);
			eb_rec_str(n, "distance", dist_of(p->nics[k].dist));
		}
	}
}

static void head_registration(struct eb_rec *h, const struct eb_facts *x)
{
	static const char *const state[] = {
	    [EB_GREG_NOT_TRIED] = "not tried",	  [EB_GREG_NO_PROV] = "no provider",
	    [EB_GREG_NO_HMEM] = "no FI_HMEM",	  [EB_GREG_FAILED] = "failed",
	    [EB_GREG_NO_P2P] = "no peer to peer", [EB_GREG_TRIED] = "tried"};
	int k;

	eb_rec_items(h, "registration");
	for (k = 0; k < EB_FACTS_PROVS; k++) {
		const struct eb_gpu_reg *g = &x->reg[k];
		struct eb_rec *r = eb_rec_item(h, "registration");
		int tried = g->state == EB_GREG_TRIED;

		if (r == NULL)
			return;
		eb_rec_str(r, "provider", g->prov);
		eb_rec_str(r, "state", state[g->state]);
		bool_or_null(r, "dmabuf", tried ? g->dmabuf : -1); /* null: not tried */
		if (tried && g->dmabuf < 0)
			eb_rec_str(r, "dmabuf_reason", g->dmabuf_why);
		else
			eb_rec_null(r, "dmabuf_reason");
		bool_or_null(r, "hmem_cuda", tried ? g->hmem_cuda : -1);
		if (tried)
			eb_rec_str(r, "path", eb_p2p_name((enum eb_p2p)g->p2p));
		else
			eb_rec_null(r, "path");
		if (g->why[0] != '\0')
			eb_rec_str(r, "reason", g->why);
		else
			eb_rec_null(r, "reason");
	}
}

static void row_rec(struct eb_rec *r, const struct eb_prov_row *p)
{
	char mr[96];

	eb_mr_mode_str(p->mr_mode, mr, sizeof(mr));
	eb_rec_str(r, "provider", p->prov);
	eb_rec_str(r, "domain", p->domain);
	eb_rec_str(r, "fabric", p->fabric);
	eb_rec_str(r, "addr_format", p->addr_format);
	eb_rec_bool(r, "msg", p->msg);
	eb_rec_bool(r, "rma", p->rma);
	eb_rec_int(r, "cq_data", (long long)p->cq_data);
	eb_rec_bool(r, "rma_event", p->rma_event);
	eb_rec_bool(r, "hmem", p->hmem);
	eb_rec_bool(r, "ordered_sas", p->ordered_sas);
	eb_rec_str(r, "mr_mode", mr);
	eb_rec_num_or_null(r, "link_gbps", p->link_gbps, p->link_gbps > 0);
	eb_rec_bool(r, "usable", p->usable);
}

int eb_facts_md(const struct eb_facts *x, const char *path)
{
	FILE *f = eb_out_open(path);

	if (f == NULL)
		return EB_ESYS;
	fputs("```\n", f);
	eb_facts_print(f, x);
	fputs("```\n", f);
	return eb_out_close(f, path);
}

static void head_run(struct eb_rec *h, const struct eb_facts *x)
{
	const struct eb_run_fact *r = &x->run;
	int k;

	eb_rec_obj(h, "run");
	if (r->prov[0] != '\0')
		eb_rec_str(h, "provider", r->prov);
	else
		eb_rec_null(h, "provider");
	eb_rec_items(h, "channels");
	for (k = 0; k < r->nnics; k++) {
		struct eb_rec *c = eb_rec_item(h, "channels");

		if (c == NULL)
			break;
		eb_rec_str(c, "domain", r->nics[k].domain);
		eb_rec_str(c, "fabric", r->nics[k].fabric);
	}
	eb_rec_str(h, "other_fabrics", r->others);
	eb_rec_end(h);
}

int eb_facts_write(const struct eb_facts *x, const char *csv_path, const char *json_path)
{
	struct eb_doc d = {0};
	int k, rc = EB_OK;

	head_versions(&d.head, x);
	head_run(&d.head, x);
	head_gpus(&d.head, x);
	head_registration(&d.head, x);
	for (k = 0; k < x->nrows && rc == EB_OK; k++) {
		struct eb_rec *r = eb_doc_add(&d);

		if (r == NULL)
			rc = EB_ENOMEM;
		else
			row_rec(r, &x->rows[k]);
	}
	if (rc == EB_OK)
		rc = eb_doc_write(&d, csv_path, json_path);
	eb_doc_free(&d);
	return rc;
}
