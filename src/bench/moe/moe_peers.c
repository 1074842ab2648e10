/* Same-host peers of efabench moe, reached by stores: every rank's destination region lives
 * in memory its host's processes can map (a shared segment, or CUDA IPC for GPU memory), and
 * so do its flag words, which a peer's producers set when they are done with a leg. */
#include "moe_peers.h"
#include "core/arrays.h"
#include "efabench/status.h"
#include "core/log.h"
#ifdef EB_HAVE_CUDA
#include "moe_kernels.h"
#endif

#include <stdlib.h>
#include <string.h>

/* A rank's flag words: [op * 2 + leg][source][proxy thread]. */
static size_t flag_bytes(int ranks)
{
	return sizeof(uint64_t) * 4 * (size_t)ranks * EB_MOE_MAX_Q;
}

static int map_peer(struct mpeers *pe, int d, const struct eb_mem_handle *h)
{
	int rc = eb_mem_import(&pe->mem[2 * d], &h[0], "a same-host peer's destination region");

	if (rc == EB_OK)
		rc = eb_mem_import(&pe->mem[2 * d + 1], &h[1], "a same-host peer's flag words");
	if (rc != EB_OK)
		return rc;
	pe->cpu[d] = pe->mem[2 * d].ptr;
	pe->gpu[d] = pe->mem[2 * d].dev_ptr;
	pe->fcpu[d] = pe->mem[2 * d + 1].ptr;
	pe->fgpu[d] = pe->mem[2 * d + 1].dev_ptr;
	pe->n++;
	return EB_OK;
}

/* The GPU's view of the peers for GPU producers and CPU producers' kernels. */
static int upload(struct mpeers *pe, int ranks)
{
#ifdef EB_HAVE_CUDA
	int rc = eb_mk_put((void **)&pe->gpu_dev, pe->gpu, sizeof(char *) * (size_t)ranks);

	return rc != EB_OK ? rc
			   : eb_mk_put((void **)&pe->fgpu_dev, pe->fgpu,
				       sizeof(uint64_t *) * (size_t)ranks);
#else
	(void)pe;
	(void)ranks;
	return EB_OK;
#endif
}

int eb_moe_peers_open(struct eb_ctx *c, struct mstate *st, int map)
{
	struct mpeers *pe = &st->peers;
	struct eb_mem_handle mine[2], *all = NULL;
	size_t n = (size_t)c->nranks;
	int d, rc;

	pe->block = eb_arrays(&pe->mem, 2 * n, sizeof(*pe->mem), &pe->cpu, n, sizeof(*pe->cpu),
			      &pe->gpu, n, sizeof(*pe->gpu), &pe->fcpu, n, sizeof(*pe->fcpu),
			      &pe->fgpu, n, sizeof(*pe->fgpu), &all, 2 * n, sizeof(*all), NULL);
	if (pe->block == NULL) {
		eb_err("out of memory for moe's same-host peers");
		return EB_ENOMEM;
	}
	if (!map) /* every peer through the fabric: NULL everywhere */
		return st->inits & (1u << INIT_GPU) ? upload(pe, c->nranks) : EB_OK;
	rc = eb_mem_alloc_shared(&pe->flags, c->mem == EB_MEM_HOST ? EB_MEM_HOST : EB_MEM_PINNED,
				 flag_bytes(c->nranks), "moe's flag words");
	if (rc != EB_OK)
		return rc;
	eb_mem_export(&st->dst.pay, &mine[0]);
	eb_mem_export(&pe->flags, &mine[1]);
	rc = eb_boot_allgather(c->boot, mine, all, sizeof(mine), eb_engine_deadline(c->e));
	for (d = 0; d < c->nranks && rc == EB_OK; d++)
		if (st->plan.path[d] == EB_PATH_INTRA)
			rc = map_peer(pe, d, &all[2 * d]);
	/* Every peer has mapped what it needs (or failed): the names can go. */
	if (rc == EB_OK)
		rc = eb_boot_barrier(c->boot, eb_engine_deadline(c->e));
	eb_mem_unshare(&st->dst.pay);
	eb_mem_unshare(&pe->flags);
	if (rc == EB_OK && (st->inits & (1u << INIT_GPU)))
		rc = upload(pe, c->nranks);
	return rc;
}

void eb_moe_peers_close(struct mstate *st)
{
	struct mpeers *pe = &st->peers;
	int d;

#ifdef EB_HAVE_CUDA
	eb_mk_release(pe->gpu_dev);
	eb_mk_release(pe->fgpu_dev);
#endif
	for (d = 0; pe->mem != NULL && d < 2 * st->plan.ranks; d++)
		eb_mem_free(&pe->mem[d]);
	eb_mem_free(&pe->flags);
	free(pe->block);
	memset(pe, 0, sizeof(*pe));
}
