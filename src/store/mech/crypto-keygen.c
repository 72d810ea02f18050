/*
 * p11glue-store: C_GenerateKey and C_GenerateKeyPair (base specification
 * 5.16). The mech layer checks the mechanism and what it needs of the
 * templates, generates, and hands the values it contributes (current
 * mechanisms 2.1.4, 2.3.6, 2.3.11, 2.11.1, 2.41.1) to the core, which
 * applies the per-class rules and stores the object(s) in one
 * transaction. Keys are generated without any lock held.
 */
#include "crypto.h"
#include "mech.h"

#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include <stdlib.h>
#include <string.h>

/* A CK_ULONG from a template: absent (false), or malformed (*rv set). */
static bool tmpl_ulong(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type, CK_ULONG *v,
                       CK_RV *rv)
{
	const CK_ATTRIBUTE *a = pg_tmpl_find(t, n, type);

	if (a == NULL)
		return false;
	if (!pg_tmpl_ulong(t, n, type, v))
		*rv = CKR_ATTRIBUTE_VALUE_INVALID;
	return *rv == CKR_OK;
}

/* CKA_CLASS and CKA_KEY_TYPE, when a template gives them, must be what the mechanism makes. */
static CK_RV tmpl_kind(const CK_ATTRIBUTE *t, CK_ULONG n, CK_OBJECT_CLASS cls, CK_KEY_TYPE type)
{
	CK_ULONG v;
	CK_RV rv = CKR_OK;

	if (tmpl_ulong(t, n, CKA_CLASS, &v, &rv) && v != cls)
		return CKR_TEMPLATE_INCONSISTENT;
	if (rv == CKR_OK && tmpl_ulong(t, n, CKA_KEY_TYPE, &v, &rv) && v != type)
		return CKR_TEMPLATE_INCONSISTENT;
	return rv;
}

/* Fails early for a token object in a read-only session, before generating. */
static CK_RV tmpl_writable(pg_session *s, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	bool token = false;

	if (pg_tmpl_bool(t, n, CKA_TOKEN, &token) && token && !pg_session_is_rw(s))
		return CKR_SESSION_READ_ONLY;
	return CKR_OK;
}

/* The session exists (and is writable where a template asks for a token object). */
static CK_RV check_session(CK_SESSION_HANDLE h, const CK_ATTRIBUTE *t1, CK_ULONG n1,
                           const CK_ATTRIBUTE *t2, CK_ULONG n2)
{
	pg_session *s;
	CK_RV rv = pg_call_begin(h, &s);

	if (rv != CKR_OK)
		return rv;
	rv = tmpl_writable(s, t1, n1);
	if (rv == CKR_OK)
		rv = tmpl_writable(s, t2, n2);
	return pg_call_end(s, rv);
}

/*
 * The mechanism of a key generation, which must have flag (CKF_GENERATE,
 * CKF_GENERATE_KEY_PAIR): CKR_MECHANISM_INVALID comes before
 * session_rv, check_session's CKR_SESSION_READ_ONLY, which comes next.
 */
static CK_RV keygen_mech(const CK_MECHANISM *m, CK_FLAGS flag, CK_RV session_rv,
                         const pg_mech **mech)
{
	*mech = pg_mech_find(m->mechanism);
	if (*mech == NULL || ((*mech)->flags & flag) == 0)
		return CKR_MECHANISM_INVALID;
	return session_rv;
}

CK_RV pg_C_GenerateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phKey)
{
	const pg_mech *mech;
	pg_attrs gen = { 0 };
	unsigned char value[512];
	CK_ULONG len = 0;
	CK_RV rv = check_session(hSession, pTemplate, ulCount, NULL, 0);

	if (rv != CKR_OK && rv != CKR_SESSION_READ_ONLY)
		return rv;
	if (pMechanism == NULL || phKey == NULL || (pTemplate == NULL && ulCount > 0))
		return CKR_ARGUMENTS_BAD;
	rv = keygen_mech(pMechanism, CKF_GENERATE, rv, &mech);
	if (rv != CKR_OK)
		return rv;
	rv = tmpl_kind(pTemplate, ulCount, CKO_SECRET_KEY, mech->key_type);
	if (rv != CKR_OK)
		return rv;
	/* 2.11.1, 2.41.1: the template must give the length, in bytes. */
	if (!tmpl_ulong(pTemplate, ulCount, CKA_VALUE_LEN, &len, &rv))
		return rv != CKR_OK ? rv : CKR_TEMPLATE_INCOMPLETE;
	if (mech->kind == PG_KIND_GEN_AES ? (len != 16 && len != 24 && len != 32)
	                                  : (len == 0 || len * 8 > mech->max_size))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	pg_ossl_enter();
	rv = RAND_priv_bytes(value, (int)len) == 1 ? CKR_OK : CKR_FUNCTION_FAILED;
	pg_ossl_leave();
	if (rv == CKR_OK)
		rv = pg_gen_common(&gen, CKO_SECRET_KEY, mech->key_type, mech->type);
	if (rv == CKR_OK && !pg_attrs_set(&gen, CKA_VALUE, value, len))
		rv = CKR_HOST_MEMORY;
	pg_memzero(value, sizeof(value));
	if (rv == CKR_OK)
		return pg_object_create(hSession, pTemplate, ulCount, &gen, phKey);
	pg_attrs_clear(&gen);
	return rv;
}

