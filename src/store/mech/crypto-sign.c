/*
 * p11glue-store: the sign/verify engine. RSA (PKCS#1 v1.5, PSS, raw),
 * ECDSA, EdDSA, HMAC and CMAC, single- and multi-part, with and without
 * recovery.
 *
 * RSA and ECDSA use a public-key context from the key's pool, set up once
 * for the same mechanism and parameters; hashing mechanisms hash the data
 * themselves and sign the digest, which is what libcrypto would do
 * inside a digest-sign context, without setting one up per operation.
 * Mechanisms that sign their input whole (raw RSA, ECDSA without a hash,
 * EdDSA) collect parts fed through C_SignUpdate and sign at the end.
 */
#include "crypto.h"

#include <openssl/core_names.h>
#include <openssl/rsa.h>

#include <stdlib.h>
#include <string.h>

struct pg_sign {
	const pg_mech *mech;
	pg_key *key;
	pg_op_kind kind;
	bool started;
	size_t sig_len;
	pg_profile profile;
	EVP_PKEY_CTX *pctx;        /* RSA, ECDSA (pooled) */
	EVP_MD_CTX *md;            /* the running hash of hashing mechanisms */
	EVP_MAC_CTX *mac;          /* HMAC, CMAC */
	pg_buf data;               /* parts of single-part mechanisms */
};

