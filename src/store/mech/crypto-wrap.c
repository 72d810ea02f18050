/*
 * p11glue-store: C_WrapKey and C_UnwrapKey (base specification 5.16).
 *
 * A secret key is wrapped as its CKA_VALUE, a private key as its PKCS#8
 * PrivateKeyInfo; values are padded with zeros to the block of the
 * mechanisms that take whole blocks only (AES ECB and CBC, RFC 3394),
 * and CKA_VALUE_LEN of the unwrap template takes such padding off again.
 * Encryption itself is the cipher engine's, single-part.
 */
#include "crypto.h"
#include "mech.h"

#include <stdlib.h>
#include <string.h>

static void wrap_use(pg_key_use *use, bool wrap)
{
	use->flag = wrap ? CKF_WRAP : CKF_UNWRAP;
	use->usage = wrap ? CKA_WRAP : CKA_UNWRAP;
	use->invalid_rv = wrap ? CKR_WRAPPING_KEY_HANDLE_INVALID : CKR_UNWRAPPING_KEY_HANDLE_INVALID;
	use->type_rv = wrap ? CKR_WRAPPING_KEY_TYPE_INCONSISTENT : CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT;
}

/* Looks up and checks a (un)wrapping key; returns its object too. */
static CK_RV wrapping_key(pg_session *s, CK_OBJECT_HANDLE h, const CK_MECHANISM *m, bool wrap,
                          pg_object **obj, const pg_mech **mech, pg_key **key)
{
	pg_key_use use;
	CK_RV rv;

	wrap_use(&use, wrap);
	rv = pg_session_key(s, h, obj);
	if (rv != CKR_OK)
		return rv == CKR_KEY_HANDLE_INVALID ? use.invalid_rv : rv;
	rv = pg_op_key_checked(*obj, m, &use, mech, key);
	/* C_UnwrapKey is one call: no room for the context-specific login
	 * CKA_ALWAYS_AUTHENTICATE asks for, so such a key does not unwrap. */
	if (rv == CKR_OK && use.always_auth) {
		pg_key_unref(*key);
		*key = NULL;
		rv = CKR_KEY_FUNCTION_NOT_PERMITTED;
	}
	if (rv == CKR_KEY_SIZE_RANGE)
		rv = wrap ? CKR_WRAPPING_KEY_SIZE_RANGE : CKR_UNWRAPPING_KEY_SIZE_RANGE;
	if (rv != CKR_OK) {
		pg_object_unref(*obj);
		*obj = NULL;
	}
	return rv;
}

/* The block a mechanism only takes whole: values are padded with zeros to it. */
static size_t zero_pad_block(const pg_mech *mech)
{
	switch (mech->kind) {
	case PG_KIND_AES_ECB:
	case PG_KIND_AES_CBC:
		return 16;
	case PG_KIND_AES_KW:
		return 8;
	default:
		return 1;
	}
}

/* Whether every attribute of the wrapping key's CKA_WRAP_TEMPLATE matches the key. */
static CK_RV wrap_template_ok(const pg_object *wobj, const pg_object *obj)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(&wobj->attrs, CKA_WRAP_TEMPLATE);
	pg_attrs t = { 0 };
	CK_RV rv = CKR_OK;

	if (a == NULL || a->ulValueLen == 0)
		return CKR_OK;
	if (!pg_attrs_template(&wobj->attrs, CKA_WRAP_TEMPLATE, &t))
		return CKR_HOST_MEMORY;
	for (CK_ULONG i = 0; rv == CKR_OK && i < t.n; i++) {
		const CK_ATTRIBUTE *want = &t.items[i];
		const CK_ATTRIBUTE *have = pg_attrs_find(&obj->attrs, want->type);
		if (have == NULL || have->ulValueLen != want->ulValueLen ||
		    (want->ulValueLen > 0 && memcmp(have->pValue, want->pValue, want->ulValueLen) != 0))
			rv = CKR_KEY_NOT_WRAPPABLE;
	}
	pg_attrs_clear(&t);
	return rv;
}

