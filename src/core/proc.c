#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

char eb_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return p != NULL && p[1] == ' ' ? p[2] : '?';
}

int eb_proc_dead(pid_t pid)
{
	char s;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) != 0) /* EPERM: someone else's, alive */
		return errno == ESRCH;
	s = eb_proc_state(pid);
	return s == 'Z' || s == 'X';
}