/* A public-key context set up for the profile. */
static EVP_PKEY_CTX *pctx_new(pg_sign *s, const pg_rsa_params *pss)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, s->key->pkey, NULL);
	int ok;

	if (ctx == NULL)
		return NULL;
	switch (s->kind) {
	case PG_OP_VERIFY: ok = EVP_PKEY_verify_init(ctx); break;
	case PG_OP_VERIFY_RECOVER: ok = EVP_PKEY_verify_recover_init(ctx); break;
	default: ok = EVP_PKEY_sign_init(ctx); break;
	}
	if (ok > 0 && s->key->type == CKK_RSA) {
		switch (s->mech->kind) {
		case PG_KIND_RSA_X509:
			ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING);
			break;
		case PG_KIND_RSA_PSS:
			ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) > 0 &&
			     EVP_PKEY_CTX_set_signature_md(ctx, pg_hash_md(pss->hash)) > 0 &&
			     EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, pg_hash_md(pss->mgf)) > 0 &&
			     EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, (int)pss->salt) > 0;
			break;
		default:
			ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
			     (s->mech->hash == PG_HASH_NONE ||
			      EVP_PKEY_CTX_set_signature_md(ctx, pg_hash_md(s->mech->hash)) > 0);
			break;
		}
	}
	if (ok <= 0) {
		EVP_PKEY_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static CK_RV setup_rsa_ecdsa(pg_sign *s, const CK_MECHANISM *m)
{
	pg_rsa_params pss = { 0 };
	CK_RV rv;

	if (s->key->pkey == NULL)
		return CKR_KEY_TYPE_INCONSISTENT;
	s->profile.op = s->kind;
	s->profile.mech = s->mech->kind == PG_KIND_ECDSA ? CKM_ECDSA : s->mech->type;
	if (s->mech->kind == PG_KIND_RSA_PSS) {
		rv = pg_params_pss(s->mech, m, &pss);
		if (rv != CKR_OK)
			return rv;
		/* PKCS#1 9.1.1: emLen >= hLen + sLen + 2, emLen = ceil((modBits - 1) / 8). */
		if (pss.salt > (s->key->size - 1 + 7) / 8 ||
		    pg_hash_len(pss.hash) + pss.salt + 2 > (s->key->size - 1 + 7) / 8)
			return CKR_MECHANISM_PARAM_INVALID;
		s->profile.hash = pss.hash;
		s->profile.mgf = pss.mgf;
		s->profile.salt = pss.salt;
	} else if (s->mech->kind != PG_KIND_ECDSA) {
		s->profile.hash = s->mech->hash;
	}
	s->sig_len = s->key->curve != NULL ? s->key->curve->sig_len
	                                    : (size_t)EVP_PKEY_get_size(s->key->pkey);
	/* The buffers below hold a block of the largest key the store takes. */
	if (s->sig_len == 0 || s->sig_len > 512)
		return CKR_KEY_SIZE_RANGE;
	s->pctx = pg_key_pool_take(s->key, &s->profile);
	if (s->pctx == NULL)
		s->pctx = pctx_new(s, &pss);
	if (s->pctx == NULL)
		return CKR_FUNCTION_FAILED;
	if (s->mech->hash != PG_HASH_NONE) {
		s->md = EVP_MD_CTX_new();
		if (s->md == NULL || !EVP_DigestInit_ex2(s->md, pg_hash_md(s->mech->hash), NULL))
			return CKR_HOST_MEMORY;
	}
	return CKR_OK;
}

static CK_RV setup_eddsa(pg_sign *s, const CK_MECHANISM *m)
{
	CK_EDDSA_PARAMS p;

	if (s->key->pkey == NULL || s->key->curve == NULL)
		return CKR_KEY_TYPE_INCONSISTENT;
	if (m->pParameter != NULL || m->ulParameterLen != 0) {
		if (m->pParameter == NULL || m->ulParameterLen != sizeof(p))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(&p, m->pParameter, sizeof(p));
		/*
		 * Current mechanisms 2.3.14: a parameter selects Ed25519ctx,
		 * Ed25519ph or Ed448ph; libcrypto 3.0 has none of them. Ed448 with
		 * an empty context and no prehash is plain Ed448.
		 */
		if (p.phFlag || p.ulContextDataLen != 0 || s->key->curve->bits != 448)
			return CKR_MECHANISM_PARAM_INVALID;
	}
	s->sig_len = s->key->curve->sig_len;
	return CKR_OK;
}

/* A MAC context holding the key: from the key's pool (restarted), or new. */
static CK_RV mac_ctx(pg_sign *s, bool hmac)
{
	const EVP_CIPHER *cipher = pg_aes_cipher(PG_AES_CBC, s->key->secret_len);
	OSSL_PARAM params[2];

	s->profile.type = PG_CTX_MAC;
	s->profile.mech = hmac ? CKM_SHA256_HMAC : CKM_AES_CMAC;
	s->profile.hash = s->mech->hash;
	s->mac = pg_key_pool_take(s->key, &s->profile);
	/* Without a key, init starts the MAC over with the key it holds. */
	if (s->mac != NULL && EVP_MAC_init(s->mac, NULL, 0, NULL))
		return CKR_OK;
	EVP_MAC_CTX_free(s->mac);
	if (hmac)
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
		                                             (char *)pg_hash_name(s->mech->hash), 0);
	else if (cipher != NULL)
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
		                                             (char *)EVP_CIPHER_get0_name(cipher), 0);
	else
		return CKR_KEY_SIZE_RANGE;
	params[1] = OSSL_PARAM_construct_end();
	s->mac = EVP_MAC_CTX_new(hmac ? pg_mac_hmac() : pg_mac_cmac());
	if (s->mac == NULL)
		return CKR_HOST_MEMORY;
	if (!EVP_MAC_init(s->mac, s->key->secret, s->key->secret_len, params)) {
		EVP_MAC_CTX_free(s->mac);
		s->mac = NULL;
		return CKR_FUNCTION_FAILED;
	}
	return CKR_OK;
}

static CK_RV setup_mac(pg_sign *s, const CK_MECHANISM *m)
{
	size_t full;
	CK_ULONG len;
	bool hmac = s->mech->kind == PG_KIND_HMAC;

	if (s->key->secret == NULL)
		return CKR_KEY_TYPE_INCONSISTENT;
	full = hmac ? pg_hash_len(s->mech->hash) : 16;
	s->sig_len = full;
	if (s->mech->general) {
		if (m->pParameter == NULL || m->ulParameterLen != sizeof(CK_ULONG))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(&len, m->pParameter, sizeof(len));
		if (len > full)
			return CKR_MECHANISM_PARAM_INVALID;
		s->sig_len = len;
	}
	return mac_ctx(s, hmac);
}

