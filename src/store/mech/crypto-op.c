/*
 * p11glue-store: what the mech layer's entry points share. Sessions and
 * operation slots, the key checks every *Init makes in the
 * specification's order, the parsed-key cache on objects, and keeping
 * libcrypto's error queue clean for the application.
 */
#include "crypto.h"

#include <openssl/err.h>

#include <string.h>

void pg_ossl_enter(void)
{
	ERR_set_mark();
}

void pg_ossl_leave(void)
{
	/* What failed inside the module is reported as CKR_ codes only. */
	ERR_pop_to_mark();
}

CK_RV pg_call_begin(CK_SESSION_HANDLE handle, pg_session **session)
{
	CK_RV rv = pg_session_acquire(handle, session);

	if (rv == CKR_OK)
		pg_ossl_enter();
	return rv;
}

CK_RV pg_call_end(pg_session *session, CK_RV rv)
{
	pg_ossl_leave();
	pg_session_release(session);
	return rv;
}

CK_RV pg_call_end_new_key(pg_session *session, CK_RV rv, CK_SESSION_HANDLE handle,
                          pg_attrs *tmpl, pg_attrs *gen, CK_OBJECT_HANDLE *key)
{
	rv = pg_call_end(session, rv);
	/* The core takes the session itself to store the new key. */
	if (rv == CKR_OK)
		rv = pg_object_create(handle, tmpl->items, tmpl->n, gen, key);
	else
		pg_attrs_clear(gen);
	pg_attrs_clear(tmpl);
	return rv;
}

void *pg_op_state(pg_session *session, pg_op_kind kind)
{
	return pg_session_op(session, kind)->state;
}

void pg_op_set(pg_session *session, pg_op_kind kind, void *state, void (*free_state)(void *))
{
	pg_op *op = pg_session_op(session, kind);

	op->state = state;
	op->free = free_state;
}

void *pg_op_ready(pg_session *session, pg_op_kind kind, CK_RV *rv)
{
	pg_op *op = pg_session_op(session, kind);

	if (op->state == NULL) {
		*rv = CKR_OPERATION_NOT_INITIALIZED;
		return NULL;
	}
	if (op->need_auth) {
		/* 4.9: CKA_ALWAYS_AUTHENTICATE; the failure ends it (5.2). */
		pg_session_op_end(session, kind);
		*rv = CKR_USER_NOT_LOGGED_IN;
		return NULL;
	}
	*rv = CKR_OK;
	return op->state;
}

bool pg_op_keep(CK_RV rv, const void *out)
{
	return rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && out == NULL);
}

CK_RV pg_op_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE hkey, pg_op_kind kind,
                 pg_op_make make, void (*free_state)(void *))
{
	pg_session *s;
	const pg_mech *mech;
	pg_key_use use;
	pg_key *key;
	void *state = NULL;
	CK_RV rv = pg_call_begin(h, &s);

	if (rv != CKR_OK)
		return rv;
	/* 3.0, 5.9 to 5.19: a NULL mechanism ends the active operation. */
	if (m == NULL) {
		if (pg_op_state(s, kind) != NULL)
			pg_session_op_end(s, kind);
		return pg_call_end(s, CKR_OK);
	}
	if (pg_op_state(s, kind) != NULL)
		return pg_call_end(s, CKR_OPERATION_ACTIVE);
	pg_key_use_init(&use, kind);
	if (kind == PG_OP_DIGEST) {
		/* Digesting takes no key: the mechanism alone. */
		key = NULL;
		mech = pg_mech_find(m->mechanism);
		if (mech == NULL || (mech->flags & CKF_DIGEST) == 0)
			rv = CKR_MECHANISM_INVALID;
	} else {
		rv = pg_op_key(s, hkey, m, &use, &mech, &key);
	}
	if (rv == CKR_OK) {
		rv = make(mech, m, key, kind, &state);
		pg_key_unref(key);
	}
	if (rv == CKR_OK) {
		pg_op_set(s, kind, state, free_state);
		pg_session_op(s, kind)->need_auth = use.always_auth;
	}
	return pg_call_end(s, rv);
}

