/*
 * The trust module's object functions: attribute reads (the hot path: an
 * NSS start-up reads every attribute of every object, one call each),
 * searches, and writing to writable tokens.
 *
 * Checks follow PKCS#11 order: initialized, session, object, arguments,
 * then the work.
 */
#include "trust-attrs.h"
#include "trust-module.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static CK_OBJECT_HANDLE
object_handle(size_t token, size_t index)
{
	return pg_tm.handle_base[token] | (CK_OBJECT_HANDLE)(index + 1);
}

/* The index of a handle's object in the session's token, or SIZE_MAX
 * when the handle is not one of its current objects. Lock held. */
static inline size_t
handle_index(const pg_tm_session *s, CK_OBJECT_HANDLE h)
{
	size_t index = (size_t)(h & PG_TM_OBJECT_MASK) - 1;

	if ((h & ~PG_TM_OBJECT_MASK) != pg_tm.handle_base[s->token] ||
	    index >= pg_tstore_count(pg_tm.stores[s->token]))
		return SIZE_MAX;
	return index;
}

/* Copies a value; the common small ones without a call. */
static inline void
copy_value(void *to, const pg_value *v)
{
	if (v->len == sizeof(CK_ULONG))
		memcpy(to, v->p, sizeof(CK_ULONG));
	else if (v->len == 1)
		*(unsigned char *)to = *(const unsigned char *)v->p;
	else
		memcpy(to, v->p, v->len);
}

/* One attribute of a template (PKCS#11 v3.0 §5.7, C_GetAttributeValue:
 * absent, asked for its length, too small, or copied). */
static inline CK_RV
get_one(pg_object *o, CK_ATTRIBUTE *a)
{
	pg_value v = pg_object_value_fast(o, a->type);

	if (v.len == CK_UNAVAILABLE_INFORMATION) {
		a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		return CKR_ATTRIBUTE_TYPE_INVALID;
	}
	if (a->pValue != NULL) {
		if (a->ulValueLen < v.len) {
			a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
			return CKR_BUFFER_TOO_SMALL;
		}
		copy_value(a->pValue, &v);
	}
	a->ulValueLen = v.len;
	return CKR_OK;
}

/* Every attribute is answered; the first failure is returned. */
static __attribute__((noinline)) CK_RV
get_many(pg_object *o, CK_ATTRIBUTE *t, CK_ULONG n)
{
	CK_RV rv = CKR_OK;

	for (CK_ULONG i = 0; i < n; i++) {
		CK_RV r = get_one(o, &t[i]);
		if (rv == CKR_OK)
			rv = r;
	}
	return rv;
}

/*
 * Starts a call on object hObject of session hSession: CKR_OK with the
 * lock held (until pg_tm_end), *s the session and *index the object's
 * index; else not initialized, no such session or no such object,
 * unlocked. Without C_Initialize there are no sessions: telling the
 * first two apart only when the session is not found keeps one test
 * off the attribute-read path.
 */
static inline CK_RV
begin_object(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, pg_tm_session **s,
             size_t *index)
{
	CK_RV rv;

	pg_lock_acquire(&pg_tm.lock);
	if ((*s = pg_tm_session_get(hSession)) == NULL)
		rv = pg_tm_ready() ? CKR_SESSION_HANDLE_INVALID : CKR_CRYPTOKI_NOT_INITIALIZED;
	else if ((*index = handle_index(*s, hObject)) == SIZE_MAX)
		rv = CKR_OBJECT_HANDLE_INVALID;
	else
		return CKR_OK;
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                          CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	pg_tm_session *s;
	size_t index;
	CK_RV rv = begin_object(hSession, hObject, &s, &index);

	if (rv != CKR_OK)
		return rv;
	if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	else if (ulCount == 1)
		/* The common case (NSS reads one attribute a call). */
		rv = get_one(&pg_tm.stores[s->token]->objects[index], pTemplate);
	else
		rv = get_many(&pg_tm.stores[s->token]->objects[index], pTemplate, ulCount);
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_FindObjectsInit(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	else if (s->finding)
		rv = CKR_OPERATION_ACTIVE;
	else {
		size_t token = s->token;
		/* Files are checked when a search starts, not on every read. */
		if (pg_tstore_refresh(pg_tm.stores[token]))
			pg_tm_set_generation(token, pg_tm.generation[token] + 1);
		if (!pg_tstore_find(pg_tm.stores[token], pTemplate, ulCount, &s->found, &s->n_found)) {
			pg_tm_end_find(s);
			rv = CKR_HOST_MEMORY;
		} else {
			s->finding = true;
			s->next = 0;
		}
	}
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_FindObjects(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject,
                    CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	if (phObject == NULL || pulObjectCount == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!s->finding)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else {
		CK_ULONG n = 0;
		size_t token = s->token;
		while (n < ulMaxObjectCount && s->next < s->n_found)
			phObject[n++] = object_handle(token, s->found[s->next++]);
		*pulObjectCount = n;
	}
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_FindObjectsFinal(CK_SESSION_HANDLE hSession)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	if (!s->finding)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else
		pg_tm_end_find(s);
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_CreateObject(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount,
                     CK_OBJECT_HANDLE_PTR phObject)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	if ((pTemplate == NULL && ulCount) || phObject == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else {
		size_t token = s->token, index = 0;
		rv = pg_tstore_create(pg_tm.stores[token], pTemplate, ulCount, &index);
		if (rv == CKR_OK) {
			pg_tm_set_generation(token, pg_tm.generation[token] + 1);
			*phObject = object_handle(token, index);
		}
	}
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_DestroyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject)
{
	pg_tm_session *s;
	size_t index;
	CK_RV rv = begin_object(hSession, hObject, &s, &index);

	if (rv != CKR_OK)
		return rv;
	if (!(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else if ((rv = pg_tstore_destroy(pg_tm.stores[s->token], index)) == CKR_OK)
		pg_tm_set_generation(s->token, pg_tm.generation[s->token] + 1);
	return pg_tm_end(rv);
}

CK_RV
pg_tm_C_GetObjectSize(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ULONG_PTR pulSize)
{
	pg_tm_session *s;
	size_t index;
	CK_RV rv = begin_object(hSession, hObject, &s, &index);

	if (rv != CKR_OK)
		return rv;
	if (pulSize == NULL)
		return pg_tm_end(CKR_ARGUMENTS_BAD);
	*pulSize = CK_UNAVAILABLE_INFORMATION;
	return pg_tm_end(CKR_OK);
}
