/* The stamp every benchmark's files carry: which build made them, on which libfabric, host and
 * date, from which command line. */
#include "harness.h"
#include "efabench/boot.h"
#include "efabench/versions.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The command line as one string, arguments with spaces quoted. */
static void command_line(const struct eb_opts *o, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < o->argc && used < len; i++) {
		const char *a = o->argv[i];
		int quote = strchr(a, ' ') != NULL || a[0] == '\0';

		used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", i ? " " : "",
					 quote ? "'" : "", a, quote ? "'" : "");
	}
}

void eb_stamp(const struct eb_ctx *c, struct eb_sheet *s)
{
	struct eb_versions v;
	char built[16], runtime[16], host[256], date[32], cmd[2048];
	time_t now = time(NULL);
	struct tm utc;

	eb_versions_get(&v);
	snprintf(built, sizeof(built), "%u.%u", v.fi_built_major, v.fi_built_minor);
	snprintf(runtime, sizeof(runtime), "%u.%u", v.fi_major, v.fi_minor);
	eb_host_name(host, sizeof(host));
	gmtime_r(&now, &utc);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &utc);
	command_line(c->o, cmd, sizeof(cmd));
	/* Each a CSV column too, but the command (quotes and commas of its own). */
	eb_fact_obj(s, "stamp");
	eb_fact_str(s, "efabench", NULL, v.efabench);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "commit", NULL, v.commit);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "libfabric_built", NULL, built);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "libfabric_runtime", NULL, runtime);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "host", NULL, host);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "date", NULL, date);
	eb_fact_to(s, EB_TO_CSV);
	eb_fact_str(s, "command", NULL, cmd);
	eb_fact_end(s);
}