void *pg_op_enter(CK_SESSION_HANDLE h, pg_op_kind kind, bool args_ok, pg_session **s, CK_RV *rv)
{
	void *state;

	*rv = pg_call_begin(h, s);
	if (*rv != CKR_OK)
		return NULL;
	if (!args_ok) {
		*rv = pg_op_finish_update(*s, kind, CKR_ARGUMENTS_BAD);
		return NULL;
	}
	state = pg_op_ready(*s, kind, rv);
	if (state == NULL)
		*rv = pg_call_end(*s, *rv);
	return state;
}

CK_RV pg_op_finish(pg_session *s, pg_op_kind kind, CK_RV rv, const void *out)
{
	if (!pg_op_keep(rv, out) && pg_op_state(s, kind) != NULL)
		pg_session_op_end(s, kind);
	return pg_call_end(s, rv);
}

CK_RV pg_op_finish_update(pg_session *s, pg_op_kind kind, CK_RV rv)
{
	if (rv != CKR_OK && rv != CKR_BUFFER_TOO_SMALL && pg_op_state(s, kind) != NULL)
		pg_session_op_end(s, kind);
	return pg_call_end(s, rv);
}

CK_RV pg_op_output(CK_SESSION_HANDLE h, pg_op_kind kind, pg_op_out out_fn, pg_op_out_how how,
                   CK_BYTE_PTR in, CK_ULONG in_len, CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_session *s;
	CK_RV rv;
	bool ok = (in != NULL || in_len == 0) && out_len != NULL;
	void *state = pg_op_enter(h, kind, ok, &s, &rv);

	if (state == NULL)
		return rv;
	rv = out_fn(state, how, in, in_len, out, out_len);
	return pg_op_finish(s, kind, rv, out);
}

CK_RV pg_op_update(CK_SESSION_HANDLE h, pg_op_kind kind,
                   CK_RV (*update_fn)(void *state, const unsigned char *in, size_t in_len),
                   CK_BYTE_PTR in, CK_ULONG in_len)
{
	pg_session *s;
	CK_RV rv;
	void *state = pg_op_enter(h, kind, in != NULL || in_len == 0, &s, &rv);

	if (state == NULL)
		return rv;
	return pg_op_finish_update(s, kind, update_fn(state, in, in_len));
}

CK_FLAGS pg_op_flag(pg_op_kind kind)
{
	switch (kind) {
	case PG_OP_ENCRYPT: return CKF_ENCRYPT;
	case PG_OP_DECRYPT: return CKF_DECRYPT;
	case PG_OP_SIGN: return CKF_SIGN;
	case PG_OP_VERIFY: return CKF_VERIFY;
	case PG_OP_SIGN_RECOVER: return CKF_SIGN_RECOVER;
	case PG_OP_VERIFY_RECOVER: return CKF_VERIFY_RECOVER;
	case PG_OP_MESSAGE_ENCRYPT: return CKF_MESSAGE_ENCRYPT;
	case PG_OP_MESSAGE_DECRYPT: return CKF_MESSAGE_DECRYPT;
	case PG_OP_MESSAGE_SIGN: return CKF_MESSAGE_SIGN;
	case PG_OP_MESSAGE_VERIFY: return CKF_MESSAGE_VERIFY;
	default: return 0;
	}
}

CK_ATTRIBUTE_TYPE pg_op_usage(pg_op_kind kind)
{
	switch (kind) {
	case PG_OP_ENCRYPT: case PG_OP_MESSAGE_ENCRYPT: return CKA_ENCRYPT;
	case PG_OP_DECRYPT: case PG_OP_MESSAGE_DECRYPT: return CKA_DECRYPT;
	case PG_OP_SIGN: case PG_OP_MESSAGE_SIGN: return CKA_SIGN;
	case PG_OP_VERIFY: case PG_OP_MESSAGE_VERIFY: return CKA_VERIFY;
	case PG_OP_SIGN_RECOVER: return CKA_SIGN_RECOVER;
	case PG_OP_VERIFY_RECOVER: return CKA_VERIFY_RECOVER;
	default: return (CK_ATTRIBUTE_TYPE)-1;
	}
}

void pg_key_use_init(pg_key_use *use, pg_op_kind kind)
{
	use->flag = pg_op_flag(kind);
	use->usage = pg_op_usage(kind);
	use->invalid_rv = CKR_KEY_HANDLE_INVALID;
	use->type_rv = CKR_KEY_TYPE_INCONSISTENT;
	use->always_auth = false;
}

