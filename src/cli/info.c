/* efabench info: what this machine offers, before anyone benchmarks it. The facts are
 * gathered by the library (efabench/facts.h) and printed or written by src/report. */
#include "harness/cmd.h"
#include "report/info_out.h"
#include "efabench/facts.h"
#include "efabench/status.h"

#include <stdio.h>
#include <string.h>

static int info_main(const struct eb_opts *o)
{
	struct eb_facts x;
	int to_stdout = (o->json != NULL && strcmp(o->json, "-") == 0) ||
			(o->csv != NULL && strcmp(o->csv, "-") == 0);
	int rc = eb_facts_gather(&x);

	if (rc != EB_OK)
		return rc;
	if (!to_stdout)
		eb_facts_print(stdout, &x);
	if (o->json != NULL || o->csv != NULL)
		rc = eb_facts_write(&x, o->csv, o->json);
	if (rc == EB_OK && o->md != NULL)
		rc = eb_facts_md(&x, o->md);
	eb_facts_free(&x);
	return rc;
}

const struct eb_cmd eb_cmd_info = {
    .name = "info",
    .summary = "providers, NICs and link speeds, GPUs, what this build and machine offer",
    .help = "  libfabric's version and every RDM entry of every provider (what each supports\n"
	    "  among the features efabench uses), link speeds, the GPUs CUDA sees, MPI and\n"
	    "  hwloc. --json FILE writes the same facts as JSON (- for stdout, then without\n"
	    "  the text): efabench, libfabric {runtime, built}, mpi_bootstrap, cuda {built,\n"
	    "  gpus}, topology, gpus [...], registration [...] (GPU memory per provider), and\n"
	    "  results: one record per provider, domain, fabric and address format; --csv FILE\n"
	    "  writes those records as rows",
    .groups = EB_G_OUTPUT,
    .main = info_main,
};
