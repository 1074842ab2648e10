/* The channels as a run used them, stated once for every benchmark on the fabric: provider and
 * fabric (efa or efa-direct), the NICs and their link speed with its source, how peers on this
 * host are reached (NIC or shared memory), what one operation may carry, and how GPU memory
 * reaches the NIC (GPUDirect or the provider's copies). */
#include "bench.h"
#include "efabench/size.h"
#include "core/ticks.h"

#include <rdma/fabric.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The fabric of every channel: one name where they agree (the usual case). */
static void fabrics(const struct eb_engine *e, struct eb_sheet *s)
{
	const char *fab[64];
	char shown[320] = "";
	size_t used = 0;
	int k, n = e->nchan < 64 ? e->nchan : 64, same = 1;

	for (k = 0; k < n; k++) {
		fab[k] = e->chan[k].nic.fabric;
		same &= strcmp(fab[k], fab[0]) == 0;
		if (used < sizeof(shown))
			used += (size_t)snprintf(shown + used, sizeof(shown) - used, "%s%s",
						 k ? " " : "", fab[k]);
	}
	eb_fact_strs(s, "channel_fabrics", NULL, fab, n);
	eb_head_fact(&s->head, same ? "fabric" : "fabrics", "%s", same ? fab[0] : shown);
}

static const char *local_text(const struct eb_engine *e, int asked)
{
	switch (e->local) {
	case EB_LOCAL_NIC:
		return strcmp(e->chan[0].nic.fabric, "efa-direct") == 0
			   ? "through the NIC (efa-direct has no shared-memory path)"
			   : "through the NIC (its shared-memory path off: --nic-only)";
	case EB_LOCAL_SHM:
		if (strncmp(e->prov, "shm", 3) == 0)
			return "shared memory (the shm provider)";
		return asked ? "through efa's shared-memory path, not the NIC: --nic-only found "
			       "no way to turn it off in this libfabric"
			     : "through efa's shared-memory path (shm), not the NIC; --nic-only "
			       "sends them through the NIC";
	case EB_LOCAL_STACK:
		return e->single_host ? "the kernel's network stack (loopback)"
				      : "the kernel's network stack";
	case EB_LOCAL_PROVIDER:
		return asked ? "the provider's choice (it may use shared memory: --nic-only found "
			       "no way to turn it off)"
			     : "the provider's choice (it may use shared memory; --nic-only asks "
			       "for the NIC)";
	default:
		return NULL;
	}
}

/* The provider sets no limit (SIZE_MAX, or near it). */
static int unlimited(size_t v)
{
	return v >= (SIZE_MAX >> 1);
}

/* A limit as the header shows it: "any" where there is none. */
static const char *limit(size_t v, char *buf, size_t len)
{
	return unlimited(v) ? "any" : eb_size_format(v, buf, len);
}

static void limit_fact(struct eb_sheet *s, const char *key, size_t v)
{
	if (unlimited(v))
		eb_fact_null(s, key, NULL, NULL);
	else
		eb_fact_int(s, key, NULL, (long long)v);
}

/* What one operation may carry, as every rank agreed (the smallest of each). */
static void limits(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct eb_limits *l = &c->e->lim;
	char msg[24], rma[24], im[24], ir[24];

	eb_fact_obj(s, "limits"); /* null: the provider sets none */
	limit_fact(s, "max_msg", l->max_msg);
	limit_fact(s, "max_rma", l->max_rma);
	limit_fact(s, "inject_msg", l->inject_msg);
	limit_fact(s, "inject_rma", l->inject_rma);
	eb_fact_bool(s, "ordered_sends", NULL, l->sas);
	eb_fact_int(s, "cq_size", NULL, (long long)c->e->chan[0].cq_size);
	eb_fact_end(s);
	eb_head_fact(&s->head, "one operation",
		     "send <= %s (%s), write <= %s; inject: send <= %s, write <= %s; CQ %zu "
		     "entries",
		     limit(l->max_msg, msg, sizeof(msg)), l->sas ? "in order" : "unordered",
		     limit(l->max_rma, rma, sizeof(rma)), limit(l->inject_msg, im, sizeof(im)),
		     limit(l->inject_rma, ir, sizeof(ir)), c->e->chan[0].cq_size);
}

static const char *p2p_text(enum eb_p2p p)
{
	static const char *const text[] = {
	    NULL,
	    "GPUDirect: the provider agreed to peer-to-peer access only (FI_HMEM_P2P_REQUIRED)",
	    "peer to peer: the provider agreed to make no CUDA calls (FI_OPT_CUDA_API_PERMITTED)",
	    "the provider's own way (it has no peer-to-peer option to ask)",
	    "the provider's CUDA calls (IPC or copies), not GPUDirect"};

	return text[p];
}

