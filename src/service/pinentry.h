/*
 * Asking a PIN through the user's pinentry program (GnuPG's pinentry-gnome3,
 * -qt, -curses, -tty, or anything speaking its protocol): the program is
 * started with pipes as its standard input and output and spoken to in
 * the Assuan protocol: a greeting "OK", then commands (OPTION, SETTITLE,
 * SETDESC, SETPROMPT, SETERROR, GETPIN, BYE), each answered by data
 * lines "D <percent-escaped bytes>", status and comment lines, and one
 * "OK" or "ERR <code> <text>". Arguments are percent-escaped here (%, CR,
 * LF and other control bytes); pinentry shows "%0A" as a line break.
 *
 * The PIN is decoded straight into the caller's buffer; every line buffer
 * that held it is wiped. Nothing here logs a PIN. Not thread-safe per
 * object; distinct objects are independent.
 */
#ifndef PG_SERVICE_PINENTRY_H
#define PG_SERVICE_PINENTRY_H

#include "common.h"

#include <sys/types.h>

typedef struct pg_pinentry pg_pinentry;

enum {
	PG_PINENTRY_OK = 0,
	PG_PINENTRY_CANCELLED = 1,  /* the user cancelled, or entered nothing */
	PG_PINENTRY_FAILED = -1     /* the program did not run, broke the protocol, timed out */
};

/*
 * Starts program (a name is searched in $PATH), reads its greeting, and
 * tells it the terminal (ttyname: $GPG_TTY, else the terminal of this
 * process's standard input or error, if any; with $TERM as its type) and
 * the title. NULL on failure, with *why (static text).
 */
pg_pinentry *pg_pinentry_open(const char *program, const char **why);

/* The program's process, for a caller that must stop it (kill). */
pid_t pg_pinentry_pid(const pg_pinentry *p);

/*
 * Asks for a PIN: description (a paragraph; '\n' breaks lines), prompt,
 * and error (shown above, for a retry; NULL: none). On PG_PINENTRY_OK,
 * pin[0..*len) holds it (size bytes at most: a longer one is refused as
 * PG_PINENTRY_FAILED); the caller wipes it. An empty entry counts as
 * cancelled. wait_s bounds each wait for the program.
 */
int pg_pinentry_getpin(pg_pinentry *p, const char *description, const char *prompt,
                       const char *error, unsigned char *pin, size_t size, size_t *len,
                       int wait_s) PG_MUST_CHECK;

/* Says BYE, waits briefly for the program and stops it if it lingers.
 * NULL is fine. */
void pg_pinentry_close(pg_pinentry *p);

#endif /* PG_SERVICE_PINENTRY_H */
