/*
 * p11glue-store: C_Digest* (base specification 5.11), the dual-function
 * calls (5.15) and random numbers (5.17).
 */
#include "crypto.h"
#include "mech.h"

#include <openssl/rand.h>

#include <limits.h>
#include <stdlib.h>

struct pg_digest {
	EVP_MD_CTX *ctx;
	size_t len;
	bool started;
};

static void digest_free(void *state)
{
	pg_digest *d = state;

	if (d == NULL)
		return;
	EVP_MD_CTX_free(d->ctx);
	free(d);
}

CK_RV pg_digest_update(pg_digest *d, const void *data, size_t len)
{
	d->started = true;
	return EVP_DigestUpdate(d->ctx, data, len) ? CKR_OK : CKR_FUNCTION_FAILED;
}

/* Digest output per 5.2; feeds data first when data_len > 0. A one-shot
 * call on a started operation: CKR_OPERATION_ACTIVE. */
static CK_RV digest_out(void *state, pg_op_out_how how, CK_BYTE_PTR data, CK_ULONG data_len,
                        CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_digest *d = state;
	unsigned int n = 0;

	/* 5.11: C_Digest cannot finish a multi-part operation. */
	if (how == PG_OUT_ONESHOT && d->started)
		return CKR_OPERATION_ACTIVE;
	if (out == NULL) {
		*out_len = d->len;
		return CKR_OK;
	}
	if (*out_len < d->len) {
		*out_len = d->len;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (data_len > 0 && pg_digest_update(d, data, data_len) != CKR_OK)
		return CKR_FUNCTION_FAILED;
	if (!EVP_DigestFinal_ex(d->ctx, out, &n))
		return CKR_FUNCTION_FAILED;
	*out_len = n;
	return CKR_OK;
}

static CK_RV make_digest(const pg_mech *mech, CK_MECHANISM_PTR m, pg_key *key, pg_op_kind kind,
                         void **state)
{
	pg_digest *d = calloc(1, sizeof(*d));

	(void)m;
	(void)key;
	(void)kind;
	if (d == NULL || (d->ctx = EVP_MD_CTX_new()) == NULL ||
	    !EVP_DigestInit_ex2(d->ctx, pg_hash_md(mech->hash), NULL)) {
		digest_free(d);
		return CKR_HOST_MEMORY;
	}
	d->len = pg_hash_len(mech->hash);
	*state = d;
	return CKR_OK;
}

CK_RV pg_C_DigestInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism)
{
	return pg_op_init(hSession, pMechanism, CK_INVALID_HANDLE, PG_OP_DIGEST, make_digest,
	                  digest_free);
}

CK_RV pg_C_Digest(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                  CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	return pg_op_output(hSession, PG_OP_DIGEST, digest_out, PG_OUT_ONESHOT, pData, ulDataLen,
	                    pDigest, pulDigestLen);
}

static CK_RV digest_update(void *state, const unsigned char *data, size_t len)
{
	return pg_digest_update(state, data, len);
}

CK_RV pg_C_DigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_op_update(hSession, PG_OP_DIGEST, digest_update, pPart, ulPartLen);
}

CK_RV pg_C_DigestKey(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hKey)
{
	pg_session *s;
	pg_object *obj;
	const CK_ATTRIBUTE *value;
	CK_RV rv;
	pg_digest *d = pg_op_enter(hSession, PG_OP_DIGEST, true, &s, &rv);

	if (d == NULL)
		return rv;
	rv = pg_session_key(s, hKey, &obj);
	if (rv != CKR_OK)
		return pg_op_finish_update(s, PG_OP_DIGEST, rv);
	/* 5.11: only a secret key's value can be digested. */
	value = pg_attrs_find(&obj->attrs, CKA_VALUE);
	if (pg_attrs_ulong(&obj->attrs, CKA_CLASS, (CK_ULONG)-1) != CKO_SECRET_KEY || value == NULL)
		rv = CKR_KEY_INDIGESTIBLE;
	else
		rv = pg_digest_update(d, value->pValue, value->ulValueLen);
	pg_object_unref(obj);
	return pg_op_finish_update(s, PG_OP_DIGEST, rv);
}

CK_RV pg_C_DigestFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	return pg_op_output(hSession, PG_OP_DIGEST, digest_out, PG_OUT_FINAL, NULL, 0, pDigest,
	                    pulDigestLen);
}

/* ---------------------------------------------------------------------------
 * Dual-function operations (5.15): both operations must be active; the
 * output rules are the cipher's, and nothing is digested, signed or
 * verified when only a length is asked for.
 */

/*
 * The start of a dual-function call: the session, the arguments, then
 * both operations (crypt, the encryption or decryption, and other).
 * CKR_OK with *s held and *c, *o set; else the call's result, the
 * session released.
 */
