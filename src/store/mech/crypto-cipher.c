/*
 * p11glue-store: the encrypt/decrypt engine. AES in ECB, CBC, CBC with
 * PKCS#7 padding, CTR and GCM; the AES key wraps; RSA PKCS#1 v1.5, OAEP
 * and raw.
 *
 * Output lengths follow PKCS#11 5.2: every function answers a NULL output
 * with the length it would produce (exact, or a bound where only the
 * computation tells: RSA and padded decryption), and answers a buffer
 * too small with CKR_BUFFER_TOO_SMALL and the exact length, leaving the
 * operation as it was so that the caller can retry.
 *
 * Block modes keep their partial block themselves (libcrypto's padding
 * is off) so that every C_*Update output length is known in advance;
 * CBC-PAD decryption holds the last block back until C_DecryptFinal.
 * GCM decryption and the single-part mechanisms (RSA, key wraps) collect
 * their input and work at the end: GCM releases no plaintext before its
 * tag is checked.
 */
#include "crypto.h"

#include <openssl/rsa.h>

#include <stdlib.h>
#include <string.h>

struct pg_cipher {
	const pg_mech *mech;
	pg_key *key;
	bool encrypt;
	bool started;
	bool buffered;             /* parts collected in data, worked at the end */
	pg_buf data;
	/* AES */
	const EVP_CIPHER *cipher;
	unsigned char iv[16];      /* CBC IV, CTR counter block, key wrap IV */
	size_t iv_len;
	EVP_CIPHER_CTX *ctx;       /* multi-part, made on first use */
	unsigned char part[16];    /* bytes not yet a whole block (a whole one for CBC-PAD) */
	size_t part_len;
	unsigned char tail[16];    /* CBC-PAD decryption: the last plaintext, once known */
	size_t tail_len;
	bool tail_done;
	uint64_t ctr_blocks;       /* CTR: blocks before the counter bits wrap */
	uint64_t done;             /* CTR: bytes processed */
	pg_gcm gcm;
	unsigned char *gcm_copy;   /* owned IV and AAD of gcm */
	/* RSA */
	EVP_PKEY_CTX *pctx;
	pg_profile profile;
	bool pool;
};

static bool is_block(const pg_cipher *c)
{
	return c->mech->kind == PG_KIND_AES_ECB || c->mech->kind == PG_KIND_AES_CBC ||
	       c->mech->kind == PG_KIND_AES_CBC_PAD;
}

static bool is_rsa(const pg_cipher *c)
{
	return c->key->type == CKK_RSA;
}

/* The RSA modulus length in bytes. */
static size_t rsa_len(const pg_cipher *c)
{
	return (size_t)EVP_PKEY_get_size(c->key->pkey);
}

static CK_RV setup_rsa(pg_cipher *c, const CK_MECHANISM *m)
{
	pg_rsa_params oaep = { 0 };
	int pad = c->mech->kind == PG_KIND_RSA_OAEP ? RSA_PKCS1_OAEP_PADDING
	          : c->mech->kind == PG_KIND_RSA_X509 ? RSA_NO_PADDING : RSA_PKCS1_PADDING;
	CK_RV rv = CKR_OK;
	int ok;

	if (c->key->pkey == NULL)
		return CKR_KEY_TYPE_INCONSISTENT;
	if (rsa_len(c) == 0 || rsa_len(c) > 512)
		return CKR_KEY_SIZE_RANGE;
	if (pad == RSA_PKCS1_OAEP_PADDING) {
		rv = pg_params_oaep(m, &oaep);
		/* PKCS#1 7.1.1: room for two hashes and two bytes. */
		if (rv == CKR_OK && 2 * pg_hash_len(oaep.hash) + 2 > rsa_len(c))
			rv = CKR_MECHANISM_PARAM_INVALID;
		if (rv != CKR_OK)
			goto out;
	}
	c->buffered = true;
	c->profile.op = c->encrypt ? PG_OP_ENCRYPT : PG_OP_DECRYPT;
	c->profile.mech = c->mech->type;
	c->profile.hash = oaep.hash;
	c->profile.mgf = oaep.mgf;
	c->pool = oaep.label == NULL;
	if (c->pool)
		c->pctx = pg_key_pool_take(c->key, &c->profile);
	if (c->pctx != NULL)
		goto out;
	c->pctx = EVP_PKEY_CTX_new_from_pkey(NULL, c->key->pkey, NULL);
	ok = c->pctx != NULL &&
	     (c->encrypt ? EVP_PKEY_encrypt_init(c->pctx) : EVP_PKEY_decrypt_init(c->pctx)) > 0 &&
	     EVP_PKEY_CTX_set_rsa_padding(c->pctx, pad) > 0;
	if (ok && pad == RSA_PKCS1_OAEP_PADDING) {
		ok = EVP_PKEY_CTX_set_rsa_oaep_md(c->pctx, pg_hash_md(oaep.hash)) > 0 &&
		     EVP_PKEY_CTX_set_rsa_mgf1_md(c->pctx, pg_hash_md(oaep.mgf)) > 0;
		if (ok && oaep.label != NULL) {
			/* libcrypto takes the label it is given. */
			ok = EVP_PKEY_CTX_set0_rsa_oaep_label(c->pctx, oaep.label, (int)oaep.label_len) > 0;
			if (ok)
				oaep.label = NULL;
		}
	}
	if (!ok)
		rv = CKR_FUNCTION_FAILED;
out:
	pg_rsa_params_clear(&oaep);
	return rv;
}

