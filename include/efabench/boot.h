/* Bootstrap: who am I, how many are we, and the few collectives that exchange addresses and
 * keys. Every call takes an absolute deadline (eb_boot_deadline, or eb_engine_deadline once an
 * engine is open) and fails, naming the lost rank, instead of hanging when a peer dies. */
#ifndef EFABENCH_BOOT_H
#define EFABENCH_BOOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_boot;

struct eb_boot_ops {
	const char *name;
	/* out receives size * len bytes: rank r's contribution at r * len. */
	int (*allgather)(struct eb_boot *b, const void *in, void *out, size_t len,
			 uint64_t deadline);
	/* in holds size blocks of blk bytes, block r for rank r; out receives block `rank` of
	 * every rank, in rank order. */
	int (*alltoall)(struct eb_boot *b, const void *in, void *out, size_t blk,
			uint64_t deadline);
	/* Non-blocking: EB_EPEER (after printing which rank) once any peer has been lost. */
	int (*check)(struct eb_boot *b);
	/* Last call of a rank; a non-zero exit_code tells the launcher this rank failed. */
	void (*finalize)(struct eb_boot *b, int exit_code);
	/* The launcher's own all-to-all-v of payload (MPI's), or NULL: see eb_boot_alltoallv. */
	int (*alltoallv)(struct eb_boot *b, const void *send, const int *scount, const int *sdispl,
			 void *recv, const int *rcount, const int *rdispl, uint64_t deadline);
};

/* What a rank keeps doing while a collective waits (eb_boot_idle_add). */
struct eb_boot_idle {
	void (*fn)(void *arg);
	void *arg;
};

struct eb_boot {
	int rank, size;
	int local_rank, local_size; /* among ranks on this host */
	const struct eb_boot_ops *ops;
	void *impl;
	/* MPI: > 0, a collective that waits longer asks every rank this often (seconds) whether
	 * it is still there, and ends at once, naming the silent ones. */
	double ask_s;
	struct eb_boot_idle *idle; /* called about every millisecond a collective waits */
	int nidle, idle_cap;
};

/* While a collective waits, call fn(arg) about every millisecond (and once as it starts): the
 * fabric's engines progress there, since a provider such as efa needs its targets to answer
 * its own protocol (receipts, end-of-read, resends) after their wait for data ended. EB_ENOMEM
 * when it cannot be added (printed). Remove by arg. */
int eb_boot_idle_add(struct eb_boot *b, void (*fn)(void *arg), void *arg);
void eb_boot_idle_remove(struct eb_boot *b, void *arg);
/* Run them once (the collectives do). */
void eb_boot_idle(struct eb_boot *b);

int eb_boot_allgather(struct eb_boot *b, const void *in, void *out, size_t len, uint64_t deadline);
int eb_boot_alltoall(struct eb_boot *b, const void *in, void *out, size_t blk, uint64_t deadline);
int eb_boot_barrier(struct eb_boot *b, uint64_t deadline);
int eb_boot_check(struct eb_boot *b);
void eb_boot_finalize(struct eb_boot *b, int exit_code);

/* A baseline users know: the MPI library's MPI_Alltoallv of bytes (counts and displacements
 * in bytes, [size] each, as MPI takes them) between buffers in host memory. The call blocks
 * in MPI; when it has not returned by the deadline, this rank says so and exits with status
 * 1, and the MPI launcher ends the job. EB_ENOTSUP (said by the caller) where the job was not
 * started by an MPI launcher. */
int eb_boot_alltoallv(struct eb_boot *b, const void *send, const int *scount, const int *sdispl,
		      void *recv, const int *rcount, const int *rdispl, uint64_t deadline);
int eb_boot_has_alltoallv(const struct eb_boot *b);

enum eb_reduce { EB_SUM, EB_MIN, EB_MAX };

/* Every rank's v combined (sum, min or max) into *out on every rank. */
int eb_boot_allreduce(struct eb_boot *b, int64_t v, enum eb_reduce op, int64_t *out,
		      uint64_t deadline);

