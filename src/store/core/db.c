/*
 * Token databases: one SQLite file per token, in WAL mode.
 *
 * Schema (user_version 1, application_id 'p11g'):
 *   token(id = 1, label, serial, max_fails, epoch, change, tomb_floor)
 *   pin(user = CKU_SO | CKU_USER, kdf, log2n, r, p, salt, wrapped, fails)
 *   object(id, uid UNIQUE, class, private, version, attrs)  -- attrs: record.c
 *   tomb(version, id)                                        -- deletions
 *
 * Every PKCS#11 write is one transaction (BEGIN IMMEDIATE .. COMMIT) that
 * also increments token.change and stamps the rows it writes with the new
 * value, so another process finds what changed with "version > the change
 * it saw" (and deletions in tomb). A process notices that anyone else
 * committed with PRAGMA data_version, a cheap check made at the entry
 * points that read objects. The schema is never changed once made, so
 * a new schema cookie means the file's pages were replaced whole (SQLite's
 * backup API, as `p11glue restore --replace` uses, bumps it): the token
 * is then reloaded whole, as after C_InitToken elsewhere. synchronous=NORMAL: a killed process loses
 * nothing committed (a power loss may lose the last transactions).
 *
 * A token is created under a temporary name and linked into place, so a
 * token file is complete or absent, and an existing file is never
 * overwritten.
 *
 * Read-only tokens: a token file the process cannot write (chmod 400)
 * makes the token write-protected (CKF_WRITE_PROTECTED; a write is
 * CKR_TOKEN_WRITE_PROTECTED, with a message naming the file). SQLite
 * gives the -wal and -shm files it creates the token file's mode, so
 * using a read-only token leaves them read-only, and they would keep the
 * token read-only after its file is made writable again. Opening a
 * token therefore gives such a file the token file's mode back when the
 * token file is writable, the directory too, and the file is ours;
 * otherwise the message names that file.
 */
#define _GNU_SOURCE
#include "config.h"

#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define APPLICATION_ID 0x70313167   /* "p11g" */
#define SCHEMA_VERSION 1
#define BUSY_TIMEOUT_MS 20000
#define TOMB_KEEP 10000             /* deletions remembered */

static const char *const stmt_sql[PG_STMT_COUNT] = {
	[PG_STMT_DATA_VERSION] = "PRAGMA data_version",
	[PG_STMT_TOKEN] = "SELECT label, serial, max_fails, epoch, change, tomb_floor, "
	                  "(SELECT schema_version FROM pragma_schema_version) FROM token WHERE id = 1",
	[PG_STMT_PINS] = "SELECT user, kdf, log2n, r, p, salt, wrapped, fails FROM pin",
	[PG_STMT_CHANGED] = "SELECT id, uid, class, private, version, attrs FROM object "
	                    "WHERE version > ?1",
	[PG_STMT_TOMBS] = "SELECT id, version FROM tomb WHERE version > ?1",
	[PG_STMT_IDS] = "SELECT id FROM object",
	[PG_STMT_INSERT] = "INSERT INTO object (uid, class, private, version, attrs) "
	                   "VALUES (?1, ?2, ?3, ?4, ?5)",
	[PG_STMT_UPDATE] = "UPDATE object SET class = ?2, private = ?3, version = ?4, attrs = ?5 "
	                   "WHERE id = ?1",
	[PG_STMT_DELETE] = "DELETE FROM object WHERE id = ?1",
	[PG_STMT_TOMB] = "INSERT INTO tomb (version, id) VALUES (?1, ?2)",
	[PG_STMT_CHANGE] = "UPDATE token SET change = ?1 WHERE id = 1",
	[PG_STMT_FAILS] = "UPDATE pin SET fails = ?2 WHERE user = ?1",
	[PG_STMT_PIN_SET] = "INSERT OR REPLACE INTO pin (user, kdf, log2n, r, p, salt, wrapped, fails) "
	                    "VALUES (?1, 'scrypt', ?2, ?3, ?4, ?5, ?6, 0)",
};

