/* Host buffers for payloads: page-aligned so every provider can register them. */
#ifndef EFABENCH_BUF_H
#define EFABENCH_BUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns NULL after printing why. */
void *eb_buf_alloc_host(size_t len, const char *what);
void eb_buf_free_host(void *buf);

#ifdef __cplusplus
}
#endif

#endif
