/* What a rank removes from /dev/shm: at exit, the segments of peers that died (killed) or are
 * stopped, never a live one's; on SIGTERM (a launcher ending the job, which may SIGKILL the
 * others before they handle theirs), every peer's and its own, and then it dies of the signal.
 * Real processes and real segments. */
#define _GNU_SOURCE
#include "check.h"
#include "core/proc.h"
#include "core/shmseg.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void make(pid_t pid, unsigned uid, const char *tail)
{
	char name[96];
	int fd;

	snprintf(name, sizeof(name), "/%d:%u:%s", (int)pid, uid, tail);
	fd = shm_open(name, O_CREAT | O_RDWR, 0600);
	if (fd >= 0)
		close(fd);
}

static int exists(pid_t pid, unsigned uid, const char *tail)
{
	char path[96];

	snprintf(path, sizeof(path), "/dev/shm/%d:%u:%s", (int)pid, uid, tail);
	return access(path, F_OK) == 0;
}

/* A peer: an endpoint's segment and an mmap-protocol one, then it waits to be killed. */
static pid_t peer(void)
{
	int fds[2];
	char c = 0;
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		make(getpid(), getuid(), "0");
		make(getpid(), getuid(), "1_7");
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1)
		pid = -1;
	close(fds[0]);
	return pid;
}

/* A rank watching peers a and b, with a segment of its own: exits 0, or raises SIGTERM. */
static int rank(pid_t a, pid_t b, int sig, pid_t *out)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		eb_shmseg_watch(a);
		eb_shmseg_watch(b);
		make(getpid(), getuid(), "efabench-0");
		if (sig != 0)
			raise(sig);
		exit(0);
	}
	*out = pid;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	unsigned uid = getuid();
	pid_t live = peer(), killed = peer(), stopped = peer(), r;
	int st;

	CHECK(live > 0 && killed > 0 && stopped > 0);
	if (live <= 0 || killed <= 0 || stopped <= 0)
		return check_done();

	/* A peer told from a later process with its pid by when it started. */
	CHECK(eb_proc_start(live) != 0 && eb_proc_start(live) >= eb_proc_start(getpid()));

	/* At exit: the killed peer's and the stopped one's go, the live one's stay. */
	end(killed);
	CHECK(eb_proc_start(killed) == 0);
	kill(stopped, SIGSTOP);
	waitpid(stopped, &st, WUNTRACED);
	st = rank(killed, stopped, 0, &r);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(eb_shmseg_unlink(r) == 1); /* its own stays for its own teardown */
	CHECK(!exists(killed, uid, "0") && !exists(killed, uid, "1_7"));
	CHECK(!exists(stopped, uid, "0") && !exists(stopped, uid, "1_7"));
	st = rank(live, live, 0, &r);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(exists(live, uid, "0") && exists(live, uid, "1_7"));
	CHECK(eb_shmseg_unlink(r) == 1);
	end(stopped);

	/* On SIGTERM: both live peers' and its own, not another user's; it dies of SIGTERM. */
	stopped = peer();
	make(live, uid + 1, "0");
	st = rank(live, stopped, SIGTERM, &r);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	CHECK(!exists(live, uid, "0") && !exists(live, uid, "1_7"));
	CHECK(!exists(stopped, uid, "0") && !exists(stopped, uid, "1_7"));
	CHECK(!exists(r, uid, "efabench-0"));
	CHECK(exists(live, uid + 1, "0"));
	CHECK(kill(live, 0) == 0 && kill(stopped, 0) == 0); /* untouched themselves */

	/* eb_shmseg_unlink: that pid's of this user's, counted. */
	make(live, uid, "0");
	make(live, uid, "2_9");
	CHECK(eb_shmseg_unlink(live) == 2);
	CHECK(exists(live, uid + 1, "0"));
	{
		char name[64];

		snprintf(name, sizeof(name), "/%d:%u:0", (int)live, uid + 1);
		shm_unlink(name);
	}
	end(live);
	end(stopped);
	return check_done();
}
