#include "shmseg.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

pid_t eb_shmseg_pid(const char *addr, size_t len)
{
	static const char prefix[] = "fi_shm://";
	char buf[96];
	int pid;
	unsigned uid;

	if (len >= sizeof(buf) || len < sizeof(prefix))
		return 0;
	memcpy(buf, addr, len);
	buf[len] = '\0';
	if (strncmp(buf, prefix, sizeof(prefix) - 1) != 0 ||
	    sscanf(buf + sizeof(prefix) - 1, "%d:%u:", &pid, &uid) != 2 || uid != getuid())
		return 0;
	return pid > 0 ? (pid_t)pid : 0;
}

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
