/*
 * Object entry points: C_CreateObject, C_CopyObject, C_DestroyObject,
 * C_GetObjectSize, C_GetAttributeValue, C_SetAttributeValue, and
 * pg_object_create[_pair] for the mech layer. The attribute rules are in
 * rules.c, the entries in entry.c, finding in find.c.
 *
 * Token objects are written in one transaction per call (both halves of
 * a key pair in one), and published in memory only after the commit.
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	const CK_ATTRIBUTE *tmpl;
	CK_ULONG n;
	pg_attrs *gen;
	CK_OBJECT_HANDLE *out;
} make_req;

/*
 * Starts a call on an object: CKR_OK with the module mutex held, *s the
 * session and *e an object it may see; otherwise the mutex is not held.
 */
static CK_RV
enter_object(CK_SESSION_HANDLE hs, CK_OBJECT_HANDLE ho, pg_session **s, pg_entry **e)
{
	CK_RV rv = pg_session_enter(hs, true, s);

	if (rv != CKR_OK)
		return rv;
	*e = pg_entry_find_locked(ho);
	if (*e == NULL || !pg_entry_visible_locked(*e, *s)) {
		pg_store_unlock();
		return CKR_OBJECT_HANDLE_INVALID;
	}
	return CKR_OK;
}

static bool
needs_seal(const pg_attrs *attrs)
{
	for (CK_ULONG i = 0; i < attrs->n; i++) {
		if (attrs->items[i].type != CKA_UNIQUE_ID && pg_rules_sealed(attrs, attrs->items[i].type))
			return true;
	}
	return false;
}

/* A new entry for attrs (taken) in a session, with the session checks. */
static CK_RV
entry_make_locked(pg_session *s, pg_attrs *attrs, pg_entry **out)
{
	bool token = pg_attrs_bool(attrs, CKA_TOKEN, false);
	bool priv = pg_attrs_bool(attrs, CKA_PRIVATE, false);
	pg_entry *e;

	*out = NULL;
	if (token && !(s->flags & CKF_RW_SESSION))
		return CKR_SESSION_READ_ONLY;
	if (priv && s->tok->login != PG_LOGIN_USER)
		return CKR_USER_NOT_LOGGED_IN;
	/* Sealing needs the token key: logged in (user, or SO for public keys). */
	if (token && s->tok->key == NULL && needs_seal(attrs))
		return CKR_USER_NOT_LOGGED_IN;
	e = pg_entry_new(s->tok, token ? 0 : s->handle);
	if (e == NULL)
		return CKR_HOST_MEMORY;
	e->obj.attrs = *attrs;
	memset(attrs, 0, sizeof(*attrs));
	if (!pg_entry_identify(e)) {
		pg_object_unref_locked(&e->obj);
		return CKR_HOST_MEMORY;
	}
	*out = e;
	return CKR_OK;
}

/* Writes one token entry inside a transaction; keeps its sealed record. */
static CK_RV
entry_write(pg_token *tok, pg_entry *e, pg_sealer *sealer, bool update)
{
	pg_buf rec;
	CK_RV rv;
	char *data;
	size_t len = 0;

	pg_buf_init(&rec);
	if (!pg_entry_record(e, sealer, &rec)) {
		pg_buf_clear(&rec);
		return sealer == NULL ? CKR_USER_NOT_LOGGED_IN : CKR_HOST_MEMORY;
	}
	rv = pg_db_put(tok, e, &rec, update);
	if (rv == CKR_OK && needs_seal(&e->obj.attrs)) {
		/* Kept so that a logout can drop the clear values (entry.c). */
		data = pg_buf_steal(&rec, &len);
		if (data == NULL)
			rv = CKR_HOST_MEMORY;
		pg_free_secret(e->record, e->record_len);
		e->record = (unsigned char *)data;
		e->record_len = len;
		e->has_sealed = true;
		e->sealed = false;
	}
	pg_buf_clear(&rec);
	return rv;
}

