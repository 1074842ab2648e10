/* efabench moe's routing and layout, with no fabric: every --route form parsed or refused
 * with a reason; the seeded tables of every kind on several shapes (topk distinct ascending
 * experts, the same table for the same seed, counts recomputed here); what groups, hot and
 * lognormal promise; shapes and matrix files refused before anything runs; a file's matrix
 * reproduced exactly; and every rank's plan against the others': dispatch and combine slots
 * tile each receiver's areas exactly once, and agree with the receiver's own view. */
#include "check.h"
#include "bench/moe/moe_plan.h"
#include "bench/moe/moe_route.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/eb-moe-route-XXXXXX";

static int64_t at2(const int64_t *m, int ranks, int s, int d)
{
	return m[(size_t)s * (size_t)ranks + (size_t)d];
}

static struct eb_route_spec spec_of(const char *s)
{
	struct eb_route_spec r;
	char why[256] = "";

	CHECK(eb_route_parse(s, &r, why, sizeof(why)) == EB_OK);
	return r;
}

static void test_parse(void)
{
	static const char *const bad[] = {"groups:0", "groups:x",     "groups:",    "groups:2x",
					  "hot:1",    "hot:-1,2",     "hot:1,0",    "hot:1,",
					  "hot:,2",   "lognormal:-1", "lognormal:", "lognormal:11",
					  "file:",    "nonsense",     "",	    "Uniform"};
	static const char *const named[] = {"uniform", "groups:2", "hot:1,4", "lognormal:0.5",
					    "file:/x"};
	struct eb_route_spec r;
	char why[256], name[300];
	size_t i;

	r = spec_of("uniform");
	CHECK(r.kind == EB_ROUTE_UNIFORM);
	r = spec_of("groups:2");
	CHECK(r.kind == EB_ROUTE_GROUPS && r.groups == 2);
	r = spec_of("hot:1,4");
	CHECK(r.kind == EB_ROUTE_HOT && r.hot_rank == 1 && r.hot_factor == 4.0);
	r = spec_of("hot:0,0.5");
	CHECK(r.kind == EB_ROUTE_HOT && r.hot_rank == 0 && r.hot_factor == 0.5);
	r = spec_of("lognormal:0.5");
	CHECK(r.kind == EB_ROUTE_LOGNORMAL && r.sigma == 0.5);
	r = spec_of("lognormal:0");
	CHECK(r.kind == EB_ROUTE_LOGNORMAL && r.sigma == 0.0);
	r = spec_of("file:/x");
	CHECK(r.kind == EB_ROUTE_FILE && strcmp(r.path, "/x") == 0);
	/* The header prints the name: it must read back as given. */
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		r = spec_of(named[i]);
		eb_route_name(&r, name, sizeof(name));
		CHECK(strcmp(name, named[i]) == 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;

		why[0] = '\0';
		rc = eb_route_parse(bad[i], &r, why, sizeof(why));
		if (rc != EB_EINVAL || why[0] == '\0')
			fprintf(stderr, "route %s: rc %d, why '%s'\n", bad[i], rc, why);
		CHECK(rc == EB_EINVAL);
		CHECK(why[0] != '\0');
	}
}

/* The table's invariants, and count / nsel recomputed from the selections. */
static void check_table(const struct eb_route *rt, const struct eb_moe_shape *sh)
{
	int per = sh->experts / sh->ranks, s, t, k, d, bad = 0;
	int64_t *count = calloc((size_t)sh->ranks * (size_t)sh->ranks, sizeof(*count));
	int64_t *nsel = calloc((size_t)sh->ranks * (size_t)sh->ranks, sizeof(*nsel));
	int *hits = calloc((size_t)sh->ranks, sizeof(*hits));

	CHECK(rt->ranks == sh->ranks && rt->tokens == sh->tokens && rt->experts == sh->experts);
	CHECK(rt->per_rank == per && rt->width == sh->topk);
	for (s = 0; s < sh->ranks; s++)
		for (t = 0; t < sh->tokens; t++) {
			const int32_t *x = eb_route_sel(rt, s, t);

			memset(hits, 0, sizeof(*hits) * (size_t)sh->ranks);
			for (k = 0; k < sh->topk; k++) {
				if (x[k] < 0 || x[k] >= sh->experts ||
				    (k > 0 && x[k] <= x[k - 1])) {
					bad++;
					continue;
				}
				hits[x[k] / per]++;
			}
			for (d = 0; d < sh->ranks; d++) {
				nsel[(size_t)s * (size_t)sh->ranks + (size_t)d] += hits[d];
				count[(size_t)s * (size_t)sh->ranks + (size_t)d] += hits[d] > 0;
			}
		}
	CHECK(bad == 0);
	CHECK(memcmp(count, rt->count, sizeof(*count) * (size_t)sh->ranks * (size_t)sh->ranks) ==
	      0);
	CHECK(memcmp(nsel, rt->nsel, sizeof(*nsel) * (size_t)sh->ranks * (size_t)sh->ranks) == 0);
	free(count);
	free(nsel);
	free(hits);
}

