/* libfabric shm's segments in /dev/shm, named "<pid>:<uid>:<endpoint>" by 1.17 to 2.x. */
#ifndef EB_CORE_SHMSEG_H
#define EB_CORE_SHMSEG_H

#include <sys/types.h>

/* Unlink this user's segments created by process pid; how many. */
int eb_shmseg_unlink(pid_t pid);

#endif
