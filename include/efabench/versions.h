/* What this build is and what it runs on: the one place the version facts come from. */
#ifndef EFABENCH_VERSIONS_H
#define EFABENCH_VERSIONS_H

#ifdef __cplusplus
extern "C" {
#endif

struct eb_versions {
	const char *efabench;			 /* "0.6.0" */
	const char *commit;			 /* the build's git commit, "unknown" */
	unsigned fi_major, fi_minor;		 /* the libfabric loaded at run time */
	unsigned fi_built_major, fi_built_minor; /* the headers efabench was built against */
	int mpi;				 /* the MPI bootstrap is built in */
	int cuda;				 /* CUDA is built in */
};

void eb_versions_get(struct eb_versions *v);

#ifdef __cplusplus
}
#endif

#endif
