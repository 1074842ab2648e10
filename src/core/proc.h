/* Other processes as /proc and kill(2) see them. */
#ifndef EB_CORE_PROC_H
#define EB_CORE_PROC_H

#include <sys/types.h>

/* A process's scheduling state from /proc (R, S, D, T stopped, t traced, Z ...); '?' if unknown. */
char eb_proc_state(pid_t pid);

#endif
