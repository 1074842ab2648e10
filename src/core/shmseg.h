/* Segments in /dev/shm named "<pid>:<uid>:...": libfabric shm's ("<pid>:<uid>:<endpoint>" by
 * 1.17 to 2.x, with "_<message>" for its mmap protocol) and efabench's shared buffers. */
#ifndef EB_CORE_SHMSEG_H
#define EB_CORE_SHMSEG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Unlink this user's segments created by process pid; how many. */
int eb_shmseg_unlink(pid_t pid);

/* This user's segments whose creator is gone (not a process here: killed without removing
 * them, or one of another pid namespace sharing /dev/shm); how many, their sizes' sum in *size
 * and the memory they hold (pages written) in *held. */
int eb_shmseg_gone(uint64_t *size, uint64_t *held);

/* Peers on this host, watched so that this process removes the segments of those that died
 * without removing them (killed) or are stopped, at exit; and when SIGTERM, SIGINT or SIGHUP
 * ends it (a launcher ending the job), before the handler that was there, those of every
 * peer and its own. This process itself is never watched. */
void eb_shmseg_watch(pid_t pid);

/* What exit does, now: for a way out that runs no exit handlers (MPI_Abort, _exit). */
void eb_shmseg_reap(void);

#endif