CK_RV pg_object_key(pg_object *obj, pg_key **out)
{
	pg_key *key;
	CK_RV rv;

	pthread_mutex_lock(&obj->key_lock);
	key = pg_key_ref(obj->key);
	pthread_mutex_unlock(&obj->key_lock);
	if (key != NULL) {
		*out = key;
		return CKR_OK;
	}
	/*
	 * A published object's attributes never change (a change makes a
	 * new object), so they are read, and the key built, without a lock;
	 * two threads may race to build it, and the first one kept wins.
	 */
	rv = pg_key_from_attrs(obj->attrs.items, obj->attrs.n, &key);
	if (rv != CKR_OK)
		return rv;
	pthread_mutex_lock(&obj->key_lock);
	if (obj->key == NULL) {
		obj->key = pg_key_ref(key);
	} else {
		pg_key_unref(key);
		key = pg_key_ref(obj->key);
	}
	pthread_mutex_unlock(&obj->key_lock);
	*out = key;
	return CKR_OK;
}

/* Whether CKA_ALLOWED_MECHANISMS (absent or empty: no restriction) lists type. */
static bool mech_allowed(const pg_attrs *attrs, CK_MECHANISM_TYPE type)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(attrs, CKA_ALLOWED_MECHANISMS);
	CK_MECHANISM_TYPE m;

	if (a == NULL || a->ulValueLen < sizeof(m))
		return true;
	for (CK_ULONG off = 0; off + sizeof(m) <= a->ulValueLen; off += sizeof(m)) {
		memcpy(&m, (const unsigned char *)a->pValue + off, sizeof(m));
		if (m == type)
			return true;
	}
	return false;
}

CK_RV pg_op_key_checked(pg_object *obj, const CK_MECHANISM *m, pg_key_use *use,
                        const pg_mech **mech_out, pg_key **key_out)
{
	const pg_mech *mech = pg_mech_find(m->mechanism);
	CK_OBJECT_CLASS cls = pg_attrs_ulong(&obj->attrs, CKA_CLASS, (CK_ULONG)-1);
	CK_KEY_TYPE type = pg_attrs_ulong(&obj->attrs, CKA_KEY_TYPE, (CK_ULONG)-1);
	pg_key *key;
	CK_RV rv;

	if (mech == NULL || (mech->flags & use->flag) == 0)
		return CKR_MECHANISM_INVALID;
	if ((cls != CKO_SECRET_KEY && cls != CKO_PUBLIC_KEY && cls != CKO_PRIVATE_KEY) ||
	    !pg_mech_key_type_ok(mech, type))
		return use->type_rv;
	if (!pg_attrs_bool(&obj->attrs, use->usage, false))
		return CKR_KEY_FUNCTION_NOT_PERMITTED;
	if (!mech_allowed(&obj->attrs, mech->type))
		return CKR_MECHANISM_INVALID;
	use->always_auth =
		cls == CKO_PRIVATE_KEY && pg_attrs_bool(&obj->attrs, CKA_ALWAYS_AUTHENTICATE, false);
	rv = pg_object_key(obj, &key);
	if (rv != CKR_OK)
		return rv;
	if (key->size < mech->min_size || key->size > mech->max_size) {
		pg_key_unref(key);
		return CKR_KEY_SIZE_RANGE;
	}
	*mech_out = mech;
	*key_out = key;
	return CKR_OK;
}

CK_RV pg_op_key(pg_session *session, CK_OBJECT_HANDLE handle, const CK_MECHANISM *m,
                pg_key_use *use, const pg_mech **mech, pg_key **key)
{
	pg_object *obj;
	CK_RV rv = pg_session_key(session, handle, &obj);

	if (rv == CKR_KEY_HANDLE_INVALID)
		return use->invalid_rv;
	if (rv != CKR_OK)
		return rv;
	rv = pg_op_key_checked(obj, m, use, mech, key);
	pg_object_unref(obj);
	return rv;
}

CK_RV pg_attrs_add_all(pg_attrs *dst, const CK_ATTRIBUTE *src, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (!pg_attrs_set(dst, src[i].type, src[i].pValue, src[i].ulValueLen))
			return CKR_HOST_MEMORY;
	return CKR_OK;
}
