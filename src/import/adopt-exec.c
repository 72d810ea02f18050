/*
 * The programs `p11glue adopt` asks (gpg, certutil, pk12util) and the
 * files it hands them (adopt-core.h): each program started with
 * posix_spawn (the store module may run threads in this process), fed
 * on standard input, read on standard output and error through pipes
 * polled together (a full pipe never stalls it), and killed when it
 * runs too long. Passwords that a program takes only from a file live
 * in a directory of our own (0700, files 0600), overwritten before they
 * are removed, and the directory goes when the run ends.
 */
#include "config.h"

#include "adopt-core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_ERR 4096
#define DEADLINE_S 600

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A pipe whose ends the program gets only as its 0, 1 and 2. */
static bool
cloexec_pipe(int fds[2])
{
	if (pipe(fds) != 0)
		return false;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return true;
}

/* Reads what fd has into b (up to max; the rest is drained); false at
 * the end. */
static bool
drain(int *fd, pg_buf *b, size_t max)
{
	unsigned char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close_fd(fd);
		return false;
	}
	if (b != NULL && b->len < max)
		pg_buf_add(b, chunk, b->len + (size_t)n > max ? max - b->len : (size_t)n);
	return true;
}

/* Feeds the program's stdin from in, then closes it. */
static void
feed(int *fd, const unsigned char *in, size_t len, size_t *off)
{
	ssize_t n = *off < len ? write(*fd, in + *off, len - *off) : 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0)
		*off += (size_t)n;
	if (n <= 0 || *off == len)
		close_fd(fd);
}

/*
 * Polls the three pipes until both outputs end, or the program has ended
 * and its pipes give nothing more (a daemon it started, gpg-agent, may
 * hold copies of them open), or the deadline passes (false). *st gets
 * the program's wait status once it ended (*reaped).
 */
static bool
pump(pid_t pid, int fds[3], const void *in, size_t in_len, pg_buf *out, pg_buf *err, int *st,
     bool *reaped)
{
	time_t deadline = time(NULL) + DEADLINE_S;
	size_t off = 0;

	while (fds[1] >= 0 || fds[2] >= 0) {
		struct pollfd p[3] = { { fds[0], POLLOUT, 0 }, { fds[1], POLLIN, 0 },
		                       { fds[2], POLLIN, 0 } };
		int n = poll(p, 3, *reaped ? 0 : 200);

		if (time(NULL) > deadline)
			return false;
		if (n < 0 && errno != EINTR)
			return false;
		if (n == 0 && *reaped)
			break;
		if (n == 0 && waitpid(pid, st, WNOHANG) == pid)
			*reaped = true;
		if (n <= 0)
			continue;
		if (fds[0] >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP)))
			feed(&fds[0], in, in_len, &off);
		if (fds[1] >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&fds[1], out, PG_ADOPT_MAX_OUTPUT);
		if (fds[2] >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
			drain(&fds[2], err, MAX_ERR);
	}
	return true;
}

bool
pg_adopt_exec(char *const argv[], const void *in, size_t in_len, pg_buf *out, pg_buf *err)
{
	int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	int fds[3], st = 0;
	posix_spawn_file_actions_t actions;
	pid_t pid = -1;
	bool ok = false, done, reaped = false;

	if (!cloexec_pipe(in_pipe) || !cloexec_pipe(out_pipe) || !cloexec_pipe(err_pipe))
		goto out;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
	posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
	if (posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&actions);
	close_fd(&in_pipe[0]);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[1]);
	if (pid < 0)
		goto out;
	/* A program that does not read its input must not kill us. */
	fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
	fds[0] = in_len > 0 ? in_pipe[1] : -1;
	if (in_len == 0)
		close_fd(&in_pipe[1]);
	fds[1] = out_pipe[0];
	fds[2] = err_pipe[0];
	{
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);
		done = pump(pid, fds, in, in_len, out, err, &st, &reaped);
		signal(SIGPIPE, old);
	}
	for (int i = 0; i < 3; i++)
		close_fd(&fds[i]);
	in_pipe[1] = out_pipe[0] = err_pipe[0] = -1;
	if (!done && !reaped)
		kill(pid, SIGKILL);
	while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ok = done && WIFEXITED(st) && WEXITSTATUS(st) == 0;
out:
	close_fd(&in_pipe[0]);
	close_fd(&in_pipe[1]);
	close_fd(&out_pipe[0]);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[0]);
	close_fd(&err_pipe[1]);
	return ok;
}

bool
pg_adopt_have(const char *program)
{
	const char *path = getenv("PATH");
	char file[4096];

	if (strchr(program, '/') != NULL)
		return access(program, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p; ) {
		size_t n = strcspn(p, ":");
		snprintf(file, sizeof(file), "%.*s/%s", (int)n, p, program);
		if (n > 0 && access(file, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* ---------------------------------------------------------------------------
 * The private temporary directory
 */

char *
pg_adopt_tmpfile(pg_adopt *a, const char *name, const void *data, size_t len)
{
	const char *base = getenv("TMPDIR");
	char *path;
	pg_buf b;
	int fd;
	bool ok;

	if (a->tmpdir == NULL) {
		pg_buf_init(&b);
		pg_buf_printf(&b, "%s/p11glue-adopt-XXXXXX", base && base[0] == '/' ? base : "/tmp");
		a->tmpdir = pg_buf_steal(&b, NULL);
		if (a->tmpdir == NULL || mkdtemp(a->tmpdir) == NULL) {
			pg_message("cannot make a temporary directory: %s", strerror(errno));
			free(a->tmpdir);
			a->tmpdir = NULL;
			return NULL;
		}
	}
	pg_buf_init(&b);
	pg_buf_printf(&b, "%s/%s", a->tmpdir, name);
	path = pg_buf_steal(&b, NULL);
	if (path == NULL)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = fd >= 0 && pg_write_all(fd, data, len);
	if (fd >= 0)
		ok = close(fd) == 0 && ok;
	if (!ok) {
		pg_message("%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

void
pg_adopt_tmpfile_remove(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	/* Overwritten first: a password or a key must not stay on a disk. */
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		unsigned char zero[4096] = { 0 };
		for (off_t done = 0; done < st.st_size; done += (off_t)sizeof(zero))
			if (!pg_write_all(fd, zero, (size_t)(st.st_size - done) < sizeof(zero)
			                                ? (size_t)(st.st_size - done) : sizeof(zero)))
				break;
		fsync(fd);
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
}

void
pg_adopt_tmp_clear(pg_adopt *a)
{
	DIR *d = a->tmpdir ? opendir(a->tmpdir) : NULL;
	struct dirent *e;
	pg_buf path;

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		pg_buf_init(&path);
		pg_buf_printf(&path, "%s/%s", a->tmpdir, e->d_name);
		if (!path.failed)
			pg_adopt_tmpfile_remove((const char *)path.data);
		pg_buf_clear(&path);
	}
	if (d != NULL)
		closedir(d);
	if (a->tmpdir != NULL)
		pg_remove_tree(a->tmpdir);
	free(a->tmpdir);
	a->tmpdir = NULL;
}
