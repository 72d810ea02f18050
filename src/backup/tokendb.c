/*
 * Token files as SQLite databases (tokendb.h).
 */
#include "config.h"

#include "tokendb.h"

#include <string.h>

#define APPLICATION_ID 0x70313167    /* "p11g", as src/store/core/db.c sets it */
#define BUSY_TIMEOUT_MS 20000

static sqlite3 *
open_db(const char *path, int flags)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOFOLLOW, NULL);

	if (rc != SQLITE_OK) {
		pg_message("%s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db, 1);
	return db;
}

static bool
fail(sqlite3 *db, const char *path, const char *what)
{
	pg_message("%s: %s: %s", path, what, sqlite3_errmsg(db));
	return false;
}

/* The application id and the token row; false after a message (a file
 * that is not a token: *not_token). */
static bool
read_info(sqlite3 *db, const char *path, char label[33], char serial[PG_TOKENDB_SERIAL_LEN + 1],
          bool *not_token)
{
	sqlite3_stmt *s = NULL;
	bool ok = false;
	int rc, id = 0;

	*not_token = false;
	if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &s, NULL) != SQLITE_OK ||
	    (rc = sqlite3_step(s)) != SQLITE_ROW) {
		*not_token = true;
		goto out;
	}
	id = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	s = NULL;
	if (id != APPLICATION_ID ||
	    sqlite3_prepare_v2(db, "SELECT label, serial FROM token WHERE id = 1", -1, &s,
	                       NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW || sqlite3_column_bytes(s, 0) != 32 ||
	    sqlite3_column_bytes(s, 1) != PG_TOKENDB_SERIAL_LEN) {
		*not_token = true;
		goto out;
	}
	memcpy(label, sqlite3_column_blob(s, 0), 32);
	label[32] = 0;
	for (size_t n = 32; n > 0 && label[n - 1] == ' '; n--)
		label[n - 1] = 0;
	memcpy(serial, sqlite3_column_text(s, 1), PG_TOKENDB_SERIAL_LEN);
	serial[PG_TOKENDB_SERIAL_LEN] = 0;
	ok = true;
out:
	if (!ok)
		pg_message("%s: not a token of the key store (%s)", path, sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return ok;
}

bool
pg_tokendb_snapshot(const char *path, pg_tokendb_snap *snap, bool *not_token)
{
	sqlite3 *src;
	sqlite3_backup *b;
	sqlite3_int64 size = 0;
	int rc;

	memset(snap, 0, sizeof(*snap));
	*not_token = false;
	src = open_db(path, SQLITE_OPEN_READWRITE);
	if (src == NULL)
		return false;
	if (sqlite3_open_v2("snapshot", &snap->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
	                    "memdb") != SQLITE_OK) {
		pg_message("out of memory");
		goto fail;
	}
	/* One read transaction for the row read and the copy: they agree. */
	if (sqlite3_exec(src, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fail(src, path, "reading");
		goto fail;
	}
	if (!read_info(src, path, snap->label, snap->serial, not_token)) {
		sqlite3_exec(src, "ROLLBACK", NULL, NULL, NULL);
		goto fail;
	}
	b = sqlite3_backup_init(snap->db, "main", src, "main");
	rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(snap->db);
	sqlite3_backup_finish(b);
	sqlite3_exec(src, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_DONE) {
		pg_message("%s: copying: %s", path, sqlite3_errstr(rc));
		goto fail;
	}
	snap->data = sqlite3_serialize(snap->db, "main", &size, SQLITE_SERIALIZE_NOCOPY);
	if (snap->data == NULL || size <= 0) {
		pg_message("%s: the copy is empty", path);
		goto fail;
	}
	snap->len = (size_t)size;
	sqlite3_close(src);
	return true;
fail:
	sqlite3_close(src);
	pg_tokendb_snapshot_clear(snap);
	return false;
}

void
pg_tokendb_snapshot_clear(pg_tokendb_snap *snap)
{
	if (snap == NULL)
		return;
	sqlite3_close(snap->db);
	memset(snap, 0, sizeof(*snap));
}

bool
pg_tokendb_info(const char *path, bool check, char label[33], char serial[PG_TOKENDB_SERIAL_LEN + 1])
{
	sqlite3 *db = open_db(path, SQLITE_OPEN_READWRITE);
	sqlite3_stmt *s = NULL;
	bool ok, not_token;

	if (db == NULL)
		return false;
	ok = read_info(db, path, label, serial, &not_token);
	if (ok && check) {
		ok = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, NULL) == SQLITE_OK &&
		     sqlite3_step(s) == SQLITE_ROW &&
		     strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0;
		if (!ok)
			pg_message("%s: the database is damaged", path);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return ok;
}

bool
pg_tokendb_relabel(const char *path, const char *label, const char serial[PG_TOKENDB_SERIAL_LEN])
{
	sqlite3 *db = open_db(path, SQLITE_OPEN_READWRITE);
	sqlite3_stmt *s = NULL;
	unsigned char padded[32];
	bool ok;

	if (db == NULL)
		return false;
	pg_pad(padded, sizeof(padded), label);
	ok = sqlite3_prepare_v2(db, "UPDATE token SET label = ?1, serial = ?2 WHERE id = 1", -1,
	                        &s, NULL) == SQLITE_OK &&
	     sqlite3_bind_blob(s, 1, padded, sizeof(padded), SQLITE_STATIC) == SQLITE_OK &&
	     sqlite3_bind_text(s, 2, serial, PG_TOKENDB_SERIAL_LEN, SQLITE_STATIC) == SQLITE_OK &&
	     sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(db) == 1;
	if (!ok)
		fail(db, path, "relabelling");
	sqlite3_finalize(s);
	/* The last connection: its close checkpoints the change into the
	 * file itself, which is what gets linked into place. */
	if (sqlite3_close(db) != SQLITE_OK && ok) {
		pg_message("%s: closing failed", path);
		ok = false;
	}
	return ok;
}

bool
pg_tokendb_replace(const char *from, const char *to)
{
	sqlite3 *src = open_db(from, SQLITE_OPEN_READWRITE);
	sqlite3 *dst = src ? open_db(to, SQLITE_OPEN_READWRITE) : NULL;
	sqlite3_backup *b;
	int rc;

	if (dst == NULL) {
		sqlite3_close(src);
		return false;
	}
	b = sqlite3_backup_init(dst, "main", src, "main");
	/* One step: one write transaction on the token in use. */
	rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(dst);
	if (b != NULL && sqlite3_backup_finish(b) != SQLITE_OK && rc == SQLITE_DONE)
		rc = sqlite3_errcode(dst);
	if (rc != SQLITE_DONE)
		pg_message("%s: replacing the token: %s", to, sqlite3_errstr(rc));
	sqlite3_close(dst);
	sqlite3_close(src);
	return rc == SQLITE_DONE;
}
