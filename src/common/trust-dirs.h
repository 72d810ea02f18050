/*
 * Where trust decisions are written by default: one directory for the
 * system and one per user, each with anchors/, blocklist/ and crls/ as
 * p11glue-trust.so reads them (docs/DESIGN.md, "The trust module").
 * The module adds them to its built-in paths; `p11glue trust` writes
 * there and keeps the files other programs read up to date.
 */
#ifndef PG_TRUST_DIRS_H
#define PG_TRUST_DIRS_H

#include "common.h"

/* The system's directory: -Dsystem_trust_dir (/etc/p11glue/trust). */
const char *pg_trust_system_dir(void);

/*
 * A directory of the user's p11glue data: $XDG_DATA_HOME/p11glue/<leaf>
 * (XDG_DATA_HOME when absolute), else ~/.local/share/p11glue/<leaf>.
 * NULL in a set-id program (whose environment is not its user's), when
 * there is no home directory, or out of memory. free().
 */
char *pg_trust_user_path(const char *leaf);

/* The user's trust directory: pg_trust_user_path("trust"). free(). */
char *pg_trust_user_dir(void);

#endif /* PG_TRUST_DIRS_H */
