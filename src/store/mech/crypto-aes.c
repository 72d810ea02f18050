/*
 * p11glue-store: AES key wrap and AES-GCM in one piece.
 *
 * Key wrap (current mechanisms 2.14, as reworked in 3.0):
 *   CKM_AES_KEY_WRAP      RFC 3394 (NIST SP 800-38F KW), input a multiple
 *                         of 8 bytes, at least 16; optional 8-byte IV
 *   CKM_AES_KEY_WRAP_PAD  the input padded as PKCS#7 to a multiple of 8,
 *                         then RFC 3394
 *   CKM_AES_KEY_WRAP_KWP  RFC 5649 (SP 800-38F KWP), any length; optional
 *                         4-byte IV
 * All three are single-part: the engine collects parts and wraps at the end.
 */
#include "crypto.h"

#include <openssl/core_names.h>

#include <stdlib.h>
#include <string.h>

/* RFC 3394 needs at least two 64-bit blocks; OpenSSL caps the input too. */
#define KW_MAX ((size_t)1 << 31)

size_t pg_aes_wrap_len(pg_mech_kind kind, bool encrypt, size_t in_len)
{
	if (in_len > KW_MAX)
		return 0;
	if (!encrypt)
		return in_len >= 16 ? in_len - 8 : 0;
	switch (kind) {
	case PG_KIND_AES_KW:
		return in_len + 8;
	case PG_KIND_AES_KW_PAD:
		return (in_len / 8 + 1) * 8 + 8;
	default:
		return (in_len + 7) / 8 * 8 + 8;
	}
}

/* Runs the libcrypto wrap cipher over in; out holds in_len + 16 bytes. */
static CK_RV wrap_cipher(const EVP_CIPHER *cipher, const pg_key *key, const unsigned char *iv,
                         bool encrypt, const unsigned char *in, size_t in_len,
                         unsigned char *out, size_t *out_len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0;
	CK_RV rv = CKR_OK;

	if (ctx == NULL)
		return CKR_HOST_MEMORY;
	EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (!EVP_CipherInit_ex2(ctx, cipher, key->secret, iv, encrypt, NULL))
		rv = CKR_FUNCTION_FAILED;
	else if (EVP_CipherUpdate(ctx, out, &n, in, (int)in_len) <= 0 || n < 0)
		rv = encrypt ? CKR_FUNCTION_FAILED : CKR_ENCRYPTED_DATA_INVALID;
	EVP_CIPHER_CTX_free(ctx);
	*out_len = rv == CKR_OK ? (size_t)n : 0;
	return rv;
}

/* PKCS#7 padding to a multiple of 8; returns the padding length, 0 when bad. */
static size_t pkcs7_unpad8(const unsigned char *p, size_t len)
{
	unsigned pad, bad;

	if (len == 0 || len % 8 != 0)
		return 0;
	pad = p[len - 1];
	bad = (pad == 0) | (pad > 8);
	/* Looks at all 8 trailing bytes whatever pad is, to not tell it by timing. */
	for (unsigned i = 1; i <= 8; i++)
		bad |= (i <= pad) & (p[len - i] != pad);
	return bad ? 0 : pad;
}

static CK_RV check_wrap_len(pg_mech_kind kind, bool encrypt, size_t in_len)
{
	if (in_len > KW_MAX)
		return encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
	if (!encrypt)
		return in_len >= (kind == PG_KIND_AES_KWP ? 16U : 24U) && in_len % 8 == 0
		               ? CKR_OK : CKR_ENCRYPTED_DATA_LEN_RANGE;
	if (kind == PG_KIND_AES_KW)
		return in_len >= 16 && in_len % 8 == 0 ? CKR_OK : CKR_DATA_LEN_RANGE;
	if (kind == PG_KIND_AES_KW_PAD)
		return in_len >= 8 ? CKR_OK : CKR_DATA_LEN_RANGE;
	return in_len > 0 ? CKR_OK : CKR_DATA_LEN_RANGE;
}