CK_RV pg_sign_new(const pg_mech *mech, const CK_MECHANISM *m, pg_key *key, pg_op_kind kind,
                  pg_sign **out)
{
	pg_sign *s = calloc(1, sizeof(*s));
	CK_RV rv;

	*out = NULL;
	if (s == NULL)
		return CKR_HOST_MEMORY;
	s->mech = mech;
	s->key = pg_key_ref(key);
	s->kind = kind;
	pg_buf_init(&s->data);
	switch (mech->kind) {
	case PG_KIND_RSA_PKCS:
	case PG_KIND_RSA_PSS:
	case PG_KIND_RSA_X509:
	case PG_KIND_ECDSA:
		rv = setup_rsa_ecdsa(s, m);
		break;
	case PG_KIND_EDDSA:
		rv = setup_eddsa(s, m);
		break;
	case PG_KIND_HMAC:
	case PG_KIND_CMAC:
		rv = setup_mac(s, m);
		break;
	default:
		rv = CKR_MECHANISM_INVALID;
		break;
	}
	if (rv != CKR_OK) {
		pg_sign_free(s);
		return rv;
	}
	*out = s;
	return CKR_OK;
}

void pg_sign_free(pg_sign *s)
{
	if (s == NULL)
		return;
	/* A context stays as it was set up whatever the outcome; reuse it. */
	if (s->pctx != NULL)
		pg_key_pool_put(s->key, &s->profile, s->pctx);
	if (s->mac != NULL)
		pg_key_pool_put(s->key, &s->profile, s->mac);
	EVP_MD_CTX_free(s->md);
	pg_buf_clear(&s->data);
	pg_key_unref(s->key);
	free(s);
}

size_t pg_sign_len(const pg_sign *s)
{
	return s->sig_len;
}

bool pg_sign_started(const pg_sign *s)
{
	return s->started;
}

CK_RV pg_sign_update(pg_sign *s, const unsigned char *data, size_t len)
{
	s->started = true;
	if (s->mac != NULL)
		return EVP_MAC_update(s->mac, data, len) ? CKR_OK : CKR_FUNCTION_FAILED;
	if (s->md != NULL)
		return EVP_DigestUpdate(s->md, data, len) ? CKR_OK : CKR_FUNCTION_FAILED;
	/* Raw RSA never takes more than the modulus length. */
	if (s->key->type == CKK_RSA && (len > s->sig_len || s->data.len > s->sig_len - len))
		return CKR_DATA_LEN_RANGE;
	pg_buf_add(&s->data, data, len);
	return s->data.failed ? CKR_HOST_MEMORY : CKR_OK;
}

/* Checks the length of what RSA signs (current mechanisms 2.1.6, 2.1.11, 2.1.15). */
static CK_RV rsa_input_ok(const pg_sign *s, size_t len)
{
	switch (s->mech->kind) {
	case PG_KIND_RSA_PKCS:
		if (s->mech->hash == PG_HASH_NONE && (s->sig_len < 11 || len > s->sig_len - 11))
			return CKR_DATA_LEN_RANGE;
		return CKR_OK;
	case PG_KIND_RSA_PSS:
		return len == pg_hash_len(s->profile.hash) ? CKR_OK : CKR_DATA_LEN_RANGE;
	case PG_KIND_RSA_X509:
		return len <= s->sig_len ? CKR_OK : CKR_DATA_LEN_RANGE;
	default:
		return CKR_OK;
	}
}

/* Raw RSA works on a whole block: the input, left-padded with zeros. */
static const unsigned char *x509_block(const pg_sign *s, const unsigned char *in, size_t *len,
                                       unsigned char *block)
{
	if (s->mech->kind != PG_KIND_RSA_X509 || *len == s->sig_len)
		return in;
	memset(block, 0, s->sig_len - *len);
	memcpy(block + s->sig_len - *len, in, *len);
	*len = s->sig_len;
	return block;
}

