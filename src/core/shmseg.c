#include "shmseg.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Decimal digits of v at p, without snprintf (not async-signal-safe); how many. */
static size_t put_uint(char *p, unsigned long v)
{
	char t[24];
	size_t n = 0, i;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	for (i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

/* Gone, a zombie, or stopped (SIGSTOP, SIGTSTP), with only async-signal-safe calls. A stopped
 * peer is what ended the job; its segment stays mapped where it is in use, and nobody will
 * look it up by name again, while the launcher that ends it will not remove it. */
static int dead(pid_t pid)
{
	char path[48] = "/proc/", buf[512], *p = NULL;
	size_t k = 6;
	ssize_t n, i;
	int fd;

	if (kill(pid, 0) != 0)
		return errno == ESRCH; /* EPERM: someone else's, alive */
	k += put_uint(path + k, (unsigned long)pid);
	memcpy(path + k, "/stat", 6);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (i = 0; i < n; i++)
		if (buf[i] == ')')
			p = buf + i;
	return p != NULL && p + 2 < buf + n && (p[2] == 'Z' || p[2] == 'X' || p[2] == 'T');
}

/* Unlink "/dev/shm/<pid>:<uid>:<n>" for n below MAX_EP, async-signal-safe. */
static void unlink_each(pid_t pid)
{
	char path[96] = "/dev/shm/";
	size_t k = 9, at;
	unsigned n;

	k += put_uint(path + k, (unsigned long)pid);
	path[k++] = ':';
	k += put_uint(path + k, (unsigned long)getuid());
	path[k++] = ':';
	at = k;
	for (n = 0; n < MAX_EP; n++) {
		path[at + put_uint(path + at, n)] = '\0';
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

static void at_exit(void)
{
	eb_shmseg_sweep();
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
	atexit(at_exit); /* a rank that fails before or after its channels exits through here */
}

int eb_shmseg_sweep(void)
{
	int i, n = 0;

	for (i = 0; i < nwatched; i++)
		if (dead(watched[i]))
			n += eb_shmseg_unlink(watched[i]);
	return n;
}
