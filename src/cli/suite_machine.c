/* efabench report's machine stamp: the host itself, then the facts efabench info --json and
 * the benchmarks' --json files hold. */
#include "suite.h"
#include "efabench/status.h"
#include "core/json_read.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define LINE EB_RLINE

void eb_suite_chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* The machine, from /proc/cpuinfo, uname and the clock. */
void eb_suite_machine(struct suite_machine *m)
{
	struct utsname u;
	char line[LINE];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	snprintf(m->host, sizeof(m->host), "unknown");
	snprintf(m->kernel, sizeof(m->kernel), "unknown");
	snprintf(m->cpu, sizeof(m->cpu), "unknown");
	if (uname(&u) == 0) {
		snprintf(m->host, sizeof(m->host), "%s", u.nodename);
		snprintf(m->kernel, sizeof(m->kernel), "%s %s (%s) %s", u.sysname, u.release,
			 u.version, u.machine);
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "processor", 9) == 0)
			m->cpus++;
		else if (colon != NULL && strncmp(line, "model name", 10) == 0 &&
			 strcmp(m->cpu, "unknown") == 0) {
			eb_suite_chomp(colon + 2);
			snprintf(m->cpu, sizeof(m->cpu), "%s", colon + 2);
		}
	}
	if (f != NULL)
		fclose(f);
	if (m->cpus == 0)
		m->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	gmtime_r(&now, &tm);
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* Append text to buf (used bytes so far), ", "-separated; quietly stops when full. */
static void append(char *buf, size_t len, const char *sep, const char *text)
{
	size_t used = strlen(buf);

	if (used + strlen(sep) + strlen(text) + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? sep : "", text);
}

/* Is the entry's provider ("tcp;ofi_rxm") the one asked for ("tcp"), or is none asked for? */
static int same_provider(const char *entry, const char *want)
{
	size_t n = strlen(want);

	return n == 0 || (strncmp(entry, want, n) == 0 && (entry[n] == '\0' || entry[n] == ';'));
}

/* What `efabench info --json` (saved in path) says: libfabric, CUDA and its GPUs, and the
 * NICs of the provider (all providers' when it is not known) with their link speeds. */
void eb_suite_machine_info(struct suite_machine *m, const char *path)
{
	const struct eb_jv *cuda, *x;
	struct eb_jv *doc;
	char entry[256];

	snprintf(m->libfabric, sizeof(m->libfabric), "unknown");
	snprintf(m->cuda, sizeof(m->cuda), "unknown");
	m->gpus_text[0] = m->nics_info[0] = '\0';
	if (eb_json_load(path, &doc) != EB_OK)
		return;
	x = eb_jv_get(doc, "libfabric");
	if (x != NULL)
		snprintf(m->libfabric, sizeof(m->libfabric), "runtime %s, built against %s",
			 eb_jv_str(x, "runtime", "?"), eb_jv_str(x, "built", "?"));
	cuda = eb_jv_get(doc, "cuda");
	m->gpus = (int)eb_jv_num(cuda, "gpus", 0);
	if (eb_jv_bool(cuda, "built", 0))
		snprintf(m->cuda, sizeof(m->cuda),
			 "built in (GPU memory, queue producers, ipc); %d GPU%s visible", m->gpus,
			 m->gpus == 1 ? "" : "s");
	else if (cuda != NULL)
		snprintf(m->cuda, sizeof(m->cuda),
			 "not built (efabench queue runs CPU producers only)");
	x = eb_jv_get(doc, "gpus");
	for (x = x != NULL ? x->kid : NULL; x != NULL; x = x->next) {
		snprintf(entry, sizeof(entry), "GPU %d: %s, %d SMs, PCI %s",
			 (int)eb_jv_num(x, "index", -1), eb_jv_str(x, "name", "?"),
			 (int)eb_jv_num(x, "sms", 0), eb_jv_str(x, "pci", "?"));
		append(m->gpus_text, sizeof(m->gpus_text), "; ", entry);
	}
	x = eb_jv_get(doc, "results"); /* one record per provider, NIC and address */
	for (x = x != NULL ? x->kid : NULL; x != NULL; x = x->next) {
		const char *prov = eb_jv_str(x, "provider", "?");
		double gbps = eb_jv_num(x, "link_gbps", 0);
		char speed[32] = "link unknown";

		if (!same_provider(prov, m->provider))
			continue;
		if (gbps > 0)
			snprintf(speed, sizeof(speed), "%.1f Gbps", gbps);
		snprintf(entry, sizeof(entry), "%s (%s, %s)", eb_jv_str(x, "domain", "?"), prov,
			 speed);
		if (strstr(m->nics_info, entry) == NULL)
			append(m->nics_info, sizeof(m->nics_info), ", ", entry);
	}
	eb_jv_free(doc);
}

/* The provider and NICs a benchmark ran on, from its --json file's settings. */
void eb_suite_run_facts(struct suite_machine *m, const char *path)
{
	const struct eb_jv *set, *nic;
	struct eb_jv *doc;

	if (access(path, R_OK) != 0 || eb_json_load(path, &doc) != EB_OK)
		return;
	set = eb_jv_get(doc, "settings");
	if (m->provider[0] == '\0')
		snprintf(m->provider, sizeof(m->provider), "%s", eb_jv_str(set, "provider", ""));
	nic = eb_jv_get(set, "channel_nics");
	if (m->nics_used[0] == '\0' && nic != NULL && nic->type == EB_J_ARR)
		for (nic = nic->kid; nic != NULL; nic = nic->next)
			if (nic->type == EB_J_STR)
				append(m->nics_used, sizeof(m->nics_used), " ", nic->str);
	eb_jv_free(doc);
}
