/* Memory facts that need no GPU: whether an MPS control daemon runs, from its pid file. */
#define _GNU_SOURCE /* mkdtemp */
#include "check.h"
#include "efabench/mem.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char pidfile[PATH_MAX];

static void write_pid(const char *text)
{
	FILE *f = fopen(pidfile, "w");

	CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	char dir[] = "/tmp/eb-mps-XXXXXX", text[32];
	pid_t gone;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(pidfile, sizeof(pidfile), "%s/nvidia-cuda-mps-control.pid", dir);
	setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
	CHECK(eb_mem_mps_running() == 0); /* no pid file: no daemon (a stale socket may remain) */

	snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	write_pid(text);
	CHECK(eb_mem_mps_running() == 1);

	gone = fork(); /* a pid that has exited and been reaped */
	if (gone == 0)
		_exit(0);
	CHECK(gone > 0 && waitpid(gone, NULL, 0) == gone);
	snprintf(text, sizeof(text), "%ld\n", (long)gone);
	write_pid(text);
	CHECK(eb_mem_mps_running() == 0);

	write_pid("not a pid\n");
	CHECK(eb_mem_mps_running() == 0);

	setenv("CUDA_MPS_PIPE_DIRECTORY", "/nonexistent/eb-mps", 1);
	CHECK(eb_mem_mps_running() == 0);

	unlink(pidfile);
	rmdir(dir);
	return check_done();
}