static int same_table(const struct eb_route *a, const struct eb_route *b)
{
	size_t n = (size_t)a->ranks * (size_t)a->tokens * (size_t)a->width;

	return a->width == b->width && memcmp(a->sel, b->sel, n * sizeof(*a->sel)) == 0;
}

/* Build with sh's seed twice and with another seed: invariants, and the seed decides. */
static void check_build(const char *route, const struct eb_moe_shape *sh)
{
	struct eb_route_spec r = spec_of(route);
	struct eb_moe_shape other = *sh;
	struct eb_route a, b, c;
	char why[256] = "";

	CHECK(eb_route_check(&r, sh, why, sizeof(why)) == EB_OK);
	CHECK(eb_route_build(&a, &r, sh) == EB_OK);
	CHECK(eb_route_build(&b, &r, sh) == EB_OK);
	other.seed = sh->seed * 7 + 12345;
	CHECK(eb_route_build(&c, &r, &other) == EB_OK);
	check_table(&a, sh);
	check_table(&c, &other);
	CHECK(same_table(&a, &b));
	/* With every expert selected there is nothing left to chance. */
	if (sh->topk < sh->experts)
		CHECK(!same_table(&a, &c));
	else
		CHECK(same_table(&a, &c));
	eb_route_free(&a);
	eb_route_free(&b);
	eb_route_free(&c);
}

/* Tokens (count) and selections (nsel) each rank receives. */
static void received(const struct eb_route *rt, double *tok, double *sel)
{
	int s, d;

	for (d = 0; d < rt->ranks; d++) {
		tok[d] = sel[d] = 0;
		for (s = 0; s < rt->ranks; s++) {
			tok[d] += (double)at2(rt->count, rt->ranks, s, d);
			sel[d] += (double)at2(rt->nsel, rt->ranks, s, d);
		}
	}
}

static void test_groups(void)
{
	struct eb_moe_shape sh = {8, 256, 8, 64, 3};
	int g, s, t, k;

	for (g = 1; g <= 3; g++) {
		char route[32];
		struct eb_route_spec r;
		struct eb_route rt;
		int most = 0, over = 0;

		snprintf(route, sizeof(route), "groups:%d", g);
		r = spec_of(route);
		CHECK(eb_route_build(&rt, &r, &sh) == EB_OK);
		for (s = 0; s < sh.ranks; s++)
			for (t = 0; t < sh.tokens; t++) {
				const int32_t *x = eb_route_sel(&rt, s, t);
				int ranks = 0, last = -1;

				for (k = 0; k < sh.topk; k++) {
					ranks += x[k] / rt.per_rank != last;
					last = x[k] / rt.per_rank;
				}
				over += ranks > g;
				most = ranks > most ? ranks : most;
			}
		CHECK(over == 0);
		/* Not trivially one rank: the groups are used when allowed. */
		CHECK(most == g);
		eb_route_free(&rt);
	}
}

