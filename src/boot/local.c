/* The embedded launcher: `efabench <bench> --np N` forks N ranks and serves their bootstrap. */
#define _GNU_SOURCE
#include "efabench/boot.h"
#include "efabench/status.h"
#include "hub.h"
#include "wire.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/shmseg.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct child {
	pid_t pid;
	int status; /* from waitpid, valid when exited */
	int exited;
};

static void run_rank(int rank, int np, int fd, pid_t parent, eb_rank_main fn, void *arg)
{
	struct eb_wire_rank w = {.fd = fd};
	struct eb_boot b = {.rank = rank,
			    .size = np,
			    .local_rank = rank,
			    .local_size = np,
			    .ops = &eb_wire_boot_ops,
			    .impl = &w};
	int code;

	/* A rank must not outlive its launcher. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	eb_log_set_rank(rank);
	code = fn(&b, arg);
	eb_boot_finalize(&b, code);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* A rank's connection closed: it is exiting, so wait a moment for its status, which names the
 * cause (a signal, an exit code) better than the closed socket does. */
static void why_closed(struct eb_hub *h, int i, char *buf, size_t len)
{
	struct child *c = &((struct child *)h->owner)[i];
	uint64_t until = eb_deadline(1.0);
	int status;

	while (!c->exited && eb_now_ns() < until) {
		pid_t pid = waitpid(c->pid, &status, WNOHANG);

		if (pid == c->pid) {
			c->exited = 1;
			c->status = status;
			break;
		}
		usleep(1000);
	}
	if (c->exited)
		describe_exit(c->status, buf, len);
	if (c->exited && WIFSIGNALED(c->status))
		eb_err("rank %d (pid %d) %s", i, (int)c->pid, buf);
}

/* Collect exits without blocking; a rank that died or failed is reported to the others. */
static void reap(struct eb_hub *h, struct child *c, int np)
{
	int i, status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < np; i++) {
			char why[96];

			if (c[i].pid != pid)
				continue;
			c[i].exited = 1;
			c[i].status = status;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				break;
			/* Its last frame (FINI, with its exit code) may still be unread if it came
			 * after the hub's poll returned: read it before calling the rank lost. */
			if (h->r[i].state == EB_HUB_LIVE)
				eb_hub_poll(h, 0);
			describe_exit(status, why, sizeof(why));
			if (h->r[i].state == EB_HUB_LIVE)
				eb_err("rank %d (pid %d) %s", i, (int)pid, why);
			eb_hub_lose(h, i, why);
			break;
		}
	}
}

static int job_exit_code(const struct child *c, int np)
{
	int i, code = 0;

	for (i = 0; i < np; i++) {
		int rc = WIFEXITED(c[i].status) ? WEXITSTATUS(c[i].status) : 1;

		/* Bad input is decided identically on every rank: keep its distinct status. */
		if (rc != 0 && (code == 0 || rc == 2))
			code = rc;
	}
	return code;
}

static volatile sig_atomic_t interrupted; /* the signal that asked the launcher to stop */

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/* Ctrl-C, SIGTERM, a closed terminal: end the ranks and clean up after them rather than die
 * at once (the ranks would follow by PDEATHSIG, leaving their shared-memory segments). Set
 * after the forks, so that ranks keep the default actions. */
static void catch_interrupts(struct sigaction *old)
{
	struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_RESTART};
	int sigs[3] = {SIGINT, SIGTERM, SIGHUP}, i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
}

static void restore_interrupts(const struct sigaction *old)
{
	int sigs[3] = {SIGINT, SIGTERM, SIGHUP}, i;

	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
}

/* A rank that died by a signal could not unlink its shm segments. */
static void unlink_segments(const struct child *c, int np)
{
	int i, n;

	for (i = 0; i < np; i++) {
		if (c[i].pid <= 0 || !c[i].exited || !WIFSIGNALED(c[i].status))
			continue;
		n = eb_shmseg_unlink(c[i].pid);
		if (n > 0)
			eb_dbg("removed %d shm segment%s left by rank %d", n, n == 1 ? "" : "s", i);
	}
}

/* Told of an abort, a rank notices within milliseconds (its waits look at the bootstrap) and
 * exits; one still there after this is spinning inside the provider, where no deadline of
 * ours runs: on shm, every post takes the target's lock, and a rank killed or stopped while
 * holding it leaves its peers spinning for good. */
#define ABORT_GRACE_S 4.0

/* After an abort: a stopped rank (SIGSTOP, SIGTSTP) will never exit by itself, and it is
 * the likely reason the others gave up, so name it and end it now instead of after the
 * grace period. A traced one ('t', a debugger) is left to its grace. */
static void end_stopped(struct child *c, int np)
{
	int i;

	for (i = 0; i < np; i++)
		if (!c[i].exited && eb_proc_state(c[i].pid) == 'T') {
			eb_err("rank %d (pid %d) is stopped (a SIGSTOP or SIGTSTP): it stopped "
			       "answering; killing it",
			       i, (int)c[i].pid);
			kill(c[i].pid, SIGKILL);
		}
}

/* Fork np ranks, each with one end of a socket pair to the hub; *started ranks were forked
 * before a failure (their hub ends open). */
