/*
 * p11glue-store: C_DeriveKey with CKM_ECDH1_DERIVE and
 * CKM_ECDH1_COFACTOR_DERIVE (current mechanisms 2.3.8, 2.3.19, 2.3.20).
 *
 * The shared secret Z is the x-coordinate of d * Q (times the cofactor,
 * which is 1 on the supported curves); CKD_NULL uses Z as it is and
 * CKD_SHA*_KDF the ANSI X9.63 KDF: Hash(Z || counter || SharedInfo), the
 * counter big-endian from 1. The derived value is cut to CKA_VALUE_LEN,
 * removing bytes from the leading end of Z.
 */
#include "crypto.h"
#include "mech.h"

#include <openssl/ec.h>

#include <stdlib.h>
#include <string.h>

/* The most a derived key may have, in bytes. */
#define DERIVE_MAX 512

typedef struct {
	CK_EC_KDF_TYPE kdf;
	pg_hash hash;
	const unsigned char *shared;
	size_t shared_len;
	const unsigned char *pub;
	size_t pub_len;
} ecdh_params;

static CK_RV ecdh_params_get(const CK_MECHANISM *m, const pg_curve *curve, ecdh_params *out)
{
	CK_ECDH1_DERIVE_PARAMS p;

	if (m->pParameter == NULL || m->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, m->pParameter, sizeof(p));
	out->kdf = p.kdf;
	out->hash = pg_hash_from_kdf(p.kdf);
	if (p.kdf != CKD_NULL && pg_hash_md(out->hash) == NULL)
		return CKR_MECHANISM_PARAM_INVALID;
	/* 2.3.8: with CKD_NULL there is no shared data. */
	if ((p.kdf == CKD_NULL && p.ulSharedDataLen != 0) ||
	    (p.pSharedData == NULL && p.ulSharedDataLen != 0))
		return CKR_MECHANISM_PARAM_INVALID;
	out->shared = p.pSharedData;
	out->shared_len = p.ulSharedDataLen;
	/* The other party's point: raw, or the DER OCTET STRING of CKA_EC_POINT. */
	if (p.pPublicData == NULL ||
	    !pg_ec_point_decode(curve, p.pPublicData, p.ulPublicDataLen, &out->pub, &out->pub_len))
		return CKR_MECHANISM_PARAM_INVALID;
	return CKR_OK;
}

/* Z: the x-coordinate of the shared point, the field's length. */
static CK_RV ecdh_z(pg_key *key, const ecdh_params *p, bool cofactor, unsigned char *z,
                    size_t *z_len)
{
	EVP_PKEY *peer = pg_ec_public_key(key->curve, p->pub, p->pub_len);
	EVP_PKEY_CTX *ctx;
	CK_RV rv = CKR_FUNCTION_FAILED;

	if (peer == NULL)
		return CKR_MECHANISM_PARAM_INVALID;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
	if (ctx != NULL && EVP_PKEY_derive_init(ctx) > 0 &&
	    (!cofactor || EVP_PKEY_CTX_set_ecdh_cofactor_mode(ctx, 1) > 0)) {
		if (EVP_PKEY_derive_set_peer_ex(ctx, peer, 1) <= 0)
			rv = CKR_MECHANISM_PARAM_INVALID;
		else if (EVP_PKEY_derive(ctx, z, z_len) > 0)
			rv = CKR_OK;
	}
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(peer);
	return rv;
}

/* ANSI X9.63 KDF: len bytes of Hash(Z || counter || SharedInfo), counter from 1. */
static CK_RV x963_kdf(const ecdh_params *p, const unsigned char *z, size_t z_len,
                      unsigned char *out, size_t len)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char block[EVP_MAX_MD_SIZE], counter[4];
	size_t hlen = pg_hash_len(p->hash), done = 0;
	CK_RV rv = CKR_OK;

	if (ctx == NULL)
		return CKR_HOST_MEMORY;
	for (uint32_t i = 1; done < len && rv == CKR_OK; i++) {
		size_t take = len - done < hlen ? len - done : hlen;
		counter[0] = (unsigned char)(i >> 24);
		counter[1] = (unsigned char)(i >> 16);
		counter[2] = (unsigned char)(i >> 8);
		counter[3] = (unsigned char)i;
		if (!EVP_DigestInit_ex2(ctx, pg_hash_md(p->hash), NULL) ||
		    !EVP_DigestUpdate(ctx, z, z_len) || !EVP_DigestUpdate(ctx, counter, 4) ||
		    (p->shared_len > 0 && !EVP_DigestUpdate(ctx, p->shared, p->shared_len)) ||
		    !EVP_DigestFinal_ex(ctx, block, NULL))
			rv = CKR_FUNCTION_FAILED;
		memcpy(out + done, block, take);
		done += take;
	}
	EVP_MD_CTX_free(ctx);
	pg_memzero(block, sizeof(block));
	return rv;
}