static void test_hot(void)
{
	struct eb_moe_shape sh = {4, 1024, 2, 32, 5};
	struct eb_route_spec hot = spec_of("hot:2,8"), uni = spec_of("uniform");
	struct eb_route rt;
	double tok[4], sel[4], rest_tok = 0, rest_sel = 0, lo = 1e30, hi = 0;
	int d;

	CHECK(eb_route_build(&rt, &hot, &sh) == EB_OK);
	received(&rt, tok, sel);
	for (d = 0; d < 4; d++)
		if (d != 2) {
			rest_tok += tok[d] / 3;
			rest_sel += sel[d] / 3;
		}
	/* Here 4.9x the tokens and 7.3x the selections; uniform gives 1x. */
	CHECK(tok[2] > 2.5 * rest_tok);
	CHECK(sel[2] > 4.0 * rest_sel);
	eb_route_free(&rt);
	CHECK(eb_route_build(&rt, &uni, &sh) == EB_OK);
	received(&rt, tok, sel);
	for (d = 0; d < 4; d++) {
		lo = tok[d] < lo ? tok[d] : lo;
		hi = tok[d] > hi ? tok[d] : hi;
	}
	CHECK(hi < 1.2 * lo);
	eb_route_free(&rt);
}

/* The most selected expert over the mean selections per expert. */
static double skew(const char *route, const struct eb_moe_shape *sh)
{
	struct eb_route_spec r = spec_of(route);
	struct eb_route rt;
	int64_t *pop = calloc((size_t)sh->experts, sizeof(*pop)), most = 0, all = 0;
	int s, t, k;

	CHECK(eb_route_build(&rt, &r, sh) == EB_OK);
	for (s = 0; s < sh->ranks; s++)
		for (t = 0; t < sh->tokens; t++)
			for (k = 0; k < sh->topk; k++)
				pop[eb_route_sel(&rt, s, t)[k]]++;
	for (k = 0; k < sh->experts; k++) {
		most = pop[k] > most ? pop[k] : most;
		all += pop[k];
	}
	free(pop);
	eb_route_free(&rt);
	return (double)most / ((double)all / sh->experts);
}

