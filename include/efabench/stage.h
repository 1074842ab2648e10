/* Copies between GPU memory and pinned bounce buffers on CUDA streams, tracked by ticket, so
 * a staged transfer can copy chunk k + 1 while chunk k is on the wire. */
#ifndef EFABENCH_STAGE_H
#define EFABENCH_STAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_stage;

/* Up to `slots` copies in flight (one CUDA event each), on one stream per direction.
 * EB_ENOTSUP in a build without CUDA. */
int eb_stage_create(struct eb_stage **s, int slots);
void eb_stage_destroy(struct eb_stage *s);

/* Start copying n bytes; to_device says the direction; *ticket names the copy. EB_OK, EB_AGAIN
 * when every slot is busy, or a negative status after one line. */
int eb_stage_start(struct eb_stage *s, void *dst, const void *src, size_t n, int to_device,
		   int *ticket);

/* 1 once the ticket's copy is complete (the ticket is then free), 0 while it runs, or a
 * negative status after one line. */
int eb_stage_test(struct eb_stage *s, int ticket);

/* Wait for every copy in flight; frees all tickets. */
int eb_stage_drain(struct eb_stage *s);

#ifdef __cplusplus
}
#endif

#endif
