/*
 * Object entries: the in-memory objects of a token, their handles, the
 * attribute index that makes C_FindObjects by label or id fast, and the
 * conversion to and from stored records.
 *
 * A published entry never changes (but for its reference count and the
 * mech layer's key cache): a change builds a new entry that takes the
 * old one's handle and place, and the old one lives until the operations
 * holding references to it end. So the mech layer reads attributes of an
 * object it holds without any lock.
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

/* The attributes the index covers (by exact value). */
static const CK_ATTRIBUTE_TYPE indexed[] = {
	CKA_LABEL, CKA_ID, CKA_SUBJECT, CKA_SERIAL_NUMBER,
};

pg_entry *
pg_entry_new(pg_token *tok, CK_SESSION_HANDLE owner)
{
	pg_entry *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	if (pthread_mutex_init(&e->obj.key_lock, NULL) != 0) {
		free(e);
		return NULL;
	}
	e->obj.refs = 1;
	e->obj.slot = tok->slot;
	e->obj.owner = owner;
	e->tok = tok;
	return e;
}

static void
entry_free(pg_entry *e, bool forked)
{
	pg_attrs_clear(&e->obj.attrs);
	if (e->obj.key != NULL)
		pg_mech_key_free(e->obj.key);
	/* A forked child may inherit a lock some parent thread held. */
	if (!forked)
		pthread_mutex_destroy(&e->obj.key_lock);
	pg_free_secret(e->record, e->record_len);
	free(e);
}

void
pg_object_ref_locked(pg_object *obj)
{
	obj->refs++;
}

void
pg_object_unref_locked(pg_object *obj)
{
	if (obj == NULL)
		return;
	if (--obj->refs == 0)
		entry_free((pg_entry *)obj, false);
}

void
pg_object_unref(pg_object *obj)
{
	if (obj == NULL)
		return;
	pg_store_lock();
	pg_object_unref_locked(obj);
	pg_store_unlock();
}

static uint64_t
index_key(const CK_ATTRIBUTE *a)
{
	return pg_hash_bytes(a->type, a->pValue, a->ulValueLen);
}

/* Adds e to the index under each attribute of it that is indexed (add
 * true), or removes it from there. */
static bool
index_update(pg_entry *e, bool add)
{
	for (CK_ULONG i = 0; i < e->obj.attrs.n; i++) {
		const CK_ATTRIBUTE *a = &e->obj.attrs.items[i];
		if (a->ulValueLen == 0 || !pg_ulong_listed(indexed, PG_N_ELEMENTS(indexed), a->type))
			continue;
		if (!add)
			pg_map_remove(&e->tok->index, index_key(a), e);
		else if (!pg_map_add(&e->tok->index, index_key(a), e))
			return false;
	}
	return true;
}

static void
unlink_all(pg_entry *e)
{
	pg_token *tok = e->tok;

	(void)index_update(e, false);
	pg_map_remove(&pg_store.objects, e->obj.handle, e);
	if (e->obj.row != 0)
		pg_map_remove(&tok->rows, (uint64_t)e->obj.row, e);
	if (e->prev != NULL)
		e->prev->next = e->next;
	else if (tok->objects == e)
		tok->objects = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
	tok->n_objects--;
	e->published = false;
}

bool
pg_entry_publish_locked(pg_entry *e)
{
	pg_token *tok = e->tok;

	pg_attrs_compact(&e->obj.attrs);
	if (e->obj.handle == 0)
		e->obj.handle = ++pg_store.next_object;
	if (!pg_map_add(&pg_store.objects, e->obj.handle, e))
		return false;
	if (e->obj.row != 0 && !pg_map_add(&tok->rows, (uint64_t)e->obj.row, e)) {
		pg_map_remove(&pg_store.objects, e->obj.handle, e);
		return false;
	}
	e->next = tok->objects;
	e->prev = NULL;
	if (tok->objects != NULL)
		tok->objects->prev = e;
	tok->objects = e;
	tok->n_objects++;
	e->published = true;
	if (!index_update(e, true)) {
		unlink_all(e);
		return false;
	}
	e->obj.refs++;
	return true;
}

