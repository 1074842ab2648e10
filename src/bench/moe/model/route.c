#include "route.h"
#include "efabench/status.h"
#include "core/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: the whole table comes from the seed, the same on every rank. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A uniform double in (0, 1). */
static double unit(uint64_t *st)
{
	*st = mix(*st);
	return ((double)(*st >> 11) + 0.5) / 9007199254740992.0;
}

int eb_route_parse(const char *s, struct eb_route_spec *r, char *why, size_t len)
{
	char *end;

	memset(r, 0, sizeof(*r));
	if (strcmp(s, "uniform") == 0)
		return EB_OK;
	if (strncmp(s, "groups:", 7) == 0) {
		long g = strtol(s + 7, &end, 10);

		r->kind = EB_ROUTE_GROUPS;
		r->groups = (int)g;
		if (end != s + 7 && *end == '\0' && g >= 1 && g <= 65536)
			return EB_OK;
		snprintf(why, len, "groups:G wants G a whole number from 1");
		return EB_EINVAL;
	}
	if (strncmp(s, "hot:", 4) == 0) {
		long rk = strtol(s + 4, &end, 10);

		r->kind = EB_ROUTE_HOT;
		r->hot_rank = (int)rk;
		if (end != s + 4 && *end == ',' && rk >= 0 && rk <= 65535) {
			const char *f = end + 1;

			r->hot_factor = strtod(f, &end);
			if (end != f && *end == '\0' && r->hot_factor > 0 && r->hot_factor <= 1e6)
				return EB_OK;
		}
		snprintf(why, len, "hot:R,F wants a rank R and a factor F > 0 (hot:0,4)");
		return EB_EINVAL;
	}
	if (strncmp(s, "lognormal:", 10) == 0) {
		r->kind = EB_ROUTE_LOGNORMAL;
		r->sigma = strtod(s + 10, &end);
		if (end != s + 10 && *end == '\0' && r->sigma >= 0 && r->sigma <= 10)
			return EB_OK;
		snprintf(why, len, "lognormal:S wants S from 0 to 10 (lognormal:1)");
		return EB_EINVAL;
	}
	if (strncmp(s, "file:", 5) == 0 && s[5] != '\0' && strlen(s + 5) < sizeof(r->path)) {
		r->kind = EB_ROUTE_FILE;
		snprintf(r->path, sizeof(r->path), "%s", s + 5);
		return EB_OK;
	}
	snprintf(why, len, "want uniform, groups:G, hot:R,F, lognormal:S or file:PATH");
	return EB_EINVAL;
}

void eb_route_name(const struct eb_route_spec *r, char *buf, size_t len)
{
	switch (r->kind) {
	case EB_ROUTE_UNIFORM:
		snprintf(buf, len, "uniform");
		break;
	case EB_ROUTE_GROUPS:
		snprintf(buf, len, "groups:%d", r->groups);
		break;
	case EB_ROUTE_HOT:
		snprintf(buf, len, "hot:%d,%g", r->hot_rank, r->hot_factor);
		break;
	case EB_ROUTE_LOGNORMAL:
		snprintf(buf, len, "lognormal:%g", r->sigma);
		break;
	case EB_ROUTE_FILE:
		snprintf(buf, len, "file:%s", r->path);
		break;
	}
}

/* A matrix file: ranks lines of ranks whole numbers, each at most tokens ('#' starts a
 * comment). counts may be NULL (check only). */
static int read_matrix(const char *path, const struct eb_moe_shape *sh, int64_t *counts, char *why,
		       size_t len)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int row = 0, rc = EB_OK;

	if (f == NULL) {
		snprintf(why, len, "cannot read %s", path);
		return EB_EINVAL;
	}
	while (rc == EB_OK && fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *end;
		int col = 0;

		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(why, len, "%s: a line longer than %zu bytes", path, sizeof(line));
			rc = EB_EINVAL;
			break;
		}
		if ((end = strchr(line, '#')) != NULL)
			*end = '\0';
		for (;;) {
			long long v;

			while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n' || *p == '\r')
				p++;
			if (*p == '\0')
				break;
			v = strtoll(p, &end, 10);
			if (end == p || v < 0 || v > sh->tokens) {
				snprintf(why, len,
					 "%s line %d: want whole numbers from 0 to --tokens (%d)",
					 path, row + 1, sh->tokens);
				rc = EB_EINVAL;
				break;
			}
			if (row < sh->ranks && col < sh->ranks && counts != NULL)
				counts[(size_t)row * (size_t)sh->ranks + (size_t)col] = v;
			col++;
			p = end;
		}
		if (rc != EB_OK || col == 0)
			continue;
		if (col != sh->ranks || row >= sh->ranks) {
			snprintf(why, len,
				 "%s: want %d rows of %d tokens per (source, destination); row %d "
				 "has %d",
				 path, sh->ranks, sh->ranks, row + 1, col);
			rc = EB_EINVAL;
		}
		row++;
	}
	fclose(f);
	if (rc == EB_OK && row != sh->ranks) {
		snprintf(why, len, "%s: want %d rows (one per source rank), found %d", path,
			 sh->ranks, row);
		rc = EB_EINVAL;
	}
	return rc;
}

