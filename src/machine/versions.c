#include "efabench/versions.h"
#include "efabench/boot.h"
#include "efabench/mem.h"

#include <rdma/fabric.h>

extern const char eb_commit[]; /* generated at build time (cmake/commit.cmake) */

void eb_versions_get(struct eb_versions *v)
{
	uint32_t rt = fi_version();

	v->efabench = EB_VERSION_STRING;
	v->commit = eb_commit;
	v->fi_major = FI_MAJOR(rt);
	v->fi_minor = FI_MINOR(rt);
	v->fi_built_major = FI_MAJOR_VERSION;
	v->fi_built_minor = FI_MINOR_VERSION;
	v->mpi = eb_boot_have_mpi();
	v->cuda = eb_mem_have_cuda();
}
