/* Where the report prints: stdout, and with --md a Markdown copy of the same lines, tables as
 * tables and every other line in code blocks. Everything src/report prints goes through
 * eb_outf, so the copy is the output itself, never text read back. */
#ifndef EB_REPORT_OUT_H
#define EB_REPORT_OUT_H

#include <stdarg.h>

/* Start the Markdown copy at path (NULL: none); EB_OK or EB_ESYS after one line. */
int eb_out_md(const char *path);
/* End it (its last code block closed); EB_OK or EB_ESYS. */
int eb_out_md_close(void);
/* printf to stdout and to the copy. */
void eb_outf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void eb_voutf(const char *fmt, va_list ap);
void eb_out_flush(void);

#endif
