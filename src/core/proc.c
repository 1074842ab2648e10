#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* v's decimal digits at p (no terminator), without snprintf; how many. */
static size_t digits(char *p, unsigned long v)
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

/* /proc/<pid>/stat into buf; the offset just past the last ')' (the command name may hold
 * spaces and parentheses: the fields follow it), or -1. */
static ssize_t read_stat(pid_t pid, char *buf, size_t len, ssize_t *n)
{
	char path[48] = "/proc/";
	size_t k = 6;
	ssize_t i, close_paren = -1;
	int fd;

	k += digits(path + k, (unsigned long)pid);
	memcpy(path + k, "/stat", 6);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	*n = read(fd, buf, len);
	close(fd);
	for (i = 0; i < *n; i++)
		if (buf[i] == ')')
			close_paren = i;
	return close_paren >= 0 && close_paren + 2 < *n && buf[close_paren + 1] == ' '
		   ? close_paren + 2
		   : -1;
}

char eb_proc_state(pid_t pid)
{
	char buf[512];
	ssize_t n, at = read_stat(pid, buf, sizeof(buf), &n);

	return at >= 0 ? buf[at] : '?';
}

int eb_proc_alive(pid_t pid)
{
	char s;

	if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
		return 0;
	s = eb_proc_state(pid);
	return s != 'Z' && s != 'X';
}

/* Field k (counting from 1, past the state) of /proc/<pid>/stat as a number; 0 if unreadable. */
static unsigned long long stat_number(pid_t pid, int k)
{
	char buf[512];
	ssize_t n, at = read_stat(pid, buf, sizeof(buf), &n);
	unsigned long long v = 0;
	int field = 3; /* the state */

	if (at < 0)
		return 0;
	for (; at < n && field < k; at++)
		field += buf[at] == ' ';
	for (; at < n && buf[at] >= '0' && buf[at] <= '9'; at++)
		v = v * 10 + (unsigned long long)(buf[at] - '0');
	return field == k ? v : 0;
}

int eb_proc_exiting(pid_t pid)
{
	return (stat_number(pid, 9) & 0x4) != 0; /* flags: PF_EXITING */
}

unsigned long long eb_proc_start(pid_t pid)
{
	return stat_number(pid, 22);
}
