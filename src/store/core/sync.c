/*
 * The in-memory token brought up to date with its database: the token
 * row and the PINs, objects other processes wrote or deleted since the
 * change this process last saw, and a token initialised anew (every
 * login and object dropped). The database layer below (db.c) only reads
 * and writes rows; this file decides what they mean for the cache of
 * objects (entry.c) and for the logins (login.c).
 */
#include "config.h"

#include "core.h"

#include <string.h>

/* Reads the token row and the PINs. */
static CK_RV
load_meta(pg_token *tok, int64_t *change, int64_t *epoch, int64_t *schema)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_TOKEN);
	pg_pin_wrap pins[2];
	int rc = sqlite3_step(s);

	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? pg_db_error(tok, SQLITE_CORRUPT, "no token row")
		                         : pg_db_error(tok, rc, "reading the token");
	if (sqlite3_column_bytes(s, 0) != 32 || sqlite3_column_bytes(s, 1) != 16)
		return pg_db_error(tok, SQLITE_CORRUPT, "token row");
	memcpy(tok->label, sqlite3_column_blob(s, 0), 32);
	memcpy(tok->serial, sqlite3_column_text(s, 1), 16);
	tok->max_fails = (unsigned)sqlite3_column_int(s, 2);
	*epoch = sqlite3_column_int64(s, 3);
	*change = sqlite3_column_int64(s, 4);
	tok->tomb_floor = sqlite3_column_int64(s, 5);
	*schema = sqlite3_column_int64(s, 6);
	sqlite3_reset(s);

	memset(pins, 0, sizeof(pins));
	s = pg_db_stmt(tok, PG_STMT_PINS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t user = sqlite3_column_int64(s, 0);
		pg_pin_wrap *w;
		if (user != CKU_SO && user != CKU_USER)
			continue;
		w = &pins[user];
		if (strcmp((const char *)sqlite3_column_text(s, 1), "scrypt") != 0 ||
		    sqlite3_column_bytes(s, 5) != PG_SALT_LEN || sqlite3_column_bytes(s, 6) != PG_WRAPPED_LEN)
			return pg_db_error(tok, SQLITE_CORRUPT, "PIN row");
		w->set = true;
		w->log2n = (unsigned)sqlite3_column_int(s, 2);
		w->r = (unsigned)sqlite3_column_int(s, 3);
		w->p = (unsigned)sqlite3_column_int(s, 4);
		memcpy(w->salt, sqlite3_column_blob(s, 5), PG_SALT_LEN);
		memcpy(w->wrapped, sqlite3_column_blob(s, 6), PG_WRAPPED_LEN);
		w->fails = (unsigned)sqlite3_column_int(s, 7);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return pg_db_error(tok, rc, "reading PINs");
	if (!pins[CKU_SO].set || tok->max_fails == 0)
		return pg_db_error(tok, SQLITE_CORRUPT, "no SO PIN");
	memcpy(tok->pins, pins, sizeof(pins));
	return CKR_OK;
}

/* Drops token objects whose rows are gone (after tombs were forgotten). */
static CK_RV
drop_missing(pg_token *tok)
{
	pg_map present;
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_IDS);
	pg_entry *e, *next;
	int rc;

	pg_map_init(&present);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!pg_map_add(&present, (uint64_t)sqlite3_column_int64(s, 0), tok)) {
			pg_map_clear(&present);
			sqlite3_reset(s);
			return CKR_HOST_MEMORY;
		}
	}
	sqlite3_reset(s);
	for (e = tok->objects; rc == SQLITE_DONE && e != NULL; e = next) {
		next = e->next;
		if (e->obj.row != 0 && pg_map_get(&present, (uint64_t)e->obj.row) == NULL)
			pg_entry_unpublish_locked(e);
	}
	pg_map_clear(&present);
	return rc == SQLITE_DONE ? CKR_OK : pg_db_error(tok, rc, "listing objects");
}

static CK_RV
apply_tombs(pg_token *tok)
{
	sqlite3_stmt *s = pg_db_stmt(tok, PG_STMT_TOMBS);
	int rc;

	sqlite3_bind_int64(s, 1, tok->change);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		pg_entry *e = pg_map_get(&tok->rows, (uint64_t)sqlite3_column_int64(s, 0));
		if (e != NULL && e->version < sqlite3_column_int64(s, 1))
			pg_entry_unpublish_locked(e);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? CKR_OK : pg_db_error(tok, rc, "reading deletions");
}

