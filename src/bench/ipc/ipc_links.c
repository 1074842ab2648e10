#include "ipc_links.h"

#ifdef EB_HAVE_CUDA
#include "efabench/pattern.h"
#include "efabench/pattern_mix.h"
#include "efabench/status.h"
#include "core/clock.h"
#include "core/log.h"
#include "mem/mem_kernels.h"

const char *ipc_dir_name(int dir)
{
	return dir == IPC_WRITE ? "write" : "read";
}

uint64_t ipc_deadline(const struct ipc_ctx *c)
{
	return eb_deadline(c->o->fab.timeout_s);
}

int ipc_barrier(void *arg)
{
	struct ipc_ctx *c = arg;

	return eb_boot_barrier(c->boot, ipc_deadline(c));
}

/* The slot of `me`'s buffers that holds what it exchanges with `other`. */
static size_t slot(const struct ipc_ctx *c, int me, int other)
{
	return c->nslots == 1 ? 0 : (size_t)((other - me - 1 + c->n) % c->n);
}

/* Links (initiator a, peer b) in phase p: one per phase, or every ordered pair at once. */
int ipc_nphases(const struct ipc_ctx *c)
{
	return c->io->pairs == IPC_EACH ? c->n * (c->n - 1) : 1;
}

static int nlinks(const struct ipc_ctx *c)
{
	return c->io->pairs == IPC_ALL ? c->n * (c->n - 1) : 1;
}

void ipc_link_of(const struct ipc_ctx *c, int p, int k, int *a, int *b)
{
	int idx = c->io->pairs == IPC_EACH ? p : c->io->pairs == IPC_ALL ? k : 0;
	int j = idx % (c->n - 1);

	*a = idx / (c->n - 1);
	*b = j >= *a ? j + 1 : j;
}

/* Link a -> b: data moves from its source holder to its destination holder. */
struct link {
	int a, b, src, dst;	/* ranks */
	unsigned char *src_mem; /* the source, in the source holder's own memory */
	unsigned char *dst_mem; /* the destination, in the destination holder's memory */
	uint64_t *flag;		/* write: the completion flag, in the destination's memory */
};

static struct link describe(const struct ipc_ctx *c, int dir, int a, int b)
{
	struct link l = {.a = a, .b = b};

	if (dir == IPC_WRITE) {
		l.src = a;
		l.dst = b;
		l.src_mem = c->loc + slot(c, a, b) * c->stride;
		l.dst_mem = c->exp + slot(c, b, a) * c->stride;
		l.flag = (uint64_t *)(c->exp + c->flags_off) + slot(c, b, a);
	} else {
		l.src = b;
		l.dst = a;
		l.src_mem = c->exp + slot(c, b, a) * c->stride;
		l.dst_mem = c->loc + slot(c, a, b) * c->stride;
	}
	return l;
}

static uint64_t seed(const struct link *l, uint64_t epoch)
{
	return eb_pattern_seed((uint32_t)l->src, (uint32_t)l->dst, epoch);
}

/* The op an initiator runs for link a -> b. */
static struct eb_ik_op op_for(const struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int b,
			      uint64_t size)
{
	struct eb_ik_op op = {.method = (enum eb_ik_method)sh->method,
			      .grid = sh->grid,
			      .block = sh->block,
			      .len = size,
			      .tma_chunk = c->io->tma_chunk,
			      .tma_stages = c->io->tma_stages,
			      .copies = c->io->copies};
	unsigned char *remote = c->peer[b] + slot(c, b, c->rank) * c->stride;
	unsigned char *mine = c->loc + slot(c, c->rank, b) * c->stride;

	if (dir == IPC_WRITE) {
		op.src = mine;
		op.dst = remote;
		op.src_dev = c->gpu.ordinal;
		op.dst_dev = c->ordinal[b];
		if (sh->method != EB_IK_CE) {
			op.flag = (uint64_t *)(c->peer[b] + c->flags_off) + slot(c, b, c->rank);
			op.flag_val = c->epoch;
		}
	} else {
		op.src = remote;
		op.dst = mine;
		op.src_dev = c->ordinal[b];
		op.dst_dev = c->gpu.ordinal;
	}
	return op;
}

/* Source holders fill, destination holders poison (and clear the flag). */
int ipc_prepare(struct ipc_ctx *c, int dir, int p, uint64_t size, int fill_sources)
{
	int k, a, b, rc = EB_OK;

	for (k = 0; k < nlinks(c) && rc == EB_OK; k++) {
		struct link l;

		ipc_link_of(c, p, k, &a, &b);
		l = describe(c, dir, a, b);
		if (fill_sources && c->rank == l.src)
			rc = eb_gk_fill(l.src_mem, size, seed(&l, c->epoch), 0);
		if (rc == EB_OK && c->rank == l.dst) {
			rc = eb_gk_fill(l.dst_mem, size, seed(&l, EB_EPOCH_POISON), 0);
			if (rc == EB_OK && l.flag != NULL)
				rc = eb_ik_put_u64(l.flag, 0);
		}
	}
	return rc;
}

/* Destination holders check every byte (and, for kernel writes, the completion flag). */
int ipc_verify(struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
	       uint64_t *wrong)
{
	int k, a, b, rc = EB_OK;

	for (k = 0; k < nlinks(c) && rc == EB_OK; k++) {
		uint64_t w = 0, first = 0, flag = 0;
		struct link l;

		ipc_link_of(c, p, k, &a, &b);
		l = describe(c, dir, a, b);
		if (c->rank != l.dst)
			continue;
		if (c->o->corrupt_at >= 0 && (uint64_t)c->o->corrupt_at < size)
			rc = eb_ik_flip(l.dst_mem, (size_t)c->o->corrupt_at);
		if (rc == EB_OK)
			rc = eb_gk_check(l.dst_mem, size, seed(&l, c->epoch), 0, &w, &first);
		if (rc == EB_OK && w > 0)
			eb_err("%s %s, GPU %d -> GPU %d: %llu wrong words of %llu, first at byte "
			       "%llu",
			       ipc_dir_name(dir), sh->name, l.src, l.dst, (unsigned long long)w,
			       (unsigned long long)((size + 7) / 8), (unsigned long long)first);
		if (rc == EB_OK && l.flag != NULL && sh->method != EB_IK_CE) {
			rc = eb_ik_get_u64(l.flag, &flag);
			if (rc == EB_OK && flag != c->epoch) {
				eb_err("%s %s, GPU %d -> GPU %d: completion flag %llu, want %llu",
				       ipc_dir_name(dir), sh->name, l.src, l.dst,
				       (unsigned long long)flag, (unsigned long long)c->epoch);
				w++;
			}
		}
		*wrong += w;
	}
	return rc;
}

/* This rank's ops in phase p (as initiator); returns how many. */
int ipc_my_ops(const struct ipc_ctx *c, int dir, const struct ipc_shape *sh, int p, uint64_t size,
	       struct eb_ik_op *ops)
{
	int k, a, b, n = 0;

	for (k = 0; k < nlinks(c); k++) {
		ipc_link_of(c, p, k, &a, &b);
		if (a == c->rank)
			ops[n++] = op_for(c, dir, sh, b, size);
	}
	return n;
}

#endif