void eb_fabric_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct eb_engine *e = c->e;
	const struct eb_nic *nic = &e->chan[0].nic;
	const char *nics[64], *local = local_text(e, c->o->fab.nic_only);
	int k, n = e->nchan < 64 ? e->nchan : 64;

	eb_fact_str(s, "provider", "provider", e->prov);
	eb_fact_to(s, EB_TO_CSV);
	fabrics(e, s);
	for (k = 0; k < n; k++)
		nics[k] = e->chan[k].nic.domain;
	eb_fact_break(s);
	eb_fact_strs(s, "channel_nics", "channels on NICs", nics, n);
	if (nic->link_gbps > 0) {
		eb_head_fact(&s->head, "link", "%.1f Gbps per NIC (from %s)", nic->link_gbps,
			     eb_link_from_name(nic->link_from));
		eb_fact_num(s, "link_gbps", NULL, nic->link_gbps, NULL);
	} else {
		eb_fact_null(s, "link_gbps", "link", "unknown (BusBW shows -; set --link-gbps)");
	}
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "link_from", NULL, eb_link_from_name(nic->link_from));
	if (local != NULL) {
		eb_fact_break(s);
		eb_fact_str(s, "same_host", NULL, eb_local_path_name(e->local));
		eb_head_fact(&s->head, "same-host peers", "%s", local);
	}
	eb_fact_break(s);
	limits(c, s);
	if (c->mem == EB_MEM_DEVICE && !c->staged) {
		eb_fact_break(s);
		eb_fact_str(s, "gpu_path", NULL, eb_p2p_name(e->chan[0].p2p));
		eb_head_fact(&s->head, "GPU memory to the NIC", "%s", p2p_text(e->chan[0].p2p));
	}
}

double eb_fabric_link_for_busbw(const struct eb_engine *e)
{
	/* Every peer on this host and reached through shared memory: no NIC was measured. */
	if (e->single_host && e->local == EB_LOCAL_SHM && strncmp(e->prov, "shm", 3) != 0)
		return 0.0;
	return e->chan[0].nic.link_gbps;
}

void eb_chunk_fact(const struct eb_ctx *c, struct eb_sheet *s)
{
	char chunk[24], asked[24];

	eb_fact_size(s, "chunk", NULL, c->chunk);
	eb_fact_to(s, EB_TO_CSV);
	eb_size_format(c->chunk, chunk, sizeof(chunk));
	if (c->chunk_asked == 0) {
		eb_head_fact(&s->head, "chunk", "%s", chunk);
		return;
	}
	eb_fact_size(s, "chunk_asked", NULL, c->chunk_asked);
	eb_head_fact(&s->head, "chunk", "%s (the provider's largest write; %s asked)", chunk,
		     eb_size_format(c->chunk_asked, asked, sizeof(asked)));
}

static void run_settings(const struct eb_ctx *c, struct eb_sheet *s)
{
	const struct eb_engine *e = c->e;
	const char *nics[64];
	char libfabric[16];
	int k, n = e->nchan < 64 ? e->nchan : 64;

	for (k = 0; k < n; k++)
		nics[k] = e->chan[k].nic.domain;
	snprintf(libfabric, sizeof(libfabric), "%u.%u", FI_MAJOR(fi_version()),
		 FI_MINOR(fi_version()));
	eb_fact_obj(s, "settings");
	eb_fact_str(s, "bench", NULL, c->o->cmd->name);
	eb_fact_int(s, "ranks", NULL, c->nranks);
	eb_fact_str(s, "launcher", NULL, e->boot->ops->name);
	eb_fact_str(s, "provider", NULL, e->prov);
	eb_fact_strs(s, "channel_nics", NULL, nics, n);
	eb_fact_int(s, "warmup", NULL, c->o->warmup);
	eb_fact_int(s, "iters", NULL, c->o->iters);
	eb_fact_size(s, "chunk", NULL, c->chunk);
	eb_fact_int(s, "window", NULL, c->window);
	eb_fact_str(s, "poll", NULL, eb_engine_poll_name(e));
	eb_fact_int(s, "host_ranks", NULL, e->host_ranks);
	eb_fact_int(s, "host_cores", NULL, e->cores);
	eb_fact_str(s, "timer", NULL, eb_ticks_tsc ? "tsc" : "clock_gettime");
	eb_fact_str(s, "libfabric", NULL, libfabric);
	eb_fact_str(s, "mem", NULL, eb_mem_kind_name(c->mem));
	eb_fact_num(s, "timeout_s", NULL, c->o->fab.timeout_s, NULL);
	eb_fact_end(s);
}

/* Where the payloads are, how the NIC reaches them, and the chunks it moves them in. */
static void mem_facts(const struct eb_ctx *c, struct eb_sheet *s)
{
	const char *why = c->o->mem_why;

	eb_fact_str(s, "mem", why[0] ? NULL : "memory", eb_mem_kind_name(c->mem));
	if (why[0]) { /* --mem auto: what it found */
		eb_head_fact(&s->head, "memory", "%s (%s)", eb_mem_kind_name(c->mem), why);
		eb_fact_str(s, "mem_why", NULL, why);
	}
	eb_fact_str(s, "registration", "registration",
		    c->staged ? "staged" : eb_reg_path_name(c->path));
	if (c->staged)
		eb_head_fact(&s->head, "staged",
			     "through pinned bounce buffers, copied inside each phase");
	eb_chunk_fact(c, s);
}

void eb_fabric_head(const struct eb_ctx *c, struct eb_sheet *s)
{
	eb_head_fact(&s->head, NULL, "efabench %s: %s", c->o->cmd->name, c->o->cmd->summary);
	run_settings(c, s);
	eb_fact_break(s);
	eb_fabric_facts(c, s);
	eb_fact_break(s);
	mem_facts(c, s);
}