static const char schema[] =
	"CREATE TABLE token (id INTEGER PRIMARY KEY CHECK (id = 1), label BLOB NOT NULL,"
	" serial TEXT NOT NULL, max_fails INTEGER NOT NULL, epoch INTEGER NOT NULL,"
	" change INTEGER NOT NULL, tomb_floor INTEGER NOT NULL);"
	"CREATE TABLE pin (user INTEGER PRIMARY KEY, kdf TEXT NOT NULL, log2n INTEGER NOT NULL,"
	" r INTEGER NOT NULL, p INTEGER NOT NULL, salt BLOB NOT NULL, wrapped BLOB NOT NULL,"
	" fails INTEGER NOT NULL);"
	"CREATE TABLE object (id INTEGER PRIMARY KEY, uid BLOB NOT NULL UNIQUE,"
	" class INTEGER NOT NULL, private INTEGER NOT NULL, version INTEGER NOT NULL,"
	" attrs BLOB NOT NULL);"
	"CREATE INDEX object_version ON object (version);"
	"CREATE TABLE tomb (version INTEGER NOT NULL, id INTEGER NOT NULL);"
	"CREATE INDEX tomb_version ON tomb (version);";

/* An SQLite failure as PKCS#11 sees it; a damaged file marks the token. */
CK_RV
pg_db_error(pg_token *tok, int rc, const char *what)
{
	int primary = rc & 0xff;

	if (primary == SQLITE_NOMEM)
		return CKR_HOST_MEMORY;
	if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
		if (!tok->broken)
			pg_message("store: %s is damaged (%s: %s); the token is unusable",
			           tok->path, what, sqlite3_errstr(rc));
		tok->broken = true;
	} else {
		pg_message("store: %s: %s: %s", tok->path, what, sqlite3_errstr(rc));
	}
	return CKR_DEVICE_ERROR;
}