/* The length of the new key: CKA_VALUE_LEN, else what the key type implies. */
static CK_RV derived_len(const pg_attrs *tmpl, CK_KEY_TYPE type, const ecdh_params *p,
                         size_t z_len, size_t *len)
{
	CK_ULONG want = pg_attrs_ulong(tmpl, CKA_VALUE_LEN, 0);
	size_t most = p->kdf == CKD_NULL ? z_len : DERIVE_MAX;

	if (pg_attrs_find(tmpl, CKA_VALUE_LEN) == NULL) {
		want = z_len;
		/* An AES key needs a length its type allows. */
		if (type == CKK_AES && want != 16 && want != 24 && want != 32)
			return CKR_TEMPLATE_INCOMPLETE;
	}
	if (want == 0 || want > most)
		return CKR_TEMPLATE_INCONSISTENT;
	*len = want;
	return CKR_OK;
}

static CK_RV derive_value(pg_key *key, const CK_MECHANISM *m, const pg_attrs *tmpl,
                          CK_KEY_TYPE type, pg_attrs *gen)
{
	unsigned char z[66], out[DERIVE_MAX];
	size_t z_len = sizeof(z), len = 0;
	ecdh_params p;
	CK_RV rv = ecdh_params_get(m, key->curve, &p);

	if (rv == CKR_OK)
		rv = ecdh_z(key, &p, m->mechanism == CKM_ECDH1_COFACTOR_DERIVE, z, &z_len);
	if (rv == CKR_OK)
		rv = derived_len(tmpl, type, &p, z_len, &len);
	if (rv == CKR_OK && p.kdf == CKD_NULL)
		memcpy(out, z + z_len - len, len);
	else if (rv == CKR_OK)
		rv = x963_kdf(&p, z, z_len, out, len);
	if (rv == CKR_OK && !pg_attrs_set(gen, CKA_VALUE, out, len))
		rv = CKR_HOST_MEMORY;
	pg_memzero(z, sizeof(z));
	pg_memzero(out, sizeof(out));
	return rv;
}

/* The new key's class and type: secret, generic unless the template says. */
static CK_RV derived_kind(const pg_attrs *tmpl, CK_KEY_TYPE *type)
{
	if (pg_attrs_ulong(tmpl, CKA_CLASS, CKO_SECRET_KEY) != CKO_SECRET_KEY)
		return CKR_TEMPLATE_INCONSISTENT;
	*type = pg_attrs_ulong(tmpl, CKA_KEY_TYPE, CKK_GENERIC_SECRET);
	return CKR_OK;
}

CK_RV pg_C_DeriveKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                     CK_OBJECT_HANDLE hBaseKey, CK_ATTRIBUTE_PTR pTemplate,
                     CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	pg_session *s;
	pg_object *obj = NULL;
	const pg_mech *mech;
	pg_key_use use = { CKF_DERIVE, CKA_DERIVE, CKR_KEY_HANDLE_INVALID, CKR_KEY_TYPE_INCONSISTENT };
	pg_key *key = NULL;
	pg_attrs tmpl = { 0 }, gen = { 0 };
	CK_KEY_TYPE type = CKK_GENERIC_SECRET;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pMechanism == NULL || phKey == NULL || (pTemplate == NULL && ulAttributeCount > 0))
		return pg_call_end(s, CKR_ARGUMENTS_BAD);
	rv = pg_session_key(s, hBaseKey, &obj);
	if (rv == CKR_OK)
		rv = pg_op_key_checked(obj, pMechanism, &use, &mech, &key);
	/* One call leaves no room for the context-specific login. */
	if (rv == CKR_OK && use.always_auth)
		rv = CKR_KEY_FUNCTION_NOT_PERMITTED;
	if (rv == CKR_OK)
		rv = pg_tmpl_merge(pTemplate, ulAttributeCount, &obj->attrs, CKA_DERIVE_TEMPLATE, &tmpl);
	if (rv == CKR_OK)
		rv = derived_kind(&tmpl, &type);
	if (rv == CKR_OK)
		rv = pg_gen_common(&gen, CKO_SECRET_KEY, type, CK_UNAVAILABLE_INFORMATION);
	if (rv == CKR_OK)
		rv = derive_value(key, pMechanism, &tmpl, type, &gen);
	/* 2.3.8: the new key's history continues the base key's (the core ANDs it). */
	if (rv == CKR_OK &&
	    (!pg_attrs_set_bool(&gen, CKA_ALWAYS_SENSITIVE,
	                        pg_attrs_bool(&obj->attrs, CKA_ALWAYS_SENSITIVE, false)) ||
	     !pg_attrs_set_bool(&gen, CKA_NEVER_EXTRACTABLE,
	                        pg_attrs_bool(&obj->attrs, CKA_NEVER_EXTRACTABLE, false))))
		rv = CKR_HOST_MEMORY;
	pg_key_unref(key);
	if (obj != NULL)
		pg_object_unref(obj);
	return pg_call_end_new_key(s, rv, hSession, &tmpl, &gen, phKey);
}
