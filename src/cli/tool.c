#include "tool.h"
#include "efabench/status.h"
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The row a command-line word names (NULL: not one of ours; the parser will say so), and
 * whether its value is the next word. */
static const struct eb_opt *row_of(const struct eb_opt_group *g, const char *a, int *next)
{
	const struct eb_opt *hit = NULL;
	size_t n;
	int i, hits = 0;

	*next = 0;
	if (a[1] != '-') {
		for (i = 0; i < g->nopts; i++)
			if (g->opts[i].key == a[1])
				hit = &g->opts[i];
		*next = hit != NULL && hit->arg != NULL && a[2] == '\0';
		return hit;
	}
	n = strcspn(a + 2, "=");
	for (i = 0; i < g->nopts; i++) {
		if (strncmp(g->opts[i].name, a + 2, n) != 0)
			continue;
		if (g->opts[i].name[n] == '\0') { /* exact */
			hit = &g->opts[i];
			hits = 1;
			break;
		}
		hit = &g->opts[i]; /* getopt_long takes an unambiguous prefix */
		hits++;
	}
	if (hits != 1)
		return NULL;
	*next = hit->arg != NULL && a[2 + n] != '=';
	return hit;
}

int eb_tool_parse(int argc, char **argv, const struct eb_opt_group *g, const char *cmd, char **pos,
		  int *npos, int *help)
{
	char **opts = calloc((size_t)argc + 1, sizeof(*opts));
	int i, n = 2, rc, next, rest = 0;

	*npos = 0;
	*help = 0;
	if (opts == NULL) {
		eb_err("out of memory");
		return EB_EINVAL;
	}
	opts[0] = argv[0];
	opts[1] = argv[1];
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (rest || a[0] != '-' || a[1] == '\0') {
			pos[(*npos)++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			rest = 1;
			continue;
		}
		opts[n++] = argv[i];
		if (row_of(g, a, &next) != NULL && next && i + 1 < argc)
			opts[n++] = argv[++i];
	}
	rc = eb_opt_parse(n, opts, 2, g, 1, cmd, help);
	free(opts);
	return rc;
}

void eb_tool_help(const struct eb_cmd *cmd, const char *usage, const struct eb_opt_group *g)
{
	printf("usage: efabench %s %s\n\n%s: %s\n%s\n", cmd->name, usage, cmd->name, cmd->summary,
	       cmd->help);
	eb_opt_help(stdout, g, 1);
	fputs("Exit status: 0 ok, 1 failure, 2 bad input.\n", stdout);
}

int eb_tool_outdir(const char *dir)
{
	char path[EB_TOOL_PATH], *p;
	int fd;

	if (dir[0] == '\0' || strlen(dir) + 32 > sizeof(path)) {
		eb_err("bad output folder '%s'", dir);
		return EB_EINVAL;
	}
	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			eb_err("cannot create %s: %s", path, strerror(errno));
			return EB_EINVAL;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	snprintf(path, sizeof(path), "%s/.efabench-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		eb_err("cannot write in %s: %s", dir, strerror(errno));
		return EB_EINVAL;
	}
	close(fd);
	unlink(path);
	return EB_OK;
}

int eb_tool_self(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0) {
		eb_err("cannot find this binary (/proc/self/exe): %s", strerror(errno));
		return EB_ESYS;
	}
	buf[n] = '\0';
	return EB_OK;
}

/* In the child: fd onto a new file, or exit 127. */
static void redirect(const char *path, int fd)
{
	int f;

	if (path == NULL)
		return;
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (f < 0 || dup2(f, fd) < 0)
		_exit(127);
	close(f);
}

int eb_tool_run(char *const argv[], const char *out, const char *err)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		eb_err("cannot start %s: %s", argv[0], strerror(errno));
		return EB_ESYS;
	}
	if (pid == 0) {
		redirect(out, STDOUT_FILENO);
		redirect(err, STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			eb_err("waiting for %s: %s", argv[0], strerror(errno));
			return EB_ESYS;
		}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
