/*
 * Blowfish and bcrypt_pbkdf (bcrypt-pbkdf.h), written from the algorithm
 * descriptions: Blowfish (Schneier, 1993), the Eksblowfish key schedule
 * of bcrypt (Provos and Mazieres, 1999) and bcrypt_pbkdf as OpenSSH's
 * PROTOCOL.key uses it. The initial state, the digits of pi, is computed
 * at build time (gen-blowfish-pi.py).
 */
#include "config.h"

#include "bcrypt-pbkdf.h"
#include "blowfish-pi.h"

#include <openssl/evp.h>

#include <string.h>

#define SHA512_LEN 64
#define HASH_WORDS 8                    /* 32 bytes of output per block */
#define HASH_LEN (HASH_WORDS * 4)

/* The next 4 bytes of data as a big-endian word, cycling over data. */
static uint32_t
stream_word(const uint8_t *data, size_t len, size_t *pos)
{
	uint32_t word = 0;

	for (int i = 0; i < 4; i++) {
		if (*pos >= len)
			*pos = 0;
		word = word << 8 | data[(*pos)++];
	}
	return word;
}

static inline uint32_t
feistel(const pg_blowfish *bf, uint32_t x)
{
	return ((bf->s[0][x >> 24] + bf->s[1][(x >> 16) & 0xff]) ^ bf->s[2][(x >> 8) & 0xff]) +
	       bf->s[3][x & 0xff];
}

void
pg_blowfish_encrypt(const pg_blowfish *bf, uint32_t *left, uint32_t *right)
{
	uint32_t l = *left, r = *right;

	/* Sixteen rounds, two per step so the halves need no swapping. */
	for (int i = 0; i < 16; i += 2) {
		l ^= bf->p[i];
		r ^= feistel(bf, l);
		r ^= bf->p[i + 1];
		l ^= feistel(bf, r);
	}
	l ^= bf->p[16];
	r ^= bf->p[17];
	*left = r;
	*right = l;
}

void
pg_blowfish_decrypt(const pg_blowfish *bf, uint32_t *left, uint32_t *right)
{
	uint32_t l = *left, r = *right;

	/* Encryption with the P-array in reverse order. */
	for (int i = 17; i > 1; i -= 2) {
		l ^= bf->p[i];
		r ^= feistel(bf, l);
		r ^= bf->p[i - 1];
		l ^= feistel(bf, r);
	}
	l ^= bf->p[1];
	r ^= bf->p[0];
	*left = r;
	*right = l;
}

static void
initial_state(pg_blowfish *bf)
{
	memcpy(bf->p, bf_init_p, sizeof(bf->p));
	memcpy(bf->s, bf_init_s, sizeof(bf->s));
}

/*
 * The key schedule: P ^= key, then every P and S entry replaced, in order,
 * by the encryption of the previous block XOR the next 8 bytes of data.
 * With no data (standard Blowfish, and Eksblowfish's repeated rounds)
 * each block is the encryption of the previous one.
 */
static void
expand(pg_blowfish *bf, const uint8_t *data, size_t data_len, const uint8_t *key, size_t key_len)
{
	size_t kpos = 0, dpos = 0;
	uint32_t l = 0, r = 0;

	for (int i = 0; i < 18; i++)
		bf->p[i] ^= stream_word(key, key_len, &kpos);
	for (int i = 0; i < 18; i += 2) {
		if (data != NULL) {
			l ^= stream_word(data, data_len, &dpos);
			r ^= stream_word(data, data_len, &dpos);
		}
		pg_blowfish_encrypt(bf, &l, &r);
		bf->p[i] = l;
		bf->p[i + 1] = r;
	}
	for (int box = 0; box < 4; box++) {
		for (int i = 0; i < 256; i += 2) {
			if (data != NULL) {
				l ^= stream_word(data, data_len, &dpos);
				r ^= stream_word(data, data_len, &dpos);
			}
			pg_blowfish_encrypt(bf, &l, &r);
			bf->s[box][i] = l;
			bf->s[box][i + 1] = r;
		}
	}
}

void
pg_blowfish_init(pg_blowfish *bf, const uint8_t *key, size_t key_len)
{
	initial_state(bf);
	expand(bf, NULL, 0, key, key_len);
}

void
pg_blowfish_clear(pg_blowfish *bf)
{
	pg_memzero(bf, sizeof(*bf));
}

