#include "shmseg.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int eb_shmseg_unlink(pid_t pid)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *ent;
	char prefix[64];
	int n = 0;

	if (d == NULL)
		return 0;
	snprintf(prefix, sizeof(prefix), "%d:%u:", (int)pid, (unsigned)getuid());
	while ((ent = readdir(d)) != NULL)
		if (strncmp(ent->d_name, prefix, strlen(prefix)) == 0 &&
		    unlinkat(dirfd(d), ent->d_name, 0) == 0)
			n++;
	closedir(d);
	return n;
}

/* The watch list, fixed in size so that a signal handler can walk it: an entry is written
 * before the count that makes it visible. Ranks that share a host are few. */
#define MAX_WATCHED 1024
/* Endpoint indices a signal handler tries per dead peer (it cannot list /dev/shm): a process
 * numbers its shm endpoints from 0, a few per channel and engine. */
#define MAX_EP 256
static pid_t watched[MAX_WATCHED];
static volatile sig_atomic_t nwatched;
static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction old[3];
static int handling;

/* Gone, a zombie, or stopped (SIGSTOP, SIGTSTP), async-signal-safe. A stopped peer is what
 * ended the job; its segment stays mapped where it is in use, and nobody will look it up by
 * name again, while the launcher that ends it will not remove it. */
static int dead(pid_t pid)
{
	return !eb_proc_alive(pid) || eb_proc_state(pid) == 'T';
}

/* Unlink "/dev/shm/<pid>:<uid>:<n>" for n below MAX_EP, async-signal-safe. */
static void unlink_each(pid_t pid)
{
	char path[96] = "/dev/shm/";
	size_t k = 9, at;
	unsigned n;

	k += eb_proc_digits(path + k, (unsigned long)pid);
	path[k++] = ':';
	k += eb_proc_digits(path + k, (unsigned long)getuid());
	path[k++] = ':';
	at = k;
	for (n = 0; n < MAX_EP; n++) {
		path[at + eb_proc_digits(path + at, n)] = '\0';
		unlink(path);
	}
}

static void on_signal(int sig)
{
	int i, k, saved = errno;

	for (i = 0; i < nwatched; i++)
		if (dead(watched[i]))
			unlink_each(watched[i]);
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
