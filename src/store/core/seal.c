/*
 * The token key and sealing at rest.
 *
 * Each token has a random 256-bit token key. Secret attribute values are
 * stored as nonce(12) | AES-256-GCM(value) | tag(16) under it, with the
 * object's random identity and the attribute type as associated data, so
 * a sealed value moved to another object or attribute does not open.
 *
 * The token key itself is stored twice, wrapped (AES-256-GCM again) by a
 * key derived from the SO PIN and one from the user PIN with scrypt;
 * the parameters and salt are stored beside each wrap so they can change
 * per PIN. Changing a PIN re-wraps one key; nothing else is re-encrypted.
 *
 * In memory the token key lives in its own page, locked (mlock) where
 * the system allows and kept out of core dumps, XOR-masked with a random
 * mask while idle; it is unmasked onto the stack only to set up a cipher.
 */
#include "config.h"

#include "core.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct pg_token_key {
	unsigned char masked[PG_KEY_LEN];
	unsigned char mask[PG_KEY_LEN];
	size_t size;                 /* of the mapping */
};

struct pg_sealer {
	EVP_CIPHER_CTX *enc;
	EVP_CIPHER_CTX *dec;
};

#define NONCE_LEN 12
#define TAG_LEN 16
#define KDF_R 8
#define KDF_P 1

bool
pg_random(void *out, size_t len)
{
	if (len > INT32_MAX)
		return false;
	return RAND_bytes(out, (int)len) == 1;
}

static pg_token_key *
key_alloc(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = page > 0 ? (size_t)page : 4096;
	pg_token_key *key;
	void *p;

	if (size < sizeof(pg_token_key))
		size = sizeof(pg_token_key);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Both may fail (RLIMIT_MEMLOCK, old kernels): the key still works. */
	(void)mlock(p, size);
#ifdef MADV_DONTDUMP
	(void)madvise(p, size, MADV_DONTDUMP);
#endif
	key = p;
	key->size = size;
	return key;
}

void
pg_token_key_free(pg_token_key *key)
{
	size_t size;

	if (key == NULL)
		return;
	size = key->size;
	pg_memzero(key, size);
	munlock(key, size);
	munmap(key, size);
}

/* Stores a clear key masked. */
static bool
key_store(pg_token_key *key, const unsigned char clear[PG_KEY_LEN])
{
	if (!pg_random(key->mask, sizeof(key->mask)))
		return false;
	for (size_t i = 0; i < PG_KEY_LEN; i++)
		key->masked[i] = clear[i] ^ key->mask[i];
	return true;
}

static void
key_reveal(const pg_token_key *key, unsigned char clear[PG_KEY_LEN])
{
	for (size_t i = 0; i < PG_KEY_LEN; i++)
		clear[i] = key->masked[i] ^ key->mask[i];
}

pg_token_key *
pg_token_key_new(void)
{
	unsigned char clear[PG_KEY_LEN];
	pg_token_key *key = key_alloc();

	if (key == NULL)
		return NULL;
	if (!pg_random(clear, sizeof(clear)) || !key_store(key, clear)) {
		pg_token_key_free(key);
		key = NULL;
	}
	pg_memzero(clear, sizeof(clear));
	return key;
}

pg_token_key *
pg_token_key_dup(const pg_token_key *key)
{
	unsigned char clear[PG_KEY_LEN];
	pg_token_key *copy = key_alloc();

	if (copy == NULL)
		return NULL;
	key_reveal(key, clear);
	if (!key_store(copy, clear)) {
		pg_token_key_free(copy);
		copy = NULL;
	}
	pg_memzero(clear, sizeof(clear));
	return copy;
}

bool
pg_token_key_equal(const pg_token_key *a, const pg_token_key *b)
{
	unsigned char x[PG_KEY_LEN], y[PG_KEY_LEN];
	bool equal;

	key_reveal(a, x);
	key_reveal(b, y);
	equal = pg_ct_equal(x, y, PG_KEY_LEN);
	pg_memzero(x, sizeof(x));
	pg_memzero(y, sizeof(y));
	return equal;
}

static bool
params_valid(unsigned log2n, unsigned r, unsigned p)
{
	/* Bounds keep a damaged database from asking for absurd memory. */
	return log2n >= 10 && log2n <= 22 && r >= 1 && r <= 32 && p >= 1 && p <= 16;
}