/* The bytes that get wrapped: checks the key may leave, and pads. */
static CK_RV wrap_plain(const pg_object *wobj, pg_object *obj, const pg_mech *mech,
                        unsigned char **plain, size_t *len)
{
	CK_OBJECT_CLASS cls = pg_attrs_ulong(&obj->attrs, CKA_CLASS, (CK_ULONG)-1);
	const CK_ATTRIBUTE *value = pg_attrs_find(&obj->attrs, CKA_VALUE);
	size_t block = zero_pad_block(mech), n;
	unsigned char *der = NULL;
	pg_key *key;
	CK_RV rv;

	if (cls != CKO_SECRET_KEY && cls != CKO_PRIVATE_KEY)
		return CKR_KEY_NOT_WRAPPABLE;
	if (!pg_attrs_bool(&obj->attrs, CKA_EXTRACTABLE, false))
		return CKR_KEY_UNEXTRACTABLE;
	if (pg_attrs_bool(&obj->attrs, CKA_WRAP_WITH_TRUSTED, false) &&
	    !pg_attrs_bool(&wobj->attrs, CKA_TRUSTED, false))
		return CKR_KEY_NOT_WRAPPABLE;
	rv = wrap_template_ok(wobj, obj);
	if (rv != CKR_OK)
		return rv;
	if (cls == CKO_SECRET_KEY) {
		if (value == NULL || value->ulValueLen == 0)
			return CKR_KEY_NOT_WRAPPABLE;
		n = value->ulValueLen;
	} else {
		/* RSA encryption takes a secret key, never a whole private key. */
		if (mech->key_type == CKK_RSA)
			return CKR_KEY_NOT_WRAPPABLE;
		rv = pg_object_key(obj, &key);
		if (rv != CKR_OK)
			return rv;
		der = key->pkey != NULL ? pg_export_pkcs8(key->pkey, &n) : NULL;
		pg_key_unref(key);
		if (der == NULL)
			return CKR_KEY_NOT_WRAPPABLE;
	}
	*len = (n + block - 1) / block * block;
	*plain = calloc(1, *len);
	if (*plain != NULL)
		memcpy(*plain, der != NULL ? der : value->pValue, n);
	if (der != NULL)
		pg_free_secret(der, n);
	return *plain != NULL ? CKR_OK : CKR_HOST_MEMORY;
}

CK_RV pg_C_WrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                   CK_OBJECT_HANDLE hWrappingKey, CK_OBJECT_HANDLE hKey,
                   CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen)
{
	pg_session *s;
	pg_object *wobj = NULL, *obj = NULL;
	const pg_mech *mech;
	pg_key *wkey = NULL;
	pg_cipher *c = NULL;
	unsigned char *plain = NULL;
	size_t len = 0, n;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pMechanism == NULL || pulWrappedKeyLen == NULL)
		return pg_call_end(s, CKR_ARGUMENTS_BAD);
	rv = wrapping_key(s, hWrappingKey, pMechanism, true, &wobj, &mech, &wkey);
	if (rv == CKR_OK)
		rv = pg_session_key(s, hKey, &obj);
	if (rv == CKR_OK)
		rv = wrap_plain(wobj, obj, mech, &plain, &len);
	if (rv == CKR_OK)
		rv = pg_cipher_new(mech, pMechanism, wkey, true, &c);
	if (rv == CKR_OK && pWrappedKey == NULL) {
		*pulWrappedKeyLen = pg_cipher_oneshot_len(c, len);
	} else if (rv == CKR_OK) {
		n = *pulWrappedKeyLen;
		rv = pg_cipher_oneshot(c, plain, len, pWrappedKey, &n);
		if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
			*pulWrappedKeyLen = n;
		/* What the mechanism cannot take is, here, the key's size. */
		if (rv == CKR_DATA_LEN_RANGE)
			rv = CKR_KEY_SIZE_RANGE;
	}
	pg_cipher_free(c);
	pg_free_secret(plain, len);
	pg_key_unref(wkey);
	if (obj != NULL)
		pg_object_unref(obj);
	if (wobj != NULL)
		pg_object_unref(wobj);
	return pg_call_end(s, rv);
}

/* ---------------------------------------------------------------------------
 * Unwrapping.
 */

/* The unwrapped values of a secret key, cut to CKA_VALUE_LEN when given. */
static CK_RV unwrap_secret(const pg_attrs *tmpl, CK_KEY_TYPE type, const unsigned char *plain,
                           size_t len, pg_attrs *gen)
{
	CK_ULONG want = pg_attrs_ulong(tmpl, CKA_VALUE_LEN, len);
	CK_RV rv;

	if (want == 0 || want > len)
		return CKR_TEMPLATE_INCONSISTENT;
	rv = pg_gen_common(gen, CKO_SECRET_KEY, type, CK_UNAVAILABLE_INFORMATION);
	if (rv == CKR_OK && !pg_attrs_set(gen, CKA_VALUE, plain, want))
		rv = CKR_HOST_MEMORY;
	return rv;
}