int eb_route_check(const struct eb_route_spec *r, const struct eb_moe_shape *sh, char *why,
		   size_t len)
{
	int per = sh->experts / sh->ranks;

	if (r->kind == EB_ROUTE_GROUPS && (r->groups > sh->ranks || r->groups * per < sh->topk)) {
		snprintf(
		    why, len,
		    "groups:%d: want from %d to %d groups (ranks) for --topk %d with %d experts "
		    "per rank",
		    r->groups, (sh->topk + per - 1) / per, sh->ranks, sh->topk, per);
		return EB_EINVAL;
	}
	if (r->kind == EB_ROUTE_HOT && r->hot_rank >= sh->ranks) {
		snprintf(why, len, "hot:%d: there are %d ranks (0 to %d)", r->hot_rank, sh->ranks,
			 sh->ranks - 1);
		return EB_EINVAL;
	}
	if (r->kind == EB_ROUTE_FILE)
		return read_matrix(r->path, sh, NULL, why, len);
	return EB_OK;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* K distinct experts: the K smallest keys -log(u)/w (weighted sampling without replacement,
 * Efraimidis-Spirakis); w == 0 excludes an expert. */
static void pick(const double *w, int experts, int k, uint64_t st, double *key, int32_t *out)
{
	int e, j;

	for (e = 0; e < experts; e++)
		key[e] = w[e] > 0 ? -log(unit(&st)) / w[e] : INFINITY;
	for (j = 0; j < k; j++) {
		int best = -1;

		for (e = 0; e < experts; e++)
			if (key[e] != INFINITY && (best < 0 || key[e] < key[best]))
				best = e;
		out[j] = best;
		key[best] = INFINITY;
	}
	qsort(out, (size_t)k, sizeof(*out), cmp_i32);
}

static void token_weights(const struct eb_route_spec *r, const struct eb_moe_shape *sh,
			  const double *base, uint64_t *st, double *w)
{
	int per = sh->experts / sh->ranks, e, g;

	memcpy(w, base, sizeof(*w) * (size_t)sh->experts);
	if (r->kind != EB_ROUTE_GROUPS)
		return;
	/* G distinct ranks uniformly; only their experts stay eligible. */
	for (e = 0; e < sh->experts; e++)
		w[e] = -w[e];
	for (g = 0; g < r->groups;) {
		int rk = (int)(unit(st) * sh->ranks);

		if (rk >= sh->ranks || w[rk * per] > 0)
			continue;
		for (e = rk * per; e < (rk + 1) * per; e++)
			w[e] = -w[e];
		g++;
	}
	for (e = 0; e < sh->experts; e++)
		if (w[e] < 0)
			w[e] = 0;
}

/* A file's matrix: token t of src goes to dst when (t + dst * tokens / ranks) % tokens < the
 * count, to dst's expert t % per. */
static int from_file(struct eb_route *rt, const struct eb_route_spec *r,
		     const struct eb_moe_shape *sh)
{
	size_t nr = (size_t)sh->ranks, nt = (size_t)sh->tokens;
	int64_t *m = calloc(nr * nr, sizeof(*m));
	int s, t, d, k, rc;
	char why[256];

	rc = m == NULL ? EB_ENOMEM : read_matrix(r->path, sh, m, why, sizeof(why));
	if (rc == EB_EINVAL)
		eb_err("%s", why);
	for (s = 0; rc == EB_OK && s < sh->ranks; s++)
		for (t = 0; t < sh->tokens; t++) {
			int32_t *out = &rt->sel[((size_t)s * nt + (size_t)t) * nr];

			for (d = 0, k = 0; d < sh->ranks; d++) {
				int64_t shift = (int64_t)d * sh->tokens / sh->ranks;

				if ((t + shift) % sh->tokens < m[(size_t)s * nr + (size_t)d])
					out[k++] = d * rt->per_rank + t % rt->per_rank;
			}
		}
	free(m);
	return rc;
}

/* Drawn from the seed: every expert's base weight, then each token's top-k. */
static int drawn(struct eb_route *rt, const struct eb_route_spec *r, const struct eb_moe_shape *sh)
{
	double *base = malloc(sizeof(*base) * (size_t)sh->experts);
	double *w = malloc(sizeof(*w) * (size_t)sh->experts);
	double *key = malloc(sizeof(*key) * (size_t)sh->experts);
	uint64_t st = mix(sh->seed ^ 0x6d6f65ull);
	int per = rt->per_rank, s, t, e, rc = EB_ENOMEM;

	if (base == NULL || w == NULL || key == NULL)
		goto free_tables;
	for (e = 0; e < sh->experts; e++) {
		double u1 = unit(&st), u2 = unit(&st);
		double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);

		base[e] = r->kind == EB_ROUTE_LOGNORMAL			      ? exp(r->sigma * z)
			  : r->kind == EB_ROUTE_HOT && e / per == r->hot_rank ? r->hot_factor
									      : 1.0;
	}
	for (s = 0; s < sh->ranks; s++)
		for (t = 0; t < sh->tokens; t++) {
			uint64_t ts = mix(sh->seed ^ mix(((uint64_t)s << 32) | (uint64_t)t));

			token_weights(r, sh, base, &ts, w);
			pick(w, sh->experts, sh->topk, ts, key,
			     &rt->sel[((size_t)s * (size_t)sh->tokens + (size_t)t) *
				      (size_t)rt->width]);
		}
	rc = EB_OK;
free_tables:
	free(base);
	free(w);
	free(key);
	return rc;
}