static void test_lognormal(void)
{
	struct eb_moe_shape sh = {4, 1024, 2, 64, 9};

	CHECK(skew("lognormal:2", &sh) > 4.0);
	CHECK(skew("lognormal:0", &sh) < 1.5);
	CHECK(skew("uniform", &sh) < 1.5);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* check's verdict on route (with why filled when refused). */
static int checked(const char *route, const struct eb_moe_shape *sh)
{
	struct eb_route_spec r = spec_of(route);
	char why[512] = "";
	int rc = eb_route_check(&r, sh, why, sizeof(why));

	CHECK(rc == EB_OK || why[0] != '\0');
	return rc;
}

static int checked_file(const char *name, const char *text, const struct eb_moe_shape *sh)
{
	char route[160];

	snprintf(route, sizeof(route), "file:%s", write_file(name, text));
	return checked(route, sh);
}

static void test_check(void)
{
	struct eb_moe_shape sh = {4, 64, 8, 16, 1}; /* 4 experts per rank */
	struct eb_moe_shape s3 = {3, 8, 2, 6, 1};
	char route[160];

	CHECK(checked("uniform", &sh) == EB_OK);
	CHECK(checked("groups:1", &sh) == EB_EINVAL); /* 4 experts for topk 8 */
	CHECK(checked("groups:2", &sh) == EB_OK);
	CHECK(checked("groups:4", &sh) == EB_OK);
	CHECK(checked("groups:5", &sh) == EB_EINVAL); /* more than the ranks */
	CHECK(checked("hot:3,2", &sh) == EB_OK);
	CHECK(checked("hot:4,2", &sh) == EB_EINVAL);
	CHECK(checked("lognormal:1", &sh) == EB_OK);

	CHECK(checked_file("good", "# source by destination\n1 2 3\n0, 8, 0\n\n4\t5 6 # last\n",
			   &s3) == EB_OK);
	CHECK(checked_file("rows2", "1 2 3\n4 5 6\n", &s3) == EB_EINVAL);
	CHECK(checked_file("rows4", "1 2 3\n4 5 6\n1 1 1\n1 1 1\n", &s3) == EB_EINVAL);
	CHECK(checked_file("cols2", "1 2 3\n4 5\n1 1 1\n", &s3) == EB_EINVAL);
	CHECK(checked_file("cols4", "1 2 3\n4 5 6 7\n1 1 1\n", &s3) == EB_EINVAL);
	CHECK(checked_file("big", "1 2 3\n4 9 6\n1 1 1\n", &s3) == EB_EINVAL); /* 9 > 8 */
	CHECK(checked_file("neg", "1 2 3\n4 -1 6\n1 1 1\n", &s3) == EB_EINVAL);
	CHECK(checked_file("word", "1 2 3\n4 x 6\n1 1 1\n", &s3) == EB_EINVAL);
	CHECK(checked_file("empty", "", &s3) == EB_EINVAL);
	snprintf(route, sizeof(route), "file:%s/absent", dir);
	CHECK(checked(route, &s3) == EB_EINVAL);
}

/* The layout of every rank at once: each against the routing and against the others. */
static void check_plans(const struct eb_route *rt, uint64_t tb, uint64_t ob)
{
	int n = rt->ranks, r, s, d, h, t, k;
	struct eb_moe_plan *p = calloc((size_t)n, sizeof(*p));
	int **tok_mark = calloc((size_t)n, sizeof(*tok_mark));
	int **out_mark = calloc((size_t)n, sizeof(*out_mark));
	int64_t *recv = calloc((size_t)n, sizeof(*recv)), *own = calloc((size_t)n, sizeof(*own));
	int64_t most_recv = 0, most_own = 0, bad = 0, i;

	for (d = 0; d < n; d++) {
		for (s = 0; s < n; s++) {
			recv[d] += at2(rt->count, n, s, d);
			own[d] += at2(rt->nsel, n, d, s);
		}
		most_recv = recv[d] > most_recv ? recv[d] : most_recv;
		most_own = own[d] > most_own ? own[d] : most_own;
		tok_mark[d] = calloc((size_t)recv[d] + 1, sizeof(**tok_mark));
		out_mark[d] = calloc((size_t)own[d] + 1, sizeof(**out_mark));
	}
	for (r = 0; r < n; r++) {
		CHECK(eb_moe_plan_build(&p[r], rt, r, tb, ob) == EB_OK);
		CHECK(p[r].rank == r && p[r].ranks == n);
		CHECK(p[r].recv_tokens == recv[r] && p[r].own_sel == own[r]);
		CHECK(p[r].back_off == p[r].recv_off + (uint64_t)most_recv * tb);
		CHECK(p[r].dst_len == p[r].back_off + (uint64_t)most_own * ob);
		CHECK(p[r].src_len == p[0].src_len && p[r].dst_len == p[0].dst_len);
		CHECK(p[r].x_off == p[0].x_off && p[r].pack_off == p[0].pack_off &&
		      p[r].out_off == p[0].out_off && p[r].back_off == p[0].back_off);
		CHECK(p[r].pack_off >= p[r].x_off + (uint64_t)rt->tokens * tb);
		CHECK(p[r].out_off <= p[r].src_len && p[r].pack_off <= p[r].out_off);
	}
	for (r = 0; r < n; r++) {
		const struct eb_moe_moves *m = &p[r].dispatch;
		int64_t sent = 0;

		CHECK(m->off[0] == 0 && m->off[n] == m->items);
		for (d = 0; d < n; d++) {
			CHECK(m->off[d + 1] - m->off[d] == at2(rt->count, n, r, d));
			CHECK(p[d].recv_from[r] == at2(rt->count, n, r, d));
			CHECK(p[r].back_from[d] == at2(rt->count, n, r, d));
			sent += d == r ? 0 : (int64_t)(m->off[d + 1] - m->off[d]);
			for (i = m->off[d]; i < m->off[d + 1]; i++) {
				int64_t slot = (int64_t)((m->dst[i] - p[d].recv_off) / tb);
				int has = 0;

				t = (int)((m->src[i] - p[r].x_off) / tb);
				/* A token of r that has an expert on d, from r's tokens area. */
				bad += m->len[i] != tb || m->src[i] < p[r].x_off ||
				       (m->src[i] - p[r].x_off) % tb != 0 || t >= rt->tokens;
				for (k = 0; t < rt->tokens && k < rt->width; k++)
					has |= eb_route_sel(rt, r, t)[k] >= 0 &&
					       eb_route_sel(rt, r, t)[k] / rt->per_rank == d;
				bad += !has;
				bad += m->packed[i] < p[r].pack_off ||
				       m->packed[i] + m->len[i] > p[r].out_off;
				/* Into d's receive area, in a slot d itself knows as (r, t). */
				if (m->dst[i] < p[d].recv_off ||
				    (m->dst[i] - p[d].recv_off) % tb != 0 ||
				    m->dst[i] + m->len[i] > p[d].back_off || slot >= recv[d]) {
					bad++;
					continue;
				}
				tok_mark[d][slot]++;
				bad += p[d].recv_tok[slot] != t || p[d].recv_src[slot] != r;
			}
		}
		CHECK(m->items_out == sent && m->bytes_out == (uint64_t)sent * tb);
	}
	CHECK(bad == 0);
	for (d = 0; d < n; d++)
		for (i = 0; i < recv[d]; i++)
			bad += tok_mark[d][i] != 1;
	CHECK(bad == 0);
	/* Combine: from expert rank r to home h, each output slot of h's back area once. */
	for (r = 0; r < n; r++) {
		const struct eb_moe_moves *m = &p[r].combine;
		int64_t serve = 0;

		CHECK(m->off[0] == 0 && m->off[n] == m->items && m->items == recv[r]);
		for (h = 0; h < n; h++) {
			CHECK(m->off[h + 1] - m->off[h] == at2(rt->count, n, h, r));
			for (i = m->off[h]; i < m->off[h + 1]; i++) {
				const int32_t *x;
				int first = -1, last = -1;
				uint64_t j;
				int64_t slot;

				t = (int)p[r].recv_tok[i];
				x = eb_route_sel(rt, h, t);
				bad += p[r].recv_src[i] != h || p[r].recv_outpos[i] != serve;
				for (k = 0; k < rt->width && x[k] >= 0; k++)
					if (x[k] / rt->per_rank == r) {
						first = first < 0 ? k : first;
						last = k + 1;
					}
				serve += last - first;
				bad += first < 0 || m->len[i] != (uint64_t)(last - first) * ob ||
				       m->src[i] < p[r].out_off ||
				       m->src[i] + m->len[i] > p[r].src_len;
				if (m->dst[i] < p[r].back_off ||
				    (m->dst[i] - p[r].back_off) % ob != 0 ||
				    m->dst[i] + m->len[i] > p[r].dst_len) {
					bad++;
					continue;
				}
				slot = (int64_t)((m->dst[i] - p[r].back_off) / ob);
				for (j = 0; j < m->len[i] / ob; j++) {
					if (slot + (int64_t)j >= own[h]) {
						bad++;
						break;
					}
					out_mark[h][slot + (int64_t)j]++;
					/* The home expects selection first + j right there. */
					bad +=
					    p[h].back_slot[(size_t)t * (size_t)rt->width +
							   (size_t)first + j] != slot + (int64_t)j;
				}
			}
		}
		CHECK(p[r].recv_sel == serve && p[r].recv_outpos[m->items] == serve);
	}
	CHECK(bad == 0);
	for (h = 0; h < n; h++)
		for (i = 0; i < own[h]; i++)
			bad += out_mark[h][i] != 1;
	CHECK(bad == 0);
	/* back_slot: a permutation of h's output slots over its selections. */
	for (h = 0; h < n; h++) {
		memset(out_mark[h], 0, sizeof(**out_mark) * ((size_t)own[h] + 1));
		for (t = 0; t < rt->tokens; t++)
			for (k = 0; k < rt->width && eb_route_sel(rt, h, t)[k] >= 0; k++) {
				int64_t v =
				    p[h].back_slot[(size_t)t * (size_t)rt->width + (size_t)k];

				if (v < 0 || v >= own[h])
					bad++;
				else
					out_mark[h][v]++;
			}
		for (i = 0; i < own[h]; i++)
			bad += out_mark[h][i] != 1;
		for (s = 0, i = 0; s < n; s++) {
			CHECK(p[h].back_base[s] == i);
			i += at2(rt->nsel, n, h, s);
		}
	}
	CHECK(bad == 0);
	for (r = 0; r < n; r++) {
		eb_moe_plan_free(&p[r]);
		free(tok_mark[r]);
		free(out_mark[r]);
	}
	free(p);
	free(tok_mark);
	free(out_mark);
	free(recv);
	free(own);
}

static void plans_of(const char *route, const struct eb_moe_shape *sh)
{
	struct eb_route_spec r = spec_of(route);
	struct eb_route rt;

	CHECK(eb_route_build(&rt, &r, sh) == EB_OK);
	check_plans(&rt, 2048, 2048);
	/* Unlike sizes: a token slot taken for an output slot shows. */
	check_plans(&rt, 1056, 3072);
	eb_route_free(&rt);
}

static void test_file(void)
{
	/* Rank 0 sends nothing, rank 1 receives nothing; 8 tokens means all of them. */
	struct eb_moe_shape sh = {3, 8, 2, 6, 1};
	static const int64_t m[9] = {0, 0, 0, 3, 0, 8, 5, 0, 2};
	struct eb_route_spec r;
	struct eb_route rt;
	char route[160];
	int s, t, k, bad = 0;

	snprintf(route, sizeof(route), "file:%s", write_file("matrix", "0 0 0\n3 0 8\n5 0 2\n"));
	r = spec_of(route);
	CHECK(eb_route_check(&r, &sh, route, sizeof(route)) == EB_OK);
	CHECK(eb_route_build(&rt, &r, &sh) == EB_OK);
	CHECK(rt.width == 3);
	CHECK(memcmp(rt.count, m, sizeof(m)) == 0);
	CHECK(memcmp(rt.nsel, m, sizeof(m)) == 0);
	/* One expert per destination, ascending, -1 after the last. */
	for (s = 0; s < 3; s++)
		for (t = 0; t < 8; t++) {
			const int32_t *x = eb_route_sel(&rt, s, t);

			for (k = 1; k < 3; k++)
				bad += x[k] >= 0 && (x[k - 1] < 0 || x[k] / 2 <= x[k - 1] / 2);
			for (k = 0; k < 3; k++)
				bad += x[k] >= 6 || x[k] < -1;
		}
	CHECK(bad == 0);
	check_plans(&rt, 2048, 1024);
	eb_route_free(&rt);
	/* Refused at build time too: the file changed after the check. */
	snprintf(route, sizeof(route), "file:%s", write_file("matrix", "0 0 0\n3 0 9\n5 0 2\n"));
	r = spec_of(route);
	CHECK(eb_route_build(&rt, &r, &sh) == EB_EINVAL);
	CHECK(rt.sel == NULL && rt.count == NULL);
	unlink(route + 5);
}

static void remove_files(void)
{
	static const char *const names[] = {"good", "rows2", "rows4", "cols2", "cols4",
					    "big",  "neg",   "word",  "empty"};
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK(unlink(path) == 0);
	}
	CHECK(rmdir(dir) == 0);
}

