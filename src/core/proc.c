#include "proc.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

size_t eb_proc_digits(char *p, unsigned long v)
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

char eb_proc_state(pid_t pid)
{
	char path[48] = "/proc/", buf[512];
	size_t k = 6;
	ssize_t n, i, close_paren = -1;
	int fd;

	k += eb_proc_digits(path + k, (unsigned long)pid);
	memcpy(path + k, "/stat", 6);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* the command name may hold spaces and parentheses: the state follows the last ')' */
	for (i = 0; i < n; i++)
		if (buf[i] == ')')
			close_paren = i;
	return close_paren >= 0 && close_paren + 2 < n && buf[close_paren + 1] == ' '
		   ? buf[close_paren + 2]
		   : '?';
}
