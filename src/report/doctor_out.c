/* efabench doctor's output: the plan, one PASS / WARN / FAIL line per check and rank, the
 * tally, and a record per check. */
#include "doctor_view.h"
#include "doc.h"
#include "efabench/status.h"

#include <stdio.h>

const char *eb_verdict_name(int v)
{
	static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};

	return v >= 0 && v <= EB_SKIP ? names[v] : "?";
}

void eb_doctor_plan(const struct eb_doctor_view *x)
{
	int k;

	printf("# efabench doctor: %d rank%s, provider %s\n# checks on every rank: libfabric, "
	       "provider (EFA where EFA hardware is), NICs and links, ulimit -l, huge pages;\n"
	       "# one rank per host: GPUs (--expect-gpus), NVLinks, nearest NICs, GPU memory "
	       "registration\n",
	       x->n, x->n == 1 ? "" : "s", x->prov[0] ? x->prov : "(none usable)");
	if (x->no_measure) {
		printf("# measurements: none (--no-measure)\n");
		return;
	}
	printf("# measurements: GPU copy engines between every GPU pair (256 MiB) against "
	       "NVLink peak x %.2f, each GPU's floor against %.1f us;\n# NIC write bandwidth in "
	       "%ld tournament round%s x every NIC x 2 directions (%llu-byte writes, %ld timed) "
	       "against link x %.2f\n# NICs on rank 0:",
	       x->min_nvlink, x->max_floor_us, x->rounds_asked, x->rounds_asked == 1 ? "" : "s",
	       (unsigned long long)x->size, x->iters, x->min_link);
	for (k = 0; k < x->nnics; k++)
		printf(" %s%s", x->nic[k].name, x->nic[k].up ? "" : " (unusable)");
	printf("\n");
	fflush(stdout);
}

/* Rank 0: every line, the tally, the JSON; returns the number of FAILs. */
int eb_doctor_report(const struct eb_doctor_view *x)
{
	int r, k, count[4] = {0};
	struct eb_doc doc = {0};

	printf("# efabench doctor: %d rank%s, provider %s", x->n, x->n == 1 ? "" : "s",
	       x->prov[0] ? x->prov : "(none usable)");
	if (x->measured)
		printf("; %d round%s x %d NIC%s x 2 directions in %.2f s", x->rounds,
		       x->rounds == 1 ? "" : "s", x->nch, x->nch == 1 ? "" : "s", x->elapsed_s);
	else if (!x->no_measure)
		printf("; bandwidth %s", x->skip);
	if (x->measured && x->left[0] != '\0')
		printf("\n# not measured, unusable on a rank:%s", x->left);
	printf("\n");
	eb_rec_str(&doc.head, "bench", "doctor");
	eb_rec_int(&doc.head, "ranks", x->n);
	eb_rec_str(&doc.head, "provider", x->prov);
	eb_rec_int(&doc.head, "rounds", x->measured ? x->rounds : 0);
	eb_rec_num(&doc.head, "min_link", x->min_link);
	eb_rec_int(&doc.head, "size", (long long)x->size);
	for (r = 0; r < x->n; r++) {
		eb_rec_strs(&doc.head, "hosts", x->host[r]);
		printf("#\n## rank %d (%s)\n", r, x->host[r]);
		for (k = 0; k < x->per[r].n; k++) {
			const struct eb_check *c = &x->per[r].c[k];
			struct eb_rec *rec = eb_doc_add(&doc);

			count[c->verdict]++;
			if (!x->brief || c->verdict == EB_WARN || c->verdict == EB_FAIL)
				printf("%s  %-20s %s\n", eb_verdict_name(c->verdict), c->name,
				       c->why);
			if (rec == NULL)
				continue;
			eb_rec_int(rec, "rank", r);
			eb_rec_str(rec, "host", x->host[r]);
			eb_rec_str(rec, "check", c->name);
			eb_rec_str(rec, "verdict", eb_verdict_name(c->verdict));
			eb_rec_num(rec, "value", c->value);
			eb_rec_num(rec, "limit", c->limit);
			eb_rec_str(rec, "reason", c->why);
		}
	}
	printf("#\n# %s: %d FAIL, %d WARN, %d PASS, %d SKIP\n",
	       count[EB_FAIL]	? "FAIL"
	       : count[EB_WARN] ? "WARN"
				: "PASS",
	       count[EB_FAIL], count[EB_WARN], count[EB_PASS], count[EB_SKIP]);
	for (r = 0; r < x->n; r++)
		for (k = 0; k < x->per[r].n; k++)
			if (x->per[r].c[k].verdict == EB_FAIL)
				printf("# FAIL rank %d (%s) %s: %s\n", r, x->host[r],
				       x->per[r].c[k].name, x->per[r].c[k].why);
	fflush(stdout);
	eb_rec_str(&doc.head, "verdict",
		   count[EB_FAIL]   ? "FAIL"
		   : count[EB_WARN] ? "WARN"
				    : "PASS");
	eb_rec_int(&doc.head, "fail", count[EB_FAIL]);
	eb_rec_int(&doc.head, "warn", count[EB_WARN]);
	if (eb_doc_write(&doc, x->csv, x->json) != EB_OK)
		count[EB_FAIL]++;
	eb_doc_free(&doc);
	return count[EB_FAIL];
}