/*
 * The bcrypt-style hash of one block: Eksblowfish with 64 rounds of
 * expansion, keyed by the hashed passphrase and salt, encrypting the
 * magic text 64 times; words come out little-endian.
 */
static void
bcrypt_hash(const uint8_t pass[SHA512_LEN], const uint8_t salt[SHA512_LEN], uint8_t out[HASH_LEN])
{
	static const char magic[HASH_LEN + 1] = "OxychromaticBlowfishSwatDynamite";
	pg_blowfish bf;
	uint32_t words[HASH_WORDS];
	size_t pos = 0;

	initial_state(&bf);
	expand(&bf, salt, SHA512_LEN, pass, SHA512_LEN);
	for (int i = 0; i < 64; i++) {
		expand(&bf, NULL, 0, salt, SHA512_LEN);
		expand(&bf, NULL, 0, pass, SHA512_LEN);
	}
	for (int i = 0; i < HASH_WORDS; i++)
		words[i] = stream_word((const uint8_t *)magic, HASH_LEN, &pos);
	for (int n = 0; n < 64; n++) {
		for (int i = 0; i < HASH_WORDS; i += 2)
			pg_blowfish_encrypt(&bf, &words[i], &words[i + 1]);
	}
	for (int i = 0; i < HASH_WORDS; i++) {
		out[4 * i + 0] = (uint8_t)words[i];
		out[4 * i + 1] = (uint8_t)(words[i] >> 8);
		out[4 * i + 2] = (uint8_t)(words[i] >> 16);
		out[4 * i + 3] = (uint8_t)(words[i] >> 24);
	}
	pg_memzero(words, sizeof(words));
	pg_blowfish_clear(&bf);
}

static bool
sha512(const uint8_t *data, size_t len, uint8_t out[SHA512_LEN])
{
	unsigned int n = 0;

	return EVP_Digest(data, len, out, &n, EVP_sha512(), NULL) == 1 && n == SHA512_LEN;
}

bool
pg_bcrypt_pbkdf(const uint8_t *pass, size_t pass_len, const uint8_t *salt, size_t salt_len,
                uint8_t *key, size_t key_len, unsigned rounds)
{
	uint8_t sha_pass[SHA512_LEN], sha_salt[SHA512_LEN], block_salt[1024 + 4];
	uint8_t tmp[HASH_LEN], acc[HASH_LEN];
	size_t stride, per_block, done = 0;
	bool ok = false;

	if (rounds < 1 || key_len < 1 || key_len > 1024 || salt_len < 1 || salt_len > 1024 ||
	    (pass == NULL && pass_len > 0))
		return false;
	/*
	 * Output byte i*stride + (block - 1) comes from byte i of block: the
	 * key is interleaved over all blocks.
	 */
	stride = (key_len + HASH_LEN - 1) / HASH_LEN;
	per_block = (key_len + stride - 1) / stride;
	memcpy(block_salt, salt, salt_len);
	if (!sha512(pass, pass_len, sha_pass))
		goto out;
	for (uint32_t block = 1; done < key_len; block++) {
		block_salt[salt_len + 0] = (uint8_t)(block >> 24);
		block_salt[salt_len + 1] = (uint8_t)(block >> 16);
		block_salt[salt_len + 2] = (uint8_t)(block >> 8);
		block_salt[salt_len + 3] = (uint8_t)block;
		if (!sha512(block_salt, salt_len + 4, sha_salt))
			goto out;
		bcrypt_hash(sha_pass, sha_salt, tmp);
		memcpy(acc, tmp, sizeof(acc));
		for (unsigned r = 1; r < rounds; r++) {
			if (!sha512(tmp, sizeof(tmp), sha_salt))
				goto out;
			bcrypt_hash(sha_pass, sha_salt, tmp);
			for (size_t i = 0; i < sizeof(acc); i++)
				acc[i] ^= tmp[i];
		}
		for (size_t i = 0; i < per_block; i++) {
			size_t dest = i * stride + (block - 1);
			if (dest >= key_len)
				break;
			key[dest] = acc[i];
			done++;
		}
	}
	ok = true;
out:
	if (!ok)
		pg_memzero(key, key_len);
	pg_memzero(sha_pass, sizeof(sha_pass));
	pg_memzero(sha_salt, sizeof(sha_salt));
	pg_memzero(block_salt, sizeof(block_salt));
	pg_memzero(tmp, sizeof(tmp));
	pg_memzero(acc, sizeof(acc));
	return ok;
}
