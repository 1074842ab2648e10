#include "moe_setup.h"
#include "moe_ce.h"
#include "moe_mpi.h"
#include "moe_need.h"
#include "moe_peers.h"
#include "moe_op.h"
#include "core/arrays.h"
#include "efabench/status.h"
#include "efabench/xfer.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "moe_kernels.h"
#endif

#include <rdma/fabric.h>
#include <stdlib.h>
#include <string.h>

/* Proxy k's receiving partner: an engine on the same NICs that proxy k's peers write to, the
 * destination registered on it, and a proxy that counts arrivals and applies signals. */
static int open_rx(struct mstate *st, struct mside *sd, int k, const struct eb_fabric_opts *f,
		   struct eb_proxy_opts o)
{
	int r = st->nq + k, rc;
	struct eb_proxy_bufs b = {.dst_len = st->plan.dst_len};

	rc = eb_engine_open(&sd->eng[r], sd->eng[k].boot, f);
	if (rc != EB_OK)
		return rc;
	rc = eb_engine_aim(&sd->eng[k], &sd->eng[r]);
	if (rc == EB_OK)
		rc = eb_region_reg(&sd->dst_reg[r], &sd->eng[r], eb_payload_nic(&st->dst),
				   EB_USE_TARGET, 1);
	o.gpu = 0; /* no producers: the signal words are read by the rank alone */
	b.dst_keys = sd->dst_reg[r].rkeys;
	return rc != EB_OK ? rc : eb_proxy_open(&sd->px[r], &sd->eng[r], &b, &o);
}

/* The NICs proxy thread k of nq drives: k, k + nq, ... of the rank's (one, k mod NICs, where
 * the threads outnumber them), as a comma list in buf; how many. Every NIC gets a thread: 3
 * threads each on one of 4 rails left a quarter of the test bed's rails idle. */
static int thread_nics(const struct eb_engine *e0, int k, int nq, char *buf, size_t len)
{
	size_t at = 0;
	int j, n = 0;

	buf[0] = '\0';
	for (j = k % e0->nnics; j < e0->nnics; j += nq) {
		int w = snprintf(buf + at, len - at, "%s%s", n > 0 ? "," : "", e0->nics[j].domain);

		if (w < 0 || (size_t)w >= len - at) { /* the list holds whole names only */
			buf[at] = '\0';
			break;
		}
		at += (size_t)w;
		n++;
	}
	return n;
}

/* One initiator's proxy threads: an engine each (on every NIC the harness's uses where there
 * is one thread, else on the thread's NICs), the regions registered on it, and the proxy;
 * their receiving partners where asked for. Collective, in the same order on every rank. */
static int open_side(struct eb_ctx *c, struct mstate *st, struct mside *sd, int gpu)
{
	struct eb_engine *e0 = c->e;
	int rx = st->rx, k, rc = EB_OK;

	for (k = 0; k < st->nq && rc == EB_OK; k++) {
		struct eb_fabric_opts f = c->o->fab;
		char nics[4096];
		int mine = st->nq > 1 && e0->nnics > 1
			       ? thread_nics(e0, k, st->nq, nics, sizeof(nics))
			       : 0;
		/* A thread with several NICs (or the only thread) splits each put across them. */
		struct eb_proxy_opts o = {.layout = st->nq == 1 || mine > 1 ? EB_LAYOUT_SPLIT
									    : EB_LAYOUT_SINGLE,
					  .chunk = c->chunk,
					  .window = c->window,
					  .active = EB_PROXY_ACTIVE,
					  .log2n = EB_PROXY_LOG2N,
					  .batch = EB_PROXY_BATCH,
					  .nsignals = 4 * (uint32_t)c->nranks,
					  .gpu = gpu,
					  .timeout_s = c->o->fab.timeout_s,
					  .cuda_device = c->gpu};
		struct eb_proxy_bufs b = {.src = eb_payload_at(&st->src, 0),
					  .src_len = st->plan.src_len,
					  .dst_len = st->plan.dst_len};

		f.near_pci = c->gpu_pci[0] ? c->gpu_pci : NULL;
		/* Who spins beside this proxy thread decides how its waits poll: the rank, every
		 * proxy and receiving thread of this initiator, and CPU producers. */
		f.threads = 1 + st->npx +
			    (gpu		     ? 0
			     : st->mo->producers > 0 ? st->mo->producers
						     : st->nq);
		if (mine > 0) {
			f.nics = nics;
			f.channels = mine;
		}
		rc = eb_engine_open(&sd->eng[k], e0->boot, &f);
		if (rc != EB_OK)
			break;
		sd->eng[k].misplace_chunk = e0->misplace_chunk;
		rc = eb_region_reg(&sd->src_reg[k], &sd->eng[k], eb_payload_nic(&st->src),
				   EB_USE_SOURCE, 0);
		if (rc == EB_OK && rx)
			rc = open_rx(st, sd, k, &f, o);
		else if (rc == EB_OK)
			rc = eb_region_reg(&sd->dst_reg[k], &sd->eng[k], eb_payload_nic(&st->dst),
					   EB_USE_TARGET, 1);
		b.src_mrs = sd->src_reg[k].mr;
		b.dst_keys = sd->dst_reg[rx ? st->nq + k : k].rkeys;
		if (rc == EB_OK)
			rc = eb_proxy_open(&sd->px[k], &sd->eng[k], &b, &o);
	}
	return rc;
}

