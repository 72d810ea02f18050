/*
 * Token files as SQLite databases (tokendb.c), for backups: a consistent
 * copy of a token in use, the label and serial of a token file, a copy
 * checked, relabelled, or put over a token in use. What is known here of
 * the store's schema (src/store/core/db.c) is its application id and the
 * label and serial of its one `token` row, nothing else. Private to
 * src/backup.
 */
#ifndef PG_BACKUP_TOKENDB_H
#define PG_BACKUP_TOKENDB_H

#include "common.h"

#include <sqlite3.h>

#define PG_TOKENDB_SERIAL_LEN 16

typedef struct {
	sqlite3 *db;                 /* the in-memory copy */
	const uint8_t *data;         /* its bytes, lent by SQLite */
	size_t len;
	char label[33];              /* blank padding removed */
	char serial[PG_TOKENDB_SERIAL_LEN + 1];
} pg_tokendb_snap;

/*
 * A copy of the token file path taken with SQLite's online backup API in
 * one read transaction, so it holds every committed change, those still
 * in the write-ahead log too, while other processes go on writing.
 * False after a message (a file that is not a token: *not_token).
 */
bool pg_tokendb_snapshot(const char *path, pg_tokendb_snap *snap, bool *not_token) PG_MUST_CHECK;
void pg_tokendb_snapshot_clear(pg_tokendb_snap *snap);

/* The label and serial of a token file; with check, also SQLite's
 * quick_check. False after a message. */
bool pg_tokendb_info(const char *path, bool check, char label[33],
                     char serial[PG_TOKENDB_SERIAL_LEN + 1]) PG_MUST_CHECK;

/* Gives the token file path a new label (at most 32 bytes) and serial.
 * False after a message. */
bool pg_tokendb_relabel(const char *path, const char *label,
                        const char serial[PG_TOKENDB_SERIAL_LEN]) PG_MUST_CHECK;

/*
 * Copies the token file from over the token file to, which programs may
 * have open: one write transaction of SQLite's backup API, so they see
 * the old token or the new one, and notice the change as they notice
 * each other's (the store reloads a token whose schema cookie changed).
 * False after a message; to is unchanged then.
 */
bool pg_tokendb_replace(const char *from, const char *to) PG_MUST_CHECK;

#endif /* PG_BACKUP_TOKENDB_H */
