/* NVLink peak from NVML, loaded at run time: efabench needs no NVML headers or library to
 * build, and runs where the driver ships none. */
#include "nvlink.h"
#include "efabench/status.h"
#include "core/log.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* The few NVML declarations used here, as nvml.h (API v2+) defines them. */
#define NVML_SUCCESS		     0
#define NVML_FI_DEV_NVLINK_GET_SPEED 164 /* per link (scope = link id), MB/s per direction */
#define NVML_FI_DEV_NVLINK_GET_STATE 165 /* per link: 1 when active */
#define NVML_NVLINK_MAX_LINKS	     18

struct nvml_field {
	unsigned int field_id, scope_id;
	long long timestamp, latency_us;
	int value_type, nvml_return;
	union {
		double d;
		unsigned int ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
		int si;
		unsigned short us;
	} value;
};

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *, void **);
typedef int (*nvml_fields_fn)(void *, int, struct nvml_field *);

int eb_nvlink_peak(const char *pci, int *links, double *link_gbytes)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml_init_fn init;
	nvml_by_pci_fn by_pci;
	nvml_fields_fn fields;
	int (*shutdown)(void);
	struct nvml_field f[2 * NVML_NVLINK_MAX_LINKS];
	void *dev = NULL;
	double speed = 0;
	int i, n = 0, rc = EB_ENOTSUP;

	*links = 0;
	*link_gbytes = 0;
	if (lib == NULL) {
		eb_dbg("NVML not found (%s)", dlerror());
		return EB_ENOTSUP;
	}
	*(void **)&init = dlsym(lib, "nvmlInit_v2");
	*(void **)&by_pci = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&fields = dlsym(lib, "nvmlDeviceGetFieldValues");
	*(void **)&shutdown = dlsym(lib, "nvmlShutdown");
	if (init == NULL || by_pci == NULL || fields == NULL || shutdown == NULL) {
		eb_dbg("NVML lacks the functions needed for NVLink speeds");
		goto close_lib;
	}
	if (init() != NVML_SUCCESS) {
		eb_dbg("nvmlInit failed");
		goto close_lib;
	}
	if (by_pci(pci, &dev) != NVML_SUCCESS) {
		eb_dbg("NVML does not know GPU %s", pci);
		goto shut_down;
	}
	memset(f, 0, sizeof(f));
	for (i = 0; i < NVML_NVLINK_MAX_LINKS; i++) {
		f[2 * i] = (struct nvml_field){.field_id = NVML_FI_DEV_NVLINK_GET_STATE,
					       .scope_id = (unsigned)i};
		f[2 * i + 1] = (struct nvml_field){.field_id = NVML_FI_DEV_NVLINK_GET_SPEED,
						   .scope_id = (unsigned)i};
	}
	if (fields(dev, 2 * NVML_NVLINK_MAX_LINKS, f) != NVML_SUCCESS) {
		eb_dbg("NVML field values failed for GPU %s", pci);
		goto shut_down;
	}
	for (i = 0; i < NVML_NVLINK_MAX_LINKS; i++) {
		if (f[2 * i].nvml_return != NVML_SUCCESS || f[2 * i].value.ui != 1 ||
		    f[2 * i + 1].nvml_return != NVML_SUCCESS || f[2 * i + 1].value.ui == 0)
			continue;
		n++;
		speed += f[2 * i + 1].value.ui / 1e3;
	}
	*links = n;
	*link_gbytes = n > 0 ? speed / n : 0;
	rc = EB_OK;
shut_down:
	shutdown();
close_lib:
	dlclose(lib);
	return rc;
}