int main(void)
{
	static const struct eb_moe_shape shapes[] = {
	    {4, 64, 8, 32, 1}, /* decode-like, 8 experts per rank */
	    {2, 5, 1, 2, 2},   /* one expert per rank and token */
	    {4, 16, 8, 8, 3},  /* topk == experts: every expert */
	    {3, 40, 4, 12, 4},
	};
	static const char *const kinds[] = {"uniform", "hot:1,4", "lognormal:1", "lognormal:0"};
	size_t i, j;

	CHECK(mkdtemp(dir) != NULL);
	test_parse();
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct eb_moe_shape *sh = &shapes[i];
		int per = sh->experts / sh->ranks;
		char route[32];

		for (j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++)
			check_build(kinds[j], sh);
		/* The fewest groups that hold topk experts, and every rank. */
		snprintf(route, sizeof(route), "groups:%d", (sh->topk + per - 1) / per);
		check_build(route, sh);
		plans_of(route, sh);
		snprintf(route, sizeof(route), "groups:%d", sh->ranks);
		check_build(route, sh);
		plans_of("uniform", sh);
		plans_of("hot:0,8", sh);
		plans_of("lognormal:2", sh);
	}
	test_groups();
	test_hot();
	test_lognormal();
	test_check();
	test_file();
	remove_files();
	return check_done();
}
