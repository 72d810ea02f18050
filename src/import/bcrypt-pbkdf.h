/*
 * bcrypt_pbkdf, the key derivation OpenSSH uses for passphrase-protected
 * private keys ("kdfname" bcrypt in the openssh-key-v1 format), and the
 * Blowfish cipher it is built on.
 *
 * bcrypt_pbkdf is PBKDF2's structure with SHA-512 prehashing and, as the
 * pseudo-random function, a bcrypt-style hash: Blowfish keyed by an
 * expensive key schedule (Eksblowfish) over the hashed passphrase and
 * salt encrypts the fixed text "OxychromaticBlowfishSwatDynamite" 64
 * times. Output bytes are spread over the blocks ("stride") so that every
 * block must be computed to know any part of the key.
 */
#ifndef PG_BCRYPT_PBKDF_H
#define PG_BCRYPT_PBKDF_H

#include "common.h"

#include <stdint.h>

/* Blowfish state: the P-array and four S-boxes. */
typedef struct {
	uint32_t p[18];
	uint32_t s[4][256];
} pg_blowfish;

/* Standard Blowfish key schedule (key 1-72 bytes; longer keys wrap). */
void pg_blowfish_init(pg_blowfish *bf, const uint8_t *key, size_t key_len);

/* Encrypts / decrypts one 64-bit block held as two big-endian halves. */
void pg_blowfish_encrypt(const pg_blowfish *bf, uint32_t *left, uint32_t *right);
void pg_blowfish_decrypt(const pg_blowfish *bf, uint32_t *left, uint32_t *right);

/* Wipes the state. */
void pg_blowfish_clear(pg_blowfish *bf);

/*
 * Derives key_len bytes (1-1024) into key from pass and salt (salt 1-1024
 * bytes) with rounds iterations (>= 1). False on bad arguments or when
 * SHA-512 is unavailable (key is then wiped). Thread-safe.
 */
bool pg_bcrypt_pbkdf(const uint8_t *pass, size_t pass_len, const uint8_t *salt, size_t salt_len,
                     uint8_t *key, size_t key_len, unsigned rounds) PG_MUST_CHECK;

#endif /* PG_BCRYPT_PBKDF_H */