/* The unwrapped values of a private key, from PKCS#8. */
static CK_RV unwrap_private(const pg_attrs *tmpl, CK_KEY_TYPE type, const unsigned char *plain,
                            size_t len, pg_attrs *gen)
{
	EVP_PKEY *pkey = pg_import_pkcs8(plain, len);
	const CK_ATTRIBUTE *params = pg_attrs_find(tmpl, CKA_EC_PARAMS);
	const pg_curve *curve = NULL;
	pg_attrs values = { 0 };
	CK_KEY_TYPE have;
	CK_RV rv;

	if (pkey == NULL)
		return CKR_WRAPPED_KEY_INVALID;
	if (!pg_export_key_type(pkey, &have, &curve))
		rv = CKR_WRAPPED_KEY_INVALID;
	else if (have != type ||
	         (params != NULL && pg_curve_from_params(params->pValue, params->ulValueLen) != curve))
		rv = CKR_TEMPLATE_INCONSISTENT;
	else
		rv = pg_gen_common(gen, CKO_PRIVATE_KEY, type, CK_UNAVAILABLE_INFORMATION);
	if (rv == CKR_OK)
		rv = pg_export_private(pkey, curve, &values);
	if (rv == CKR_OK)
		rv = pg_gen_add(gen, &values, tmpl->items, tmpl->n);
	pg_attrs_clear(&values);
	EVP_PKEY_free(pkey);
	return rv;
}

/* Decrypts the wrapped key with the engine; ciphertext errors become wrapped-key errors. */
static CK_RV unwrap_decrypt(const pg_mech *mech, const CK_MECHANISM *m, pg_key *key,
                            const unsigned char *in, size_t in_len, unsigned char **plain,
                            size_t *len, size_t *cap)
{
	pg_cipher *c = NULL;
	CK_RV rv = pg_cipher_new(mech, m, key, false, &c);

	if (rv != CKR_OK)
		return rv;
	*cap = pg_cipher_oneshot_len(c, in_len) + 1;
	*plain = malloc(*cap);
	*len = *cap;
	rv = *plain == NULL ? CKR_HOST_MEMORY : pg_cipher_oneshot(c, in, in_len, *plain, len);
	pg_cipher_free(c);
	if (rv == CKR_ENCRYPTED_DATA_INVALID)
		rv = CKR_WRAPPED_KEY_INVALID;
	else if (rv == CKR_ENCRYPTED_DATA_LEN_RANGE)
		rv = CKR_WRAPPED_KEY_LEN_RANGE;
	return rv;
}

CK_RV pg_C_UnwrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                     CK_OBJECT_HANDLE hUnwrappingKey, CK_BYTE_PTR pWrappedKey,
                     CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate,
                     CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	pg_session *s;
	pg_object *wobj = NULL;
	const pg_mech *mech;
	pg_key *wkey = NULL;
	pg_attrs tmpl = { 0 }, gen = { 0 };
	unsigned char *plain = NULL;
	size_t len = 0, cap = 0;
	CK_ULONG cls, type;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pMechanism == NULL || pWrappedKey == NULL || phKey == NULL ||
	    (pTemplate == NULL && ulAttributeCount > 0))
		return pg_call_end(s, CKR_ARGUMENTS_BAD);
	rv = wrapping_key(s, hUnwrappingKey, pMechanism, false, &wobj, &mech, &wkey);
	if (rv == CKR_OK)
		rv = pg_tmpl_merge(pTemplate, ulAttributeCount, &wobj->attrs, CKA_UNWRAP_TEMPLATE, &tmpl);
	cls = pg_attrs_ulong(&tmpl, CKA_CLASS, (CK_ULONG)-1);
	type = pg_attrs_ulong(&tmpl, CKA_KEY_TYPE, (CK_ULONG)-1);
	if (rv == CKR_OK && (pg_attrs_find(&tmpl, CKA_CLASS) == NULL ||
	                     pg_attrs_find(&tmpl, CKA_KEY_TYPE) == NULL))
		rv = CKR_TEMPLATE_INCOMPLETE;
	else if (rv == CKR_OK && cls != CKO_SECRET_KEY && cls != CKO_PRIVATE_KEY)
		rv = CKR_TEMPLATE_INCONSISTENT;
	if (rv == CKR_OK)
		rv = unwrap_decrypt(mech, pMechanism, wkey, pWrappedKey, ulWrappedKeyLen, &plain, &len,
		                    &cap);
	if (rv == CKR_OK)
		rv = cls == CKO_SECRET_KEY ? unwrap_secret(&tmpl, type, plain, len, &gen)
		                           : unwrap_private(&tmpl, type, plain, len, &gen);
	pg_free_secret(plain, cap);
	pg_key_unref(wkey);
	if (wobj != NULL)
		pg_object_unref(wobj);
	return pg_call_end_new_key(s, rv, hSession, &tmpl, &gen, phKey);
}
