/*
 * Operating-system specifics for POSIX systems (Linux first).
 */
#define _GNU_SOURCE
#include "config.h"

#include "compat.h"

#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <termios.h>
#include <unistd.h>

void *
pg_dl_open(const char *path, char **error)
{
	void *handle;
	const char *why;

	dlerror();
	handle = dlopen(path, RTLD_LOCAL | RTLD_NOW);
	if (handle == NULL && error != NULL) {
		why = dlerror();
		*error = strdup(why ? why : "cannot load");
	}
	return handle;
}

void *
pg_dl_symbol(void *handle, const char *name)
{
	return dlsym(handle, name);
}

void
pg_dl_close(void *handle)
{
	if (handle != NULL)
		dlclose(handle);
}

const char *
pg_program_name(void)
{
	/* glibc keeps the base name of argv[0]. */
	const char *name = program_invocation_short_name;

	return name != NULL && *name ? name : "unknown";
}

bool
pg_is_privileged(void)
{
	/* The kernel sets AT_SECURE for set-id and capability-gaining execs. */
	return getauxval(AT_SECURE) != 0;
}

bool
pg_is_root(void)
{
	return geteuid() == 0;
}

const char *
pg_home_dir(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home != NULL && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : NULL;
}

long
pg_tty_read_secret(const char *prompt, char *buf, size_t size)
{
	struct termios saved, quiet;
	size_t len = 0;
	bool restore = false, fits = true;
	char c;
	int fd;

	if (size == 0)
		return -1;
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (tcgetattr(fd, &saved) == 0) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		quiet.c_lflag |= ICANON;
		restore = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
	}
	if (write(fd, prompt, strlen(prompt)) < 0)
		len = 0;
	for (;;) {
		ssize_t n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fits = false;
			break;
		}
		if (c == '\n')
			break;
		if (len + 1 < size)
			buf[len++] = c;
		else
			fits = false;
	}
	buf[len] = 0;
	c = 0;
	if (restore)
		tcsetattr(fd, TCSAFLUSH, &saved);
	if (write(fd, "\n", 1) < 0)
		fits = fits && true;
	close(fd);
	if (!fits) {
		pg_memzero(buf, size);
		return -1;
	}
	return (long)len;
}

void
pg_at_fork_child(void (*func)(void))
{
	pthread_atfork(NULL, NULL, func);
}

void
pg_die_with_parent(void)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
}
