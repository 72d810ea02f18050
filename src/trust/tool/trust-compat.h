/*
 * Shared by the parts of `trust` that keep other programs' files up to
 * date (compat.c for a user's, compat-debian.c for the system's); the
 * helpers are in compat-io.c.
 */
#ifndef PG_TRUST_COMPAT_H
#define PG_TRUST_COMPAT_H

#include "trust-tool.h"

#include <sys/types.h>

/* Adds "<sign>PATH" to r->changed, or a note. */
void pg_compat_changed(pg_compat_report *r, char sign, const char *path);
void pg_compat_note(pg_compat_report *r, const char *fmt, ...) PG_PRINTF(2, 3);

/*
 * Runs argv[0] (an absolute path) with input on its standard input (NULL:
 * none), its standard output discarded, its errors on ours unless quiet;
 * P11GLUE_COMPAT_NESTED=1 in its environment tells p11glue's hook that
 * p11glue runs it. Returns its exit status, or -1 when it could not run.
 */
int pg_compat_run(char *const argv[], const char *input, bool quiet);

/* The system part: Debian's files (compat-debian.c). */
int pg_compat_system(unsigned flags, pg_compat_report *r);

#endif /* PG_TRUST_COMPAT_H */
