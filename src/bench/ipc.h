/* `efabench ipc`: GPU-to-GPU copies over NVLink through CUDA IPC, one rank per GPU. */
#ifndef EB_BENCH_IPC_H
#define EB_BENCH_IPC_H

#include <stdint.h>

enum eb_ipc_pairs {
	EB_IPC_FIRST, /* GPU 0 -> GPU 1 */
	EB_IPC_EACH,  /* every ordered pair, one at a time */
	EB_IPC_ALL,   /* every GPU to every other, all at once */
};

#define EB_IPC_MAX_SHAPES 16

struct eb_iopts {
	int grids[EB_IPC_MAX_SHAPES], ngrids; /* 0 stands for "all": one block per SM */
	int blocks[EB_IPC_MAX_SHAPES], nblocks;
	enum eb_ipc_pairs pairs;
	unsigned methods; /* bit (1 << enum eb_ik_method) for CE, ST, TMA */
	unsigned dirs;	  /* bit 0 write, bit 1 read */
	uint64_t tma_chunk;
	int tma_stages;
};

struct eb_opts;
struct eb_boot;

/* Defaults, before the command line is read. */
void eb_ipc_defaults(struct eb_iopts *io);

/* Parse --grid / --block lists (positive integers; "all" in grids), --pairs, --methods and
 * --dirs; EB_EINVAL without a message (the caller prints one line). */
int eb_ipc_parse_list(const char *s, int allow_all, int *out, int *n);
int eb_ipc_parse_pairs(const char *s, enum eb_ipc_pairs *p);
int eb_ipc_parse_methods(const char *s, unsigned *mask);
int eb_ipc_parse_dirs(const char *s, unsigned *mask);

/* Before the embedded launcher forks: count the GPUs and check peer access (in a child
 * process). Returns the rank count (--np, default every GPU), or minus an exit status after
 * one line saying why. */
int eb_ipc_probe(const struct eb_opts *o);

/* One rank (GPU = local rank); opts is the struct eb_opts. Returns the exit status. */
int eb_ipc_rank(struct eb_boot *boot, void *opts);

#endif