sqlite3_stmt *
pg_db_stmt(pg_token *tok, int which)
{
	sqlite3_stmt *s = tok->stmts[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

int
pg_db_exec(pg_token *tok, const char *sql)
{
	return sqlite3_exec(tok->db, sql, NULL, NULL, NULL);
}

/* A single integer from a statement without parameters, e.g. a PRAGMA. */
static bool
query_int(sqlite3 *db, const char *sql, int64_t *value)
{
	sqlite3_stmt *s = NULL;
	bool ok;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	ok = sqlite3_step(s) == SQLITE_ROW;
	if (ok)
		*value = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return ok;
}

void
pg_db_close(pg_token *tok, bool forked)
{
	(void)forked;
	for (size_t i = 0; i < PG_STMT_COUNT; i++) {
		sqlite3_finalize(tok->stmts[i]);
		tok->stmts[i] = NULL;
	}
	/*
	 * After a fork the child closes what it inherited: the parent keeps
	 * its own locks (POSIX locks belong to a process), and the parent's
	 * shared lock stops the child from checkpointing or removing the WAL
	 * while the parent uses it. The atfork handler makes sure no
	 * transaction of ours was open at the fork.
	 */
	sqlite3_close_v2(tok->db);
	tok->db = NULL;
}

/* SQLite's companion files of a token file. */
static const char *const companions[] = { "-wal", "-shm" };

/* path + suffix into a new string (caller frees), or NULL. */
static char *
companion_path(const char *path, const char *suffix)
{
	char *p;

	return asprintf(&p, "%s%s", path, suffix) < 0 ? NULL : p;
}

static bool
writable(const char *path)
{
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

static bool
dir_writable(const char *path)
{
	char *copy = strdup(path);
	bool ok = copy != NULL && faccessat(AT_FDCWD, dirname(copy), W_OK | X_OK, AT_EACCESS) == 0;

	free(copy);
	return ok;
}

/* Gives a read-only companion file of ours the token file's mode (see
 * the top of this file); true when it did. */
static bool
repair_companion(const char *path, const struct stat *token, const char *side)
{
	struct stat before, st;
	bool done = false;
	int fd;

	if (lstat(side, &before) != 0 || !S_ISREG(before.st_mode) || before.st_uid != geteuid() ||
	    writable(side))
		return false;
	fd = open(side, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && st.st_dev == before.st_dev && st.st_ino == before.st_ino &&
	    fchmod(fd, (token->st_mode & 0666) | S_IRUSR | S_IWUSR) == 0) {
		pg_message("store: %s was left read-only from when %s was; made it writable again",
		           side, path);
		done = true;
	}
	close(fd);
	return done;
}

static void
repair_companions(const char *path)
{
	struct stat token;

	if (stat(path, &token) != 0 || !writable(path) || !dir_writable(path))
		return;
	for (size_t i = 0; i < PG_N_ELEMENTS(companions); i++) {
		char *side = companion_path(path, companions[i]);
		if (side != NULL)
			(void)repair_companion(path, &token, side);
		free(side);
	}
}

/* The files that keep an open token from being written, joined with
 * " and " (caller frees), or NULL when there are none. */
static char *
read_only_files(pg_token *tok)
{
	char *list = NULL;

	if (sqlite3_db_readonly(tok->db, "main") == 1 || !writable(tok->path))
		return strdup(tok->path);
	for (size_t i = 0; i < PG_N_ELEMENTS(companions); i++) {
		char *side = companion_path(tok->path, companions[i]), *joined;
		if (side == NULL || access(side, F_OK) != 0 || writable(side)) {
			free(side);
			continue;
		}
		if (list == NULL) {
			list = side;
			continue;
		}
		if (asprintf(&joined, "%s and %s", list, side) < 0)
			joined = NULL;
		free(list);
		free(side);
		list = joined;
	}
	return list;
}

CK_RV
pg_db_write_protected(pg_token *tok)
{
	char *files;

	tok->read_only = true;
	if (tok->read_only_told)
		return CKR_TOKEN_WRITE_PROTECTED;
	tok->read_only_told = true;
	files = read_only_files(tok);
	if (files == NULL)
		pg_message("store: %s cannot be written to; the token is write-protected", tok->path);
	else if (strcmp(files, tok->path) == 0)
		pg_message("store: %s is read-only, so the token is write-protected "
		           "(to write to it, make the file writable: chmod u+w)", files);
	else if (strstr(files, " and ") == NULL)
		pg_message("store: %s is read-only (left from when %s was), so the token is "
		           "write-protected: make it writable (chmod u+w), or remove it while no "
		           "program uses the token", files, tok->path);
	else
		pg_message("store: %s are read-only (left from when %s was), so the token is "
		           "write-protected: make them writable (chmod u+w), or remove them while "
		           "no program uses the token", files, tok->path);
	free(files);
	return CKR_TOKEN_WRITE_PROTECTED;
}

CK_RV
pg_db_open(pg_token *tok)
{
	char *ro;
	int64_t app = 0, version = 0;
	int rc;

	repair_companions(tok->path);
	rc = sqlite3_open_v2(tok->path, &tok->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(tok->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(tok->db, 1);
	if (!query_int(tok->db, "PRAGMA application_id", &app) ||
	    !query_int(tok->db, "PRAGMA user_version", &version) ||
	    app != APPLICATION_ID || version != SCHEMA_VERSION) {
		pg_message("store: %s is not a p11glue token database (or a newer one); skipped",
		           tok->path);
		goto close;
	}
	rc = pg_db_exec(tok, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	               "PRAGMA secure_delete = ON; PRAGMA cache_size = -1024;");
	if (rc != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < PG_STMT_COUNT; i++) {
		rc = sqlite3_prepare_v3(tok->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		                        &tok->stmts[i], NULL);
		if (rc != SQLITE_OK)
			goto fail;
	}
	tok->change = -1;
	tok->data_version = -1;
	tok->epoch = -1;
	tok->schema = -1;
	ro = read_only_files(tok);
	tok->read_only = ro != NULL;
	tok->read_only_told = false;
	free(ro);
	return CKR_OK;
fail:
	pg_message("store: cannot open %s: %s", tok->path, sqlite3_errstr(rc));
close:
	pg_db_close(tok, false);
	return CKR_DEVICE_ERROR;
}

CK_RV
pg_db_commit(pg_token *tok)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_CHANGE);
	int rc;

	sqlite3_bind_int64(s, 1, tok->change + 1);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		rc = pg_db_exec(tok, "COMMIT");
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		pg_db_rollback(tok);
		return pg_db_error(tok, rc, "COMMIT");
	}
	tok->in_write = false;
	tok->change++;
	return CKR_OK;
}

void
pg_db_rollback(pg_token *tok)
{
	if (sqlite3_get_autocommit(tok->db) == 0)
		pg_db_exec(tok, "ROLLBACK");
	tok->in_write = false;
}

CK_RV
pg_db_put(pg_token *tok, pg_entry *e, const pg_buf *record, bool update)
{
	sqlite3_stmt *s = pg_db_stmt(tok, update ? PG_STMT_UPDATE : PG_STMT_INSERT);
	int64_t version = tok->change + 1;
	int rc;

	if (update)
		sqlite3_bind_int64(s, 1, e->obj.row);
	else
		sqlite3_bind_blob(s, 1, e->uid, PG_UID_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)pg_attrs_ulong(&e->obj.attrs, CKA_CLASS, 0));
	sqlite3_bind_int(s, 3, pg_attrs_bool(&e->obj.attrs, CKA_PRIVATE, false));
	sqlite3_bind_int64(s, 4, version);
	sqlite3_bind_blob(s, 5, record->data, (int)record->len, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "writing an object");
	if (update && sqlite3_changes(tok->db) != 1)
		return CKR_OBJECT_HANDLE_INVALID;
	if (!update)
		e->obj.row = sqlite3_last_insert_rowid(tok->db);
	e->version = version;
	return CKR_OK;
}

CK_RV
pg_db_delete(pg_token *tok, pg_entry *e)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_DELETE);
	int64_t version = tok->change + 1;
	int rc;

	sqlite3_bind_int64(s, 1, e->obj.row);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "deleting an object");
	s = pg_db_stmt(tok, PG_STMT_TOMB);
	sqlite3_bind_int64(s, 1, version);
	sqlite3_bind_int64(s, 2, e->obj.row);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "recording a deletion");
	/* Forget old deletions now and then; readers behind rescan (drop_missing). */
	if (version % 1000 == 0 && version > TOMB_KEEP) {
		char sql[160];
		snprintf(sql, sizeof(sql),
		         "DELETE FROM tomb WHERE version <= %lld;"
		         "UPDATE token SET tomb_floor = %lld WHERE id = 1;",
		         (long long)(version - TOMB_KEEP), (long long)(version - TOMB_KEEP));
		rc = pg_db_exec(tok, sql);
		if (rc != SQLITE_OK)
			return pg_db_error(tok, rc, "pruning deletions");
	}
	return CKR_OK;
}

