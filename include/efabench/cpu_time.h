/* The host's CPU time as the kernel counts it on /proc/stat's "cpu" line: every CPU's clock
 * ticks, and of them the steal, the time a hypervisor ran something else while this guest had
 * work for the CPU (0 on bare metal). Read under $EB_PROCFS_ROOT when it is set. */
#ifndef EFABENCH_CPU_TIME_H
#define EFABENCH_CPU_TIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eb_cpu_time {
	uint64_t total; /* user, nice, system, idle, iowait, irq, softirq and steal ticks */
	uint64_t steal;
};

/* The "cpu" line of a /proc/stat text; EB_EINVAL where it has none or it lacks the steal
 * column (kernels before 2.6.11). */
int eb_cpu_time_parse(const char *text, struct eb_cpu_time *t);

/* This host's, now; EB_ENOTSUP where /proc/stat cannot be read or has no steal. */
int eb_cpu_time_read(struct eb_cpu_time *t);

/* Seconds per tick (USER_HZ). */
double eb_cpu_tick_s(void);

#ifdef __cplusplus
}
#endif

#endif