/* The absolute deadline `seconds` from now (CLOCK_MONOTONIC nanoseconds), for the calls below. */
uint64_t eb_boot_deadline(double seconds);

/* This host's name: $EFABENCH_HOST when set (network namespaces of one machine standing for
 * hosts), else gethostname; zero-padded to len. */
void eb_host_name(char *name, size_t len);
/* 1 if every rank reports the same host name (decides shm vs tcp), 0 if not, or < 0. */
int eb_boot_single_host(struct eb_boot *b, uint64_t deadline);

/* Who shares this host's CPUs, from every rank's host name, running kernel and affinity
 * mask: ranks = the ranks with this host name, cpus = the CPUs in the union of their masks
 * (ranks bound one per core by a launcher or --cpu-map still have a core each); single =
 * every rank has this host name. machine_ranks and machine_cpus count the same for the ranks
 * on this kernel (its boot id), whatever host name they go by: ranks in network namespaces
 * of one machine are hosts to the fabric but share its cores. Collective. */
struct eb_host_share {
	int single, ranks, cpus;
	int machine_ranks, machine_cpus;
};
int eb_boot_host_share(struct eb_boot *b, uint64_t deadline, struct eb_host_share *out);

enum eb_launcher {
	EB_LAUNCH_LOCAL, /* no launcher in the environment: we fork ranks ourselves */
	EB_LAUNCH_MPI,	 /* started by mpirun, mpiexec or srun */
	EB_LAUNCH_TCP,	 /* EFABENCH_ROOT is set: TCP rendezvous through rank 0 */
};

#define EB_RDV_TOKEN_MAX 128
#define EB_RDV_MAX_RANKS 65535

/* Where and who for the TCP rendezvous. Unset fields (NULL, rank < 0, size <= 0) are taken
 * from EFABENCH_ROOT (host:port, an address of rank 0), EFABENCH_RANK, EFABENCH_SIZE and
 * EFABENCH_TOKEN (a per-job secret every rank must present). */
struct eb_rdv_opts {
	const char *root;
	int rank, size;
	const char *token;
	double timeout_s; /* for every rank to join, and for each connection attempt */
};

/* Fill the unset fields from the environment and check them: EB_EINVAL with one line. */
int eb_rdv_opts_resolve(struct eb_rdv_opts *o);

/* Join the rendezvous (rank 0 also serves it). Collective over all ranks of the job. */
int eb_boot_rdv_init(struct eb_boot *b, const struct eb_rdv_opts *o);

/* Which launcher started this process, judged from its environment. */
enum eb_launcher eb_boot_detect(void);

/* 1 when this build can bootstrap through MPI. */
int eb_boot_have_mpi(void);

/* Initialise MPI and fill b; EB_ENOTSUP when built without MPI. MPI's start-up has no deadline
 * of its own: when it has not finished within timeout_s (a rank stopped or hung while the job
 * started), this process prints why and exits with status 1, and the MPI launcher ends the job. */
int eb_boot_mpi_init(struct eb_boot *b, double timeout_s);

typedef int (*eb_rank_main)(struct eb_boot *b, void *arg);

/* The embedded launcher: fork np ranks on this host, connected to this process over
 * inherited sockets; run fn(b, arg) in each; serve their collectives; when one dies, tell the
 * others which. Survivors of an abort get 4 s (or grace_s, if shorter) to exit before they
 * are killed; grace_s is also the ranks' deadline plus 5 s.
 * Returns the job's exit status (0 when every rank returned 0). */
int eb_launch_local(int np, eb_rank_main fn, void *arg, double grace_s);

/* Run fn(arg, out) in a child process, so this one initialises nothing (libfabric, CUDA)
 * before it forks ranks; out (len bytes) comes back through a pipe. Returns fn's value as
 * the child's exit status (0..255), or 1 when the child died (printed). */
int eb_launch_probe(int (*fn)(const void *arg, void *out), const void *arg, void *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