static void close_side(struct mside *sd, int failed)
{
	int k;

	/* Endpoints first: the proxies' posted receives and transfers must outlive them. Parts
	 * never opened are zero, and closing them does nothing. */
	for (k = 0; k < 2 * EB_MOE_MAX_Q; k++) {
		if (failed)
			eb_engine_abandon(&sd->eng[k]);
		eb_engine_quiesce(&sd->eng[k]);
	}
	for (k = 0; k < 2 * EB_MOE_MAX_Q; k++) {
		eb_proxy_close(sd->px[k]);
		sd->px[k] = NULL;
		eb_region_close(&sd->src_reg[k]);
		eb_region_close(&sd->dst_reg[k]);
		eb_engine_close(&sd->eng[k]);
	}
}

/* The producers' counters (moe_work.h): per proxy thread, one per destination, one for the
 * leg's end and one per piece any leg can have. */
static int64_t pieces_of(const struct eb_ctx *c, const struct mstate *st)
{
	int64_t most = 0;
	int op, leg;

	for (op = 0; op < 2; op++)
		for (leg = 0; leg < st->plan.nlegs; leg++) {
			int64_t n = st->plan.leg[op][leg].items / st->pieces[op];

			most = n > most ? n : most;
		}
	return most + c->nranks + 1;
}

/* Once the plan is laid out: what a packed write carries at most, in bytes, tokens and rows;
 * whether the copy engines are timed; which ops time their leg between hosts. */
static void pieces(const struct eb_ctx *c, struct mstate *st)
{
	int w;

	st->piece = st->mo->piece ? st->mo->piece : c->chunk;
	for (w = 0; w < 2; w++) {
		uint64_t n = st->piece / (w ? st->plan.out_bytes : st->plan.tok_bytes);

		st->pieces[w] = n > 0 ? (int64_t)n : 1;
	}
	st->ce_wanted = eb_moe_ce_wanted(c, st);
	st->crossed[OP_DISPATCH] = st->plan.cross_leg[0] >= 0;
	st->crossed[OP_COMBINE] = st->plan.cross_leg[1] >= 0;
	st->crossed[OP_PAIR] = st->crossed[OP_DISPATCH] && st->crossed[OP_COMBINE];
}

static size_t tickets_of(const struct eb_ctx *c, const struct mstate *st)
{
	return (size_t)EB_MOE_MAX_Q * ((size_t)c->nranks + 1 + (size_t)pieces_of(c, st));
}

static int alloc_state(struct eb_ctx *c, struct mstate *st)
{
	size_t n = (size_t)c->nranks;
	/* host images of both regions, for filling and checking GPU memory */
	uint64_t big = st->plan.src_len + st->plan.dst_len;
	size_t hidden = (size_t)st->plan.out_bytes / 2;
	int width = st->rt.width > 2 ? st->rt.width : 2; /* scratch rows: expected() takes 2 */

	st->block =
	    eb_arrays(&st->expect, 4 * n, sizeof(*st->expect), &st->vals, hidden, sizeof(*st->vals),
		      &st->sum, (size_t)(3 + width) * hidden, sizeof(*st->sum), &st->tickets,
		      tickets_of(c, st), sizeof(*st->tickets), &st->host,
		      c->mem == EB_MEM_DEVICE ? (size_t)big : 0, (size_t)1, NULL);
	if (eb_a2av_init(&st->a2a, c->e, c->nranks, c->chunk, c->window) != EB_OK ||
	    st->block == NULL) {
		eb_err("out of memory for moe's state");
		return EB_ENOMEM;
	}
	return EB_OK;
}