static int spawn(int np, struct child *c, int *hub_fds, eb_rank_main fn, void *arg, int *started)
{
	pid_t parent = getpid();
	int i, j;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < np; i++, *started = i) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
			eb_err("socketpair for rank %d: %s", i, strerror(errno));
			return EB_ESYS;
		}
		c[i].pid = fork();
		if (c[i].pid < 0) {
			eb_err("fork of rank %d: %s", i, strerror(errno));
			close(sv[0]);
			close(sv[1]);
			return EB_ESYS;
		}
		if (c[i].pid == 0) {
			close(sv[0]);
			for (j = 0; j < i; j++)
				close(hub_fds[j]);
			free(c); /* the launcher's tables: a rank has no use for them */
			free(hub_fds);
			run_rank(i, np, sv[1], parent, fn, arg);
		}
		close(sv[1]);
		hub_fds[i] = sv[0];
		eb_dbg("rank %d is pid %d", i, (int)c[i].pid);
	}
	return EB_OK;
}

/* Ranks past their grace after an abort or interrupt: named and killed. */
static void kill_late(struct child *c, int np, int forwarded)
{
	int i;

	for (i = 0; i < np; i++)
		if (!c[i].exited) {
			eb_err("rank %d did not exit within %.0f s of the %s%s; killing it", i,
			       forwarded ? 2.0 : ABORT_GRACE_S, forwarded ? "interrupt" : "abort",
			       forwarded ? ""
					 : " (stuck inside the provider, likely on a lock the lost "
					   "rank held)");
			kill(c[i].pid, SIGKILL);
		}
}

/* Until every rank exited: serve the hub, forward an interrupt, end ranks that outlive an
 * abort. Returns whether an interrupt was forwarded. */
static int supervise(struct eb_hub *hub, struct child *c, int np, double grace_s)
{
	uint64_t kill_at = 0;
	int i, forwarded = 0;

	for (;;) {
		int running = 0;

		if (interrupted && !forwarded) {
			eb_err("interrupted (%s): ending every rank", strsignal(interrupted));
			for (i = 0; i < np; i++)
				if (!c[i].exited)
					kill(c[i].pid, SIGTERM);
			forwarded = 1;
			kill_at = eb_deadline(2.0);
		}
		/* Process exits, not the hub's count of live ranks, decide when the job is over. */
		eb_hub_poll(hub, 50);
		reap(hub, c, np);
		for (i = 0; i < np; i++)
			running += !c[i].exited;
		if (running == 0)
			return forwarded;
		if (hub->aborted && kill_at == 0) {
			kill_at = eb_deadline(ABORT_GRACE_S < grace_s ? ABORT_GRACE_S : grace_s);
			end_stopped(c, np);
		}
		if (kill_at != 0 && eb_now_ns() > kill_at) {
			kill_late(c, np, forwarded);
			kill_at = eb_deadline(3600);
		}
	}
}

int eb_launch_local(int np, eb_rank_main fn, void *arg, double grace_s)
{
	struct child *c = calloc((size_t)np, sizeof(*c));
	int *hub_fds = calloc((size_t)np, sizeof(*hub_fds));
	struct sigaction old_actions[3];
	struct eb_hub hub;
	int j, code = 1, started = 0, forwarded;

	if (c == NULL || hub_fds == NULL) {
		eb_err("cannot allocate the launcher's tables for %d ranks", np);
		goto free_tables;
	}
	if (spawn(np, c, hub_fds, fn, arg, &started) != EB_OK ||
	    eb_hub_init(&hub, np, hub_fds) != EB_OK)
		goto kill_children;
	hub.why_closed = why_closed;
	hub.owner = c;
	/* The ranks' own deadline: grace_s is it plus 5 s (efabench's contract), else itself. */
	hub.ask_ns = (uint64_t)((grace_s > 5.0 ? grace_s - 5.0 : grace_s) * 1e9);
	interrupted = 0;
	catch_interrupts(old_actions);
	forwarded = supervise(&hub, c, np, grace_s);
	restore_interrupts(old_actions);
	unlink_segments(c, np);
	code = forwarded ? 1 : job_exit_code(c, np);
	eb_hub_fini(&hub);
	goto free_tables;

kill_children:
	for (j = 0; j < np; j++) {
		if (c[j].pid > 0) {
			kill(c[j].pid, SIGKILL);
			waitpid(c[j].pid, NULL, 0);
		}
		if (j < started)
			close(hub_fds[j]);
	}
free_tables:
	free(hub_fds);
	free(c);
	return code;
}

int eb_launch_probe(int (*fn)(const void *arg, void *out), const void *arg, void *out, size_t len)
{
	int fd[2], status = 0, rc;
	ssize_t got = -1;
	pid_t pid;

	if (pipe(fd) != 0) {
		eb_err("pipe: %s", strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		memset(out, 0, len);
		rc = fn(arg, out);
		_exit(write(fd[1], out, len) == (ssize_t)len ? rc : 1);
	}
	close(fd[1]);
	if (pid > 0) {
		got = read(fd[0], out, len);
		waitpid(pid, &status, 0);
	}
	close(fd[0]);
	if (pid < 0 || got != (ssize_t)len) {
		eb_err("the probe process %s", pid < 0 ? "could not start" : "died");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
