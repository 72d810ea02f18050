/*
 * The seal of a backup file (seal.h). scrypt (RFC 7914) turns the
 * passphrase and the header's salt into 64 bytes: the first 32 key the
 * header's HMAC-SHA-256, which tells a wrong passphrase from damage, the
 * last 32 are the AES-256-GCM key of the chunks. Each chunk's nonce is
 * its number and whether it is the last (the STREAM construction of
 * Hoang, Reyhanitabar, Rogaway and Vizár), so chunks cannot be dropped,
 * reordered or cut off at the end unnoticed; the salt makes the key, and
 * with it every nonce, new for each file.
 */
#include "config.h"

#include "seal.h"

#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRYPT_R 8
#define SCRYPT_P 1
#define WORD_LAST 0x80000000u

/* scrypt of pass into check and payload keys; false after a message. */
static bool
derive(const pg_backup_header *h, const uint8_t *pass, size_t pass_len, uint8_t check[32],
       uint8_t payload[32])
{
	uint8_t out[64];
	uint64_t n = 1ULL << h->log2n, maxmem = PG_BACKUP_MEM_MAX + (1ULL << 20);
	uint32_t r = h->r, p = h->p;
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, (void *)pass, pass_len),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)h->salt, PG_BACKUP_SALT_LEN),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
		OSSL_PARAM_construct_end(),
	};
	bool ok = ctx != NULL && EVP_KDF_derive(ctx, out, sizeof(out), params) == 1;

	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	if (!ok) {
		pg_message("scrypt with N = 2^%u, r = %u, p = %u failed (out of memory?)",
		           h->log2n, r, p);
		pg_memzero(out, sizeof(out));
		return false;
	}
	memcpy(check, out, 32);
	memcpy(payload, out + 32, 32);
	pg_memzero(out, sizeof(out));
	return true;
}

static void
header_check(const uint8_t key[32], const uint8_t *header, uint8_t out[32])
{
	unsigned int len = 32;

	HMAC(EVP_sha256(), key, 32, header, PG_BACKUP_CHECK_OFFSET, out, &len);
}

static void
nonce_of(uint64_t index, bool last, uint8_t nonce[12])
{
	for (int i = 7; i >= 0; i--, index >>= 8)
		nonce[i] = (uint8_t)index;
	nonce[8] = nonce[9] = nonce[10] = 0;
	nonce[11] = last;
}

/* AES-256-GCM of in (len bytes) into out, tag after it, or its opening;
 * the associated data is the header and the chunk's length word. */
static bool
gcm(pg_seal *s, bool enc, const uint8_t word[4], bool last, const uint8_t *in, size_t len,
    uint8_t *out)
{
	uint8_t nonce[12];
	int n = 0, fin = 0;

	nonce_of(s->index, last, nonce);
	if (EVP_CipherInit_ex(s->ctx, EVP_aes_256_gcm(), NULL, s->key, nonce, enc) != 1 ||
	    EVP_CipherUpdate(s->ctx, NULL, &n, s->h.bytes, PG_BACKUP_HEADER_LEN) != 1 ||
	    EVP_CipherUpdate(s->ctx, NULL, &n, word, 4) != 1 ||
	    (len > 0 && EVP_CipherUpdate(s->ctx, out, &n, in, (int)len) != 1))
		return false;
	if (!enc && EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_SET_TAG, PG_BACKUP_TAG_LEN,
	                                (void *)(in + len)) != 1)
		return false;
	if (EVP_CipherFinal_ex(s->ctx, out + n, &fin) != 1)
		return false;
	if (enc && EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, PG_BACKUP_TAG_LEN,
	                               out + len) != 1)
		return false;
	s->index++;
	return true;
}

static bool
setup(pg_seal *s, unsigned chunk_log2)
{
	s->chunk = (size_t)1 << chunk_log2;
	s->ctx = EVP_CIPHER_CTX_new();
	/* Plaintext, then the sealed chunk with its word and tag. */
	s->buf = malloc(2 * s->chunk + 4 + PG_BACKUP_TAG_LEN);
	if (s->ctx == NULL || s->buf == NULL) {
		pg_message("out of memory");
		return false;
	}
	return true;
}

bool
pg_seal_write_start(pg_seal *s, FILE *out, const uint8_t *pass, size_t pass_len, unsigned log2n)
{
	uint8_t check_key[32], check[32];
	bool ok;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->out = out;
	s->h.version = PG_BACKUP_VERSION;
	s->h.kdf = 1;
	s->h.aead = 1;
	s->h.chunk_log2 = PG_BACKUP_CHUNK_LOG2;
	s->h.log2n = (uint8_t)log2n;
	s->h.r = SCRYPT_R;
	s->h.p = SCRYPT_P;
	if (RAND_bytes(s->h.salt, PG_BACKUP_SALT_LEN) != 1) {
		pg_message("no random bytes for the salt");
		return false;
	}
	if (!setup(s, s->h.chunk_log2) || !derive(&s->h, pass, pass_len, check_key, s->key))
		return false;
	/* The check covers the fields and the salt, the sum the check too. */
	memset(check, 0, sizeof(check));
	pg_backup_header_format(&s->h, check);
	header_check(check_key, s->h.bytes, check);
	pg_memzero(check_key, sizeof(check_key));
	pg_backup_header_format(&s->h, check);
	ok = fwrite(s->h.bytes, 1, PG_BACKUP_HEADER_LEN, out) == PG_BACKUP_HEADER_LEN;
	s->offset = PG_BACKUP_HEADER_LEN;
	return ok;
}

