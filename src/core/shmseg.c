#define _GNU_SOURCE /* syscall */
#include "shmseg.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Raw getdents64 records: opendir allocates, and a signal handler walks /dev/shm too. */
struct raw_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* The pid in a name "<pid>:<uid>:..." of this user's, or 0. */
static pid_t owner(const char *s)
{
	unsigned long pid = 0, uid = 0;

	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++)
		pid = pid * 10 + (unsigned long)(*s - '0');
	if (*s++ != ':' || *s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++)
		uid = uid * 10 + (unsigned long)(*s - '0');
	return *s == ':' && uid == (unsigned long)getuid() ? (pid_t)pid : 0;
}

/* fn(dir, name, pid, arg) for every segment of this user's; how many it returned 1 for. One pass
 * over /dev/shm, async-signal-safe as long as fn is: no allocation, no stdio. */
static int each_segment(int (*fn)(int dir, const char *name, pid_t pid, void *arg), void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	long got, at;

	if (fd < 0)
		return 0;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (at = 0; at < got; at += ((struct raw_dirent *)(buf + at))->reclen) {
			const char *name = ((struct raw_dirent *)(buf + at))->name;
			pid_t pid = owner(name);

			if (pid > 0)
				n += fn(fd, name, pid, arg);
		}
	close(fd);
	return n;
}

static int add_if_gone(int dir, const char *name, pid_t pid, void *arg)
{
	uint64_t *sum = arg; /* size, then memory */
	struct stat st;

	if (eb_proc_alive(pid) || fstatat(dir, name, &st, 0) != 0)
		return 0;
	sum[0] += (uint64_t)st.st_size;
	sum[1] += (uint64_t)st.st_blocks * 512u;
	return 1;
}

int eb_shmseg_gone(uint64_t *size, uint64_t *held)
{
	uint64_t sum[2] = {0, 0};
	int n = each_segment(add_if_gone, sum);

	*size = sum[0];
	*held = sum[1];
	return n;
}

static int unlink_of_pid(int dir, const char *name, pid_t pid, void *arg)
{
	return pid == *(const pid_t *)arg && unlinkat(dir, name, 0) == 0;
}

int eb_shmseg_unlink(pid_t pid)
{
	return each_segment(unlink_of_pid, &pid);
}

/* The watch list, fixed in size so that a signal handler can walk it: an entry is written
 * before the count that makes it visible. Ranks that share a host are few. */
#define MAX_WATCHED 1024
static pid_t watched[MAX_WATCHED];
static unsigned long long started[MAX_WATCHED]; /* when each started (eb_proc_start) */
static volatile sig_atomic_t nwatched;
static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction old[3];
static int handling;

/* Gone, a zombie, or stopped (SIGSTOP, SIGTSTP). A stopped peer is what ended the job; its
 * segment stays mapped where it is in use, and nobody will look it up by name again, while the
 * launcher that ends it will not remove it. */
static int dead(pid_t pid)
{
	return !eb_proc_alive(pid) || eb_proc_state(pid) == 'T';
}

static int of_this_job(pid_t pid)
{
	int i;

	if (pid == getpid())
		return 1;
	/* a live process with a peer's pid is that peer, not a later one, if it started then */
	for (i = 0; i < nwatched; i++)
		if (watched[i] == pid)
			return dead(pid) || eb_proc_start(pid) == started[i];
	return 0;
}

static int unlink_of_job(int dir, const char *name, pid_t pid, void *arg)
{
	(void)arg;
	return of_this_job(pid) && unlinkat(dir, name, 0) == 0;
}

/* A launcher ending the job sends this to every rank, and need not wait for their handlers:
 * Open MPI's mpirun sends SIGKILL to the rest the moment the first one has gone. So the first
 * rank here to handle it removes the segments of every rank of this host, live ones too (the
 * job is over: their mappings stay valid and no name is looked up again), and its own (shm's
 * handler removes shm's; the ones efabench made for stores are not shm's). */
static void on_signal(int sig)
{
	int k, saved = errno;

	each_segment(unlink_of_job, NULL);
	for (k = 0; k < 3; k++) /* then whatever was there (libfabric's, the default) */
		if (sigs[k] == sig)
			sigaction(sig, &old[k], NULL);
	errno = saved;
	raise(sig);
}

/* At exit (a rank that failed, before or after its channels, leaves through here). A peer
 * killed a moment ago may still be on its way out (its sockets close, which is how this
 * process learned of it, before it is a zombie): such a one gets up to a second. */
void eb_shmseg_reap(void)
{
	int i, t;

	for (i = 0; i < nwatched; i++) {
		for (t = 0; t < 200 && !dead(watched[i]) && eb_proc_exiting(watched[i]); t++)
			nanosleep(&(struct timespec){0, 5000000}, NULL);
		if (dead(watched[i]))
			eb_shmseg_unlink(watched[i]);
	}
}

void eb_shmseg_watch(pid_t pid)
{
	struct sigaction sa;
	int i, k;

	if (pid <= 0 || pid == getpid() || nwatched == MAX_WATCHED)
		return;
	for (i = 0; i < nwatched; i++)
		if (watched[i] == pid)
			return;
	watched[nwatched] = pid;
	started[nwatched] = eb_proc_start(pid);
	nwatched = nwatched + 1;
	if (handling)
		return;
	handling = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < 3; k++)
		sigaction(sigs[k], &sa, &old[k]);
	atexit(eb_shmseg_reap);
}