static bool
kdf(const CK_UTF8CHAR *pin, CK_ULONG pin_len, const pg_pin_wrap *w, unsigned char out[PG_KEY_LEN])
{
	uint64_t n = (uint64_t)1 << w->log2n;
	/* scrypt needs 128 * r * (N + p) bytes plus a little; allow that. */
	uint64_t maxmem = 128 * (uint64_t)w->r * (n + w->p + 2) + (1 << 20);

	return EVP_PBE_scrypt((const char *)pin, pin_len, w->salt, sizeof(w->salt), n, w->r, w->p,
	                      maxmem, out, PG_KEY_LEN) == 1;
}

/* Associated data of a wrapped token key: who, and with what parameters. */
static void
wrap_aad(const pg_pin_wrap *w, CK_USER_TYPE user, unsigned char aad[24])
{
	memcpy(aad, "p11glue token key", 17);
	aad[17] = (unsigned char)user;
	aad[18] = (unsigned char)w->log2n;
	aad[19] = (unsigned char)w->r;
	aad[20] = (unsigned char)w->p;
	aad[21] = aad[22] = aad[23] = 0;
}

/* AES-256-GCM in one call; enc: encrypt in -> out | tag, else check tag. */
static bool
gcm(bool enc, const unsigned char key[PG_KEY_LEN], const unsigned char nonce[NONCE_LEN],
    const unsigned char *aad, size_t aad_len, const unsigned char *in, size_t len,
    unsigned char *out, unsigned char tag[TAG_LEN])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl = 0;
	bool ok = false;

	if (ctx == NULL || len > INT32_MAX || aad_len > INT32_MAX)
		goto out;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce, enc ? 1 : 0) != 1)
		goto out;
	if (EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aad_len) != 1)
		goto out;
	if (EVP_CipherUpdate(ctx, out, &outl, in, (int)len) != 1)
		goto out;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) != 1)
		goto out;
	if (EVP_CipherFinal_ex(ctx, out + outl, &outl) != 1)
		goto out;
	if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) != 1)
		goto out;
	ok = true;
out:
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