/* Stores the token ones of n new entries in one transaction. */
static CK_RV
entries_store_locked(pg_token *tok, pg_entry **es, size_t n)
{
	pg_sealer *sealer = NULL;
	bool any = false;
	CK_RV rv;

	for (size_t i = 0; i < n; i++)
		any = any || es[i]->obj.owner == 0;
	if (!any)
		return CKR_OK;
	if (tok->key != NULL && (sealer = pg_sealer_new(tok->key)) == NULL)
		return CKR_HOST_MEMORY;
	rv = pg_token_begin_write(tok);
	for (size_t i = 0; rv == CKR_OK && i < n; i++) {
		if (es[i]->obj.owner == 0)
			rv = entry_write(tok, es[i], sealer, false);
	}
	if (rv == CKR_OK)
		rv = pg_db_commit(tok);
	else if (tok->in_write)
		pg_db_rollback(tok);
	pg_sealer_free(sealer);
	return rv;
}

/* The rules' flags for this session's token and the store's options. */
static unsigned
rules_flags(const pg_session *s)
{
	return (s->tok->login == PG_LOGIN_SO ? PG_RULES_SO : 0) |
	       (pg_store.wrap_decrypt ? PG_RULES_WRAP_DECRYPT : 0);
}

static CK_RV
create_locked(pg_session *s, make_req *reqs, size_t count)
{
	pg_entry *es[2] = { NULL, NULL };
	pg_attrs attrs = { 0 };
	unsigned flags = rules_flags(s);
	CK_RV rv = CKR_OK;
	size_t made = 0;

	for (; rv == CKR_OK && made < count; made++) {
		/* A pair (public, private): wrapping with one half and
		 * decrypting with the other do not meet (rules-usage.c). */
		unsigned pair = made == 1 && pg_rules_template_true(reqs[0].tmpl, reqs[0].n, CKA_WRAP)
		                ? PG_RULES_PAIR_WRAPS : 0;
		rv = pg_rules_make(reqs[made].tmpl, reqs[made].n, reqs[made].gen, flags | pair, &attrs);
		if (rv == CKR_OK)
			rv = entry_make_locked(s, &attrs, &es[made]);
		pg_attrs_clear(&attrs);
	}
	if (rv == CKR_OK)
		rv = entries_store_locked(s->tok, es, count);
	for (size_t i = 0; rv == CKR_OK && i < count; i++) {
		if (!pg_entry_publish_locked(es[i]))
			rv = CKR_HOST_MEMORY;
		else
			*reqs[i].out = es[i]->obj.handle;
	}
	for (size_t i = 0; i < count; i++) {
		if (es[i] != NULL && rv != CKR_OK)
			pg_entry_unpublish_locked(es[i]);
		pg_object_unref_locked(es[i] ? &es[i]->obj : NULL);
	}
	return rv;
}

static CK_RV
create(CK_SESSION_HANDLE hs, make_req *reqs, size_t count)
{
	pg_session *s;
	CK_RV rv = pg_session_enter(hs, true, &s);

	if (rv == CKR_OK) {
		for (size_t i = 0; rv == CKR_OK && i < count; i++) {
			if ((reqs[i].tmpl == NULL && reqs[i].n > 0) || reqs[i].out == NULL)
				rv = CKR_ARGUMENTS_BAD;
		}
		if (rv == CKR_OK)
			rv = create_locked(s, reqs, count);
		pg_store_unlock();
	}
	for (size_t i = 0; i < count; i++)
		pg_attrs_clear(reqs[i].gen);
	return rv;
}

CK_RV
pg_object_create(CK_SESSION_HANDLE session, const CK_ATTRIBUTE *tmpl, CK_ULONG n_tmpl,
                 pg_attrs *generated, CK_OBJECT_HANDLE *handle)
{
	make_req req = { tmpl, n_tmpl, generated, handle };

	return create(session, &req, 1);
}

CK_RV
pg_object_create_pair(CK_SESSION_HANDLE session,
                      const CK_ATTRIBUTE *pub_tmpl, CK_ULONG n_pub, pg_attrs *pub_generated,
                      const CK_ATTRIBUTE *priv_tmpl, CK_ULONG n_priv, pg_attrs *priv_generated,
                      CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	make_req reqs[2] = {
		{ pub_tmpl, n_pub, pub_generated, pub },
		{ priv_tmpl, n_priv, priv_generated, priv },
	};

	return create(session, reqs, 2);
}

