/* Copy-engine bandwidth between two GPUs of this host, for `doctor`: what NVLink delivers to a
 * plain cudaMemcpyPeerAsync, to compare with the peak NVML reports. */
#ifndef EB_GPU_CE_H
#define EB_GPU_CE_H

#include <stddef.h>

/* 1 when GPU a can map GPU b's memory (peer access), 0 when not, < 0 without CUDA. */
int eb_ce_can_peer(int a, int b);

/* GB/s (1e9 bytes per second) of iters copies of size bytes from GPU src to GPU dst, after one
 * untimed copy, timed with CUDA events on src's stream; every byte of the last copy checked at
 * dst. 0, EB_ENOTSUP without CUDA, EB_EVERIFY when a byte arrived wrong, else a negative
 * status after one line. */
int eb_ce_gbytes(int src, int dst, size_t size, int iters, double *gbytes);

#endif
