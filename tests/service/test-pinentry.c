/*
 * pinentry.c: the Assuan client that asks pinentry programs for PINs,
 * against small scripted programs, well-behaved and not.
 */
#define _GNU_SOURCE
#include "harness.h"

#include "config.h"

#include "pinentry.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char program[600], log_path[600];

/*
 * A pinentry for one case: greets with greeting, logs each command it
 * reads, answers GETPIN with getpin (lines, printf-style escapes as sh's
 * printf reads them), everything else with OK.
 */
static void
make_program(const char *greeting, const char *getpin)
{
	FILE *f;

	snprintf(program, sizeof(program), "%s/pinentry", pg_test_tmpdir());
	snprintf(log_path, sizeof(log_path), "%s/log", pg_test_tmpdir());
	f = fopen(program, "w");
	pg_assert_not_null(f);
	fprintf(f, "#!/bin/sh\nprintf '%s\\n'\n"
	        "while IFS= read -r line; do\n"
	        "  printf '%%s\\n' \"$line\" >>'%s'\n"
	        "  case $line in\n"
	        "  GETPIN*) %s ;;\n"
	        "  BYE*) echo OK; exit 0 ;;\n"
	        "  *) echo OK ;;\n"
	        "  esac\n"
	        "done\n", greeting, log_path, getpin);
	fclose(f);
	pg_assert_int_eq(chmod(program, 0700), 0);
}

static const char *
logged(void)
{
	static char text[8192];
	ssize_t n = 0;
	int fd = open(log_path, O_RDONLY);

	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	return text;
}

/* Asks once with the program made for the case. */
static int
ask(unsigned char *pin, size_t size, size_t *len)
{
	const char *why = NULL;
	pg_pinentry *p = pg_pinentry_open(program, &why);
	int rc;

	pg_assert_not_null(p);
	rc = pg_pinentry_getpin(p, "Enter the PIN of \"t\".\nNow.", "PIN:", NULL, pin, size, len, 20);
	pg_pinentry_close(p);
	return rc;
}

