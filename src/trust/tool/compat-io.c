/*
 * What the parts that keep other programs' files share (trust-compat.h):
 * the report, whole-file writes, removing trees, running a program.
 */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include "trust-compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void
pg_compat_report_init(pg_compat_report *r)
{
	memset(r, 0, sizeof(*r));
	pg_buf_init(&r->changed);
	pg_buf_init(&r->notes);
}

void
pg_compat_report_clear(pg_compat_report *r)
{
	pg_buf_clear(&r->changed);
	pg_buf_clear(&r->notes);
	memset(r, 0, sizeof(*r));
}

void
pg_compat_changed(pg_compat_report *r, char sign, const char *path)
{
	pg_buf_printf(&r->changed, "%c%s\n", sign, path);
}

void
pg_compat_note(pg_compat_report *r, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pg_buf_printf(&r->notes, "%s\n", line);
}

int
pg_compat_run(char *const argv[], const char *input, bool quiet)
{
	int in[2] = { -1, -1 }, status;
	pid_t pid;

	if (input != NULL && pipe2(in, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(input ? in[0] : null, 0) < 0 || dup2(null, 1) < 0 ||
		    (quiet && dup2(null, 2) < 0))
			_exit(127);
		setenv("P11GLUE_COMPAT_NESTED", "1", 1);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	if (input != NULL) {
		size_t left = strlen(input);
		close(in[0]);
		while (pid > 0 && left > 0) {
			ssize_t n = write(in[1], input, left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			input += n;
			left -= (size_t)n;
		}
		close(in[1]);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