CK_RV
pg_db_set_pin(pg_token *tok, CK_USER_TYPE user, const pg_pin_wrap *w)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_PIN_SET);
	int rc;

	sqlite3_bind_int64(s, 1, (sqlite3_int64)user);
	sqlite3_bind_int(s, 2, (int)w->log2n);
	sqlite3_bind_int(s, 3, (int)w->r);
	sqlite3_bind_int(s, 4, (int)w->p);
	sqlite3_bind_blob(s, 5, w->salt, PG_SALT_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(s, 6, w->wrapped, PG_WRAPPED_LEN, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "writing a PIN");
	tok->pins[user] = *w;
	tok->pins[user].fails = 0;
	return CKR_OK;
}

CK_RV
pg_db_set_fails(pg_token *tok, CK_USER_TYPE user, unsigned fails)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_FAILS);
	int rc;

	sqlite3_bind_int64(s, 1, (sqlite3_int64)user);
	sqlite3_bind_int(s, 2, (int)fails);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "writing a PIN counter");
	tok->pins[user].fails = fails;
	return CKR_OK;
}

CK_RV
pg_db_reinit(pg_token *tok, const CK_UTF8CHAR label[32], const char serial[PG_SERIAL_LEN],
             const pg_pin_wrap *so)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = pg_db_exec(tok, "DELETE FROM object; DELETE FROM tomb; DELETE FROM pin;");
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(tok->db, "UPDATE token SET label = ?1, epoch = epoch + 1,"
		                        " tomb_floor = ?2, serial = ?3 WHERE id = 1", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_blob(s, 1, label, 32, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, tok->change + 1);
		sqlite3_bind_text(s, 3, serial, PG_SERIAL_LEN, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(tok->db);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_OK)
		return pg_db_error(tok, rc, "initialising the token");
	return pg_db_set_pin(tok, CKU_SO, so);
}