static CK_RV dual_enter(CK_SESSION_HANDLE h, pg_op_kind crypt, pg_op_kind other, CK_BYTE_PTR in,
                        CK_ULONG in_len, CK_ULONG_PTR out_len, pg_session **s, pg_cipher **c,
                        void **o)
{
	CK_RV rv = pg_call_begin(h, s);

	if (rv != CKR_OK)
		return rv;
	if ((in == NULL && in_len > 0) || out_len == NULL)
		return pg_call_end(*s, CKR_ARGUMENTS_BAD);
	*c = pg_op_state(*s, crypt);
	*o = pg_op_state(*s, other);
	if (*c == NULL || *o == NULL)
		return pg_call_end(*s, CKR_OPERATION_NOT_INITIALIZED);
	return CKR_OK;
}

/* Encrypting forms: the plaintext is taken before the output may overwrite it. */
static CK_RV dual_encrypt(CK_SESSION_HANDLE h, pg_op_kind other, CK_BYTE_PTR in, CK_ULONG in_len,
                          CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_session *s;
	pg_cipher *c;
	void *o;
	size_t need;
	CK_RV rv = dual_enter(h, PG_OP_ENCRYPT, other, in, in_len, out_len, &s, &c, &o);

	if (rv != CKR_OK)
		return rv;
	need = pg_cipher_update_len(c, in_len);
	if (out != NULL && *out_len >= need) {
		rv = other == PG_OP_DIGEST ? pg_digest_update(o, in, in_len)
		                           : pg_sign_update(o, in, in_len);
		if (rv != CKR_OK) {
			pg_session_op_end(s, other);
			return pg_call_end(s, rv);
		}
	}
	return pg_call_end(s, pg_crypt_update(s, PG_OP_ENCRYPT, in, in_len, out, out_len));
}

/* Decrypting forms: what the decryption produced goes to the other operation. */
static CK_RV dual_decrypt(CK_SESSION_HANDLE h, pg_op_kind other, CK_BYTE_PTR in, CK_ULONG in_len,
                          CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_session *s;
	pg_cipher *c;
	void *o;
	CK_RV rv = dual_enter(h, PG_OP_DECRYPT, other, in, in_len, out_len, &s, &c, &o);

	if (rv != CKR_OK)
		return rv;
	rv = pg_crypt_update(s, PG_OP_DECRYPT, in, in_len, out, out_len);
	if (rv == CKR_OK && out != NULL && *out_len > 0) {
		rv = other == PG_OP_DIGEST ? pg_digest_update(o, out, *out_len)
		                           : pg_sign_update(o, out, *out_len);
		if (rv != CKR_OK)
			pg_session_op_end(s, other);
	}
	return pg_call_end(s, rv);
}

CK_RV pg_C_DigestEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
                               CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return dual_encrypt(hSession, PG_OP_DIGEST, pPart, ulPartLen, pEncryptedPart,
	                    pulEncryptedPartLen);
}

CK_RV pg_C_SignEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
                             CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return dual_encrypt(hSession, PG_OP_SIGN, pPart, ulPartLen, pEncryptedPart,
	                    pulEncryptedPartLen);
}

CK_RV pg_C_DecryptDigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                               CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart,
                               CK_ULONG_PTR pulPartLen)
{
	return dual_decrypt(hSession, PG_OP_DIGEST, pEncryptedPart, ulEncryptedPartLen, pPart,
	                    pulPartLen);
}

CK_RV pg_C_DecryptVerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                               CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart,
                               CK_ULONG_PTR pulPartLen)
{
	return dual_decrypt(hSession, PG_OP_VERIFY, pEncryptedPart, ulEncryptedPartLen, pPart,
	                    pulPartLen);
}

/* ---------------------------------------------------------------------------
 * Random numbers (5.17), from libcrypto's generator.
 */
/* C_SeedRandom (seed true) and C_GenerateRandom: buf in the chunks
 * libcrypto takes (an int's worth at a time). */
static CK_RV random_call(CK_SESSION_HANDLE h, bool seed, CK_BYTE_PTR buf, CK_ULONG len)
{
	pg_session *s;
	CK_RV rv = pg_call_begin(h, &s);

	if (rv != CKR_OK)
		return rv;
	if (buf == NULL && len > 0)
		return pg_call_end(s, CKR_ARGUMENTS_BAD);
	for (CK_ULONG done = 0; done < len && rv == CKR_OK;) {
		int chunk = len - done > INT_MAX ? INT_MAX : (int)(len - done);
		/* A seed is mixed in as additional input: it can never weaken
		 * the generator. */
		if (seed)
			RAND_seed(buf + done, chunk);
		else if (RAND_bytes(buf + done, chunk) != 1)
			rv = CKR_FUNCTION_FAILED;
		done += (CK_ULONG)chunk;
	}
	return pg_call_end(s, rv);
}

CK_RV pg_C_SeedRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSeed, CK_ULONG ulSeedLen)
{
	return random_call(hSession, true, pSeed, ulSeedLen);
}

CK_RV pg_C_GenerateRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR RandomData,
                          CK_ULONG ulRandomLen)
{
	return random_call(hSession, false, RandomData, ulRandomLen);
}
