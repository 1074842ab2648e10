#include "efabench/cpu_time.h"
#include "efabench/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COLUMNS 8 /* user nice system idle iowait irq softirq steal; guest time is in user */

int eb_cpu_time_parse(const char *text, struct eb_cpu_time *t)
{
	const char *p = text;
	int i;

	memset(t, 0, sizeof(*t));
	/* the line of all CPUs together: "cpu" then blanks, before "cpu0" and the others */
	while (p != NULL && !(strncmp(p, "cpu", 3) == 0 && (p[3] == ' ' || p[3] == '\t'))) {
		p = strchr(p, '\n');
		p = p != NULL ? p + 1 : NULL;
	}
	if (p == NULL)
		return EB_EINVAL;
	p += 3;
	for (i = 0; i < COLUMNS; i++) {
		char *end;
		unsigned long long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return EB_EINVAL;
		v = strtoull(p, &end, 10);
		t->total += v;
		if (i == COLUMNS - 1)
			t->steal = v;
		p = end;
	}
	return EB_OK;
}

int eb_cpu_time_read(struct eb_cpu_time *t)
{
	const char *root = getenv("EB_PROCFS_ROOT");
	char path[512], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/stat", root != NULL ? root : "");
	f = fopen(path, "r");
	if (f == NULL)
		return EB_ENOTSUP;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return eb_cpu_time_parse(buf, t) == EB_OK ? EB_OK : EB_ENOTSUP;
}

double eb_cpu_tick_s(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return 1.0 / (double)(hz > 0 ? hz : 100);
}
