/* NVLink speed of a GPU as NVML reports it. */
#ifndef EB_GPU_NVLINK_H
#define EB_GPU_NVLINK_H

/* Active NVLinks of the GPU with this PCI bus id (0 when none is) and their mean speed in GB/s
 * per direction (1e9 bytes); EB_OK, or EB_ENOTSUP when NVML is missing or does not know the
 * GPU (no message: the caller falls back to --link-gbps). */
int eb_nvlink_peak(const char *pci, int *links, double *link_gbytes);

#endif