/* ---------------------------------------------------------------------------
 * Key pairs.
 */
static CK_RV rsa_generate(const CK_ATTRIBUTE *pub, CK_ULONG n, EVP_PKEY **pkey)
{
	const CK_ATTRIBUTE *e = pg_tmpl_find(pub, n, CKA_PUBLIC_EXPONENT);
	CK_ULONG bits;
	EVP_PKEY_CTX *ctx;
	BIGNUM *exp = NULL;
	CK_RV rv = CKR_OK;

	/* 2.1.4: the public template must give CKA_MODULUS_BITS. */
	if (!tmpl_ulong(pub, n, CKA_MODULUS_BITS, &bits, &rv))
		return rv != CKR_OK ? rv : CKR_TEMPLATE_INCOMPLETE;
	if (bits < 2048 || bits > 4096)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (e != NULL) {
		if (e->pValue == NULL || e->ulValueLen == 0 || e->ulValueLen > 8)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		exp = BN_bin2bn(e->pValue, (int)e->ulValueLen, NULL);
		if (exp == NULL)
			return CKR_HOST_MEMORY;
		if (!BN_is_odd(exp) || BN_is_one(exp)) {
			BN_free(exp);
			return CKR_ATTRIBUTE_VALUE_INVALID;
		}
	}
	ctx = EVP_PKEY_CTX_new_from_name(NULL, PG_OID_RSA, NULL);
	if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, (int)bits) <= 0 ||
	    (exp != NULL && EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, exp) <= 0))
		rv = CKR_FUNCTION_FAILED;
	else if (EVP_PKEY_keygen(ctx, pkey) <= 0)
		rv = CKR_ATTRIBUTE_VALUE_INVALID;
	EVP_PKEY_CTX_free(ctx);
	BN_free(exp);
	return rv;
}

static CK_RV ec_generate(const pg_mech *mech, const CK_ATTRIBUTE *pub, CK_ULONG n_pub,
                         const CK_ATTRIBUTE *priv, CK_ULONG n_priv, const pg_curve **curve,
                         EVP_PKEY **pkey)
{
	const CK_ATTRIBUTE *params = pg_tmpl_find(pub, n_pub, CKA_EC_PARAMS);
	const CK_ATTRIBUTE *other = pg_tmpl_find(priv, n_priv, CKA_EC_PARAMS);
	EVP_PKEY_CTX *ctx;
	CK_RV rv = CKR_OK;

	/* 2.3.6, 2.3.11: the curve comes from the public template. */
	if (params == NULL)
		return CKR_TEMPLATE_INCOMPLETE;
	*curve = pg_curve_from_params(params->pValue, params->ulValueLen);
	if (*curve == NULL || (*curve)->key_type != mech->key_type)
		return CKR_CURVE_NOT_SUPPORTED;
	if (other != NULL && pg_curve_from_params(other->pValue, other->ulValueLen) != *curve)
		return CKR_TEMPLATE_INCONSISTENT;
	if (mech->kind == PG_KIND_GEN_EDWARDS) {
		ctx = EVP_PKEY_CTX_new_from_name(NULL, (*curve)->name, NULL);
		if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0)
			rv = CKR_FUNCTION_FAILED;
	} else {
		ctx = EVP_PKEY_CTX_new_from_name(NULL, PG_OID_EC, NULL);
		if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0 ||
		    EVP_PKEY_CTX_set_group_name(ctx, (*curve)->name) <= 0)
			rv = CKR_FUNCTION_FAILED;
	}
	if (rv == CKR_OK && EVP_PKEY_keygen(ctx, pkey) <= 0)
		rv = CKR_FUNCTION_FAILED;
	EVP_PKEY_CTX_free(ctx);
	return rv;
}