/* Tokens and selections per (source, destination) from the selections. */
static void count_traffic(struct eb_route *rt)
{
	size_t nr = (size_t)rt->ranks;
	int s, t, k;

	for (s = 0; s < rt->ranks; s++)
		for (t = 0; t < rt->tokens; t++) {
			const int32_t *x = eb_route_sel(rt, s, t);
			int last = -1;

			for (k = 0; k < rt->width && x[k] >= 0; k++) {
				int d = x[k] / rt->per_rank;

				rt->nsel[(size_t)s * nr + (size_t)d]++;
				if (d != last)
					rt->count[(size_t)s * nr + (size_t)d]++;
				last = d;
			}
		}
}

int eb_route_build(struct eb_route *rt, const struct eb_route_spec *r,
		   const struct eb_moe_shape *sh)
{
	size_t nr = (size_t)sh->ranks, nt = (size_t)sh->tokens;
	int rc;

	memset(rt, 0, sizeof(*rt));
	rt->ranks = sh->ranks;
	rt->tokens = sh->tokens;
	rt->experts = sh->experts;
	rt->per_rank = sh->experts / sh->ranks;
	rt->width = r->kind == EB_ROUTE_FILE ? sh->ranks : sh->topk;
	rt->sel = malloc(sizeof(*rt->sel) * nr * nt * (size_t)rt->width);
	rt->count = calloc(nr * nr, sizeof(*rt->count));
	rt->nsel = calloc(nr * nr, sizeof(*rt->nsel));
	if (rt->sel == NULL || rt->count == NULL || rt->nsel == NULL) {
		eb_err("out of memory for the routing of %d tokens x %d ranks", sh->tokens,
		       sh->ranks);
		eb_route_free(rt);
		return EB_ENOMEM;
	}
	memset(rt->sel, 0xff, sizeof(*rt->sel) * nr * nt * (size_t)rt->width);
	rc = r->kind == EB_ROUTE_FILE ? from_file(rt, r, sh) : drawn(rt, r, sh);
	if (rc == EB_ENOMEM)
		eb_err("out of memory for the routing of %d tokens x %d ranks", sh->tokens,
		       sh->ranks);
	if (rc != EB_OK) {
		eb_route_free(rt);
		return rc;
	}
	count_traffic(rt);
	return EB_OK;
}

void eb_route_free(struct eb_route *rt)
{
	free(rt->sel);
	free(rt->count);
	free(rt->nsel);
	memset(rt, 0, sizeof(*rt));
}
