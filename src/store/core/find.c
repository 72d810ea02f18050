/*
 * C_FindObjectsInit, C_FindObjects, C_FindObjectsFinal.
 *
 * The matches are collected at C_FindObjectsInit (a snapshot of handles).
 * A template with a non-empty CKA_LABEL, CKA_ID, CKA_SUBJECT or
 * CKA_SERIAL_NUMBER goes through the token's index
 * (entry.c) and touches only the objects with that value; any other
 * template walks the token's objects.
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	CK_OBJECT_HANDLE *handles;
	size_t n;
	size_t cap;
	size_t pos;
} find_state;

static void
find_free(void *state)
{
	find_state *f = state;

	if (f == NULL)
		return;
	free(f->handles);
	free(f);
}

bool
pg_entry_matches(const pg_entry *e, const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++) {
		const CK_ATTRIBUTE *t = &tmpl[i];
		const CK_ATTRIBUTE *a = pg_attrs_find(&e->obj.attrs, t->type);
		char uid[PG_UID_LEN * 2];
		CK_ATTRIBUTE made = { CKA_UNIQUE_ID, uid, sizeof(uid) };

		if (t->type == CKA_UNIQUE_ID) {
			pg_entry_unique_id(e, uid);
			a = &made;
		}

		if (a == NULL || (t->pValue == NULL && t->ulValueLen > 0))
			return false;
		/* Matching on a value that cannot be read would reveal it. */
		if (!pg_rules_readable(&e->obj.attrs, t->type))
			return false;
		if (pg_rules_is_template(t->type)) {
			if (t->ulValueLen % sizeof(CK_ATTRIBUTE) != 0 ||
			    !pg_template_equal(a->pValue, a->ulValueLen, t->pValue,
			                       t->ulValueLen / sizeof(CK_ATTRIBUTE)))
				return false;
			continue;
		}
		if (a->ulValueLen != t->ulValueLen ||
		    (a->ulValueLen > 0 && memcmp(a->pValue, t->pValue, a->ulValueLen) != 0))
			return false;
	}
	return true;
}

static bool
add(find_state *f, CK_OBJECT_HANDLE handle)
{
	if (!pg_array_grow(&f->handles, &f->cap, f->n, sizeof(*f->handles), 16))
		return false;
	f->handles[f->n++] = handle;
	return true;
}

/* The template attribute to look up in the index, or NULL. */
static const CK_ATTRIBUTE *
index_attr(const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++) {
		switch (tmpl[i].type) {
		case CKA_LABEL:
		case CKA_ID:
		case CKA_SUBJECT:
		case CKA_SERIAL_NUMBER:
			if (tmpl[i].ulValueLen > 0 && tmpl[i].pValue != NULL &&
			    tmpl[i].ulValueLen != CK_UNAVAILABLE_INFORMATION)
				return &tmpl[i];
			break;
		default:
			break;
		}
	}
	return NULL;
}

static CK_RV
collect_locked(pg_session *s, const CK_ATTRIBUTE *tmpl, CK_ULONG n, find_state *f)
{
	const CK_ATTRIBUTE *key = index_attr(tmpl, n);
	pg_token *tok = s->tok;
	pg_entry *e;

	if (key != NULL) {
		uint64_t h = pg_hash_bytes(key->type, key->pValue, key->ulValueLen);
		size_t pos = 0;
		while ((e = pg_map_next(&tok->index, h, &pos)) != NULL) {
			if (pg_entry_visible_locked(e, s) && pg_entry_matches(e, tmpl, n) &&
			    !add(f, e->obj.handle))
				return CKR_HOST_MEMORY;
		}
		return CKR_OK;
	}
	for (e = tok->objects; e != NULL; e = e->next) {
		if (pg_entry_visible_locked(e, s) && pg_entry_matches(e, tmpl, n) &&
		    !add(f, e->obj.handle))
			return CKR_HOST_MEMORY;
	}
	return CKR_OK;
}

CK_RV
pg_find_init(pg_session *s, const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	pg_op *op = pg_session_op(s, PG_OP_FIND);
	find_state *f;
	CK_RV rv;

	if (op->state != NULL)
		return CKR_OPERATION_ACTIVE;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return CKR_HOST_MEMORY;
	pg_store_lock();
	rv = pg_token_sync(s->tok);
	if (rv == CKR_OK)
		rv = collect_locked(s, tmpl, n, f);
	pg_store_unlock();
	if (rv != CKR_OK) {
		find_free(f);
		return rv;
	}
	op->state = f;
	op->free = find_free;
	return CKR_OK;
}

CK_RV
C_FindObjectsInit(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	pg_session *s;
	CK_RV rv = pg_session_acquire(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	else
		rv = pg_find_init(s, pTemplate, ulCount);
	pg_session_release(s);
	return rv;
}

CK_RV
C_FindObjects(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject,
              CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount)
{
	pg_session *s;
	find_state *f;
	CK_ULONG count;
	CK_RV rv = pg_session_acquire(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	f = pg_session_op(s, PG_OP_FIND)->state;
	if (pulObjectCount == NULL || (phObject == NULL && ulMaxObjectCount > 0)) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (f == NULL) {
		rv = CKR_OPERATION_NOT_INITIALIZED;
	} else {
		count = (CK_ULONG)(f->n - f->pos);
		if (count > ulMaxObjectCount)
			count = ulMaxObjectCount;
		if (count > 0)
			memcpy(phObject, f->handles + f->pos, count * sizeof(*phObject));
		f->pos += count;
		*pulObjectCount = count;
	}
	pg_session_release(s);
	return rv;
}

CK_RV
C_FindObjectsFinal(CK_SESSION_HANDLE hSession)
{
	pg_session *s;
	CK_RV rv = pg_session_acquire(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pg_session_op(s, PG_OP_FIND)->state == NULL)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else
		pg_session_op_end(s, PG_OP_FIND);
	pg_session_release(s);
	return rv;
}