/* Writes the schema and the first rows into a new, empty database. */
static int
create_schema(sqlite3 *db, const CK_UTF8CHAR label[32], const char serial[PG_SERIAL_LEN],
              const pg_pin_wrap *so, unsigned max_fails)
{
	sqlite3_stmt *s = NULL;
	char sql[96];
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
	         APPLICATION_ID, SCHEMA_VERSION);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, schema, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO token VALUES (1, ?1, ?2, ?3, 1, 0, 0)",
		                        -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_blob(s, 1, label, 32, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, serial, PG_SERIAL_LEN, SQLITE_STATIC);
		sqlite3_bind_int(s, 3, (int)max_fails);
		rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, stmt_sql[PG_STMT_PIN_SET], -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int(s, 1, CKU_SO);
		sqlite3_bind_int(s, 2, (int)so->log2n);
		sqlite3_bind_int(s, 3, (int)so->r);
		sqlite3_bind_int(s, 4, (int)so->p);
		sqlite3_bind_blob(s, 5, so->salt, PG_SALT_LEN, SQLITE_STATIC);
		sqlite3_bind_blob(s, 6, so->wrapped, PG_WRAPPED_LEN, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT; PRAGMA journal_mode = WAL;", NULL, NULL, NULL);
	return rc;
}

CK_RV
pg_db_create(const char *path, const CK_UTF8CHAR label[32], const char serial[PG_SERIAL_LEN],
             const pg_pin_wrap *so, unsigned max_fails)
{
	char *tmp;
	sqlite3 *db = NULL;
	size_t len = strlen(path) + 32;
	CK_RV rv = CKR_DEVICE_ERROR;
	int fd, rc;

	tmp = malloc(len);
	if (tmp == NULL)
		return CKR_HOST_MEMORY;
	snprintf(tmp, len, "%s.tmp%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		pg_message("store: cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return CKR_DEVICE_ERROR;
	}
	close(fd);
	rc = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK)
		rc = create_schema(db, label, serial, so, max_fails);
	/* Closing the only connection folds the WAL into the file. */
	if (sqlite3_close(db) != SQLITE_OK && rc == SQLITE_OK)
		rc = SQLITE_ERROR;
	if (rc != SQLITE_OK) {
		pg_message("store: cannot create a token in %s: %s", tmp, sqlite3_errstr(rc));
	} else if (link(tmp, path) != 0) {
		rv = errno == EEXIST ? CKR_FUNCTION_FAILED : CKR_DEVICE_ERROR;
		pg_message("store: cannot create %s: %s", path, strerror(errno));
	} else {
		rv = CKR_OK;
	}
	unlink(tmp);
	free(tmp);
	return rv;
}

bool
pg_db_check(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	bool ok = false;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		ok = strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0;
	sqlite3_finalize(s);
	sqlite3_close(db);
	return ok;
}
