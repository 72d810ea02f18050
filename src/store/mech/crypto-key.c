/*
 * p11glue-store: parsed keys. A pg_key is made once per key object from
 * its attributes and then shared by every operation in every thread; it
 * also keeps ready libcrypto contexts, so that an operation on a key
 * already used costs no parsing and no context setup.
 */
#include "crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Attribute arrays.
 */
const CK_ATTRIBUTE *pg_tmpl_find(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	if (attrs == NULL)
		return NULL;
	for (CK_ULONG i = 0; i < n; i++)
		if (attrs[i].type == type)
			return &attrs[i];
	return NULL;
}

bool pg_tmpl_bool(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type, bool *value)
{
	const CK_ATTRIBUTE *a = pg_tmpl_find(attrs, n, type);

	if (a == NULL || a->pValue == NULL || a->ulValueLen != sizeof(CK_BBOOL))
		return false;
	*value = *(const CK_BBOOL *)a->pValue != CK_FALSE;
	return true;
}

bool pg_tmpl_ulong(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type, CK_ULONG *value)
{
	const CK_ATTRIBUTE *a = pg_tmpl_find(attrs, n, type);

	if (a == NULL || a->pValue == NULL || a->ulValueLen != sizeof(CK_ULONG))
		return false;
	memcpy(value, a->pValue, sizeof(CK_ULONG));
	return true;
}

/* ---------------------------------------------------------------------------
 * Life cycle.
 */
static pg_key *key_alloc(CK_OBJECT_CLASS cls, CK_KEY_TYPE type)
{
	pg_key *key = calloc(1, sizeof(*key));

	if (key == NULL)
		return NULL;
	if (pthread_mutex_init(&key->lock, NULL) != 0) {
		free(key);
		return NULL;
	}
	atomic_init(&key->refs, 1);
	key->cls = cls;
	key->type = type;
	return key;
}

pg_key *pg_key_new_pkey(EVP_PKEY *pkey, CK_OBJECT_CLASS cls, CK_KEY_TYPE type,
                        const pg_curve *curve)
{
	pg_key *key;

	if (pkey == NULL)
		return NULL;
	key = key_alloc(cls, type);
	if (key == NULL) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	key->pkey = pkey;
	key->curve = curve;
	key->size = curve != NULL ? curve->bits : (CK_ULONG)EVP_PKEY_get_bits(pkey);
	return key;
}

pg_key *pg_key_new_secret(CK_KEY_TYPE type, const void *value, size_t len)
{
	pg_key *key = key_alloc(CKO_SECRET_KEY, type);

	if (key == NULL)
		return NULL;
	key->secret = malloc(len > 0 ? len : 1);
	if (key->secret == NULL) {
		pg_key_unref(key);
		return NULL;
	}
	if (len > 0)
		memcpy(key->secret, value, len);
	key->secret_len = len;
	key->size = len;
	return key;
}

pg_key *pg_key_ref(pg_key *key)
{
	if (key != NULL)
		atomic_fetch_add_explicit(&key->refs, 1, memory_order_relaxed);
	return key;
}

static void pool_ctx_free(const pg_profile *profile, void *ctx)
{
	if (profile->type == PG_CTX_MAC)
		EVP_MAC_CTX_free(ctx);
	else
		EVP_PKEY_CTX_free(ctx);
}