/* CTR: how many blocks the counter bits count before they wrap. */
static uint64_t ctr_room(const unsigned char cb[16], CK_ULONG bits)
{
	uint64_t low = 0;

	for (int i = 8; i < 16; i++)
		low = (low << 8) | cb[i];
	if (bits < 64)
		return ((uint64_t)1 << bits) - (low & (((uint64_t)1 << bits) - 1));
	/* Beyond 2^64 blocks nothing practical wraps: a zero among the higher counter bits. */
	for (CK_ULONG b = 64; b < bits; b++)
		if (!(cb[15 - b / 8] & (1U << (b % 8))))
			return UINT64_MAX;
	return low == 0 ? UINT64_MAX : (UINT64_MAX - low) + 1;
}

/* Key wraps: an optional IV, 8 bytes (RFC 3394) or 4 (RFC 5649). */
static CK_RV setup_kw(pg_cipher *c, const CK_MECHANISM *m)
{
	size_t iv_len = c->mech->kind == PG_KIND_AES_KWP ? 4 : 8;

	if (m->ulParameterLen != 0 && (m->pParameter == NULL || m->ulParameterLen != iv_len))
		return CKR_MECHANISM_PARAM_INVALID;
	c->iv_len = m->ulParameterLen;
	if (c->iv_len > 0)
		memcpy(c->iv, m->pParameter, c->iv_len);
	c->buffered = true;
	return CKR_OK;
}

static CK_RV setup_aes(pg_cipher *c, const CK_MECHANISM *m)
{
	static const pg_aes_mode modes[] = {
		[PG_KIND_AES_ECB] = PG_AES_ECB, [PG_KIND_AES_CBC] = PG_AES_CBC,
		[PG_KIND_AES_CBC_PAD] = PG_AES_CBC, [PG_KIND_AES_CTR] = PG_AES_CTR,
		[PG_KIND_AES_GCM] = PG_AES_GCM,
	};
	CK_AES_CTR_PARAMS ctr;
	pg_mech_kind kind = c->mech->kind;
	CK_RV rv;

	if (c->key->secret == NULL)
		return CKR_KEY_TYPE_INCONSISTENT;
	if (pg_aes_cipher(PG_AES_ECB, c->key->secret_len) == NULL)
		return CKR_KEY_SIZE_RANGE;
	if (kind == PG_KIND_AES_KW || kind == PG_KIND_AES_KW_PAD || kind == PG_KIND_AES_KWP)
		return setup_kw(c, m);
	c->cipher = pg_aes_cipher(modes[kind], c->key->secret_len);
	switch (kind) {
	case PG_KIND_AES_CBC:
	case PG_KIND_AES_CBC_PAD:
		if (m->pParameter == NULL || m->ulParameterLen != 16)
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(c->iv, m->pParameter, 16);
		c->iv_len = 16;
		break;
	case PG_KIND_AES_CTR:
		if (m->pParameter == NULL || m->ulParameterLen != sizeof(ctr))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(&ctr, m->pParameter, sizeof(ctr));
		if (ctr.ulCounterBits == 0 || ctr.ulCounterBits > 128)
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(c->iv, ctr.cb, 16);
		c->iv_len = 16;
		c->ctr_blocks = ctr_room(ctr.cb, ctr.ulCounterBits);
		break;
	case PG_KIND_AES_GCM:
		rv = pg_gcm_params(m, &c->gcm);
		if (rv != CKR_OK)
			return rv;
		/* The caller's buffers need not outlive this call: keep copies. */
		c->gcm_copy = malloc(c->gcm.iv_len + c->gcm.aad_len);
		if (c->gcm_copy == NULL)
			return CKR_HOST_MEMORY;
		memcpy(c->gcm_copy, c->gcm.iv, c->gcm.iv_len);
		if (c->gcm.aad_len > 0)
			memcpy(c->gcm_copy + c->gcm.iv_len, c->gcm.aad, c->gcm.aad_len);
		c->gcm.iv = c->gcm_copy;
		c->gcm.aad = c->gcm_copy + c->gcm.iv_len;
		c->buffered = !c->encrypt;
		break;
	default:
		break;
	}
	return c->cipher != NULL ? CKR_OK : CKR_MECHANISM_INVALID;
}