static CK_RV pair_attrs(const pg_mech *mech, EVP_PKEY *pkey, const pg_curve *curve,
                        const CK_ATTRIBUTE *pub, CK_ULONG n_pub, const CK_ATTRIBUTE *priv,
                        CK_ULONG n_priv, pg_attrs *pub_gen, pg_attrs *priv_gen)
{
	const CK_ATTRIBUTE *params = pg_tmpl_find(pub, n_pub, CKA_EC_PARAMS);
	pg_attrs values = { 0 };
	CK_RV rv;

	rv = pg_gen_common(pub_gen, CKO_PUBLIC_KEY, mech->key_type, mech->type);
	if (rv == CKR_OK)
		rv = pg_gen_common(priv_gen, CKO_PRIVATE_KEY, mech->key_type, mech->type);
	if (rv == CKR_OK)
		rv = pg_export_public(pkey, curve, &values);
	if (rv == CKR_OK)
		rv = pg_gen_add(pub_gen, &values, pub, n_pub);
	pg_attrs_clear(&values);
	if (rv == CKR_OK)
		rv = pg_export_private(pkey, curve, &values);
	/* The private half names its curve as the public template does. */
	if (rv == CKR_OK && params != NULL &&
	    !pg_attrs_set(&values, CKA_EC_PARAMS, params->pValue, params->ulValueLen))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		rv = pg_gen_add(priv_gen, &values, priv, n_priv);
	pg_attrs_clear(&values);
	return rv;
}

CK_RV pg_C_GenerateKeyPair(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_ATTRIBUTE_PTR pPublicKeyTemplate, CK_ULONG ulPublicKeyAttributeCount,
                           CK_ATTRIBUTE_PTR pPrivateKeyTemplate,
                           CK_ULONG ulPrivateKeyAttributeCount, CK_OBJECT_HANDLE_PTR phPublicKey,
                           CK_OBJECT_HANDLE_PTR phPrivateKey)
{
	const CK_ATTRIBUTE *pub = pPublicKeyTemplate, *priv = pPrivateKeyTemplate;
	CK_ULONG n_pub = ulPublicKeyAttributeCount, n_priv = ulPrivateKeyAttributeCount;
	const pg_mech *mech;
	const pg_curve *curve = NULL;
	EVP_PKEY *pkey = NULL;
	pg_attrs pub_gen = { 0 }, priv_gen = { 0 };
	CK_RV rv = check_session(hSession, pub, n_pub, priv, n_priv);

	if (rv != CKR_OK && rv != CKR_SESSION_READ_ONLY)
		return rv;
	if (pMechanism == NULL || phPublicKey == NULL || phPrivateKey == NULL ||
	    (pub == NULL && n_pub > 0) || (priv == NULL && n_priv > 0))
		return CKR_ARGUMENTS_BAD;
	rv = keygen_mech(pMechanism, CKF_GENERATE_KEY_PAIR, rv, &mech);
	if (rv != CKR_OK)
		return rv;
	rv = tmpl_kind(pub, n_pub, CKO_PUBLIC_KEY, mech->key_type);
	if (rv == CKR_OK)
		rv = tmpl_kind(priv, n_priv, CKO_PRIVATE_KEY, mech->key_type);
	if (rv != CKR_OK)
		return rv;
	pg_ossl_enter();
	if (mech->kind == PG_KIND_GEN_RSA)
		rv = rsa_generate(pub, n_pub, &pkey);
	else
		rv = ec_generate(mech, pub, n_pub, priv, n_priv, &curve, &pkey);
	if (rv == CKR_OK)
		rv = pair_attrs(mech, pkey, curve, pub, n_pub, priv, n_priv, &pub_gen, &priv_gen);
	EVP_PKEY_free(pkey);
	pg_ossl_leave();
	if (rv != CKR_OK) {
		pg_attrs_clear(&pub_gen);
		pg_attrs_clear(&priv_gen);
		return rv;
	}
	return pg_object_create_pair(hSession, pub, n_pub, &pub_gen, priv, n_priv, &priv_gen,
	                             phPublicKey, phPrivateKey);
}
