/* The shortest program that shows efabench's CPU write API: two ranks; rank 0 writes one
 * buffer to rank 1 split across every channel (one per NIC), each slice cut into chunks with
 * a window in flight; every chunk carries immediate data, and rank 1 waits until it has
 * counted every chunk of every slice, then checks every byte.
 *
 * Ranks come from the embedded launcher (two processes forked here), or from mpirun/srun or
 * the TCP rendezvous when the environment names one, as with the efabench CLI. The provider
 * comes from FI_PROVIDER (else efa, else shm on one host, else tcp).
 *
 * Build against an installed efabench:
 *   cc split_write.c $(pkg-config --cflags --libs efabench) -o split_write
 * Run: ./split_write [bytes [channels]]   (channels 0: one per NIC found)
 * Exit 0 when every byte arrived. */
#include "efabench/boot.h"
#include "efabench/engine.h"
#include "efabench/layout.h"
#include "efabench/mem.h"
#include "efabench/mr.h"
#include "efabench/pattern.h"
#include "efabench/xfer.h"

#include <stdio.h>
#include <stdlib.h>

#define CHUNK  (256u << 10) /* bytes per write */
#define WINDOW 4	    /* writes in flight per channel */

struct args {
	size_t bytes;
	int channels;
};

/* Rank 0: arm one transfer per channel the split layout uses and drive them all. */
static int send_split(struct eb_engine *e, const struct eb_mem *src, const struct eb_mr *mrs,
		      const struct eb_rkey *peer_keys, size_t bytes)
{
	struct eb_xfer *xs = calloc((size_t)e->nchan, sizeof(*xs));
	struct eb_xfer **all = calloc((size_t)e->nchan, sizeof(*all));
	int i, armed = 0, rc = xs != NULL && all != NULL ? EB_OK : EB_ENOMEM;

	for (i = 0; i < e->nchan && rc == EB_OK; i++)
		rc = eb_xfer_init(&xs[i], e, WINDOW);
	if (rc == EB_OK)
		armed = eb_layout_write(EB_LAYOUT_SPLIT, xs, e->nchan, 0, 1, src->ptr, bytes, CHUNK,
					mrs, peer_keys, 0, EB_IMM(0, 1));
	for (i = 0; i < armed; i++)
		all[i] = &xs[i];
	if (rc == EB_OK)
		rc = eb_xfer_wait(all, armed, eb_engine_deadline(e));
	for (i = 0; xs != NULL && i < e->nchan; i++)
		eb_xfer_fini(&xs[i]);
	free(xs);
	free(all);
	return rc;
}

/* Rank 1: wait until every chunk of every slice has landed (counted per channel), then check
 * every byte against the pattern rank 0 wrote. */
static int wait_split(struct eb_engine *e, const struct eb_mem *dst, const struct eb_pattern *p,
		      size_t bytes)
{
	struct eb_imm_wait *w = calloc((size_t)e->nchan, sizeof(*w));
	uint64_t wrong, first = 0, chunks = 0;
	int ch, n = 0, rc;

	if (w == NULL)
		return EB_ENOMEM;
	for (ch = 0; ch < e->nchan; ch++) {
		uint64_t k = eb_layout_chunks(EB_LAYOUT_SPLIT, e->nchan, 0, 1, bytes, CHUNK, ch);

		if (k > 0)
			w[n++] = (struct eb_imm_wait){.peer = 0, .chan = ch, .count = k};
		chunks += k;
	}
	rc = eb_xfer_wait_imm(e, NULL, 0, w, n, eb_engine_deadline(e));
	free(w);
	if (rc != EB_OK)
		return rc;
	wrong = eb_mem_check(dst, 0, bytes, p, 0, &first);
	if (wrong != 0) {
		fprintf(stderr, "rank 1: %llu wrong words, the first at byte %llu\n",
			(unsigned long long)wrong, (unsigned long long)first);
		return EB_EVERIFY;
	}
	printf("split_write: %zu bytes in %d slices, %llu chunks, over %d channels of provider "
	       "%s: every byte right\n",
	       bytes, n, (unsigned long long)chunks, e->nchan, e->prov);
	return EB_OK;
}

