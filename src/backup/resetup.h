/*
 * The end of a restore (resetup.c): setup run again, through src/setup,
 * for the targets the backup recorded as configured, and the files
 * programs read brought up to date with restored trust decisions.
 * Private to src/backup.
 */
#ifndef PG_BACKUP_RESETUP_H
#define PG_BACKUP_RESETUP_H

#include "backup.h"

/*
 * Sets up each target whose setup item says "configured" (with the proxy
 * when it named the proxy), as `p11glue setup --TARGET` would; a target
 * whose program is missing here is left out with a note. setup (may be
 * NULL) gives trust_compat. Each item's action says what happened. False
 * when a target failed (after messages); the others still ran.
 */
bool pg_resetup(const pg_setup_env *setup, pg_backup_manifest *m);

#endif /* PG_BACKUP_RESETUP_H */
