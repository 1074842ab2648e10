/* efabench moe's routing and layout, with no fabric: every --route form parsed or refused
 * with a reason; the seeded tables of every kind on several shapes (topk distinct ascending
 * experts, the same table for the same seed, counts recomputed here); what groups, hot and
 * lognormal promise; shapes and matrix files refused before anything runs; a file's matrix
 * reproduced exactly; and every rank's plan in every mode, on one host and across hosts, run
 * in memory: each leg's items made into the receivers' regions, every byte written once, and
 * every token, row and sum where each receiver's own plan expects it. */
#include "check.h"
#include "bench/moe/model/plan.h"
#include "bench/moe/model/route.h"
#include "efabench/pattern.h"
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

/* ---- every rank's plan, run here: each leg's items made into the destinations' regions in
 * memory, as producers would, then every rank checks what landed with its own plan. */

/* Expert e's output for token t of rank s, element i: small integers, as efabench sends. */
static float out_value(int s, int t, int e, int i)
{
	return (float)((s * 7 + t * 5 + e * 3 + i) % 8 - 4);
}

static uint16_t bf16(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return (uint16_t)(b >> 16);
}

static float f32(uint16_t h)
{
	uint32_t b = (uint32_t)h << 16;
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

struct sim {
	const struct eb_route *rt;
	struct eb_moe_plan *p;
	char **src, **dst;
	unsigned char **hit; /* [rank][dst byte]: written this phase */
	int n;
	long bad;
};

static void fill(struct sim *m, int r)
{
	const struct eb_moe_plan *p = &m->p[r];
	int t, k, k0, i, hid = (int)(p->out_bytes / 2);
	int64_t j;

	for (t = 0; t < m->rt->tokens; t++) {
		struct eb_pattern pt = {(uint32_t)r, (uint32_t)t, 1};

		eb_pattern_fill(&pt, m->src[r] + p->x_off + (uint64_t)t * p->tok_bytes,
				p->tok_bytes, 0);
	}
	for (j = 0; j < p->served; j++) {
		const int32_t *x = eb_route_sel(m->rt, p->serve_src[j], p->serve_tok[j]);

		for (k0 = 0; x[k0] / m->rt->per_rank != r; k0++)
			;
		if (p->mode == EB_MOE_NORMAL) { /* one row: the selections here, weighted, summed */
			uint16_t *row =
			    (uint16_t *)(void *)(m->src[r] + p->out_off +
						 (uint64_t)p->serve_out[j] * p->out_bytes);

			for (i = 0; i < hid; i++) {
				float acc = 0;

				for (k = k0;
				     k < m->rt->width && x[k] >= 0 && x[k] / m->rt->per_rank == r;
				     k++)
					acc += 0.25f * (float)eb_moe_weight_q(p->serve_tok[j], k) *
					       out_value(p->serve_src[j], p->serve_tok[j], x[k], i);
				row[i] = bf16(acc);
			}
			continue;
		}
		for (k = k0; k < k0 + (int)(p->serve_out[j + 1] - p->serve_out[j]); k++)
			for (i = 0; i < hid; i++)
				((uint16_t *)(void *)(m->src[r] + p->out_off +
						      (uint64_t)(p->serve_out[j] + k - k0) *
							  p->out_bytes))[i] =
				    bf16(out_value(p->serve_src[j], p->serve_tok[j], x[k], i));
	}
}

/* Leg `leg` of phase ph, every rank's items: a copy, or a weighted sum of bf16 rows. */
static void run_leg(struct sim *m, int ph, int leg)
{
	int w, d;
	int64_t i;

	for (w = 0; w < m->n; w++) {
		const struct eb_moe_leg *g = &m->p[w].leg[ph][leg];
		const char *from = g->from_dst ? m->dst[w] : m->src[w];

		m->bad += g->off[0] != 0 || g->off[m->n] != g->items;
		for (d = 0; d < m->n; d++)
			for (i = g->off[d]; i < g->off[d + 1]; i++) {
				char *to = m->dst[d] + g->dst[i];
				uint64_t b;

				if (g->dst[i] + g->len[i] > m->p[d].dst_len) {
					m->bad++;
					continue;
				}
				for (b = 0; b < g->len[i]; b++) /* every byte written once */
					m->bad += m->hit[d][g->dst[i] + b]++ != 0;
				if (g->rows[i] == 0) {
					memcpy(to, from + g->src[i], g->len[i]);
					continue;
				}
				for (b = 0; b < g->len[i] / 2; b++) {
					float acc = 0;
					uint32_t r;

					for (r = 0; r < g->rows[i]; r++)
						acc +=
						    0.25f * (float)g->row_w[g->first[i] + r] *
						    f32(((
							const uint16_t
							    *)(const void *)(from +
									     g->row_at[g->first[i] +
										       r]))[b]);
					((uint16_t *)(void *)to)[b] = bf16(acc);
				}
			}
	}
}

/* Rank r's rows for token t against the expected outputs and sums. */
static void check_back(struct sim *m, int r, int t)
{
	const struct eb_moe_plan *p = &m->p[r];
	const int32_t *x = eb_route_sel(m->rt, r, t);
	size_t at = (size_t)t * (size_t)m->rt->width;
	int k, j, i, hid = (int)(p->out_bytes / 2);

	for (k = 0; k < m->rt->width && x[k] >= 0; k++) {
		const uint16_t *row =
		    (const uint16_t *)(const void *)(m->dst[r] + p->back_at[at + (size_t)k]);

		for (i = 0; i < hid; i++) {
			float want = 0;

			for (j = 0; j < m->rt->width && x[j] >= 0; j++)
				if (j == k ||
				    (p->back_sum[at + (size_t)k] &&
				     p->back_at[at + (size_t)j] == p->back_at[at + (size_t)k]))
					want += (p->back_sum[at + (size_t)k]
						     ? 0.25f * (float)eb_moe_weight_q(t, j)
						     : 1.0f) *
						out_value(r, t, x[j], i);
			m->bad += row[i] != bf16(want);
		}
	}
}

/* The tokens rank r should hold after dispatch, counted from the routing: a copy per token
 * with an expert here (per selection in ll), and across hosts in normal mode the tokens it
 * forwards: those of the rank of its local index on every other host with an expert on r's
 * host. */
static int64_t want_slots(const struct sim *m, int r)
{
	const struct eb_moe_plan *p = &m->p[r];
	const struct eb_moe_hosts *h = p->hosts;
	int64_t n = 0;
	int s, t, k, fwd, copies, there;

	for (s = 0; s < m->n; s++)
		for (t = 0; t < m->rt->tokens; t++) {
			const int32_t *x = eb_route_sel(m->rt, s, t);

			copies = there = 0;
			for (k = 0; k < m->rt->width && x[k] >= 0; k++) {
				copies += x[k] / m->rt->per_rank == r;
				there |= h->host[x[k] / m->rt->per_rank] == h->host[r];
			}
			fwd = p->mode == EB_MOE_NORMAL && h->n > 1 && h->host[s] != h->host[r];
			n += p->mode == EB_MOE_LL ? copies : copies > 0;
			n += fwd && h->local[s] == h->local[r] && there;
		}
	return n;
}

static void check_landed(struct sim *m, int r, int ph)
{
	const struct eb_moe_plan *p = &m->p[r];
	int64_t i;
	int t;

	m->bad += ph == 0 && p->nslots != want_slots(m, r);

	for (i = 0; ph == 0 && i < p->nslots; i++) {
		struct eb_pattern pt = {(uint32_t)p->slots[i].src, (uint32_t)p->slots[i].tok, 1};

		m->bad +=
		    eb_pattern_check(&pt, m->dst[r] + p->slots[i].off, p->tok_bytes, 0, NULL) != 0;
	}
	for (t = 0; ph == 1 && t < m->rt->tokens; t++)
		check_back(m, r, t);
}

/* Every rank's plan for a mode and host count, run and checked. */
static void check_mode(const struct eb_route *rt, int mode, int hosts, int intra, int split,
		       uint64_t tb, uint64_t ob)
{
	struct eb_moe_hosts h;
	struct sim m = {.rt = rt, .n = rt->ranks};
	int r, ph, leg;

	CHECK(eb_moe_hosts_groups(&h, rt->ranks, hosts) == EB_OK);
	m.p = calloc((size_t)m.n, sizeof(*m.p));
	m.src = calloc((size_t)m.n, sizeof(*m.src));
	m.dst = calloc((size_t)m.n, sizeof(*m.dst));
	m.hit = calloc((size_t)m.n, sizeof(*m.hit));
	for (r = 0; r < m.n; r++) {
		CHECK(eb_moe_plan_build(&m.p[r], rt, &h, r, mode, intra, tb, ob, split) == EB_OK);
		CHECK(m.p[r].dst_len == m.p[0].dst_len);
		m.src[r] = calloc(1, m.p[r].src_len + 1);
		m.dst[r] = calloc(1, m.p[r].dst_len + 1);
		m.hit[r] = calloc(1, m.p[r].dst_len + 1);
		fill(&m, r);
	}
	for (ph = 0; ph < 2; ph++) {
		for (r = 0; r < m.n; r++)
			memset(m.hit[r], 0, m.p[r].dst_len + 1);
		for (leg = 0; leg < m.p[0].nlegs; leg++)
			run_leg(&m, ph, leg);
		for (r = 0; r < m.n; r++)
			check_landed(&m, r, ph);
	}
	if (m.bad != 0)
		fprintf(stderr, "mode %d, %d hosts, intra %d, split %d: %ld wrong\n", mode, hosts,
			intra, split, m.bad);
	CHECK(m.bad == 0);
	for (r = 0; r < m.n; r++) {
		eb_moe_plan_free(&m.p[r]);
		free(m.src[r]);
		free(m.dst[r]);
		free(m.hit[r]);
	}
	free(m.p);
	free(m.src);
	free(m.dst);
	free(m.hit);
	eb_moe_hosts_free(&h);
}

/* Every mode, on one host, on two (when the ranks divide) and one rank per host. */
static void check_plans(const struct eb_route *rt, uint64_t tb, uint64_t ob)
{
	int mode, hosts[3] = {1, 2, rt->ranks}, i;

	for (mode = EB_MOE_RANK; mode <= EB_MOE_NORMAL; mode++)
		for (i = 0; i < 3; i++) {
			if (rt->ranks % hosts[i] != 0)
				continue;
			check_mode(rt, mode, hosts[i], i % 2, mode == EB_MOE_RANK && i == 1, tb,
				   ob);
		}
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