void
pg_entry_unpublish_locked(pg_entry *e)
{
	if (e == NULL || !e->published)
		return;
	unlink_all(e);
	pg_object_unref_locked(&e->obj);
}

bool
pg_entry_replace_locked(pg_entry *old, pg_entry *fresh)
{
	fresh->obj.handle = old->obj.handle;
	pg_entry_unpublish_locked(old);
	return pg_entry_publish_locked(fresh);
}

pg_entry *
pg_entry_find_locked(CK_OBJECT_HANDLE handle)
{
	return pg_map_get_handle(&pg_store.objects, handle);
}

bool
pg_entry_visible_locked(const pg_entry *e, const pg_session *session)
{
	if (e->tok != session->tok)
		return false;
	if (pg_attrs_bool(&e->obj.attrs, CKA_PRIVATE, false))
		return e->tok->login == PG_LOGIN_USER;
	return true;
}

void
pg_entry_unique_id(const pg_entry *e, char out[PG_UID_LEN * 2])
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < PG_UID_LEN; i++) {
		out[2 * i] = hex[e->uid[i] >> 4];
		out[2 * i + 1] = hex[e->uid[i] & 15];
	}
}

bool
pg_entry_identify(pg_entry *e)
{
	return pg_random(e->uid, sizeof(e->uid));
}

typedef struct {
	pg_entry *e;
	pg_sealer *sealer;
} load_ctx;

static bool
load_attr(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
          size_t len)
{
	load_ctx *l = ctx;

	if (type == CKA_UNIQUE_ID || len > (CK_ULONG)-1)
		return false;
	if (pg_attrs_find(&l->e->obj.attrs, type) != NULL)
		return false;        /* a repeated attribute: not a record we wrote */
	if (!(flags & PG_RECORD_SEALED))
		return pg_attrs_set(&l->e->obj.attrs, type, value, (CK_ULONG)len);
	l->e->has_sealed = true;
	if (l->sealer == NULL) {
		l->e->sealed = true;
		return true;
	}
	return pg_sealer_open(l->sealer, l->e->uid, type, value, len, &l->e->obj.attrs);
}

pg_entry *
pg_entry_load(pg_token *tok, int64_t row, const unsigned char *uid, size_t uid_len,
              CK_OBJECT_CLASS cls, bool private_, int64_t version,
              const unsigned char *record, size_t len, pg_sealer *sealer)
{
	load_ctx l = { NULL, sealer };
	pg_entry *e;

	if (uid == NULL || uid_len != PG_UID_LEN || record == NULL)
		goto bad;
	e = pg_entry_new(tok, 0);
	if (e == NULL)
		return NULL;
	l.e = e;
	e->obj.row = row;
	e->version = version;
	memcpy(e->uid, uid, PG_UID_LEN);
	if (!pg_record_parse(record, len, load_attr, &l)) {
		entry_free(e, false);
		goto bad;
	}
	/* CKA_CLASS, CKA_PRIVATE and CKA_TOKEN are never sealed (rules.c);
	 * they must agree with the columns. */
	if (pg_attrs_ulong(&e->obj.attrs, CKA_CLASS, CK_UNAVAILABLE_INFORMATION) != cls ||
	    pg_attrs_bool(&e->obj.attrs, CKA_PRIVATE, false) != private_) {
		entry_free(e, false);
		goto bad;
	}
	if (e->has_sealed) {
		e->record = pg_memdup0(record, len);
		if (e->record == NULL)
			goto nomem;
		e->record_len = len;
	}
	return e;
nomem:
	entry_free(e, false);
	return NULL;
bad:
	pg_message("store: object %lld in %s is damaged or does not open; it is skipped",
	           (long long)row, tok->path ? tok->path : "(token)");
	return NULL;
}

typedef struct {
	pg_buf *out;
	const pg_attrs *attrs;
} copy_ctx;