/* Spinning threads per rank with n proxy threads (and rx receiving partners): the rank, its
 * proxy threads and their partners, CPU producers. */
static int spinners(const struct mopts *mo, unsigned inits, int n, int rx)
{
	int cpu = (inits & (1u << INIT_CPU)) ? (mo->producers > 0 ? mo->producers : n) : 0;

	return 1 + n * (1 + rx) + cpu;
}

/* Whether this host's ranks have a core for each of that many spinning threads (unknown
 * cores: yes). */
static int fits(const struct eb_ctx *c, const struct mopts *mo, unsigned inits, int n, int rx)
{
	return c->e->cores <= 0 || c->e->host_ranks * spinners(mo, inits, n, rx) <= c->e->cores;
}

/* One proxy thread per NIC used, fewer while the ranks of this host would have more spinning
 * threads than cores: on 16 cores, 4 ranks with one thread each moved 1.1-1.4x the bytes per
 * second of four each (test bed, 4 x 4 rails, tcp), since threads that take turns on a core
 * leave the rails idle. A count that divides the NICs, so that every thread drives as many
 * (the threads take equal shares of the items: 3 threads on 4 rails left one thread with two
 * rails and the others' rails the limit). Receiving threads count here only when asked for:
 * by default they come after the proxy threads, where cores are left. */
static int default_threads(const struct eb_ctx *c, const struct mopts *mo, unsigned inits)
{
	int most = c->e->nnics < c->e->nchan ? c->e->nnics : c->e->nchan, n = most;

	while (n > 1 && (most % n != 0 || !fits(c, mo, inits, n, mo->rx_threads)))
		n--;
	return n;
}

/* Receiving threads by default where the cores allow: on one H100 (2 ranks, shm, pinned
 * memory) they took decode's pair from 2,333 to 1,467 us (GPU producers) and prefill's from
 * 22.8 to 15.7 ms; with GPU memory on 2 and 4 GPUs they took the proxy threads' turns at
 * copying peers' writes away; on the test bed (4 x 4 rails, tcp) the rails stayed the limit
 * with or without. */
static int default_rx(const struct eb_ctx *c, const struct mopts *mo, unsigned inits, int nq)
{
	return mo->rx_threads || (!mo->no_rx_threads && fits(c, mo, inits, nq, 1));
}

/* GPU producer blocks: decode over host memory only posts, and few blocks do (8, 32 and 128
 * took 388, 396 and 414 us a dispatch over pinned memory on one H100); prefill packs, a copy
 * that needs blocks on every multiprocessor to reach the GPU's memory rate (4,096 tokens in GPU
 * memory, one rank per H100: 128 blocks 310 us a dispatch against 380 with 32), and so do
 * decode's stores into same-host peers' GPU memory (two H200s, 128 tokens fp8: 128 blocks
 * 50.5 us a dispatch against 58.8 with 32, combine 62.2 against 73.4). */
static int gpu_blocks(const struct eb_ctx *c, const struct mstate *st)
{
	const struct mopts *mo = st->mo;
	int copies = mo->preset == MOE_PREFILL || (c->mem == EB_MEM_DEVICE && st->plan.intra);
	char name[256];
	int sms = 0;

	if (mo->producers > 0)
		return mo->producers;
	if (!copies || !(st->inits & (1u << INIT_GPU)) ||
	    eb_mem_gpu_name(c->gpu, name, sizeof(name), &sms) != EB_OK || sms < 32)
		return 32;
	return sms;
}