CK_RV pg_aes_wrap(pg_mech_kind kind, const pg_key *key, const unsigned char *iv, bool encrypt,
                  const unsigned char *in, size_t in_len, unsigned char *out, size_t *out_len)
{
	const EVP_CIPHER *cipher;
	unsigned char *tmp = NULL, *padded = NULL;
	size_t cap, len = 0, pad;
	CK_RV rv;

	cipher = pg_aes_cipher(kind == PG_KIND_AES_KWP ? PG_AES_WRAP_PAD : PG_AES_WRAP,
	                       key->secret_len);
	if (cipher == NULL)
		return CKR_KEY_SIZE_RANGE;
	rv = check_wrap_len(kind, encrypt, in_len);
	if (rv != CKR_OK)
		return rv;
	if (encrypt && kind == PG_KIND_AES_KW_PAD) {
		pad = 8 - in_len % 8;
		padded = malloc(in_len + pad);
		if (padded == NULL)
			return CKR_HOST_MEMORY;
		memcpy(padded, in, in_len);
		memset(padded + in_len, (int)pad, pad);
		in = padded;
		in_len += pad;
	}
	cap = in_len + 16;
	tmp = malloc(cap);
	rv = tmp == NULL ? CKR_HOST_MEMORY : wrap_cipher(cipher, key, iv, encrypt, in, in_len, tmp, &len);
	if (rv == CKR_OK && !encrypt && kind == PG_KIND_AES_KW_PAD) {
		pad = pkcs7_unpad8(tmp, len);
		if (pad == 0)
			rv = CKR_ENCRYPTED_DATA_INVALID;
		len -= pad;
	}
	if (rv == CKR_OK && *out_len < len)
		rv = CKR_BUFFER_TOO_SMALL;
	else if (rv == CKR_OK)
		memcpy(out, tmp, len);
	if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
		*out_len = len;
	pg_free_secret(tmp, cap);
	if (padded != NULL)
		pg_free_secret(padded, in_len);
	return rv;
}

/* ---------------------------------------------------------------------------
 * AES-GCM (current mechanisms 2.12.3).
 */

/* The 2.40 layout of CK_GCM_PARAMS, without ulIvBits; older callers pass it. */
typedef struct {
	CK_BYTE_PTR pIv;
	CK_ULONG ulIvLen;
	CK_BYTE_PTR pAAD;
	CK_ULONG ulAADLen;
	CK_ULONG ulTagBits;
} gcm_params_240;

CK_RV pg_gcm_params(const CK_MECHANISM *m, pg_gcm *out)
{
	CK_GCM_PARAMS p;
	gcm_params_240 old;

	memset(out, 0, sizeof(*out));
	if (m->pParameter == NULL)
		return CKR_MECHANISM_PARAM_INVALID;
	if (m->ulParameterLen == sizeof(p)) {
		memcpy(&p, m->pParameter, sizeof(p));
	} else if (m->ulParameterLen == sizeof(old)) {
		memcpy(&old, m->pParameter, sizeof(old));
		p.pIv = old.pIv;
		p.ulIvLen = old.ulIvLen;
		p.pAAD = old.pAAD;
		p.ulAADLen = old.ulAADLen;
		p.ulTagBits = old.ulTagBits;
	} else {
		return CKR_MECHANISM_PARAM_INVALID;
	}
	if (p.pIv == NULL || p.ulIvLen == 0 || p.ulIvLen > 1024)
		return CKR_MECHANISM_PARAM_INVALID;
	if (p.pAAD == NULL && p.ulAADLen != 0)
		return CKR_MECHANISM_PARAM_INVALID;
	/* SP 800-38D 5.2.1.2: tags of 32 to 128 bits; whole bytes here. */
	if (p.ulTagBits % 8 != 0 || p.ulTagBits < 32 || p.ulTagBits > 128)
		return CKR_MECHANISM_PARAM_INVALID;
	out->iv = p.pIv;
	out->iv_len = p.ulIvLen;
	out->aad = p.pAAD;
	out->aad_len = p.ulAADLen;
	out->tag_len = p.ulTagBits / 8;
	return CKR_OK;
}

