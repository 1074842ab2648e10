/* One-line diagnostics on stderr, prefixed with the rank that prints them. */
#ifndef EB_CORE_LOG_H
#define EB_CORE_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rank < 0 means "launcher" (no rank yet). */
void eb_log_set_rank(int rank);
void eb_log_set_verbose(int verbose);
int eb_log_verbose(void);

void eb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void eb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void eb_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
