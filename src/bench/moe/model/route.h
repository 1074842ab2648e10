/* efabench moe's routing: which experts every token of every rank selects, made from a seed
 * so that every rank builds the same table without talking. Experts are spread over ranks in
 * blocks: expert e lives on rank e / (experts / ranks). */
#ifndef EB_BENCH_MOE_ROUTE_H
#define EB_BENCH_MOE_ROUTE_H

#include <stddef.h>
#include <stdint.h>

enum eb_route_kind {
	EB_ROUTE_UNIFORM,   /* K distinct experts, uniformly */
	EB_ROUTE_GROUPS,    /* groups:G: a token's experts on at most G ranks */
	EB_ROUTE_HOT,	    /* hot:R,F: rank R's experts F times as likely */
	EB_ROUTE_LOGNORMAL, /* lognormal:S: expert popularity exp(S * N(0,1)) */
	EB_ROUTE_FILE,	    /* file:PATH: tokens per (source, destination) from a matrix */
};

struct eb_route_spec {
	enum eb_route_kind kind;
	int groups;
	int hot_rank;
	double hot_factor;
	double sigma;
	char path[256];
};

struct eb_moe_shape {
	int ranks, tokens, topk, experts;
	uint64_t seed;
};

/* "uniform", "groups:G", "hot:R,F", "lognormal:S" or "file:PATH"; EB_EINVAL with why. */
int eb_route_parse(const char *s, struct eb_route_spec *r, char *why, size_t len);

/* Everything that can be refused before anything is allocated: the spec against the shape
 * (a file is read and checked here: ranks x ranks counts of at most `tokens`). */
int eb_route_check(const struct eb_route_spec *r, const struct eb_moe_shape *sh, char *why,
		   size_t len);

struct eb_route {
	int ranks, tokens, experts, per_rank;
	int width;	/* selections kept per token: topk, or ranks for a file's matrix */
	int32_t *sel;	/* [rank][token][width] expert ids ascending, -1 after the last */
	int64_t *count; /* [src][dst] tokens of src that go to dst (one write each) */
	int64_t *nsel;	/* [src][dst] selections of src's tokens that live on dst */
};

/* Build the whole table (every rank's tokens). A file's matrix sends token t of src to dst
 * when (t + dst * tokens / ranks) % tokens < count, to dst's expert t % (experts / ranks). */
int eb_route_build(struct eb_route *rt, const struct eb_route_spec *r,
		   const struct eb_moe_shape *sh);
void eb_route_free(struct eb_route *rt);

static inline const int32_t *eb_route_sel(const struct eb_route *rt, int rank, int token)
{
	return &rt->sel[((size_t)rank * (size_t)rt->tokens + (size_t)token) * (size_t)rt->width];
}

/* The routing's name as given ("hot:3,4"). */
void eb_route_name(const struct eb_route_spec *r, char *buf, size_t len);

#endif
