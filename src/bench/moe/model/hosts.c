#include "hosts.h"
#include "core/arrays.h"
#include "efabench/status.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

#define NAME_LEN 64

/* Hosts numbered in order of their first rank; a rank's local index in rank order. */
static void number(struct eb_moe_hosts *h, const char *names)
{
	int r, q;

	h->n = 0;
	for (r = 0; r < h->ranks; r++) {
		h->host[r] = -1;
		for (q = 0; q < r && h->host[r] < 0; q++)
			if (strncmp(names + (size_t)q * NAME_LEN, names + (size_t)r * NAME_LEN,
				    NAME_LEN) == 0)
				h->host[r] = h->host[q];
		if (h->host[r] < 0)
			h->host[r] = h->n++;
	}
}

static int index_locals(struct eb_moe_hosts *h)
{
	int32_t *count = calloc((size_t)h->n, sizeof(*count));
	int r, k;

	if (count == NULL)
		return EB_ENOMEM;
	h->most = 0;
	for (r = 0; r < h->ranks; r++) {
		h->local[r] = count[h->host[r]]++;
		if (count[h->host[r]] > h->most)
			h->most = count[h->host[r]];
	}
	h->per = h->most;
	for (k = 0; k < h->n; k++)
		if (count[k] != h->most)
			h->per = 0;
	free(count);
	h->rank_at = malloc(sizeof(*h->rank_at) * (size_t)h->n * (size_t)h->most);
	if (h->rank_at == NULL)
		return EB_ENOMEM;
	for (k = 0; k < h->n * h->most; k++)
		h->rank_at[k] = -1;
	for (r = 0; r < h->ranks; r++)
		h->rank_at[h->host[r] * h->most + h->local[r]] = r;
	return EB_OK;
}

int eb_moe_hosts_build(struct eb_moe_hosts *h, struct eb_boot *b, int rank, int ranks, int emulate,
		       uint64_t deadline)
{
	char mine[NAME_LEN] = "", *names;
	int rc;

	memset(h, 0, sizeof(*h));
	h->ranks = ranks;
	h->block = eb_arrays(&h->host, (size_t)ranks, sizeof(*h->host), &h->local, (size_t)ranks,
			     sizeof(*h->local), &names, (size_t)ranks * NAME_LEN, (size_t)1, NULL);
	if (h->block == NULL) {
		eb_err("out of memory for the hosts of %d ranks", ranks);
		return EB_ENOMEM;
	}
	eb_host_name(mine, sizeof(mine));
	rc = eb_boot_allgather(b, mine, names, NAME_LEN, deadline);
	if (rc != EB_OK)
		goto fail;
	number(h, names);
	if (emulate > 0 && h->n > 1) {
		if (rank == 0)
			eb_err("--hosts %d groups ranks on one machine: these %d ranks run on %d "
			       "hosts",
			       emulate, ranks, h->n);
		rc = EB_EINVAL;
		goto fail;
	}
	if (emulate > 0) {
		eb_moe_hosts_free(h);
		rc = eb_moe_hosts_groups(h, ranks, emulate);
	} else {
		rc = index_locals(h);
	}
	if (rc == EB_OK)
		return EB_OK;
	eb_err("out of memory for the hosts of %d ranks", ranks);
fail:
	eb_moe_hosts_free(h);
	return rc;
}

void eb_moe_hosts_free(struct eb_moe_hosts *h)
{
	free(h->rank_at);
	free(h->block);
	memset(h, 0, sizeof(*h));
}

int eb_moe_hosts_groups(struct eb_moe_hosts *h, int ranks, int n)
{
	int r;

	memset(h, 0, sizeof(*h));
	h->ranks = ranks;
	h->block = eb_arrays(&h->host, (size_t)ranks, sizeof(*h->host), &h->local, (size_t)ranks,
			     sizeof(*h->local), NULL);
	if (h->block == NULL)
		return EB_ENOMEM;
	h->emulated = 1;
	h->n = n;
	for (r = 0; r < ranks; r++)
		h->host[r] = r / ((ranks + n - 1) / n);
	h->n = h->host[ranks - 1] + 1;
	if (index_locals(h) == EB_OK)
		return EB_OK;
	eb_moe_hosts_free(h);
	return EB_ENOMEM;
}
