/* libfabric shm's segments in /dev/shm, named "<pid>:<uid>:<endpoint>" by 1.17 to 2.x. */
#ifndef EB_CORE_SHMSEG_H
#define EB_CORE_SHMSEG_H

#include <stddef.h>
#include <sys/types.h>

/* Unlink this user's segments created by process pid; how many. */
int eb_shmseg_unlink(pid_t pid);

/* Peers' segments, watched so that this process removes those whose creator died without
 * removing them (killed) or is stopped: at eb_shmseg_sweep, and when SIGTERM, SIGINT or
 * SIGHUP ends this process (a launcher ending the job after the kill), before the handler
 * that was there.
 * addr is an shm endpoint address ("fi_shm://<pid>:<uid>:<n>"); only this user's, and not
 * this process's own, are watched. */
void eb_shmseg_watch(const char *addr, size_t len);

/* Remove the watched segments whose creators are dead or stopped; how many. */
int eb_shmseg_sweep(void);

#endif
