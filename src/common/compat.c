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
#include <sys/resource.h>
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

/*
 * The prompt's terminal while echo is off, for the signal handler: it
 * restores the terminal itself (tcflush and tcsetattr are
 * async-signal-safe), so no signal can end the program with echo off,
 * however it falls between the calls of the reading loop.
 */
static const int prompt_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP };
static struct {
	int fd;
	struct termios saved;
	struct sigaction old[PG_N_ELEMENTS(prompt_signals)];
	volatile sig_atomic_t caught;     /* the last signal met, or 0 */
} prompt_state = { .fd = -1 };
static pthread_mutex_t prompt_lock = PTHREAD_MUTEX_INITIALIZER;

static void
prompt_signal(int sig)
{
	int saved_errno = errno;

	/* Typed half of the PIN goes too, or the shell would read it. */
	tcflush(prompt_state.fd, TCIFLUSH);
	tcsetattr(prompt_state.fd, TCSANOW, &prompt_state.saved);
	if (write(prompt_state.fd, "\n", 1) < 0) {
		/* Nothing more a handler can do. */
	}
	prompt_state.caught = sig;
	/* The disposition the program had, then the signal again: a default
	 * one ends (or, SIGTSTP, stops) the program once this returns. */
	for (size_t i = 0; i < PG_N_ELEMENTS(prompt_signals); i++) {
		if (prompt_signals[i] == sig)
			sigaction(sig, &prompt_state.old[i], NULL);
	}
	raise(sig);
	errno = saved_errno;
}

static void
prompt_catch(bool on)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prompt_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < PG_N_ELEMENTS(prompt_signals); i++)
		sigaddset(&sa.sa_mask, prompt_signals[i]);
	/* No SA_RESTART: the read ends with EINTR. A signal the program
	 * ignores stays ignored. */
	for (size_t i = 0; i < PG_N_ELEMENTS(prompt_signals); i++) {
		if (!on)
			sigaction(prompt_signals[i], &prompt_state.old[i], NULL);
		else if (sigaction(prompt_signals[i], NULL, &prompt_state.old[i]) == 0 &&
		         prompt_state.old[i].sa_handler != SIG_IGN)
			sigaction(prompt_signals[i], &sa, NULL);
	}
}

/* Echo off (signals caught first); false when the terminal refuses. */
static bool
prompt_quiet(int fd)
{
	struct termios quiet = prompt_state.saved;

	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	prompt_state.caught = 0;
	prompt_catch(true);
	if (tcsetattr(fd, TCSAFLUSH, &quiet) == 0)
		return true;
	prompt_catch(false);
	return false;
}

/*
 * Reads a line into buf; 1 for a line, 0 for a signal that interrupted
 * the entry (the terminal is restored then), -1 at the end of input or
 * when it does not fit.
 */
static int
prompt_read(int fd, char *buf, size_t size, size_t *len)
{
	char c;

	*len = 0;
	for (;;) {
		ssize_t n;
		if (prompt_state.caught)
			return 0;
		n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (c == '\n')
			break;
		if (*len + 1 >= size)
			return -1;
		buf[(*len)++] = c;
	}
	buf[*len] = 0;
	return 1;
}

long
pg_tty_read_secret(const char *prompt, char *buf, size_t size)
{
	size_t len = 0;
	bool quiet = false;
	int fd, got;

	if (size == 0)
		return -1;
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&prompt_lock);
	prompt_state.fd = fd;
	for (;;) {
		quiet = tcgetattr(fd, &prompt_state.saved) == 0 && prompt_quiet(fd);
		if (write(fd, prompt, strlen(prompt)) < 0)
			len = 0;
		got = prompt_read(fd, buf, size, &len);
		if (quiet) {
			tcsetattr(fd, TCSAFLUSH, &prompt_state.saved);
			prompt_catch(false);
		}
		/* Stopped (SIGTSTP) and continued: echo off again, ask again.
		 * Any other signal the program survived ends the entry. */
		if (got != 0 || prompt_state.caught != SIGTSTP)
			break;
	}
	/* The newline the user typed was not echoed. */
	if (got != 0 && write(fd, "\n", 1) < 0)
		got = -1;
	prompt_state.fd = -1;
	pthread_mutex_unlock(&prompt_lock);
	close(fd);
	if (got != 1) {
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

bool
pg_no_core_dumps(void)
{
	struct rlimit none = { 0, 0 };
	bool ok = setrlimit(RLIMIT_CORE, &none) == 0;

#ifdef __linux__
	ok = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 && ok;
#endif
	return ok;
}