/* Bad input that needs the rank count: refused before anything is allocated. */
static int check_ranks(const struct mopts *mo, int nranks, int say)
{
	struct eb_moe_shape sh = {nranks, mo->tokens, mo->topk, mo->experts, (uint64_t)mo->seed};
	char why[512];

	if (mo->experts % nranks != 0) {
		if (say)
			eb_err("--experts %d is not divisible by the %d ranks", mo->experts,
			       nranks);
		return EB_EINVAL;
	}
	if (eb_route_check(&mo->spec, &sh, why, sizeof(why)) != EB_OK) {
		if (say)
			eb_err("--route %s", why);
		return EB_EINVAL;
	}
	return EB_OK;
}

/* The initiators that can run here: GPU producers copy, so they need GPU or pinned memory. */
static unsigned initiators(const struct eb_ctx *c, const struct mopts *mo)
{
	unsigned inits = mo->initiators;

	if (c->gpu < 0 || c->mem == EB_MEM_HOST || !eb_mem_have_cuda())
		inits &= ~(1u << INIT_GPU);
	if (!eb_boot_has_alltoallv(c->boot) || c->mem == EB_MEM_DEVICE)
		inits &= ~(1u << INIT_MPI);
	return inits;
}

/* Testing aid (--corrupt-key): rank 0 writes with wrong keys, on every engine it writes
 * through (the proxy threads' and the a2av's), so that the fabric refuses them. */
static void spoil_keys(struct mstate *st)
{
	struct eb_region *regs[1 + 2 * (2 * EB_MOE_MAX_Q)];
	int n = 0, i, k;
	size_t j;

	regs[n++] = &st->dst.reg;
	for (i = INIT_GPU; i <= INIT_CPU; i++)
		for (k = 0; k < 2 * EB_MOE_MAX_Q; k++)
			regs[n++] = &st->side[i].dst_reg[k];
	for (i = 0; i < n; i++)
		for (j = 0; regs[i]->rkeys != NULL &&
			    j < (size_t)regs[i]->e->nchan * (size_t)st->plan.ranks;
		     j++)
			regs[i]->rkeys[j].key ^= 0x5a5a5a5a5a5aull;
}

/* Whether same-host peers are reached by stores: --intra, else unless staged (the fabric
 * then moves bounce buffers). Some host must hold two ranks; every rank decides alike. */
static int by_stores(const struct mstate *st, const struct eb_ctx *c)
{
	return st->mo->intra != MOE_INTRA_FABRIC && !c->staged && st->hosts.most > 1;
}

/* The routing, the hosts and this rank's plan. */
static int lay_out(struct eb_ctx *c, struct mstate *st)
{
	const struct mopts *mo = st->mo;
	struct eb_moe_shape sh = {c->nranks, mo->tokens, mo->topk, mo->experts, (uint64_t)mo->seed};
	int rc = eb_moe_hosts_build(&st->hosts, c->boot, c->rank, c->nranks, mo->hosts,
				    eb_engine_deadline(c->e));

	if (rc == EB_OK && mo->mode == EB_MOE_NORMAL && st->hosts.per == 0) {
		if (c->rank == 0)
			eb_err("--mode normal forwards a token to the rank of the same local index "
			       "on each host: these %d hosts hold different numbers of ranks",
			       st->hosts.n);
		rc = EB_EINVAL;
	}
	rc = rc != EB_OK ? rc : eb_route_build(&st->rt, &mo->spec, &sh);
	return rc != EB_OK
		   ? rc
		   : eb_moe_plan_build(&st->plan, &st->rt, &st->hosts, c->rank, mo->mode,
				       by_stores(st, c), eb_moe_token_bytes(mo),
				       2ull * (uint64_t)mo->hidden, mo->preset == MOE_PREFILL);
}

/* The regions (the destination shared with same-host peers when they store into it), the
 * baseline's registrations, the peers' mappings and each initiator's proxy threads. */
static int regions(struct eb_ctx *c, struct mstate *st)
{
	int i, rc = by_stores(st, c) ? eb_payload_alloc_shared(c, &st->dst, st->plan.dst_len,
							       "the moe destination region")
				     : eb_payload_alloc(c, &st->dst, st->plan.dst_len,
							"the moe destination region");

	rc = rc != EB_OK ? rc
			 : eb_payload_alloc(c, &st->src, st->plan.src_len, "the moe source region");
	rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->src, EB_USE_SOURCE, 0);
	rc = rc != EB_OK ? rc : eb_payload_reg(c, &st->dst, EB_USE_TARGET, 1);
	rc = rc != EB_OK ? rc : eb_moe_peers_open(c, st, by_stores(st, c));
	if (rc == EB_OK && (st->inits & (1u << INIT_MPI)))
		rc = eb_moe_mpi_plan(c, st);
	for (i = INIT_GPU; i <= INIT_CPU && rc == EB_OK; i++)
		if (st->inits & (1u << i))
			rc = open_side(c, st, &st->side[i], i == INIT_GPU);
	if (rc == EB_OK && c->o->corrupt_key && c->rank == 0)
		spoil_keys(st);
	return rc;
}