/* Seals the buffered plaintext as one chunk and writes it. */
static bool
flush_chunk(pg_seal *s, bool last)
{
	uint8_t *sealed = s->buf + s->chunk;
	uint32_t word = (uint32_t)s->len | (last ? WORD_LAST : 0);
	size_t total = 4 + s->len + PG_BACKUP_TAG_LEN;

	for (int i = 0; i < 4; i++)
		sealed[i] = (uint8_t)(word >> (24 - 8 * i));
	if (!gcm(s, true, sealed, last, s->buf, s->len, sealed + 4)) {
		pg_message("sealing a chunk failed");
		return false;
	}
	if (fwrite(sealed, 1, total, s->out) != total)
		return false;
	s->offset += total;
	s->len = 0;
	return true;
}

bool
pg_seal_write(pg_seal *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t take;

	while (len > 0) {
		/* A full buffer goes out only once more follows: the last
		 * chunk must be marked as such. */
		if (s->len == s->chunk && !flush_chunk(s, false))
			return false;
		take = s->chunk - s->len < len ? s->chunk - s->len : len;
		memcpy(s->buf + s->len, p, take);
		s->len += take;
		p += take;
		len -= take;
	}
	return true;
}

bool
pg_seal_write_finish(pg_seal *s)
{
	return flush_chunk(s, true);
}

/* ---------------------------------------------------------------------------
 * Reading
 */

/* Reads exactly len bytes, or fewer at the end of the file (*got). */
static bool
read_full(int fd, uint8_t *buf, size_t len, size_t *got)
{
	ssize_t r;

	*got = 0;
	while (*got < len) {
		r = read(fd, buf + *got, len - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return true;
}

pg_seal_status
pg_seal_read_start(pg_seal *s, int fd, const uint8_t *pass, size_t pass_len,
                   pg_backup_hdr_status *hdr)
{
	uint8_t bytes[PG_BACKUP_HEADER_LEN], check_key[32], check[32];
	size_t got;
	bool same;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	if (!read_full(fd, bytes, sizeof(bytes), &got))
		return PG_SEAL_IO;
	*hdr = pg_backup_header_parse(&s->h, bytes, got);
	if (*hdr != PG_BACKUP_HDR_OK)
		return PG_SEAL_HEADER;
	s->offset = got;
	if (!setup(s, s->h.chunk_log2))
		return PG_SEAL_NOMEM;
	if (!derive(&s->h, pass, pass_len, check_key, s->key))
		return PG_SEAL_NOMEM;
	header_check(check_key, s->h.bytes, check);
	same = pg_ct_equal(check, s->h.bytes + PG_BACKUP_CHECK_OFFSET, 32);
	pg_memzero(check_key, sizeof(check_key));
	return same ? PG_SEAL_OK : PG_SEAL_PASSPHRASE;
}

pg_seal_status
pg_seal_read(pg_seal *s, const uint8_t **data, size_t *len)
{
	uint8_t *sealed = s->buf + s->chunk;
	uint32_t word;
	size_t got, n;
	bool last;

	*data = s->buf;
	*len = 0;
	if (s->last) {
		/* After the last chunk the file must end. */
		if (!read_full(s->fd, sealed, 1, &got))
			return PG_SEAL_IO;
		return got == 0 ? PG_SEAL_OK : PG_SEAL_TRAILING;
	}
	if (!read_full(s->fd, sealed, 4, &got))
		return PG_SEAL_IO;
	if (got < 4)
		return PG_SEAL_TRUNCATED;
	word = (uint32_t)sealed[0] << 24 | (uint32_t)sealed[1] << 16 | (uint32_t)sealed[2] << 8 | sealed[3];
	last = (word & WORD_LAST) != 0;
	n = word & ~WORD_LAST;
	if (n > s->chunk)
		return PG_SEAL_DAMAGED;
	if (!read_full(s->fd, sealed + 4, n + PG_BACKUP_TAG_LEN, &got))
		return PG_SEAL_IO;
	if (got < n + PG_BACKUP_TAG_LEN)
		return PG_SEAL_TRUNCATED;
	if (!gcm(s, false, sealed, last, sealed + 4, n, s->buf))
		return PG_SEAL_DAMAGED;
	s->offset += 4 + n + PG_BACKUP_TAG_LEN;
	s->last = last;
	*len = n;
	return PG_SEAL_OK;
}

void
pg_seal_clear(pg_seal *s)
{
	if (s == NULL)
		return;
	EVP_CIPHER_CTX_free(s->ctx);
	if (s->buf != NULL)
		pg_free_secret(s->buf, 2 * s->chunk + 4 + PG_BACKUP_TAG_LEN);
	pg_memzero(s->key, sizeof(s->key));
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