void pg_key_unref(pg_key *key)
{
	if (key == NULL)
		return;
	if (atomic_fetch_sub_explicit(&key->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned i = 0; i < key->n_pool; i++)
		pool_ctx_free(&key->pool[i].profile, key->pool[i].ctx);
	EVP_MD_CTX_free(key->eddsa[0]);
	EVP_MD_CTX_free(key->eddsa[1]);
	EVP_PKEY_free(key->pkey);
	pg_free_secret(key->secret, key->secret_len);
	pthread_mutex_destroy(&key->lock);
	free(key);
}

void pg_mech_key_free(void *key)
{
	pg_key_unref(key);
}

/* ---------------------------------------------------------------------------
 * Context pools. A context goes back to the pool of the profile it was
 * set up for, and only the same profile takes it out again.
 */
static bool profile_eq(const pg_profile *a, const pg_profile *b)
{
	return a->type == b->type && a->op == b->op && a->mech == b->mech && a->hash == b->hash &&
	       a->mgf == b->mgf && a->salt == b->salt;
}

void *pg_key_pool_take(pg_key *key, const pg_profile *profile)
{
	void *ctx = NULL;

	pthread_mutex_lock(&key->lock);
	for (unsigned i = key->n_pool; i-- > 0;) {
		if (!profile_eq(&key->pool[i].profile, profile))
			continue;
		ctx = key->pool[i].ctx;
		key->pool[i] = key->pool[--key->n_pool];
		break;
	}
	pthread_mutex_unlock(&key->lock);
	return ctx;
}

void pg_key_pool_put(pg_key *key, const pg_profile *profile, void *ctx)
{
	if (ctx == NULL)
		return;
	pthread_mutex_lock(&key->lock);
	if (key->n_pool < PG_KEY_POOL) {
		key->pool[key->n_pool].profile = *profile;
		key->pool[key->n_pool].ctx = ctx;
		key->n_pool++;
		ctx = NULL;
	}
	pthread_mutex_unlock(&key->lock);
	if (ctx != NULL)
		pool_ctx_free(profile, ctx);
}

/*
 * EdDSA signs through a digest context, which a signature finishes; a
 * fresh one is a copy of a template set up once (much cheaper than
 * setting up a new one each time).
 */
EVP_MD_CTX *pg_key_eddsa_ctx(pg_key *key, bool verify)
{
	EVP_MD_CTX *tmpl, *ctx;
	int ok;

	pthread_mutex_lock(&key->lock);
	tmpl = key->eddsa[verify];
	if (tmpl == NULL) {
		tmpl = EVP_MD_CTX_new();
		ok = tmpl != NULL &&
		     (verify ? EVP_DigestVerifyInit_ex(tmpl, NULL, NULL, NULL, NULL, key->pkey, NULL)
		             : EVP_DigestSignInit_ex(tmpl, NULL, NULL, NULL, NULL, key->pkey, NULL)) > 0;
		if (!ok) {
			EVP_MD_CTX_free(tmpl);
			tmpl = NULL;
		}
		key->eddsa[verify] = tmpl;
	}
	pthread_mutex_unlock(&key->lock);
	if (tmpl == NULL)
		return NULL;
	ctx = EVP_MD_CTX_new();
	if (ctx != NULL && !EVP_MD_CTX_copy_ex(ctx, tmpl)) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

/* ---------------------------------------------------------------------------
 * Keys from attributes.
 */

/* Pushes a big-endian attribute value as a BIGNUM (secure memory for secrets). */
static bool push_bn(OSSL_PARAM_BLD *bld, const char *name, const CK_ATTRIBUTE *a,
                    bool secret, BIGNUM **keep)
{
	BIGNUM *bn;

	if (a == NULL || a->pValue == NULL || a->ulValueLen == 0 || a->ulValueLen > 2048)
		return false;
	bn = secret ? BN_secure_new() : BN_new();
	if (bn == NULL || BN_bin2bn(a->pValue, (int)a->ulValueLen, bn) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, name, bn)) {
		BN_clear_free(bn);
		return false;
	}
	*keep = bn;
	return true;
}

static EVP_PKEY *pkey_fromdata(const char *type, int selection, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY *pkey = NULL;

	if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, selection, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

static CK_RV rsa_from_attrs(const CK_ATTRIBUTE *a, CK_ULONG n, bool priv, pg_key **out)
{
	const pg_rsa_part *parts = pg_rsa_parts;
	BIGNUM *bns[PG_RSA_PARTS] = { NULL };
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *pkey = NULL;
	size_t need = priv ? 3 : 2;
	size_t have = 0;

	/* The CRT values are optional, but all or none (libcrypto needs them together). */
	for (size_t i = 0; bld != NULL && i < PG_RSA_PARTS; i++) {
		const CK_ATTRIBUTE *v = pg_tmpl_find(a, n, parts[i].type);
		if (i >= need && (!priv || pg_tmpl_find(a, n, CKA_PRIME_1) == NULL))
			break;
		if (!push_bn(bld, parts[i].name, v, i >= 2, &bns[i]))
			break;
		have = i + 1;
	}
	if (bld != NULL && (have == need || have == PG_RSA_PARTS))
		pkey = pkey_fromdata(PG_OID_RSA, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, bld);
	OSSL_PARAM_BLD_free(bld);
	for (size_t i = 0; i < PG_RSA_PARTS; i++)
		BN_clear_free(bns[i]);
	if (pkey == NULL)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	*out = pg_key_new_pkey(pkey, priv ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY, CKK_RSA, NULL);
	return *out != NULL ? CKR_OK : CKR_HOST_MEMORY;
}

/* The public point of a private scalar, uncompressed. */
static size_t ec_public_point(const pg_curve *curve, const BIGNUM *priv, unsigned char *out,
                              size_t cap)
{
	EC_GROUP *group = EC_GROUP_new_by_curve_name_ex(NULL, NULL, OBJ_txt2nid(curve->name));
	EC_POINT *pub = group != NULL ? EC_POINT_new(group) : NULL;
	size_t len = 0;

	if (pub != NULL && EC_POINT_mul(group, pub, priv, NULL, NULL, NULL))
		len = EC_POINT_point2oct(group, pub, POINT_CONVERSION_UNCOMPRESSED, out, cap, NULL);
	EC_POINT_free(pub);
	EC_GROUP_free(group);
	return len;
}

static EVP_PKEY *ec_private(const pg_curve *curve, const CK_ATTRIBUTE *value)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *priv = NULL;
	EVP_PKEY *pkey = NULL;
	unsigned char point[2 * 66 + 1];
	size_t point_len = 0;

	if (bld != NULL && value->ulValueLen <= curve->scalar_len &&
	    push_bn(bld, OSSL_PKEY_PARAM_PRIV_KEY, value, true, &priv))
		point_len = ec_public_point(curve, priv, point, sizeof(point));
	if (point_len > 0 &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, curve->name, 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, point_len))
		pkey = pkey_fromdata(PG_OID_EC, EVP_PKEY_KEYPAIR, bld);
	OSSL_PARAM_BLD_free(bld);
	BN_clear_free(priv);
	return pkey;
}