CK_RV pg_cipher_new(const pg_mech *mech, const CK_MECHANISM *m, pg_key *key, bool encrypt,
                    pg_cipher **out)
{
	pg_cipher *c = calloc(1, sizeof(*c));
	CK_RV rv;

	*out = NULL;
	if (c == NULL)
		return CKR_HOST_MEMORY;
	c->mech = mech;
	c->key = pg_key_ref(key);
	c->encrypt = encrypt;
	pg_buf_init(&c->data);
	switch (mech->kind) {
	case PG_KIND_RSA_PKCS:
	case PG_KIND_RSA_OAEP:
	case PG_KIND_RSA_X509:
		rv = setup_rsa(c, m);
		break;
	case PG_KIND_AES_ECB: case PG_KIND_AES_CBC: case PG_KIND_AES_CBC_PAD:
	case PG_KIND_AES_CTR: case PG_KIND_AES_GCM:
	case PG_KIND_AES_KW: case PG_KIND_AES_KW_PAD: case PG_KIND_AES_KWP:
		rv = setup_aes(c, m);
		break;
	default:
		rv = CKR_MECHANISM_INVALID;
		break;
	}
	if (rv != CKR_OK) {
		pg_cipher_free(c);
		return rv;
	}
	*out = c;
	return CKR_OK;
}

void pg_cipher_free(pg_cipher *c)
{
	if (c == NULL)
		return;
	if (c->pctx != NULL && c->pool)
		pg_key_pool_put(c->key, &c->profile, c->pctx);
	else
		EVP_PKEY_CTX_free(c->pctx);
	EVP_CIPHER_CTX_free(c->ctx);
	pg_buf_clear(&c->data);
	free(c->gcm_copy);
	pg_key_unref(c->key);
	pg_memzero(c, sizeof(*c));
	free(c);
}

bool pg_cipher_started(const pg_cipher *c)
{
	return c->started;
}

size_t pg_cipher_oneshot_len(const pg_cipher *c, size_t in_len)
{
	switch (c->mech->kind) {
	case PG_KIND_AES_CBC_PAD:
		return c->encrypt ? (in_len / 16 + 1) * 16 : in_len;
	case PG_KIND_AES_GCM:
		if (c->encrypt)
			return in_len + c->gcm.tag_len;
		return in_len >= c->gcm.tag_len ? in_len - c->gcm.tag_len : 0;
	case PG_KIND_AES_KW: case PG_KIND_AES_KW_PAD: case PG_KIND_AES_KWP:
		return pg_aes_wrap_len(c->mech->kind, c->encrypt, in_len);
	case PG_KIND_RSA_PKCS: case PG_KIND_RSA_OAEP: case PG_KIND_RSA_X509:
		return rsa_len(c);
	default:
		return in_len;
	}
}

size_t pg_cipher_update_len(const pg_cipher *c, size_t in_len)
{
	size_t total = c->part_len + in_len;

	if (c->buffered)
		return 0;
	if (!is_block(c))
		return in_len;
	/* CBC-PAD decryption keeps back at least one byte: the last block. */
	if (c->mech->kind == PG_KIND_AES_CBC_PAD && !c->encrypt)
		return total > 0 ? (total - 1) / 16 * 16 : 0;
	return total / 16 * 16;
}

