/*
 * Reading private keys and certificates from files, for `p11glue import`:
 * OpenSSH's openssh-key-v1 private keys (plain or passphrase-protected),
 * PEM and DER in the forms OpenSSL writes (PKCS#8, encrypted PKCS#8,
 * traditional RSA/EC keys, X.509 certificates) and PKCS#12. Parsing only:
 * nothing here talks PKCS#11.
 *
 * The OpenSSH parser is ours (PROTOCOL.key, with bcrypt-pbkdf.c); every
 * other format goes through libcrypto. Keys come out as EVP_PKEY objects.
 *
 * Thread safety: no shared state; one pg_import per thread.
 */
#ifndef PG_IMPORT_H
#define PG_IMPORT_H

#include "common.h"

#include <p11glue/pin.h>

#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include <stdint.h>

/* Why a file with a second private key is refused. */
#define PG_IMPORT_MORE_THAN_ONE "the file holds more than one private key; import one at a time"

typedef enum {
	PG_IMPORT_OK = 0,
	PG_IMPORT_ERR_FORMAT,        /* not a format we read, or malformed */
	PG_IMPORT_ERR_UNSUPPORTED,   /* a key type, cipher or KDF we do not handle */
	PG_IMPORT_ERR_PASSPHRASE,    /* wrong passphrase (or damaged encrypted data) */
	PG_IMPORT_ERR_NO_PASSPHRASE, /* encrypted, and no passphrase was given */
	PG_IMPORT_ERR_NOMEM
} pg_import_result;

/*
 * Asked at most once per file, when (and only when) something encrypted
 * is met. Returns a new passphrase the parser frees, or NULL when there
 * is none (PG_IMPORT_ERR_NO_PASSPHRASE follows).
 */
typedef p11glue_pin *(*pg_import_passphrase_func)(void *data);

typedef struct {
	pg_import_passphrase_func passphrase;   /* may be NULL: no passphrase */
	void *passphrase_data;
	/* Highest bcrypt_pbkdf round count accepted (each round costs about
	 * 5 ms); 0 means PG_IMPORT_DEFAULT_MAX_ROUNDS. */
	unsigned max_kdf_rounds;
	/* Highest password-based encryption cost accepted in PKCS#8 and
	 * PKCS#12 (PBKDF2 and PKCS#12 iterations, scrypt N*r*p); 0 means
	 * PG_IMPORT_DEFAULT_MAX_ITERATIONS. */
	unsigned long max_pbe_cost;
} pg_import_options;

#define PG_IMPORT_DEFAULT_MAX_ROUNDS 100000u
#define PG_IMPORT_DEFAULT_MAX_ITERATIONS 10000000ul

/* What a file held. */
typedef struct pg_import {
	EVP_PKEY *key;               /* the private key, or NULL */
	char *key_label;             /* a name for it from the file (OpenSSH
	                                comment, PKCS#12 friendlyName), or NULL */
	STACK_OF(X509) *certs;       /* certificates in file order, or NULL */
	const char *format;          /* what was read, for messages */
	char error[200];             /* why, after a failure */
	/* Internal: the passphrase once asked for. */
	p11glue_pin *pass;
	bool asked;
} pg_import;

void pg_import_init(pg_import *imp);
/* Frees everything imp holds (keys with their clearing free). */
void pg_import_clear(pg_import *imp);

/*
 * Reads one file's contents. On success imp holds at most one private key
 * and any number of certificates (at least one of the two); on failure
 * imp->error says why. data must stay valid during the call only.
 */
pg_import_result pg_import_parse(const uint8_t *data, size_t len, const pg_import_options *opts,
                                 pg_import *imp) PG_MUST_CHECK;

/*
 * The binary openssh-key-v1 structure (the base64 inside "-----BEGIN
 * OPENSSH PRIVATE KEY-----"), import-openssh.c. Sets imp->key and
 * imp->key_label (the comment, when not empty).
 */
pg_import_result pg_import_openssh(const uint8_t *blob, size_t len, const pg_import_options *opts,
                                   pg_import *imp) PG_MUST_CHECK;

/* PKCS#12 (DER), import-pkcs12.c: keys, certificates, friendlyName. */
pg_import_result pg_import_pkcs12(PKCS12 *p12, const pg_import_options *opts, pg_import *imp)
	PG_MUST_CHECK;

/*
 * Refuses a password-based encryption algorithm (PKCS#5 PBES1/PBES2,
 * PKCS#12 PBE) whose cost exceeds the limit: a file must not keep the
 * tool busy for hours. Unknown algorithms pass (libcrypto refuses them).
 */
pg_import_result pg_import_check_pbe(pg_import *imp, const pg_import_options *opts,
                                     const X509_ALGOR *alg) PG_MUST_CHECK;

/* Adds a private key / certificate to imp (taking it; NULL is an error). */
pg_import_result pg_import_take_key(pg_import *imp, EVP_PKEY *key, const char *what) PG_MUST_CHECK;
pg_import_result pg_import_take_cert(pg_import *imp, X509 *cert) PG_MUST_CHECK;

/* The certificate of imp that belongs to its key (lent from imp), or
 * NULL. */
X509 *pg_import_leaf(const pg_import *imp);

/* The passphrase, asked for on first use; NULL when none. */
const p11glue_pin *pg_import_passphrase(pg_import *imp, const pg_import_options *opts);

/* The passphrase as a C string for libcrypto, with its length (NULL:
 * none); lent from imp. */
const char *pg_import_pass_text(pg_import *imp, const pg_import_options *opts, int *len);

/* Sets imp->error (printf format) and returns result. */
pg_import_result pg_import_fail(pg_import *imp, pg_import_result result, const char *fmt, ...)
	PG_PRINTF(3, 4);

/* ---------------------------------------------------------------------------
 * OpenSSH's public key encoding (RFC 4253 §6.6, RFC 5656, RFC 8709),
 * sshkey.c.
 */

/*
 * Appends the public key blob of key (ssh-rsa, ecdsa-sha2-nistp256/384/
 * 521, ssh-ed25519) to out and lends its type name in *type_name. False
 * for key types OpenSSH has no name for (Ed448, other curves).
 */
bool pg_ssh_public_blob(EVP_PKEY *key, pg_buf *out, const char **type_name) PG_MUST_CHECK;

/* "TYPE BASE64 COMMENT" (no newline; comment may be NULL); free with
 * free(). NULL as pg_ssh_public_blob, or out of memory. */
char *pg_ssh_public_line(EVP_PKEY *key, const char *comment);

/* The uncompressed point (0x04 | x | y) of an EC key into buf. */
bool pg_ec_uncompressed_point(EVP_PKEY *key, uint8_t *buf, size_t cap, size_t *len) PG_MUST_CHECK;

/* Appends an SSH string (uint32 length, bytes) / mpint (RFC 4251 §5). */
void pg_ssh_put_string(pg_buf *out, const void *data, size_t len);
void pg_ssh_put_mpint(pg_buf *out, const uint8_t *be, size_t len);

#endif /* PG_IMPORT_H */
