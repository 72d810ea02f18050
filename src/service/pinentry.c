/*
 * The Assuan client that asks pinentry for a PIN (see pinentry.h).
 */
#define _GNU_SOURCE
#include "config.h"

#include "pinentry.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Assuan's longest line, the newline included. */
#define LINE_MAX_LEN 1002

extern char **environ;

struct pg_pinentry {
	pid_t pid;
	int to;                        /* the program's standard input */
	int from;                      /* its standard output */
	unsigned char buf[4096];       /* read ahead (may hold a PIN: wiped) */
	size_t start, end;
};

/* ---------------------------------------------------------------------------
 * Lines
 */

/* Reads one line (without its newline) into line, NUL-terminated; false
 * at the end, on an error, a line too long, or after wait_s seconds. */
static bool
read_line(pg_pinentry *p, char line[static LINE_MAX_LEN], int wait_s)
{
	struct pollfd pfd = { p->from, POLLIN, 0 };
	size_t n = 0;
	ssize_t got;

	for (;;) {
		while (p->start < p->end) {
			char c = (char)p->buf[p->start++];

			if (c == '\n') {
				line[n] = 0;
				return true;
			}
			if (n + 1 >= LINE_MAX_LEN)
				return false;
			line[n++] = c;
		}
		pg_memzero(p->buf, sizeof(p->buf));
		p->start = p->end = 0;
		if (poll(&pfd, 1, wait_s * 1000) != 1)
			return false;
		got = read(p->from, p->buf, sizeof(p->buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		p->end = (size_t)got;
	}
}

/* Sends "command arg" with arg percent-escaped (NULL: no argument). */
static bool
send_command(pg_pinentry *p, const char *command, const char *arg)
{
	char line[LINE_MAX_LEN];
	size_t n = (size_t)snprintf(line, sizeof(line), "%s", command);

	if (arg != NULL)
		line[n++] = ' ';
	for (const unsigned char *s = (const unsigned char *)arg; s && *s; s++) {
		/* Room for an escape and the newline; a longer text is cut. */
		if (n + 4 >= sizeof(line))
			break;
		if (*s == '%' || *s < 0x20 || *s == 0x7f)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%%%02X", *s);
		else
			line[n++] = (char)*s;
	}
	line[n++] = '\n';
	return pg_write_all(p->to, line, n);
}

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Appends the data of a "D " line (percent-decoded) to out; false when it
 * does not fit or is badly escaped. */
static bool
take_data(const char *text, unsigned char *out, size_t size, size_t *len)
{
	for (const char *s = text; *s; s++) {
		int c = (unsigned char)*s;

		if (c == '%') {
			int hi = hex(s[1]), lo = hi < 0 ? -1 : hex(s[2]);

			if (lo < 0)
				return false;
			c = hi << 4 | lo;
			s += 2;
		}
		if (*len >= size)
			return false;
		out[(*len)++] = (unsigned char)c;
	}
	return true;
}

/*
 * Reads the answer to a command: data lines into out (when given) up to
 * "OK" or "ERR". Returns 1 for OK, 0 for ERR (*err its code), -1 when the
 * program broke off or sent data where none was asked for.
 */
static int
read_answer(pg_pinentry *p, unsigned char *out, size_t size, size_t *len, unsigned long *err,
            int wait_s)
{
	char line[LINE_MAX_LEN];
	int rv = -1;

	for (;;) {
		if (!read_line(p, line, wait_s))
			break;
		if (strcmp(line, "OK") == 0 || strncmp(line, "OK ", 3) == 0) {
			rv = 1;
			break;
		}
		if (strncmp(line, "ERR", 3) == 0 && (line[3] == ' ' || line[3] == 0)) {
			*err = strtoul(line + 3, NULL, 10);
			rv = 0;
			break;
		}
		if (strncmp(line, "D ", 2) == 0) {
			if (out == NULL || !take_data(line + 2, out, size, len))
				break;
			continue;
		}
		/* An inquiry cannot be answered: cancel it; the command then
		 * ends with an error. */
		if (strncmp(line, "INQUIRE", 7) == 0 && !pg_write_all(p->to, "CAN\n", 4))
			break;
		/* Status ("S ...") and comment ("#") lines, and anything else, are skipped. */
	}
	pg_memzero(line, sizeof(line));
	return rv;
}

/* A command whose answer carries no data; true for OK. */
static bool
command(pg_pinentry *p, const char *cmd, const char *arg, int wait_s)
{
	unsigned long err = 0;

	return send_command(p, cmd, arg) && read_answer(p, NULL, 0, NULL, &err, wait_s) == 1;
}

/* ---------------------------------------------------------------------------
 * The program
 */

/* The terminal pinentry should use when it is a terminal program. */
static const char *
terminal(char *buf, size_t size)
{
	const char *env = getenv("GPG_TTY");

	if (env != NULL && *env)
		return env;
	for (int fd = 0; fd <= 2; fd += 2) {
		if (isatty(fd) && ttyname_r(fd, buf, size) == 0)
			return buf;
	}
	return NULL;
}

static bool
spawn(pg_pinentry *p, const char *program)
{
	posix_spawn_file_actions_t actions;
	char *argv[] = { (char *)program, NULL };
	int in[2], out[2], rc;

	if (pipe2(in, O_CLOEXEC) != 0)
		return false;
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return false;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, in[0], 0);
	posix_spawn_file_actions_adddup2(&actions, out[1], 1);
	rc = posix_spawnp(&p->pid, program, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(in[0]);
	close(out[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		return false;
	}
	p->to = in[1];
	p->from = out[0];
	return true;
}

pg_pinentry *
pg_pinentry_open(const char *program, const char **why)
{
	pg_pinentry *p = calloc(1, sizeof(*p));
	char tty[256], option[320];
	const char *name, *term;
	unsigned long err = 0;

	*why = "out of memory";
	if (p == NULL)
		return NULL;
	if (!spawn(p, program)) {
		*why = "the program cannot be run";
		free(p);
		return NULL;
	}
	*why = "the program does not speak the pinentry protocol";
	if (read_answer(p, NULL, 0, NULL, &err, 10) != 1) {
		pg_pinentry_close(p);
		return NULL;
	}
	/* Options a pinentry does not know are no error. */
	if ((name = terminal(tty, sizeof(tty))) != NULL) {
		snprintf(option, sizeof(option), "ttyname=%s", name);
		(void)command(p, "OPTION", option, 10);
		if ((term = getenv("TERM")) != NULL && *term) {
			snprintf(option, sizeof(option), "ttytype=%s", term);
			(void)command(p, "OPTION", option, 10);
		}
	}
	if (!command(p, "SETTITLE", "p11glue", 10)) {
		pg_pinentry_close(p);
		return NULL;
	}
	return p;
}

pid_t
pg_pinentry_pid(const pg_pinentry *p)
{
	return p->pid;
}

int
pg_pinentry_getpin(pg_pinentry *p, const char *description, const char *prompt,
                   const char *error, unsigned char *pin, size_t size, size_t *len, int wait_s)
{
	unsigned long err = 0;
	int rc;

	*len = 0;
	if (!command(p, "SETDESC", description, 10) || !command(p, "SETPROMPT", prompt, 10))
		return PG_PINENTRY_FAILED;
	if (error != NULL && !command(p, "SETERROR", error, 10))
		return PG_PINENTRY_FAILED;
	if (!send_command(p, "GETPIN", NULL))
		return PG_PINENTRY_FAILED;
	rc = read_answer(p, pin, size, len, &err, wait_s);
	if (rc == 1 && *len > 0)
		return PG_PINENTRY_OK;
	pg_memzero(pin, size);
	*len = 0;
	/* ERR answers GETPIN when the user cancels (GPG_ERR_CANCELED) or
	 * the dialog times out: either way no PIN was given. */
	return rc < 0 ? PG_PINENTRY_FAILED : PG_PINENTRY_CANCELLED;
}

void
pg_pinentry_close(pg_pinentry *p)
{
	int status;

	if (p == NULL)
		return;
	(void)send_command(p, "BYE", NULL);
	close(p->to);
	close(p->from);
	/* It ends when its input does; give it a moment, then stop it. */
	for (int i = 0; i < 100; i++) {
		if (waitpid(p->pid, &status, WNOHANG) != 0)
			goto out;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	kill(p->pid, SIGTERM);
	waitpid(p->pid, &status, 0);
out:
	pg_memzero(p->buf, sizeof(p->buf));
	free(p);
}