static CK_RV ec_from_attrs(const CK_ATTRIBUTE *a, CK_ULONG n, CK_KEY_TYPE type, bool priv,
                           pg_key **out)
{
	const CK_ATTRIBUTE *params = pg_tmpl_find(a, n, CKA_EC_PARAMS);
	const CK_ATTRIBUTE *value = pg_tmpl_find(a, n, priv ? CKA_VALUE : CKA_EC_POINT);
	const pg_curve *curve;
	const unsigned char *point;
	size_t point_len;
	EVP_PKEY *pkey = NULL;

	if (params == NULL || value == NULL || value->pValue == NULL)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	curve = pg_curve_from_params(params->pValue, params->ulValueLen);
	if (curve == NULL)
		return CKR_CURVE_NOT_SUPPORTED;
	if (curve->key_type != type)
		return CKR_KEY_TYPE_INCONSISTENT;
	if (!priv) {
		if (pg_ec_point_decode(curve, value->pValue, value->ulValueLen, &point, &point_len))
			pkey = pg_ec_public_key(curve, point, point_len);
	} else if (type == CKK_EC) {
		pkey = ec_private(curve, value);
	} else if (value->ulValueLen == curve->scalar_len) {
		pkey = EVP_PKEY_new_raw_private_key_ex(NULL, curve->name, NULL, value->pValue,
		                                       value->ulValueLen);
	}
	if (pkey == NULL)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	*out = pg_key_new_pkey(pkey, priv ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY, type, curve);
	return *out != NULL ? CKR_OK : CKR_HOST_MEMORY;
}

CK_RV pg_key_from_attrs(const CK_ATTRIBUTE *a, CK_ULONG n, pg_key **out)
{
	CK_ULONG cls, type;
	const CK_ATTRIBUTE *value;

	*out = NULL;
	if (!pg_tmpl_ulong(a, n, CKA_CLASS, &cls) || !pg_tmpl_ulong(a, n, CKA_KEY_TYPE, &type))
		return CKR_KEY_TYPE_INCONSISTENT;
	if (cls == CKO_SECRET_KEY) {
		value = pg_tmpl_find(a, n, CKA_VALUE);
		if (value == NULL || value->pValue == NULL || value->ulValueLen == 0)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		*out = pg_key_new_secret(type, value->pValue, value->ulValueLen);
		return *out != NULL ? CKR_OK : CKR_HOST_MEMORY;
	}
	if (cls != CKO_PUBLIC_KEY && cls != CKO_PRIVATE_KEY)
		return CKR_KEY_TYPE_INCONSISTENT;
	switch (type) {
	case CKK_RSA:
		return rsa_from_attrs(a, n, cls == CKO_PRIVATE_KEY, out);
	case CKK_EC:
	case CKK_EC_EDWARDS:
		return ec_from_attrs(a, n, type, cls == CKO_PRIVATE_KEY, out);
	default:
		return CKR_KEY_TYPE_INCONSISTENT;
	}
}
