#include "shmseg.h"

#include <dirent.h>
#include <stdio.h>
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