EVP_CIPHER_CTX *pg_gcm_start(const pg_key *key, const pg_gcm *gcm, bool encrypt, CK_RV *rv)
{
	const EVP_CIPHER *cipher = pg_aes_cipher(PG_AES_GCM, key->secret_len);
	EVP_CIPHER_CTX *ctx;
	OSSL_PARAM params[2];
	size_t iv_len = gcm->iv_len;
	int n;

	*rv = CKR_KEY_SIZE_RANGE;
	if (cipher == NULL)
		return NULL;
	*rv = CKR_HOST_MEMORY;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return NULL;
	/* The IV length first: the IV itself is taken at that length. */
	params[0] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len);
	params[1] = OSSL_PARAM_construct_end();
	*rv = CKR_FUNCTION_FAILED;
	if (!EVP_CipherInit_ex2(ctx, cipher, key->secret, NULL, encrypt, params) ||
	    !EVP_CipherInit_ex2(ctx, NULL, NULL, gcm->iv, encrypt, NULL) ||
	    (gcm->aad_len > 0 && !EVP_CipherUpdate(ctx, NULL, &n, gcm->aad, (int)gcm->aad_len))) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	*rv = CKR_OK;
	return ctx;
}

/* Feeds data in pieces libcrypto's int lengths can take. */
CK_RV pg_cipher_run(EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t len, unsigned char *out,
                    size_t *out_len)
{
	size_t done = 0;
	int n;

	*out_len = 0;
	while (done < len) {
		size_t chunk = len - done > (1U << 30) ? (1U << 30) : len - done;
		if (!EVP_CipherUpdate(ctx, out + *out_len, &n, in + done, (int)chunk) || n < 0)
			return CKR_FUNCTION_FAILED;
		*out_len += (size_t)n;
		done += chunk;
	}
	return CKR_OK;
}

/* Finishes a GCM context: appends the tag, or checks the expected one. */
CK_RV pg_gcm_finish(EVP_CIPHER_CTX *ctx, bool encrypt, unsigned char *tag, size_t tag_len)
{
	unsigned char rest[16];
	int n = 0;

	if (!encrypt && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, tag))
		return CKR_FUNCTION_FAILED;
	if (!EVP_CipherFinal_ex(ctx, rest, &n))
		return encrypt ? CKR_FUNCTION_FAILED : CKR_ENCRYPTED_DATA_INVALID;
	if (encrypt && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)tag_len, tag))
		return CKR_FUNCTION_FAILED;
	return CKR_OK;
}

CK_RV pg_aes_gcm(const pg_key *key, const pg_gcm *gcm, bool encrypt, const unsigned char *in,
                 size_t in_len, unsigned char *out, size_t *out_len)
{
	EVP_CIPHER_CTX *ctx;
	size_t data_len, n = 0;
	unsigned char tag[16];
	CK_RV rv;

	if (!encrypt && in_len < gcm->tag_len)
		return CKR_ENCRYPTED_DATA_LEN_RANGE;
	data_len = encrypt ? in_len : in_len - gcm->tag_len;
	if (*out_len < data_len + (encrypt ? gcm->tag_len : 0)) {
		*out_len = data_len + (encrypt ? gcm->tag_len : 0);
		return CKR_BUFFER_TOO_SMALL;
	}
	ctx = pg_gcm_start(key, gcm, encrypt, &rv);
	if (ctx == NULL)
		return rv;
	if (!encrypt)
		memcpy(tag, in + data_len, gcm->tag_len);
	rv = pg_cipher_run(ctx, in, data_len, out, &n);
	if (rv == CKR_OK)
		rv = pg_gcm_finish(ctx, encrypt, tag, gcm->tag_len);
	EVP_CIPHER_CTX_free(ctx);
	if (rv != CKR_OK) {
		/* Never leave plaintext that failed authentication. */
		pg_memzero(out, data_len);
		return rv;
	}
	if (encrypt)
		memcpy(out + data_len, tag, gcm->tag_len);
	*out_len = data_len + (encrypt ? gcm->tag_len : 0);
	return CKR_OK;
}