/* Signs (or verifies) a message or digest with the public-key context. */
static CK_RV pkey_sign(pg_sign *s, const unsigned char *in, size_t len, unsigned char *sig,
                       size_t *sig_len)
{
	unsigned char block[512], der[160];
	size_t der_len = sizeof(der);
	CK_RV rv = rsa_input_ok(s, len);

	if (rv != CKR_OK)
		return rv;
	if (s->key->type == CKK_RSA) {
		in = x509_block(s, in, &len, block);
		*sig_len = s->sig_len;
		if (EVP_PKEY_sign(s->pctx, sig, sig_len, in, len) <= 0)
			rv = s->mech->kind == PG_KIND_RSA_X509 ? CKR_DATA_INVALID : CKR_FUNCTION_FAILED;
		pg_memzero(block, sizeof(block));
		return rv;
	}
	if (EVP_PKEY_sign(s->pctx, der, &der_len, in, len) <= 0 ||
	    !pg_ecdsa_der_to_rs(der, der_len, s->key->curve->scalar_len, sig))
		return CKR_FUNCTION_FAILED;
	*sig_len = s->sig_len;
	return CKR_OK;
}

static CK_RV pkey_verify(pg_sign *s, const unsigned char *in, size_t len,
                         const unsigned char *sig, size_t sig_len)
{
	unsigned char block[512];
	unsigned char *der = NULL;
	size_t der_len = 0;
	CK_RV rv = rsa_input_ok(s, len);
	int ok;

	if (rv != CKR_OK)
		return rv;
	if (sig_len != s->sig_len)
		return CKR_SIGNATURE_LEN_RANGE;
	if (s->key->type == CKK_RSA) {
		in = x509_block(s, in, &len, block);
		ok = EVP_PKEY_verify(s->pctx, sig, sig_len, in, len);
	} else {
		der = pg_ecdsa_rs_to_der(sig, s->key->curve->scalar_len, &der_len);
		if (der == NULL)
			return CKR_HOST_MEMORY;
		ok = EVP_PKEY_verify(s->pctx, der, der_len, in, len);
		free(der);
	}
	return ok == 1 ? CKR_OK : CKR_SIGNATURE_INVALID;
}

/* The MAC of what was fed, full length. */
static CK_RV mac_final(pg_sign *s, unsigned char *mac, size_t *len)
{
	return EVP_MAC_final(s->mac, mac, len, EVP_MAX_MD_SIZE) ? CKR_OK : CKR_FUNCTION_FAILED;
}

/* The digest of what was fed, for hashing mechanisms. */
static CK_RV digest_final(pg_sign *s, unsigned char *digest, size_t *len)
{
	unsigned int n = 0;

	if (!EVP_DigestFinal_ex(s->md, digest, &n))
		return CKR_FUNCTION_FAILED;
	*len = n;
	return CKR_OK;
}

CK_RV pg_sign_final(pg_sign *s, unsigned char *sig, size_t *sig_len)
{
	unsigned char buf[EVP_MAX_MD_SIZE];
	size_t len = 0;
	EVP_MD_CTX *ctx;
	CK_RV rv;

	if (s->mac != NULL) {
		rv = mac_final(s, buf, &len);
		if (rv == CKR_OK) {
			memcpy(sig, buf, s->sig_len);
			*sig_len = s->sig_len;
		}
	} else if (s->md != NULL) {
		rv = digest_final(s, buf, &len);
		if (rv == CKR_OK)
			rv = pkey_sign(s, buf, len, sig, sig_len);
	} else if (s->mech->kind == PG_KIND_EDDSA) {
		ctx = pg_key_eddsa_ctx(s->key, false);
		*sig_len = s->sig_len;
		rv = ctx != NULL && EVP_DigestSign(ctx, sig, sig_len, s->data.data, s->data.len) > 0
		             ? CKR_OK : CKR_FUNCTION_FAILED;
		EVP_MD_CTX_free(ctx);
	} else {
		rv = pkey_sign(s, s->data.data, s->data.len, sig, sig_len);
	}
	pg_memzero(buf, sizeof(buf));
	return rv;
}