CK_RV
C_CreateObject(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount,
               CK_OBJECT_HANDLE_PTR phObject)
{
	make_req req = { pTemplate, ulCount, NULL, phObject };

	return create(hSession, &req, 1);
}

CK_RV
C_CopyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ATTRIBUTE_PTR pTemplate,
             CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phNewObject)
{
	pg_session *s;
	pg_entry *e, *copy = NULL;
	pg_attrs attrs = { 0 };
	CK_RV rv = enter_object(hSession, hObject, &s, &e);

	if (rv != CKR_OK)
		return rv;
	if (phNewObject == NULL || (pTemplate == NULL && ulCount > 0))
		rv = CKR_ARGUMENTS_BAD;
	else if (!pg_attrs_bool(&e->obj.attrs, CKA_COPYABLE, true))
		rv = CKR_ACTION_PROHIBITED;
	else if (e->sealed)
		rv = CKR_USER_NOT_LOGGED_IN;   /* values to seal anew are not at hand */
	else
		rv = pg_rules_modify(&e->obj.attrs, pTemplate, ulCount, true, rules_flags(s), &attrs);
	if (rv != CKR_OK)
		goto out;
	rv = entry_make_locked(s, &attrs, &copy);
	if (rv == CKR_OK)
		rv = entries_store_locked(s->tok, &copy, 1);
	if (rv == CKR_OK && !pg_entry_publish_locked(copy))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		*phNewObject = copy->obj.handle;
	pg_object_unref_locked(copy ? &copy->obj : NULL);
out:
	pg_attrs_clear(&attrs);
	pg_store_unlock();
	return rv;
}

