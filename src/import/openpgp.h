/*
 * OpenPGP keys as `gpg --export` and `gpg --export-secret-keys` write
 * them (transferable keys, RFC 4880 §11.1-11.2, RFC 9580 §10.1): public
 * and secret key and subkey packets of versions 4 and 6, and the first
 * User ID of each primary key; every other packet is skipped. A reader
 * of untrusted input: every length is checked against what is left, and
 * nothing here talks PKCS#11.
 *
 * openpgp.c reads packets and public key material, computes fingerprints
 * and GnuPG's keygrips; openpgp-secret.c unlocks the secret material
 * (S2K, RFC 9580 §3.7, and the CFB encryption of §5.5.3) into a libcrypto
 * key.
 *
 * Thread safety: no shared state.
 */
#ifndef PG_OPENPGP_H
#define PG_OPENPGP_H

#include "common.h"

#include <p11glue/pin.h>

#include <openssl/evp.h>

#include <stdint.h>

typedef enum {
	PG_PGP_OK = 0,
	PG_PGP_ERR_FORMAT,           /* malformed */
	PG_PGP_ERR_UNSUPPORTED,      /* a version, algorithm, cipher or S2K not handled */
	PG_PGP_ERR_NO_SECRET,        /* a public key, or GnuPG's stub of a key held elsewhere */
	PG_PGP_ERR_PASSPHRASE,       /* wrong passphrase: the check value does not match */
	PG_PGP_ERR_NO_PASSPHRASE,    /* protected, and no passphrase was given */
	PG_PGP_ERR_NOMEM
} pg_pgp_result;

/* Public key algorithms (RFC 9580 §9.1). */
enum {
	PG_PGP_RSA = 1, PG_PGP_RSA_E = 2, PG_PGP_RSA_S = 3, PG_PGP_ELGAMAL = 16, PG_PGP_DSA = 17,
	PG_PGP_ECDH = 18, PG_PGP_ECDSA = 19, PG_PGP_EDDSA_LEGACY = 22, PG_PGP_X25519 = 25,
	PG_PGP_X448 = 26, PG_PGP_ED25519 = 27, PG_PGP_ED448 = 28
};

/* The most keys one input may hold. */
#define PG_PGP_MAX_KEYS 4096

/* One key or subkey packet. Views point into the parsed input. */
typedef struct {
	bool secret;                 /* a secret key packet (tags 5 and 7) */
	bool subkey;                 /* tags 7 and 14 */
	unsigned version;            /* 4 or 6 (5: LibrePGP's, only known by its
	                                fingerprint: unsupported) */
	uint32_t created;
	unsigned algo;
	const char *curve;           /* libcrypto's name of an EC or Edwards curve, or NULL */
	unsigned char fpr[32];
	size_t fpr_len;              /* 20 (v4) or 32 (v5, v6) */
	size_t primary;              /* index of its primary key in the ring (itself for one) */
	const uint8_t *pub;          /* the public key material */
	size_t pub_len;
	const uint8_t *sec;          /* secret packets: from the S2K usage octet on */
	size_t sec_len;
	EVP_PKEY *public_key;        /* NULL when unsupported says why */
	const char *unsupported;     /* static text, or NULL */
	char *uid;                   /* primary keys: their first User ID (control
	                                characters replaced by '?'), or NULL */
} pg_pgp_key;

typedef struct {
	pg_pgp_key *keys;
	size_t n, cap;
} pg_pgp_ring;

void pg_pgp_ring_init(pg_pgp_ring *ring);
/* Frees the keys (NULL is fine) and zeroes the ring. */
void pg_pgp_ring_clear(pg_pgp_ring *ring);

/*
 * Reads the packets of data (binary, not armored) into ring, which must
 * be empty. The keys' views point into data, which must outlive the
 * ring. A key whose algorithm or curve we cannot turn into a libcrypto
 * key is kept with public_key NULL and the reason in unsupported; an
 * unknown packet version or algorithm whose length is unknown fails the
 * whole input. On failure why says what and the ring is emptied.
 */
pg_pgp_result pg_pgp_parse(const uint8_t *data, size_t len, pg_pgp_ring *ring, char *why,
                           size_t why_size) PG_MUST_CHECK;

/* The User ID of a key's primary key, or NULL. */
const char *pg_pgp_uid(const pg_pgp_ring *ring, const pg_pgp_key *key);

/* Does the key's secret material need a passphrase? */
bool pg_pgp_protected(const pg_pgp_key *key);

/*
 * GnuPG's keygrip of an RSA key: SHA-1 of the modulus as an unsigned
 * big-endian integer, with a leading zero octet when its top bit is set
 * (libgcrypt's keygrip of an RSA key). False for other algorithms.
 */
bool pg_pgp_keygrip(const pg_pgp_key *key, unsigned char grip[20]) PG_MUST_CHECK;

/* "RSA", "EdDSA", ... for messages. */
const char *pg_pgp_algo_name(unsigned algo);

/* Writes the reason of a failure into why (size bytes; why may be NULL)
 * and returns rv; the readers of both files fail this way. */
pg_pgp_result pg_pgp_fail(char *why, size_t size, pg_pgp_result rv, const char *fmt, ...)
	PG_PRINTF(4, 5);

/* The highest S2K count pg_pgp_unlock accepts by default: the largest
 * that the one-octet coding can express (RFC 9580 §3.7.1.3). */
#define PG_PGP_MAX_S2K_COUNT 65011712ul

/*
 * The private key of a secret key packet: unprotected, or protected with
 * S2K usage 254 (SHA-1 check value) or 255 (two-octet checksum) under an
 * iterated and salted, salted or simple S2K with SHA-1, SHA-2 or SHA-3 and
 * AES in CFB mode, decrypted with pass (may be NULL for an unprotected
 * key). An S2K count above max_count (0: PG_PGP_MAX_S2K_COUNT) is
 * refused as unsupported. The key is checked against the packet's
 * public key. *priv gets a new key (EVP_PKEY_free) on success; why says
 * what failed otherwise. Secrets met on the way are wiped.
 */
pg_pgp_result pg_pgp_unlock(const pg_pgp_key *key, const p11glue_pin *pass,
                            unsigned long max_count, EVP_PKEY **priv, char *why,
                            size_t why_size) PG_MUST_CHECK;

#endif /* PG_OPENPGP_H */