CK_RV pg_verify_final(pg_sign *s, const unsigned char *sig, size_t sig_len)
{
	unsigned char buf[EVP_MAX_MD_SIZE];
	size_t len = 0;
	EVP_MD_CTX *ctx;
	CK_RV rv;
	int ok;

	if (s->mac != NULL) {
		if (sig_len != s->sig_len)
			return CKR_SIGNATURE_LEN_RANGE;
		rv = mac_final(s, buf, &len);
		if (rv == CKR_OK && !pg_ct_equal(buf, sig, sig_len))
			rv = CKR_SIGNATURE_INVALID;
	} else if (s->md != NULL) {
		rv = digest_final(s, buf, &len);
		if (rv == CKR_OK)
			rv = pkey_verify(s, buf, len, sig, sig_len);
	} else if (s->mech->kind == PG_KIND_EDDSA) {
		if (sig_len != s->sig_len)
			return CKR_SIGNATURE_LEN_RANGE;
		ctx = pg_key_eddsa_ctx(s->key, true);
		if (ctx == NULL)
			return CKR_FUNCTION_FAILED;
		ok = EVP_DigestVerify(ctx, sig, sig_len, s->data.data, s->data.len);
		EVP_MD_CTX_free(ctx);
		rv = ok == 1 ? CKR_OK : CKR_SIGNATURE_INVALID;
	} else {
		rv = pkey_verify(s, s->data.data, s->data.len, sig, sig_len);
	}
	pg_memzero(buf, sizeof(buf));
	return rv;
}

/*
 * One-shot signing: the data goes straight to the signature where the
 * mechanism signs its input whole, instead of through the part buffer.
 */
CK_RV pg_sign_oneshot(pg_sign *s, const unsigned char *data, size_t len, unsigned char *sig,
                      size_t *sig_len)
{
	EVP_MD_CTX *ctx;
	CK_RV rv;

	if (s->mac != NULL || s->md != NULL) {
		rv = pg_sign_update(s, data, len);
		return rv != CKR_OK ? rv : pg_sign_final(s, sig, sig_len);
	}
	s->started = true;
	if (s->mech->kind != PG_KIND_EDDSA)
		return pkey_sign(s, data, len, sig, sig_len);
	ctx = pg_key_eddsa_ctx(s->key, false);
	*sig_len = s->sig_len;
	rv = ctx != NULL && EVP_DigestSign(ctx, sig, sig_len, data, len) > 0 ? CKR_OK
	                                                                     : CKR_FUNCTION_FAILED;
	EVP_MD_CTX_free(ctx);
	return rv;
}

CK_RV pg_verify_oneshot(pg_sign *s, const unsigned char *data, size_t len,
                        const unsigned char *sig, size_t sig_len)
{
	EVP_MD_CTX *ctx;
	int ok;

	if (s->mac != NULL || s->md != NULL) {
		CK_RV rv = pg_sign_update(s, data, len);
		return rv != CKR_OK ? rv : pg_verify_final(s, sig, sig_len);
	}
	s->started = true;
	if (s->mech->kind != PG_KIND_EDDSA)
		return pkey_verify(s, data, len, sig, sig_len);
	if (sig_len != s->sig_len)
		return CKR_SIGNATURE_LEN_RANGE;
	ctx = pg_key_eddsa_ctx(s->key, true);
	if (ctx == NULL)
		return CKR_FUNCTION_FAILED;
	ok = EVP_DigestVerify(ctx, sig, sig_len, data, len);
	EVP_MD_CTX_free(ctx);
	return ok == 1 ? CKR_OK : CKR_SIGNATURE_INVALID;
}

CK_RV pg_sign_recover(pg_sign *s, const unsigned char *data, size_t len, unsigned char *sig,
                      size_t *sig_len)
{
	s->started = true;
	return pkey_sign(s, data, len, sig, sig_len);
}

CK_RV pg_verify_recover(pg_sign *s, const unsigned char *sig, size_t sig_len,
                        unsigned char *out, size_t *out_len)
{
	unsigned char buf[512];
	size_t len = sizeof(buf);
	CK_RV rv = CKR_OK;

	s->started = true;
	if (sig_len != s->sig_len)
		return CKR_SIGNATURE_LEN_RANGE;
	if (EVP_PKEY_verify_recover(s->pctx, buf, &len, sig, sig_len) <= 0)
		return CKR_SIGNATURE_INVALID;
	if (*out_len < len)
		rv = CKR_BUFFER_TOO_SMALL;
	else
		memcpy(out, buf, len);
	*out_len = len;
	pg_memzero(buf, sizeof(buf));
	return rv;
}
