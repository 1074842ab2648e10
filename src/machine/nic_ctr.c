#include "efabench/nic_ctr.h"
#include "efabench/status.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *root(void)
{
	const char *r = getenv("EB_SYSFS_ROOT");

	return r != NULL ? r : "";
}

/* A counter file's value; 0 when it is not one number. */
static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	unsigned long long x;
	int ok;

	if (f == NULL)
		return 0;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = ok ? (uint64_t)x : 0;
	return ok;
}

static int find(const struct eb_nic_ctr *c, const char *key)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->key[i], key) == 0)
			return i;
	return -1;
}

static void put(struct eb_nic_ctr *c, const char *key, uint64_t v)
{
	int i = find(c, key);

	if (i < 0 && c->n < EB_NIC_CTR_MAX) {
		i = c->n++;
		snprintf(c->key[i], sizeof(c->key[i]), "%s", key);
	}
	if (i >= 0)
		c->v[i] = v;
}

/* Every number file of dir; the count found. */
static int read_dir(const char *dir, struct eb_nic_ctr *c)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	char path[512];
	uint64_t v;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((ent = readdir(d)) != NULL) {
		struct stat st;

		if (ent->d_name[0] == '.' || strlen(ent->d_name) >= sizeof(c->key[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !read_u64(path, &v))
			continue;
		put(c, ent->d_name, v);
		n++;
	}
	closedir(d);
	return n;
}

/* The verbs device a domain names: "rdmap0s1-rdm" -> "rdmap0s1". */
static void ib_name(const char *domain, char *dev, size_t len)
{
	const char *dash = strrchr(domain, '-');
	size_t n = strlen(domain);

	if (dash != NULL && (strcmp(dash, "-rdm") == 0 || strcmp(dash, "-dgrm") == 0))
		n = (size_t)(dash - domain);
	snprintf(dev, len, "%.*s", (int)n, domain);
}

/* A verbs device's first port: hw_counters (EFA's tx_bytes, rx_bytes, rdma_write_bytes...)
 * and the standard counters, whose port_xmit_data and port_rcv_data count 4-byte words. */
static int read_ib(const char *domain, struct eb_nic_ctr *c)
{
	char dev[64], base[320], dir[360];
	int port, n = 0;

	ib_name(domain, dev, sizeof(dev));
	for (port = 1; port <= 8 && n == 0; port++) {
		snprintf(base, sizeof(base), "%s/sys/class/infiniband/%s/ports/%d", root(), dev,
			 port);
		snprintf(dir, sizeof(dir), "%s/hw_counters", base);
		n = read_dir(dir, c);
		snprintf(dir, sizeof(dir), "%s/counters", base);
		n += read_dir(dir, c);
		snprintf(c->from, sizeof(c->from), "%s/{hw_counters,counters}", base);
	}
	if (find(c, "tx_bytes") < 0 && find(c, "port_xmit_data") >= 0)
		put(c, "tx_bytes", c->v[find(c, "port_xmit_data")] * 4);
	if (find(c, "rx_bytes") < 0 && find(c, "port_rcv_data") >= 0)
		put(c, "rx_bytes", c->v[find(c, "port_rcv_data")] * 4);
	return n;
}

int eb_nic_ctr_read(const char *domain, struct eb_nic_ctr *c, char *why, size_t len)
{
	char dir[360];

	memset(c, 0, sizeof(*c));
	c->tx = c->rx = -1;
	if (domain == NULL || domain[0] == '\0' || strchr(domain, '/') != NULL ||
	    strncmp(domain, "shm", 3) == 0) {
		snprintf(why, len, "%s has no NIC and so no counters", domain ? domain : "?");
		return EB_ENOTSUP;
	}
	snprintf(dir, sizeof(dir), "%s/sys/class/net/%s/statistics", root(), domain);
	snprintf(c->from, sizeof(c->from), "%s", dir);
	if (read_dir(dir, c) == 0 && read_ib(domain, c) == 0) {
		snprintf(why, len, "no counters of %s in /sys/class/net or /sys/class/infiniband",
			 domain);
		return EB_ENOTSUP;
	}
	c->tx = find(c, "tx_bytes");
	c->rx = find(c, "rx_bytes");
	return EB_OK;
}

void eb_nic_ctr_diff(const struct eb_nic_ctr *before, const struct eb_nic_ctr *after,
		     struct eb_nic_ctr *d)
{
	int i, j;

	*d = *after;
	for (i = 0; i < d->n; i++) {
		j = find(before, d->key[i]);
		d->v[i] = j >= 0 && before->v[j] <= d->v[i] ? d->v[i] - before->v[j] : d->v[i];
	}
}

int eb_nic_ctr_is_fault(const char *key)
{
	static const char *const words[] = {"err",  "drop", "discard", "retr",	 "timeout",
					    "fail", "crc",  "overrun", "missed", NULL};
	int i;

	for (i = 0; words[i] != NULL; i++)
		if (strstr(key, words[i]) != NULL)
			return 1;
	return 0;
}
