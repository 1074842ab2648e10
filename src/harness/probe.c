/* Before and as a run starts: the launcher's probe (ranks, provider, NICs, GPUs and how GPU
 * memory registers, checked in a child before any rank forks) and each rank's GPU. */
#include "probe.h"
#include "efabench/facts.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/log.h"

#include <stdio.h>
#include <string.h>

struct probe_arg {
	const struct eb_opts *o;
	int np;
};

/* Register a small GPU buffer on the first NIC the run would use: the registration path
 * every rank will take, known (or refused, with the provider named) before any starts. */
static int try_gpu_reg(const struct eb_opts *o, int gpu)
{
	struct eb_gpu_reg r;
	char prov[32];
	int rc;

	rc = eb_fabric_choose(&o->fab, 1, prov, sizeof(prov));
	if (rc != EB_OK)
		return rc;
	rc = eb_gpu_reg_probe(prov, &o->fab, 1, gpu, &r);
	if (rc == EB_OK) {
		eb_dbg("GPU memory registers on %s through %s", prov,
		       eb_reg_path_name(r.dmabuf > 0 ? EB_REG_DMABUF : EB_REG_HMEM_CUDA));
		return EB_OK;
	}
	if (r.state != EB_GREG_FAILED) /* a failed call has said why */
		eb_err("--mem device: %s", r.why);
	/* Missing GPUDirect is the machine's state, not a wrong command line. */
	return rc == EB_ENOTSUP && r.state != EB_GREG_NO_P2P ? EB_EINVAL : rc;
}

/* On the first NIC a run uses: the benchmark's points against what one operation may carry
 * (with fits), and --poll block against its provider's completion queues. */
static int try_first_nic(const struct eb_opts *o, int fits)
{
	const struct eb_bench *b = fits ? o->cmd->bench : NULL;
	int block = o->fab.poll == EB_POLL_BLOCK;
	struct eb_limits lim;
	struct eb_nic *nics;
	char prov[32];
	int n, rc;

	if ((b == NULL || b->fits == NULL) && !block)
		return EB_OK;
	rc = eb_fabric_choose(&o->fab, 1, prov, sizeof(prov));
	if (rc == EB_OK)
		rc = eb_fabric_nics(prov, &o->fab, 1, &nics, &n);
	if (rc != EB_OK)
		return rc;
	rc = eb_chan_probe_limits(&nics[0], block, &lim);
	if (rc == EB_OK && b != NULL && b->fits != NULL)
		rc = b->fits(o, &lim, &nics[0], 1);
	eb_fabric_free_nics(nics, n);
	return rc;
}

/* GPUs before the fabric: on a machine without one, that is what the user needs to hear. */
static int validate(const void *arg, void *out)
{
	const struct probe_arg *a = arg;
	const struct eb_opts *o = a->o;
	int n, gpu, rc;

	if (o->mem != EB_MEM_HOST || o->want_gpu != NULL) {
		const char *why = eb_mem_gpu_absent();

		n = why == NULL ? eb_mem_gpu_count() : 0;
		gpu = o->gpu >= 0 ? o->gpu : 0;
		if (n == 0) {
			eb_err("%s%s needs a GPU, and CUDA sees none (%s)",
			       o->mem != EB_MEM_HOST ? "--mem " : "",
			       o->mem != EB_MEM_HOST ? eb_mem_kind_name(o->mem) : o->want_gpu, why);
			return 2;
		}
		if (gpu >= n) {
			eb_err("--gpu %d: CUDA sees %d GPU%s (0 to %d)", gpu, n, n == 1 ? "" : "s",
			       n - 1);
			return 2;
		}
	}
	rc = eb_fabric_validate(&o->fab, a->np, 1);
	if (rc == EB_OK && o->mem == EB_MEM_DEVICE && !o->staged)
		rc = try_gpu_reg(o, o->gpu >= 0 ? o->gpu : 0);
	if (rc == EB_OK)
		rc = try_first_nic(o, 1);
	return eb_exit_code(rc);
}

static int validate_poll(const void *arg, void *out)
{
	(void)out;
	return eb_exit_code(try_first_nic(arg, 0));
}

struct mem_choice {
	int mem;
	char why[384];
};

/* --mem auto on this host, for the GPU a rank would take: gpu_at (its local rank) modulo the
 * GPUs, or --gpu. */