static void
test_pin(void)
{
	unsigned char pin[64];
	size_t len = 0;

	make_program("OK Pleased to meet you", "printf 'S PASSWORD_FROM_CACHE\\n# a comment\\nD 1234\\nOK\\n'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_OK);
	pg_assert_mem_eq(pin, len, "1234", 4);
	/* The title, the description (escaped), the prompt, then GETPIN and BYE. */
	pg_assert(strstr(logged(), "SETTITLE p11glue\n") != NULL);
	pg_assert(strstr(logged(), "SETDESC Enter the PIN of \"t\".%0ANow.\n") != NULL);
	pg_assert(strstr(logged(), "SETPROMPT PIN:\nGETPIN\nBYE\n") != NULL);
}

/* Percent-escaped bytes, and data in several lines. */
static void
test_escaped_and_split(void)
{
	unsigned char pin[64];
	size_t len = 0;

	make_program("OK", "printf 'D 12%%2534%%0a\\nD %%20x\\nOK\\n'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_OK);
	pg_assert_mem_eq(pin, len, "12%34\n x", 8);
}

static void
test_cancel_and_empty(void)
{
	unsigned char pin[64];
	size_t len = 7;

	make_program("OK", "echo 'ERR 83886179 Operation cancelled <Pinentry>'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_CANCELLED);
	pg_assert_int_eq(len, 0);
	/* Nothing entered: no PIN either. */
	make_program("OK", "echo OK");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_CANCELLED);
}

/* Broken programs: an answer that never comes, one that dies, data too
 * long for the buffer or badly escaped. */
static void
test_broken(void)
{
	unsigned char pin[8];
	size_t len = 0;
	const char *why = NULL;
	pg_pinentry *p;

	make_program("OK", "exit 3");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_FAILED);
	make_program("OK", "printf 'D 123456789\\nOK\\n'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_FAILED);
	make_program("OK", "printf 'D 12%%G4\\nOK\\n'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_FAILED);
	make_program("OK", "exec sleep 60");
	p = pg_pinentry_open(program, &why);
	pg_assert_not_null(p);
	pg_assert_int_eq(pg_pinentry_getpin(p, "d", "p", NULL, pin, sizeof(pin), &len, 1),
	                 PG_PINENTRY_FAILED);
	/* Closing stops a program that does not end by itself. */
	pid_t pid = pg_pinentry_pid(p);
	pg_pinentry_close(p);
	pg_assert(kill(pid, 0) != 0);
}

/* No pinentry at all, or no greeting: nothing to ask with. */
static void
test_no_program(void)
{
	const char *why = NULL;

	snprintf(program, sizeof(program), "%s/none", pg_test_tmpdir());
	pg_assert_null(pg_pinentry_open(program, &why));
	pg_assert_str_eq(why, "the program cannot be run");
	make_program("ERR 1 no", "echo OK");
	pg_assert_null(pg_pinentry_open(program, &why));
	pg_assert_str_eq(why, "the program does not speak the pinentry protocol");
}

/* An inquiry cannot be answered: cancelled (CAN), no PIN. */
static void
test_inquire(void)
{
	unsigned char pin[64];
	size_t len = 0;

	make_program("OK", "echo 'INQUIRE PINBLOCK'; IFS= read -r reply; printf '%s\\n' \"$reply\" >>\"$0.inq\"; "
	             "echo 'ERR 99 cancelled'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_CANCELLED);
	char path[700], text[16] = { 0 };
	snprintf(path, sizeof(path), "%s.inq", program);
	int fd = open(path, O_RDONLY);
	pg_assert(fd >= 0);
	pg_assert(read(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	pg_assert_str_eq(text, "CAN\n");
}

/* A retry shows why, and control bytes never break a command line. */
static void
test_error_and_escapes(void)
{
	unsigned char pin[64];
	size_t len = 0;
	const char *why = NULL;
	pg_pinentry *p;

	make_program("OK", "printf 'D 1\\nOK\\n'");
	p = pg_pinentry_open(program, &why);
	pg_assert_not_null(p);
	pg_assert_int_eq(pg_pinentry_getpin(p, "a\rb%c\x01", "P", "Wrong PIN", pin, sizeof(pin), &len,
	                                    20), PG_PINENTRY_OK);
	pg_pinentry_close(p);
	pg_assert(strstr(logged(), "SETDESC a%0Db%25c%01\n") != NULL);
	pg_assert(strstr(logged(), "SETERROR Wrong PIN\n") != NULL);
}

/* A terminal pinentry is told the terminal ($GPG_TTY) and its type. */
static void
test_tty_option(void)
{
	unsigned char pin[64];
	size_t len = 0;

	setenv("GPG_TTY", "/dev/pts/77", 1);
	setenv("TERM", "xterm", 1);
	make_program("OK", "printf 'D 1\\nOK\\n'");
	pg_assert_int_eq(ask(pin, sizeof(pin), &len), PG_PINENTRY_OK);
	pg_assert(strstr(logged(), "OPTION ttyname=/dev/pts/77\nOPTION ttytype=xterm\n") != NULL);
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	unsetenv("GPG_TTY");
	pg_test_fork_cases(true);
	pg_test("pinentry/pin", test_pin);
	pg_test("pinentry/escaped-and-split", test_escaped_and_split);
	pg_test("pinentry/cancel-and-empty", test_cancel_and_empty);
	pg_test("pinentry/broken", test_broken);
	pg_test("pinentry/no-program", test_no_program);
	pg_test("pinentry/inquire", test_inquire);
	pg_test("pinentry/error-and-escapes", test_error_and_escapes);
	pg_test("pinentry/tty-option", test_tty_option);
	return pg_test_run(argc, argv);
}
