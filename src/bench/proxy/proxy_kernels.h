/* GPU producers of `efabench proxy`, callable from C. */
#ifndef EB_BENCH_PROXY_KERNELS_H
#define EB_BENCH_PROXY_KERNELS_H

#include "proxy_work.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory for n + 2 timestamps (w->t), t[0] = UINT64_MAX, the rest 0. */
int eb_pk_times(struct eb_pwork *w, long n);
void eb_pk_free_times(struct eb_pwork *w);

/* Launch `producers` blocks whose thread 0 runs eb_pwork_run; asynchronous. */
int eb_pk_launch(const struct eb_pwork *w, int producers);

/* 1 when the producers have finished (timestamps copied into t, n + 2 of them; *failed set
 * when any producer failed), 0 while they run, or a negative status after one line. */
int eb_pk_done(const struct eb_pwork *w, long n, uint64_t *t, int *failed);

#ifdef __cplusplus
}
#endif

#endif
