/* The machine facts (efabench/facts.h) as text for a terminal, and as a document (JSON, CSV)
 * for programs: efabench report reads the JSON. */
#ifndef EB_REPORT_INFO_OUT_H
#define EB_REPORT_INFO_OUT_H

#include "efabench/facts.h"

#include <stdio.h>

/* What `efabench info` prints. */
void eb_facts_print(FILE *f, const struct eb_facts *x);

/* The facts as one document: the header holds versions, topology, GPUs and registration, the
 * results one record per provider entry (the CSV's rows). Paths as eb_doc_write takes them;
 * "-" is stdout. EB_OK, or a negative status after one line. */
int eb_facts_write(const struct eb_facts *x, const char *csv_path, const char *json_path);

/* The text of eb_facts_print as Markdown at path (a code block); EB_OK or EB_ESYS. */
int eb_facts_md(const struct eb_facts *x, const char *path);

#endif
