/* libfabric shm's segments in /dev/shm, named "<pid>:<uid>:<endpoint>" by 1.17 to 2.x. */
#ifndef EB_CORE_SHMSEG_H
#define EB_CORE_SHMSEG_H

#include <sys/types.h>

/* Unlink this user's segments created by process pid; how many. */
int eb_shmseg_unlink(pid_t pid);

/* The creator's pid in an shm endpoint address ("fi_shm://<pid>:<uid>:<n>") when its uid is
 * ours, else 0. */
pid_t eb_shmseg_pid(const char *addr, size_t len);

#endif