CK_RV
C_DestroyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject)
{
	pg_session *s;
	pg_entry *e;
	CK_RV rv = enter_object(hSession, hObject, &s, &e);

	if (rv != CKR_OK)
		return rv;
	if (e->obj.owner == 0 && !(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else if (!pg_attrs_bool(&e->obj.attrs, CKA_DESTROYABLE, true))
		rv = CKR_ACTION_PROHIBITED;
	else if (e->obj.owner == 0)
		rv = pg_token_begin_write(s->tok);
	if (rv != CKR_OK || e->obj.owner != 0)
		goto done;
	rv = pg_db_delete(s->tok, e);
	if (rv == CKR_OK)
		rv = pg_db_commit(s->tok);
	else
		pg_db_rollback(s->tok);
done:
	if (rv == CKR_OK)
		pg_entry_unpublish_locked(e);
	pg_store_unlock();
	return rv;
}

CK_RV
C_GetObjectSize(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ULONG_PTR pulSize)
{
	pg_session *s;
	pg_entry *e;
	CK_RV rv = enter_object(hSession, hObject, &s, &e);

	if (rv != CKR_OK)
		return rv;
	if (pulSize == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else
		*pulSize = pg_attrs_size(&e->obj.attrs) + e->obj.attrs.n * sizeof(CK_ATTRIBUTE);
	pg_store_unlock();
	return rv;
}

typedef struct {
	CK_ATTRIBUTE_TYPE type;
	bool found;
} has_ctx;

static bool
has_attr(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
         size_t len)
{
	has_ctx *h = ctx;

	(void)flags;
	(void)value;
	(void)len;
	h->found = h->found || type == h->type;
	return true;
}

/* C_GetAttributeValue for one attribute (base spec §5.7, cases 1-5). */
static CK_RV
get_one(const pg_entry *e, CK_ATTRIBUTE *t)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(&e->obj.attrs, t->type);
	has_ctx h = { t->type, false };
	char uid[PG_UID_LEN * 2];
	CK_ATTRIBUTE made = { CKA_UNIQUE_ID, uid, sizeof(uid) };

	if (t->type == CKA_UNIQUE_ID) {
		pg_entry_unique_id(e, uid);
		a = &made;
	}
	if (a == NULL) {
		t->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		if (e->sealed && pg_record_parse(e->record, e->record_len, has_attr, &h) && h.found)
			return CKR_ATTRIBUTE_SENSITIVE;
		return CKR_ATTRIBUTE_TYPE_INVALID;
	}
	if (!pg_rules_readable(&e->obj.attrs, t->type)) {
		t->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		return CKR_ATTRIBUTE_SENSITIVE;
	}
	if (pg_rules_is_template(t->type))
		return pg_template_get(a->pValue, a->ulValueLen, t);
	if (t->pValue == NULL) {
		t->ulValueLen = a->ulValueLen;
		return CKR_OK;
	}
	if (t->ulValueLen < a->ulValueLen) {
		t->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (a->ulValueLen > 0)
		memcpy(t->pValue, a->pValue, a->ulValueLen);
	t->ulValueLen = a->ulValueLen;
	return CKR_OK;
}

CK_RV
C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                    CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	pg_session *s;
	pg_entry *e;
	bool sensitive = false, invalid = false, small = false;
	CK_RV rv = enter_object(hSession, hObject, &s, &e);

	if (rv != CKR_OK)
		return rv;
	if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	/* Every attribute is processed, whatever happens to the others. */
	for (CK_ULONG i = 0; rv == CKR_OK && i < ulCount; i++) {
		switch (get_one(e, &pTemplate[i])) {
		case CKR_OK:
			break;
		case CKR_ATTRIBUTE_SENSITIVE:
			sensitive = true;
			break;
		case CKR_ATTRIBUTE_TYPE_INVALID:
			invalid = true;
			break;
		case CKR_BUFFER_TOO_SMALL:
			small = true;
			break;
		default:
			pTemplate[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_GENERAL_ERROR;
		}
	}
	pg_store_unlock();
	if (rv != CKR_OK)
		return rv;
	if (sensitive)
		return CKR_ATTRIBUTE_SENSITIVE;
	if (invalid)
		return CKR_ATTRIBUTE_TYPE_INVALID;
	return small ? CKR_BUFFER_TOO_SMALL : CKR_OK;
}

/* A changed copy of e, stored (token objects) and put in e's place. */
static CK_RV
replace_locked(pg_entry *e, pg_attrs *attrs)
{
	pg_entry *fresh = pg_entry_new(e->tok, e->obj.owner);
	pg_sealer *sealer = NULL;
	CK_RV rv = CKR_HOST_MEMORY;

	if (fresh == NULL)
		return CKR_HOST_MEMORY;
	fresh->obj.attrs = *attrs;
	memset(attrs, 0, sizeof(*attrs));
	fresh->obj.row = e->obj.row;
	memcpy(fresh->uid, e->uid, PG_UID_LEN);
	fresh->has_sealed = e->has_sealed;
	fresh->sealed = e->sealed;
	if (e->record != NULL) {
		fresh->record = pg_memdup0(e->record, e->record_len);
		fresh->record_len = e->record_len;
		if (fresh->record == NULL)
			goto out;
	}
	rv = CKR_OK;
	if (e->obj.owner == 0) {
		if (e->tok->key != NULL && (sealer = pg_sealer_new(e->tok->key)) == NULL)
			rv = CKR_HOST_MEMORY;
		if (rv == CKR_OK)
			rv = pg_token_begin_write(e->tok);
		if (rv == CKR_OK) {
			rv = entry_write(e->tok, fresh, sealer, true);
			if (rv == CKR_OK)
				rv = pg_db_commit(e->tok);
			else
				pg_db_rollback(e->tok);
		}
	}
	if (rv == CKR_OK && !pg_entry_replace_locked(e, fresh))
		rv = CKR_HOST_MEMORY;
out:
	pg_sealer_free(sealer);
	pg_object_unref_locked(&fresh->obj);
	return rv;
}

CK_RV
C_SetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                    CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	pg_session *s;
	pg_entry *e;
	pg_attrs attrs = { 0 };
	CK_RV rv = enter_object(hSession, hObject, &s, &e);

	if (rv != CKR_OK)
		return rv;
	if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	else if (e->obj.owner == 0 && !(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else if (!pg_attrs_bool(&e->obj.attrs, CKA_MODIFIABLE, true))
		rv = CKR_ACTION_PROHIBITED;
	else
		rv = pg_rules_modify(&e->obj.attrs, pTemplate, ulCount, false, rules_flags(s), &attrs);
	if (rv == CKR_OK)
		rv = replace_locked(e, &attrs);
	pg_attrs_clear(&attrs);
	pg_store_unlock();
	return rv;
}