size_t pg_cipher_final_len(const pg_cipher *c)
{
	if (c->buffered)
		return pg_cipher_oneshot_len(c, c->data.len);
	if (c->mech->kind == PG_KIND_AES_CBC_PAD)
		return c->tail_done ? c->tail_len : 16;
	if (c->mech->kind == PG_KIND_AES_GCM)
		return c->gcm.tag_len;
	return 0;
}

/* A libcrypto context for the streaming AES modes, from the start. */
static EVP_CIPHER_CTX *stream_new(const pg_cipher *c, CK_RV *rv)
{
	EVP_CIPHER_CTX *ctx;

	if (c->mech->kind == PG_KIND_AES_GCM)
		return pg_gcm_start(c->key, &c->gcm, c->encrypt, rv);
	*rv = CKR_HOST_MEMORY;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return NULL;
	*rv = CKR_FUNCTION_FAILED;
	if (!EVP_CipherInit_ex2(ctx, c->cipher, c->key->secret, c->iv_len ? c->iv : NULL,
	                        c->encrypt, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(ctx, 0)) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	*rv = CKR_OK;
	return ctx;
}

/* Reports a computed result of len bytes at src, or the need for more room. */
static CK_RV deliver(const unsigned char *src, size_t len, unsigned char *out, size_t *out_len)
{
	if (*out_len < len) {
		*out_len = len;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (len > 0 && out != src)
		memmove(out, src, len);
	*out_len = len;
	return CKR_OK;
}

/* PKCS#7 padding of a 16-byte block; 0 when malformed (checked in constant time). */
static size_t unpad16(const unsigned char *block)
{
	unsigned pad = block[15], bad = (pad == 0) | (pad > 16);

	for (unsigned i = 1; i <= 16; i++)
		bad |= (i <= pad) & (block[16 - i] != pad);
	return bad ? 0 : pad;
}

static CK_RV block_oneshot(pg_cipher *c, const unsigned char *in, size_t in_len,
                           unsigned char *out, size_t *out_len)
{
	bool pad = c->mech->kind == PG_KIND_AES_CBC_PAD;
	size_t whole = in_len / 16 * 16, rem = in_len - whole, n = 0, need, cap;
	unsigned char last[16], *dst = out, *tmp = NULL;
	EVP_CIPHER_CTX *ctx;
	CK_RV rv;

	if (rem != 0 && (!pad || !c->encrypt))
		return c->encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
	if (pad && !c->encrypt && in_len == 0)
		return CKR_ENCRYPTED_DATA_LEN_RANGE;
	need = pad && c->encrypt ? whole + 16 : in_len;
	if (*out_len < need && (c->encrypt || !pad)) {
		*out_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	cap = need;
	if (*out_len < need) {
		/* Padded decryption into a short buffer: the result may still fit. */
		dst = tmp = malloc(in_len);
		if (tmp == NULL)
			return CKR_HOST_MEMORY;
	}
	if (pad && c->encrypt) {
		memcpy(last, in + whole, rem);
		memset(last + rem, (int)(16 - rem), 16 - rem);
	}
	ctx = stream_new(c, &rv);
	if (ctx != NULL)
		rv = pg_cipher_run(ctx, in, whole, dst, &n);
	if (rv == CKR_OK && pad && c->encrypt)
		rv = pg_cipher_run(ctx, last, 16, dst + whole, &n);
	EVP_CIPHER_CTX_free(ctx);
	if (rv == CKR_OK && pad && !c->encrypt) {
		size_t p = unpad16(dst + in_len - 16);
		if (p == 0) {
			pg_memzero(dst, in_len);
			rv = CKR_ENCRYPTED_DATA_INVALID;
		}
		need = in_len - p;
	}
	if (rv == CKR_OK)
		rv = deliver(dst, need, out, out_len);
	if (tmp != NULL)
		pg_free_secret(tmp, cap);
	pg_memzero(last, sizeof(last));
	return rv;
}

/* CTR: whether len more bytes stay within the counter's room. */
static bool ctr_fits(const pg_cipher *c, size_t len)
{
	uint64_t total = c->done + len;

	if (total < c->done)
		return false;
	return total / 16 + (total % 16 != 0) <= c->ctr_blocks;
}

static CK_RV rsa_oneshot(pg_cipher *c, const unsigned char *in, size_t in_len,
                         unsigned char *out, size_t *out_len)
{
	unsigned char buf[512];
	size_t k = rsa_len(c), len = sizeof(buf), max;
	CK_RV rv = CKR_OK;

	if (c->encrypt) {
		max = c->mech->kind == PG_KIND_RSA_X509 ? k
		      : c->mech->kind == PG_KIND_RSA_PKCS ? k - 11
		      : k - 2 - 2 * pg_hash_len(c->profile.hash);
		if (in_len > max)
			return CKR_DATA_LEN_RANGE;
		if (*out_len < k) {
			*out_len = k;
			return CKR_BUFFER_TOO_SMALL;
		}
		if (c->mech->kind == PG_KIND_RSA_X509 && in_len < k) {
			/* Raw RSA encrypts a whole block: the input, left-padded with zeros. */
			memset(buf, 0, k - in_len);
			memcpy(buf + k - in_len, in, in_len);
			in = buf;
			in_len = k;
		}
		*out_len = k;
		if (EVP_PKEY_encrypt(c->pctx, out, out_len, in, in_len) <= 0)
			rv = c->mech->kind == PG_KIND_RSA_X509 ? CKR_DATA_INVALID : CKR_FUNCTION_FAILED;
	} else {
		if (in_len != k)
			return CKR_ENCRYPTED_DATA_LEN_RANGE;
		if (EVP_PKEY_decrypt(c->pctx, buf, &len, in, in_len) <= 0)
			rv = CKR_ENCRYPTED_DATA_INVALID;
		else
			rv = deliver(buf, len, out, out_len);
	}
	pg_memzero(buf, sizeof(buf));
	return rv;
}

CK_RV pg_cipher_oneshot(pg_cipher *c, const unsigned char *in, size_t in_len,
                        unsigned char *out, size_t *out_len)
{
	EVP_CIPHER_CTX *ctx;
	CK_RV rv;

	if (out == NULL) {
		*out_len = pg_cipher_oneshot_len(c, in_len);
		return CKR_OK;
	}
	switch (c->mech->kind) {
	case PG_KIND_AES_ECB: case PG_KIND_AES_CBC: case PG_KIND_AES_CBC_PAD:
		return block_oneshot(c, in, in_len, out, out_len);
	case PG_KIND_AES_CTR:
		if (!ctr_fits(c, in_len))
			return c->encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
		if (*out_len < in_len) {
			*out_len = in_len;
			return CKR_BUFFER_TOO_SMALL;
		}
		ctx = stream_new(c, &rv);
		if (ctx != NULL)
			rv = pg_cipher_run(ctx, in, in_len, out, out_len);
		EVP_CIPHER_CTX_free(ctx);
		return rv;
	case PG_KIND_AES_GCM:
		return pg_aes_gcm(c->key, &c->gcm, c->encrypt, in, in_len, out, out_len);
	case PG_KIND_AES_KW: case PG_KIND_AES_KW_PAD: case PG_KIND_AES_KWP:
		return pg_aes_wrap(c->mech->kind, c->key, c->iv_len ? c->iv : NULL, c->encrypt, in,
		                   in_len, out, out_len);
	default:
		return rsa_oneshot(c, in, in_len, out, out_len);
	}
}

/* Block modes: feeds the kept partial block and in, emitting `emit` bytes. */
static CK_RV block_update(pg_cipher *c, const unsigned char *in, size_t in_len, size_t emit,
                          unsigned char *out)
{
	size_t n = 0, m = 0, from_in;
	CK_RV rv = CKR_OK;

	if (emit == 0) {
		memcpy(c->part + c->part_len, in, in_len);
		c->part_len += in_len;
		return CKR_OK;
	}
	/* emit >= 16 >= part_len: the kept bytes go out first, then the head of in. */
	from_in = emit - c->part_len;
	if (c->part_len > 0)
		rv = pg_cipher_run(c->ctx, c->part, c->part_len, out, &n);
	if (rv == CKR_OK)
		rv = pg_cipher_run(c->ctx, in, from_in, out + n, &m);
	if (rv != CKR_OK)
		return rv;
	c->part_len = in_len - from_in;
	memcpy(c->part, in + from_in, c->part_len);
	return n + m == emit ? CKR_OK : CKR_FUNCTION_FAILED;
}

CK_RV pg_cipher_update(pg_cipher *c, const unsigned char *in, size_t in_len,
                       unsigned char *out, size_t *out_len)
{
	size_t need = pg_cipher_update_len(c, in_len);
	unsigned char *copy = NULL;
	CK_RV rv = CKR_OK;

	if (c->buffered && out == NULL) {
		/* A length query consumes no input. */
		*out_len = 0;
		return CKR_OK;
	}
	if (c->buffered) {
		if (is_rsa(c) && (in_len > rsa_len(c) || c->data.len > rsa_len(c) - in_len))
			return c->encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
		c->started = true;
		pg_buf_add(&c->data, in, in_len);
		*out_len = 0;
		return c->data.failed ? CKR_HOST_MEMORY : CKR_OK;
	}
	if (out == NULL) {
		*out_len = need;
		return CKR_OK;
	}
	if (*out_len < need) {
		*out_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (c->mech->kind == PG_KIND_AES_CTR && !ctr_fits(c, in_len))
		return c->encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
	c->started = true;
	if (c->ctx == NULL && (c->ctx = stream_new(c, &rv)) == NULL)
		return rv;
	if (!is_block(c)) {
		rv = pg_cipher_run(c->ctx, in, in_len, out, out_len);
		c->done += in_len;
		return rv;
	}
	/* The kept bytes go out first: an input the output overlaps is read from a copy. */
	if (c->part_len > 0 && need > 0 && in < out + need && out < in + in_len) {
		copy = pg_memdup0(in, in_len);
		if (copy == NULL)
			return CKR_HOST_MEMORY;
		in = copy;
	}
	rv = block_update(c, in, in_len, need, out);
	*out_len = need;
	if (copy != NULL)
		pg_free_secret(copy, in_len);
	return rv;
}

/* CBC-PAD decryption: the last block, decrypted and unpadded once. */
static CK_RV cbc_pad_tail(pg_cipher *c)
{
	size_t n = 0, p;
	CK_RV rv;

	if (c->tail_done)
		return CKR_OK;
	if (c->part_len != 16)
		return CKR_ENCRYPTED_DATA_LEN_RANGE;
	rv = pg_cipher_run(c->ctx, c->part, 16, c->tail, &n);
	if (rv != CKR_OK || n != 16)
		return CKR_FUNCTION_FAILED;
	p = unpad16(c->tail);
	if (p == 0)
		return CKR_ENCRYPTED_DATA_INVALID;
	c->tail_len = 16 - p;
	c->tail_done = true;
	return CKR_OK;
}

CK_RV pg_cipher_final(pg_cipher *c, unsigned char *out, size_t *out_len)
{
	unsigned char block[16];
	size_t n = 0;
	CK_RV rv = CKR_OK;

	if (c->buffered)
		return pg_cipher_oneshot(c, c->data.data, c->data.len, out, out_len);
	if (out == NULL) {
		*out_len = pg_cipher_final_len(c);
		return CKR_OK;
	}
	if (c->ctx == NULL && (c->ctx = stream_new(c, &rv)) == NULL)
		return rv;
	switch (c->mech->kind) {
	case PG_KIND_AES_CBC_PAD:
		if (!c->encrypt) {
			rv = cbc_pad_tail(c);
			return rv == CKR_OK ? deliver(c->tail, c->tail_len, out, out_len) : rv;
		}
		if (*out_len < 16) {
			*out_len = 16;
			return CKR_BUFFER_TOO_SMALL;
		}
		memcpy(block, c->part, c->part_len);
		memset(block + c->part_len, (int)(16 - c->part_len), 16 - c->part_len);
		rv = pg_cipher_run(c->ctx, block, 16, out, out_len);
		pg_memzero(block, sizeof(block));
		return rv;
	case PG_KIND_AES_GCM:
		if (*out_len < c->gcm.tag_len) {
			*out_len = c->gcm.tag_len;
			return CKR_BUFFER_TOO_SMALL;
		}
		rv = pg_gcm_finish(c->ctx, true, out, c->gcm.tag_len);
		*out_len = rv == CKR_OK ? c->gcm.tag_len : 0;
		return rv;
	default:
		if (c->part_len != 0)
			return c->encrypt ? CKR_DATA_LEN_RANGE : CKR_ENCRYPTED_DATA_LEN_RANGE;
		*out_len = n;
		return CKR_OK;
	}
}