static int rank_main(struct eb_boot *b, void *arg)
{
	const struct args *a = arg;
	struct eb_fabric_opts fo = {.channels = a->channels, .timeout_s = 30};
	struct eb_pattern p = {.src = 0, .dst = 1, .epoch = 1};
	struct eb_mem buf = {0};
	struct eb_mr *mine = NULL, *keys_mr = NULL;
	struct eb_rkey *rkeys = NULL;
	struct eb_engine e;
	int rc;

	if (b->size != 2) {
		if (b->rank == 0)
			fprintf(stderr, "split_write runs on 2 ranks, not %d\n", b->size);
		return 2;
	}
	rc = eb_engine_open(&e, b, &fo); /* collective: channels, addresses of every rank */
	if (rc != EB_OK)
		return eb_exit_code(rc);
	mine = calloc((size_t)e.nchan, sizeof(*mine));
	keys_mr = calloc((size_t)e.nchan, sizeof(*keys_mr));
	rkeys = calloc((size_t)e.nchan * (size_t)b->size, sizeof(*rkeys));
	rc = mine != NULL && keys_mr != NULL && rkeys != NULL ? EB_OK : EB_ENOMEM;
	/* Rank 0 fills its source; rank 1 poisons its target, so nothing stale passes. */
	if (rc == EB_OK)
		rc = eb_mem_alloc(&buf, EB_MEM_HOST, a->bytes,
				  b->rank == 0 ? "the source" : "the target");
	if (rc == EB_OK && b->rank == 1)
		p.epoch = EB_EPOCH_POISON;
	if (rc == EB_OK)
		rc = eb_mem_fill(&buf, 0, a->bytes, &p, 0);
	p.epoch = 1;
	/* Rank 0 registers its source for local use; then every rank takes part in the key
	 * exchange, where only rank 1 exposes a buffer (rkeys[rank * nchan + chan]). */
	if (rc == EB_OK && b->rank == 0)
		rc = eb_engine_reg_mem(&e, &buf, 0, a->bytes, EB_USE_SOURCE, mine, NULL);
	if (rc == EB_OK)
		rc = eb_engine_reg_mem(&e, b->rank == 1 ? &buf : NULL, 0, a->bytes, EB_USE_TARGET,
				       keys_mr, rkeys);
	if (rc == EB_OK && b->rank == 0)
		rc = send_split(&e, &buf, mine, &rkeys[(size_t)1 * (size_t)e.nchan], a->bytes);
	else if (rc == EB_OK)
		rc = wait_split(&e, &buf, &p, a->bytes);
	/* Nobody closes its endpoints while the other may still use them. */
	if (rc == EB_OK)
		rc = eb_boot_barrier(b, eb_engine_deadline(&e));
	if (mine != NULL)
		eb_engine_dereg(&e, mine);
	if (keys_mr != NULL)
		eb_engine_dereg(&e, keys_mr);
	eb_mem_free(&buf);
	eb_engine_close(&e);
	free(mine);
	free(keys_mr);
	free(rkeys);
	return eb_exit_code(rc);
}

int main(int argc, char **argv)
{
	struct args a = {.bytes = 16u << 20, .channels = 0};
	struct eb_boot b;
	int code;

	if (argc > 1)
		a.bytes = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		a.channels = atoi(argv[2]);
	if (a.bytes == 0 || a.channels < 0) {
		fprintf(stderr, "usage: split_write [bytes [channels]]\n");
		return 2;
	}
	switch (eb_boot_detect()) {
	case EB_LAUNCH_MPI: /* mpirun, srun: MPI exchanges addresses and keys */
		if (eb_boot_mpi_init(&b, 30) != EB_OK)
			return 1;
		break;
	case EB_LAUNCH_TCP: { /* EFABENCH_ROOT, _RANK, _SIZE, _TOKEN */
		struct eb_rdv_opts o = {.rank = -1, .timeout_s = 30};

		if (eb_rdv_opts_resolve(&o) != EB_OK)
			return 2;
		if (eb_boot_rdv_init(&b, &o) != EB_OK)
			return 1;
		break;
	}
	default: /* fork two ranks here; they bootstrap through this process */
		return eb_launch_local(2, rank_main, &a, 35.0);
	}
	code = rank_main(&b, &a);
	eb_boot_finalize(&b, code);
	return code;
}
