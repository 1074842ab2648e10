/* What a rank of efabench moe allocates at least, counted from the options before anything is
 * allocated: a shape of a million tokens over thousands of experts needs tens of GB per rank,
 * and running out of memory part-way through setup helps nobody. Only what every rank is sure
 * to hold counts (the routing, the plan's arrays, the token and output regions), so a refused
 * shape would fail, and one that fits may still need more. */
#include "moe_need.h"
#include "efabench/boot.h"
#include "efabench/mem.h"
#include "efabench/status.h"
#include "efabench/topo.h"
#include "core/log.h"

#include <stdio.h>

uint64_t eb_moe_token_bytes(const struct mopts *mo)
{
	return mo->dtype == MOE_FP8 ? (uint64_t)mo->hidden + 4ull * (uint64_t)(mo->hidden / 128)
				    : 2ull * (uint64_t)mo->hidden;
}

struct eb_moe_need eb_moe_need_of(const struct eb_opts *o, const struct mopts *mo, int ranks)
{
	uint64_t n = (uint64_t)ranks, tokens = (uint64_t)mo->tokens;
	uint64_t width = mo->spec.kind == EB_ROUTE_FILE ? n : (uint64_t)mo->topk;
	struct eb_moe_need w = {0};

	/* model/route.h: every rank's selections, and two ranks x ranks counts */
	w.route = n * tokens * width * sizeof(int32_t) + 2 * n * n * sizeof(int64_t);
	/* model/plan.h: serve_at per (rank, token), back_at and back_sum per own selection */
	w.lists = n * tokens * sizeof(int32_t) + tokens * width * (sizeof(uint64_t) + 1);
	/* The source holds its tokens; but for a matrix file's routing (where a token may go
	 * nowhere), the destination holds at least a token in and an output back per token. */
	w.regions = tokens * eb_moe_token_bytes(mo);
	if (mo->spec.kind != EB_ROUTE_FILE)
		w.regions += tokens * (eb_moe_token_bytes(mo) + 2ull * (uint64_t)mo->hidden);
	w.host = w.route + w.lists;
	if (o->mem == EB_MEM_DEVICE)
		w.gpu = w.regions;
	/* staged: pinned bounce buffers as large; --mem auto not yet decided: neither */
	if (o->mem == EB_MEM_HOST || o->mem == EB_MEM_PINNED || o->staged)
		w.host += w.regions;
	return w;
}

static double gib(uint64_t b)
{
	return (double)b / (double)(1ull << 30);
}

static int host_fits(const struct eb_opts *o, const struct mopts *mo, int ranks)
{
	struct eb_moe_need w = eb_moe_need_of(o, mo, ranks);
	uint64_t have = eb_topo_mem_available();
	long double all = (long double)w.host * ranks;

	if (have == 0 || all <= (long double)have)
		return EB_OK;
	eb_err("moe: this shape needs at least %.1f GiB of host memory per rank (routing table "
	       "%.1f GiB, plan %.1f GiB, regions %.1f GiB), %.1f GiB for the %d ranks here; the "
	       "host has %.1f GiB available",
	       gib(w.host), gib(w.route), gib(w.lists),
	       w.host > w.route + w.lists ? gib(w.regions) : 0.0, (double)(all / (1ull << 30)),
	       ranks, gib(have));
	return EB_EINVAL;
}

struct gpu_arg {
	const struct eb_opts *o;
	const struct mopts *mo;
	int ranks;
};

/* In the child: the ranks that would share the GPU (all of them on --gpu, else spread over
 * the GPUs CUDA sees) against its free memory. 2 when they do not fit. */
static int gpu_fits(const void *arg, void *out)
{
	const struct gpu_arg *a = arg;
	struct eb_moe_need w = eb_moe_need_of(a->o, a->mo, a->ranks);
	int n = eb_mem_gpu_absent() == NULL ? eb_mem_gpu_count() : 0;
	int gpu = a->o->gpu >= 0 ? a->o->gpu : 0;
	int on = a->o->gpu >= 0 ? a->ranks : (a->ranks + n - 1) / (n > 0 ? n : 1);
	uint64_t free_b = 0, total = 0;
	long double all = (long double)w.gpu * on;

	(void)out;
	/* No GPU, or not this one: the harness's probe says so. */
	if (n == 0 || gpu >= n || eb_mem_gpu_room(gpu, &free_b, &total) != EB_OK ||
	    all <= (long double)free_b)
		return 0;
	eb_err("moe: this shape needs at least %.1f GiB of GPU memory per rank (token and output "
	       "regions), %.1f GiB for the %d ranks on GPU %d; it has %.1f GiB free of %.1f GiB",
	       gib(w.gpu), (double)(all / (1ull << 30)), on, gpu, gib(free_b), gib(total));
	return 2;
}

int eb_moe_need_check(const struct eb_opts *o, const struct mopts *mo, int ranks)
{
	struct gpu_arg a = {o, mo, ranks};
	char none;
	int code;

	if (host_fits(o, mo, ranks) != EB_OK)
		return EB_EINVAL;
	if (o->mem != EB_MEM_DEVICE)
		return EB_OK;
	code = eb_launch_probe(gpu_fits, &a, &none, 1);
	return code == 0 ? EB_OK : code == 2 ? EB_EINVAL : EB_ESYS;
}