#ifdef EB_HAVE_CUDA
/* Each leg's item arrays in GPU memory: for GPU producers, and for CPU producers' copies of
 * GPU memory. */
static int to_gpu(struct eb_ctx *c, struct mstate *st)
{
	int op, leg, rc = eb_mk_tickets(&st->tickets_dev, tickets_of(c, st));

	for (op = 0; op < 2 && rc == EB_OK; op++)
		for (leg = 0; leg < st->plan.nlegs && rc == EB_OK; leg++) {
			struct eb_moe_items h = eb_moe_host_items(c, st, op, leg);

			rc = eb_mk_upload(&h, c->nranks, st->plan.leg[op][leg].items,
					  st->plan.leg[op][leg].refs, &st->dev[op][leg]);
		}
	st->have_dev = rc == EB_OK;
	return rc;
}
#endif

int eb_moe_setup(struct eb_ctx *c, const struct mopts *mo)
{
	unsigned inits = initiators(c, mo);
	struct mstate *st;
	int rc = check_ranks(mo, c->nranks, c->rank == 0);

	if (rc != EB_OK)
		return rc;
	st = c->priv;
	st->mo = mo;
	st->inits = inits;
	st->nq = mo->proxy_threads > 0 ? mo->proxy_threads : default_threads(c, mo, inits);
	if (st->nq > EB_MOE_MAX_Q)
		st->nq = EB_MOE_MAX_Q;
	st->rx = default_rx(c, mo, inits, st->nq);
	st->npx = st->nq * (1 + st->rx);
	st->cpu_producers = mo->producers > 0 ? mo->producers : st->nq;
	rc = lay_out(c, st);
	if (rc == EB_OK)
		pieces(c, st);
	st->blocks = gpu_blocks(c, st);
	rc = rc != EB_OK ? rc : alloc_state(c, st);
	rc = rc != EB_OK ? rc : regions(c, st);
	st->w = (struct eb_moe_work){.nq = st->nq,
				     .rank = c->rank,
				     .ranks = c->nranks,
				     .coalesce = mo->preset == MOE_PREFILL && mo->mode != EB_MOE_LL,
				     .npieces = pieces_of(c, st),
				     .src = eb_payload_at(&st->src, 0),
				     .dst = eb_payload_at(&st->dst, 0)};
#ifdef EB_HAVE_CUDA
	if (c->mem == EB_MEM_DEVICE && !c->staged) { /* staged: producers copy host memory */
		st->w.gather = eb_mk_gather;
		st->w.sync = eb_mk_sync;
	}
	if (rc == EB_OK && ((inits & (1u << INIT_GPU)) || st->w.gather != NULL))
		rc = to_gpu(c, st);
#endif
	return rc;
}

void eb_moe_teardown(struct eb_ctx *c, int failed)
{
	struct mstate *st = c->priv;

	int op, leg;

	close_side(&st->side[INIT_GPU], failed);
	close_side(&st->side[INIT_CPU], failed);
#ifdef EB_HAVE_CUDA
	for (op = 0; op < 2 && st->have_dev; op++)
		for (leg = 0; leg < st->plan.nlegs; leg++)
			eb_mk_free(&st->dev[op][leg]);
	eb_mk_free_tickets(st->tickets_dev);
#else
	(void)op;
	(void)leg;
#endif
	eb_moe_peers_close(st);
	eb_a2av_fini(&st->a2a);
	free(st->mpi_v);
	eb_payload_free(&st->src);
	eb_payload_free(&st->dst);
	eb_moe_plan_free(&st->plan);
	eb_moe_hosts_free(&st->hosts);
	eb_route_free(&st->rt);
	free(st->block);
	free(st->late);
}
