/*
 * The first half of a restore (stage.c): the whole backup read, its
 * seal checked chunk by chunk, the token databases written to a private
 * staging directory and the other records kept in the manifest. Nothing
 * outside the staging directory is touched. Private to src/backup.
 */
#ifndef PG_BACKUP_STAGE_H
#define PG_BACKUP_STAGE_H

#include "backup.h"

/*
 * Makes a staging directory in dir (which exists): dir/.restore-PID.XXXXXX,
 * mode 0700, after removing those that processes no longer running left
 * behind (a restore killed on its way). free(); NULL after a message.
 */
char *pg_stage_dir(const char *dir);

/*
 * Reads the backup in fd (named path in messages) with the passphrase:
 * tokens into staging (each item's `staged` its file), other records into
 * the items' data, setup states into `state` and `proxy`. False after a
 * message saying what is wrong with the file.
 */
bool pg_stage_read(int fd, const char *path, const uint8_t *pass, size_t pass_len,
                   const char *staging, bool show_progress, pg_backup_manifest *m) PG_MUST_CHECK;

#endif /* PG_BACKUP_STAGE_H */