/* Copies the sealed entries of an old record (their values not in clear). */
static bool
copy_sealed(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
            size_t len)
{
	copy_ctx *c = ctx;

	if ((flags & PG_RECORD_SEALED) && pg_attrs_find(c->attrs, type) == NULL)
		pg_record_add(c->out, type, flags, value, len);
	return true;
}

/* Appends one attribute sealed. */
static bool
add_sealed(pg_sealer *sealer, const pg_entry *e, const CK_ATTRIBUTE *a, pg_buf *out)
{
	pg_buf sealed;
	bool ok;

	pg_buf_init(&sealed);
	ok = pg_sealer_seal(sealer, e->uid, a->type, a->pValue, a->ulValueLen, &sealed);
	if (ok)
		pg_record_add(out, a->type, PG_RECORD_SEALED, sealed.data, sealed.len);
	pg_buf_clear(&sealed);
	return ok;
}

bool
pg_entry_record(const pg_entry *e, pg_sealer *sealer, pg_buf *out)
{
	const pg_attrs *attrs = &e->obj.attrs;
	copy_ctx c = { out, attrs };

	pg_record_begin(out);
	for (CK_ULONG i = 0; i < attrs->n; i++) {
		const CK_ATTRIBUTE *a = &attrs->items[i];
		if (a->type == CKA_UNIQUE_ID)
			continue;
		if (!pg_rules_sealed(attrs, a->type))
			pg_record_add(out, a->type, 0, a->pValue, a->ulValueLen);
		else if (sealer == NULL || !add_sealed(sealer, e, a, out))
			return false;
	}
	if (e->sealed && e->record != NULL &&
	    !pg_record_parse(e->record, e->record_len, copy_sealed, &c))
		return false;
	return !out->failed;
}

/* A copy of e rebuilt from its record, sealed or unsealed. */
static pg_entry *
reload(pg_entry *e, pg_sealer *sealer)
{
	CK_OBJECT_CLASS cls = pg_attrs_ulong(&e->obj.attrs, CKA_CLASS, 0);
	bool priv = pg_attrs_bool(&e->obj.attrs, CKA_PRIVATE, false);

	return pg_entry_load(e->tok, e->obj.row, e->uid, PG_UID_LEN, cls, priv, e->version,
	                     e->record, e->record_len, sealer);
}

CK_RV
pg_entries_reseal_locked(pg_token *tok, pg_sealer *sealer)
{
	pg_entry *e, *next, *fresh;

	for (e = tok->objects; e != NULL; e = next) {
		next = e->next;
		if (!e->has_sealed || e->record == NULL || (sealer != NULL) != e->sealed)
			continue;
		fresh = reload(e, sealer);
		if (fresh == NULL) {
			/* Damaged (already reported) or out of memory: hide it. */
			pg_entry_unpublish_locked(e);
			continue;
		}
		if (!pg_entry_replace_locked(e, fresh)) {
			entry_free(fresh, false);
			return CKR_HOST_MEMORY;
		}
		pg_object_unref_locked(&fresh->obj);
	}
	return CKR_OK;
}

void
pg_entries_drop_session_locked(pg_token *tok, CK_SESSION_HANDLE owner)
{
	pg_entry *e, *next;

	for (e = tok->objects; e != NULL; e = next) {
		next = e->next;
		if (e->obj.owner == owner)
			pg_entry_unpublish_locked(e);
	}
}

void
pg_entries_free_token_locked(pg_token *tok, bool forked)
{
	pg_entry *e, *next;

	for (e = tok->objects; e != NULL; e = next) {
		next = e->next;
		unlink_all(e);
		/* Operations in flight may still hold references (not after a fork). */
		if (forked || --e->obj.refs == 0)
			entry_free(e, forked);
	}
	pg_map_clear(&tok->rows);
	pg_map_clear(&tok->index);
}

void
pg_token_logout_locked(pg_token *tok)
{
	bool user = tok->login == PG_LOGIN_USER;

	tok->login = PG_LOGIN_NONE;
	pg_token_key_free(tok->key);
	tok->key = NULL;
	/* Private values go back to sealed; private objects are hidden anyway. */
	if (user)
		(void)pg_entries_reseal_locked(tok, NULL);
}