CK_RV
pg_token_key_unwrap(const pg_pin_wrap *wrap, CK_USER_TYPE user, const CK_UTF8CHAR *pin,
                    CK_ULONG pin_len, pg_token_key **key)
{
	unsigned char kek[PG_KEY_LEN], clear[PG_KEY_LEN], aad[24], tag[TAG_LEN];
	CK_RV rv = CKR_PIN_INCORRECT;

	*key = NULL;
	if (!wrap->set || !params_valid(wrap->log2n, wrap->r, wrap->p))
		return CKR_DEVICE_ERROR;
	if (!kdf(pin, pin_len, wrap, kek)) {
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	wrap_aad(wrap, user, aad);
	memcpy(tag, wrap->wrapped + NONCE_LEN + PG_KEY_LEN, TAG_LEN);
	if (!gcm(false, kek, wrap->wrapped, aad, sizeof(aad), wrap->wrapped + NONCE_LEN,
	         PG_KEY_LEN, clear, tag))
		goto out;
	*key = key_alloc();
	if (*key == NULL || !key_store(*key, clear)) {
		pg_token_key_free(*key);
		*key = NULL;
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	rv = CKR_OK;
out:
	pg_memzero(kek, sizeof(kek));
	pg_memzero(clear, sizeof(clear));
	return rv;
}

CK_RV
pg_token_key_wrap(const pg_token_key *key, CK_USER_TYPE user, const CK_UTF8CHAR *pin,
                  CK_ULONG pin_len, unsigned log2n, pg_pin_wrap *wrap)
{
	unsigned char kek[PG_KEY_LEN], clear[PG_KEY_LEN], aad[24];
	CK_RV rv = CKR_HOST_MEMORY;

	memset(wrap, 0, sizeof(*wrap));
	wrap->log2n = log2n;
	wrap->r = KDF_R;
	wrap->p = KDF_P;
	if (!params_valid(wrap->log2n, wrap->r, wrap->p))
		return CKR_GENERAL_ERROR;
	if (!pg_random(wrap->salt, sizeof(wrap->salt)) || !pg_random(wrap->wrapped, NONCE_LEN))
		return CKR_FUNCTION_FAILED;
	if (!kdf(pin, pin_len, wrap, kek))
		goto out;
	wrap_aad(wrap, user, aad);
	key_reveal(key, clear);
	if (!gcm(true, kek, wrap->wrapped, aad, sizeof(aad), clear, PG_KEY_LEN,
	         wrap->wrapped + NONCE_LEN, wrap->wrapped + NONCE_LEN + PG_KEY_LEN))
		goto out;
	wrap->set = true;
	rv = CKR_OK;
out:
	pg_memzero(kek, sizeof(kek));
	pg_memzero(clear, sizeof(clear));
	return rv;
}

pg_sealer *
pg_sealer_new(const pg_token_key *key)
{
	unsigned char clear[PG_KEY_LEN];
	pg_sealer *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->enc = EVP_CIPHER_CTX_new();
	s->dec = EVP_CIPHER_CTX_new();
	key_reveal(key, clear);
	if (s->enc == NULL || s->dec == NULL ||
	    EVP_EncryptInit_ex(s->enc, EVP_aes_256_gcm(), NULL, clear, NULL) != 1 ||
	    EVP_DecryptInit_ex(s->dec, EVP_aes_256_gcm(), NULL, clear, NULL) != 1) {
		pg_sealer_free(s);
		s = NULL;
	}
	pg_memzero(clear, sizeof(clear));
	return s;
}

void
pg_sealer_free(pg_sealer *sealer)
{
	if (sealer == NULL)
		return;
	/* EVP_CIPHER_CTX_free cleanses the key schedule. */
	EVP_CIPHER_CTX_free(sealer->enc);
	EVP_CIPHER_CTX_free(sealer->dec);
	free(sealer);
}

static void
value_aad(const unsigned char uid[PG_UID_LEN], CK_ATTRIBUTE_TYPE type, unsigned char aad[24])
{
	uint64_t t = (uint64_t)type;

	memcpy(aad, uid, PG_UID_LEN);
	for (size_t i = 0; i < 8; i++)
		aad[PG_UID_LEN + i] = (unsigned char)(t >> (8 * i));
}

bool
pg_sealer_seal(pg_sealer *s, const unsigned char uid[PG_UID_LEN], CK_ATTRIBUTE_TYPE type,
               const void *in, size_t len, pg_buf *out)
{
	unsigned char nonce[NONCE_LEN], aad[24], tag[TAG_LEN];
	unsigned char *ct;
	int outl = 0;
	size_t start = out->len;

	if (len > INT32_MAX || !pg_random(nonce, sizeof(nonce)))
		return false;
	value_aad(uid, type, aad);
	pg_buf_add(out, nonce, sizeof(nonce));
	/* Copy the value in (pg_buf wipes when freed), encrypt in place. */
	pg_buf_add(out, in, len);
	if (out->failed)
		return false;
	ct = out->data + start + NONCE_LEN;
	if (EVP_EncryptInit_ex(s->enc, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_EncryptUpdate(s->enc, NULL, &outl, aad, sizeof(aad)) != 1 ||
	    (len > 0 && EVP_EncryptUpdate(s->enc, ct, &outl, ct, (int)len) != 1) ||
	    EVP_EncryptFinal_ex(s->enc, ct + len, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(s->enc, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) != 1) {
		out->failed = true;
		return false;
	}
	pg_buf_add(out, tag, sizeof(tag));
	return !out->failed;
}

bool
pg_sealer_open(pg_sealer *s, const unsigned char uid[PG_UID_LEN], CK_ATTRIBUTE_TYPE type,
               const unsigned char *in, size_t len, pg_attrs *attrs)
{
	unsigned char aad[24], tag[TAG_LEN];
	unsigned char *clear;
	size_t clen;
	int outl = 0;
	bool ok = false;

	if (len < NONCE_LEN + TAG_LEN || len > INT32_MAX)
		return false;
	clen = len - NONCE_LEN - TAG_LEN;
	clear = malloc(clen ? clen : 1);
	if (clear == NULL)
		return false;
	value_aad(uid, type, aad);
	memcpy(tag, in + len - TAG_LEN, TAG_LEN);
	if (EVP_DecryptInit_ex(s->dec, NULL, NULL, NULL, in) != 1 ||
	    EVP_DecryptUpdate(s->dec, NULL, &outl, aad, sizeof(aad)) != 1 ||
	    (clen > 0 && EVP_DecryptUpdate(s->dec, clear, &outl, in + NONCE_LEN, (int)clen) != 1) ||
	    EVP_CIPHER_CTX_ctrl(s->dec, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) != 1 ||
	    EVP_DecryptFinal_ex(s->dec, clear + clen, &outl) != 1)
		goto out;
	ok = pg_attrs_set(attrs, type, clear, clen);
out:
	pg_free_secret(clear, clen ? clen : 1);
	return ok;
}