static CK_RV
apply_row(pg_token *tok, sqlite3_stmt *s, pg_sealer *sealer)
{
	int64_t row = sqlite3_column_int64(s, 0);
	int64_t version = sqlite3_column_int64(s, 4);
	pg_entry *old = pg_map_get(&tok->rows, (uint64_t)row);
	pg_entry *e;
	bool ok;

	if (old != NULL && old->version == version)
		return CKR_OK;
	e = pg_entry_load(tok, row, sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1),
	                  (CK_OBJECT_CLASS)sqlite3_column_int64(s, 2), sqlite3_column_int(s, 3) != 0,
	                  version, sqlite3_column_blob(s, 5), (size_t)sqlite3_column_bytes(s, 5),
	                  sealer);
	if (e == NULL) {
		/* Damaged rows are skipped (reported by pg_entry_load). */
		pg_entry_unpublish_locked(old);
		return CKR_OK;
	}
	ok = old ? pg_entry_replace_locked(old, e) : pg_entry_publish_locked(e);
	pg_object_unref_locked(&e->obj);
	return ok ? CKR_OK : CKR_HOST_MEMORY;
}

static CK_RV
apply_changes(pg_token *tok)
{
	sqlite3_stmt *s;
	pg_sealer *sealer = NULL;
	CK_RV rv = CKR_OK;
	int rc;

	if (tok->login == PG_LOGIN_USER && tok->key != NULL) {
		sealer = pg_sealer_new(tok->key);
		if (sealer == NULL)
			return CKR_HOST_MEMORY;
	}
	s = pg_db_stmt(tok, PG_STMT_CHANGED);
	sqlite3_bind_int64(s, 1, tok->change);
	while (rv == CKR_OK && (rc = sqlite3_step(s)) == SQLITE_ROW)
		rv = apply_row(tok, s, sealer);
	sqlite3_reset(s);
	pg_sealer_free(sealer);
	if (rv == CKR_OK && rc != SQLITE_DONE)
		rv = pg_db_error(tok, rc, "reading objects");
	return rv;
}

/* Loads what changed since tok->change; inside a read or write transaction. */
static CK_RV
load_changes(pg_token *tok)
{
	int64_t change = 0, epoch = 0, schema = 0;
	CK_RV rv = load_meta(tok, &change, &epoch, &schema);

	if (rv != CKR_OK)
		return rv;
	if (epoch != tok->epoch || schema != tok->schema) {
		/* Initialised anew (by us or another process), or the file
		 * replaced by another copy of the token (db.c): start over. */
		if (tok->epoch != -1)
			pg_token_logout_locked(tok);
		for (pg_entry *e = tok->objects, *next; e != NULL; e = next) {
			next = e->next;
			if (e->obj.row != 0)
				pg_entry_unpublish_locked(e);
		}
		tok->epoch = epoch;
		tok->schema = schema;
		tok->change = -1;
	}
	if (change == tok->change)
		return CKR_OK;
	if (tok->change >= 0 && tok->change < tok->tomb_floor)
		rv = drop_missing(tok);
	else if (tok->change >= 0)
		rv = apply_tombs(tok);
	if (rv == CKR_OK)
		rv = apply_changes(tok);
	if (rv == CKR_OK)
		tok->change = change;
	return rv;
}

CK_RV
pg_token_sync(pg_token *tok)
{
	sqlite3_stmt *s;
	int64_t dv;
	CK_RV rv;
	int rc;

	if (tok->db == NULL)
		return CKR_OK;
	if (tok->broken)
		return CKR_DEVICE_ERROR;
	if (tok->in_write)
		return CKR_OK;
	s = pg_db_stmt(tok, PG_STMT_DATA_VERSION);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return pg_db_error(tok, rc, "data_version");
	}
	dv = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (dv == tok->data_version)
		return CKR_OK;
	rc = pg_db_exec(tok, "BEGIN");
	if (rc != SQLITE_OK)
		return pg_db_error(tok, rc, "BEGIN");
	rv = load_changes(tok);
	pg_db_exec(tok, rv == CKR_OK ? "COMMIT" : "ROLLBACK");
	if (rv == CKR_OK)
		tok->data_version = dv;
	return rv;
}

CK_RV
pg_token_begin_write(pg_token *tok)
{
	CK_RV rv;
	int rc;

	if (tok->db == NULL || tok->broken)
		return CKR_DEVICE_ERROR;
	if (tok->read_only)
		return pg_db_write_protected(tok);
	rc = pg_db_exec(tok, "BEGIN IMMEDIATE");
	if ((rc & 0xff) == SQLITE_READONLY)
		return pg_db_write_protected(tok);
	if (rc != SQLITE_OK)
		return pg_db_error(tok, rc, "BEGIN IMMEDIATE");
	rv = load_changes(tok);
	if (rv != CKR_OK) {
		pg_db_exec(tok, "ROLLBACK");
		return rv;
	}
	tok->in_write = true;
	return CKR_OK;
}
