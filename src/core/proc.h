/* Other processes as /proc and kill(2) see them; async-signal-safe, for signal handlers too. */
#ifndef EB_CORE_PROC_H
#define EB_CORE_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* A process's scheduling state from /proc (R, S, D, T stopped, t traced, Z ...); '?' if unknown. */
char eb_proc_state(pid_t pid);

/* Whether the process exists and is not a zombie (someone else's counts: EPERM). */
int eb_proc_alive(pid_t pid);

/* Whether the process is on its way out (PF_EXITING: killed or exiting, not yet a zombie). */
int eb_proc_exiting(pid_t pid);

/* When the process started (clock ticks after boot), telling it from a later one that got its
 * pid again; 0 if it is gone. */
unsigned long long eb_proc_start(pid_t pid);

#endif