static void mem_decide(const struct eb_opts *o, int single_host, int gpu_at, struct mem_choice *ch)
{
	const char *absent = eb_mem_gpu_absent();
	int n = absent == NULL ? eb_mem_gpu_count() : 0, gpu;
	struct eb_gpu_reg r;
	char prov[32];

	ch->mem = EB_MEM_HOST;
	if (n == 0) {
		snprintf(ch->why, sizeof(ch->why), "auto: no GPU (%s)",
			 absent != NULL ? absent : "CUDA sees none");
		return;
	}
	gpu = o->gpu >= 0 ? o->gpu : gpu_at % n;
	ch->mem = EB_MEM_PINNED;
	if (eb_fabric_choose(&o->fab, single_host, prov, sizeof(prov)) != EB_OK) {
		snprintf(ch->why, sizeof(ch->why),
			 "auto: GPU %d; no provider to register its memory", gpu);
		return;
	}
	if (eb_gpu_reg_probe(prov, &o->fab, single_host, gpu, &r) != EB_OK) {
		snprintf(ch->why, sizeof(ch->why),
			 "auto: GPU %d, but %s cannot register its memory "
			 "(%s)",
			 gpu, prov, r.why);
		return;
	}
	ch->mem = EB_MEM_DEVICE;
	snprintf(ch->why, sizeof(ch->why), "auto: GPU %d, and %s registers its memory through %s",
		 gpu, prov, eb_reg_path_name(r.dmabuf > 0 ? EB_REG_DMABUF : EB_REG_HMEM_CUDA));
}

/* Quiet: what stops the decision (a provider that does not exist) the probe says after. */
static int mem_child(const void *arg, void *out)
{
	FILE *quiet = freopen("/dev/null", "w", stderr);

	(void)quiet; /* where it fails, the child only stays loud */
	mem_decide(arg, 1, 0, out);
	return 0;
}

int eb_harness_mem_auto(struct eb_opts *o, const struct eb_boot *boot)
{
	struct mem_choice ch;

	if (o->mem != EB_MEM_AUTO)
		return EB_OK;
	if (boot == NULL) {
		if (eb_launch_probe(mem_child, o, &ch, sizeof(ch)) != 0)
			return EB_ESYS;
	} else {
		mem_decide(o, boot->local_size == boot->size, boot->local_rank, &ch);
	}
	ch.why[sizeof(ch.why) - 1] = '\0';
	o->mem = ch.mem;
	snprintf(o->mem_why, sizeof(o->mem_why), "%s", ch.why);
	o->fab.hmem = o->mem == EB_MEM_DEVICE;
	return EB_OK;
}

int eb_harness_probe(struct eb_opts *o)
{
	struct probe_arg a = {o, o->np ? o->np : 2};
	char none;
	int code;

	if (a.np < 2) {
		eb_err("%s pairs rank 0 with every other rank: it needs --np 2 or more (got %d)",
		       o->cmd->name, a.np);
		return -2;
	}
	if (eb_harness_mem_auto(o, NULL) != EB_OK)
		return -1;
	code = eb_launch_probe(validate, &a, &none, 1);
	return code != 0 ? -code : a.np;
}

int eb_harness_probe_poll(const struct eb_opts *o)
{
	char none;

	return o->fab.poll == EB_POLL_BLOCK ? -eb_launch_probe(validate_poll, o, &none, 1) : 0;
}

/* This rank's GPU: --gpu, else the local rank modulo the GPUs CUDA sees. */
int eb_harness_pick_gpu(struct eb_ctx *c, struct eb_boot *boot)
{
	int n, rc;

	c->user_bound = eb_topo_bound(); /* before we bind it ourselves */
	c->mem = (enum eb_mem_kind)c->o->mem;
	c->staged = c->o->staged;
	c->serial = c->o->serial;
	c->gpu = -1;
	c->sel = c->staged		   ? EB_SEL_STAGED
		 : c->mem == EB_MEM_DEVICE ? EB_SEL_DEVICE
		 : c->mem == EB_MEM_PINNED ? EB_SEL_PINNED
					   : EB_SEL_HOST;
	if (c->mem == EB_MEM_HOST && c->o->want_gpu == NULL)
		return EB_OK;
	n = eb_mem_gpu_count();
	c->gpu = c->o->gpu >= 0 ? c->o->gpu : n > 0 && boot != NULL ? boot->local_rank % n : 0;
	if (c->gpu >= n) {
		eb_err("--mem %s: GPU %d does not exist (CUDA sees %d)", eb_mem_kind_name(c->mem),
		       c->gpu, n);
		return EB_EINVAL;
	}
	rc = eb_mem_use_gpu(c->gpu);
	if (rc == EB_OK && eb_mem_gpu_pci(c->gpu, c->gpu_pci, sizeof(c->gpu_pci)) == EB_OK) {
		/* Its NUMA node's cores, unless a launcher or taskset bound us already. */
		char why[96];

		if (eb_topo_bind(eb_topo_numa_of(c->gpu_pci), why, sizeof(why)) >= 0)
			eb_dbg("GPU %d (%s): %s", c->gpu, c->gpu_pci, why);
	}
	return rc;
}
