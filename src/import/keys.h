/*
 * Keys between libcrypto and PKCS#11 (keys.c): the key types the store
 * holds, key identifiers, the attributes of key and certificate objects
 * made from libcrypto keys and certificates, and a token object's public
 * key as a libcrypto key.
 */
#ifndef PG_KEYS_H
#define PG_KEYS_H

#include "token.h"

#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>


/* The key types the store holds: RSA, EC P-256/384/521, Ed25519, Ed448. */
typedef struct {
	const char *name;            /* "rsa", "ec:secp256r1", "ed25519" ... */
	CK_KEY_TYPE key_type;
	CK_MECHANISM_TYPE keygen;
	const char *group;           /* libcrypto's curve name; NULL for RSA */
	unsigned bits;
} pg_key_kind;

/* The kind of a libcrypto key; NULL for what the store cannot hold. */
const pg_key_kind *pg_key_kind_of(EVP_PKEY *key);

/*
 * Parses "rsa:2048", "ec:secp384r1", "ed25519" ... into *kind and *bits
 * (RSA modulus size). False for unknown names.
 */
bool pg_key_kind_parse(const char *text, const pg_key_kind **kind, unsigned *bits);

/*
 * A libcrypto key of type ("RSA", "EC") from the parameters in bld:
 * selection EVP_PKEY_PUBLIC_KEY, or EVP_PKEY_KEYPAIR, whose private and
 * public halves must then belong together. NULL when they do not or
 * the parameters are not a key.
 */
EVP_PKEY *pg_key_from_params(const char *type, int selection, OSSL_PARAM_BLD *bld);

/* An RSA public key from the big-endian modulus and exponent; NULL when
 * they are not a key. */
EVP_PKEY *pg_key_rsa_public(const unsigned char *n, size_t n_len, const unsigned char *e,
                            size_t e_len);

/*
 * An RSA key pair from n, e, d and the primes p and q, with qinv the CRT
 * coefficient q^-1 mod p (NULL: computed here); the CRT exponents are
 * computed here, with secure BIGNUMs wiped on every exit. The arguments
 * stay the caller's; any may be NULL, which gives NULL. NULL too when
 * the values are not one RSA key (pg_key_from_params checks the halves).
 */
EVP_PKEY *pg_key_rsa_private(const BIGNUM *n, const BIGNUM *e, const BIGNUM *d, const BIGNUM *p,
                             const BIGNUM *q, const BIGNUM *qinv);

/* An EC key of the named group (OSSL_PKEY_PARAM_GROUP_NAME) from its
 * encoded public point, with the private value d a key pair (d stays
 * the caller's; NULL: a public key). NULL when they are not a key. */
EVP_PKEY *pg_key_ec(const char *group, const unsigned char *point, size_t point_len,
                    const BIGNUM *d);

/* CKA_EC_PARAMS for a curve (DER of its OID) into t. */
void pg_tmpl_add_ec_params(pg_tmpl *t, const char *group);

/*
 * The key's identifier: SHA-1 of the subjectPublicKey bits (RFC 5280
 * §4.2.1.2, method 1), which is also what most certificates carry as
 * their subject key identifier.
 */
bool pg_key_id(EVP_PKEY *key, unsigned char id[20]) PG_MUST_CHECK;

/*
 * Adds the key values of a public and a private key object (class, key
 * type, public and private values, CKA_PUBLIC_KEY_INFO) for key to pub
 * and priv (either may be NULL).
 */
bool pg_key_values(EVP_PKEY *key, pg_tmpl *pub, pg_tmpl *priv) PG_MUST_CHECK;

/*
 * The public key of a token object (public key, private key or
 * certificate) as a libcrypto key; NULL when it cannot be built (*why
 * says why).
 */
EVP_PKEY *pg_keytoken_public_key(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char **why);

/*
 * A certificate object's attributes for cert : class, type,
 * on the token, public, category (token user for leaf, else authority or
 * unspecified), label (may be NULL), ID, subject, issuer, serial number,
 * value and CKA_PUBLIC_KEY_INFO.
 */
void pg_cert_template(pg_tmpl *t, X509 *cert, const char *label, const unsigned char *id,
                      size_t id_len, bool leaf);

/* Creates the certificate object (pg_cert_template, leaf) of a key on
 * kt's token, in kt's session; *obj gets its handle. */
CK_RV pg_cert_create_leaf(pg_keytoken *kt, X509 *cert, const char *label, const unsigned char *id,
                          size_t id_len, CK_OBJECT_HANDLE *obj);

/*
 * The attributes of the public and private key objects an import makes
 * for key: its values (pg_key_values), on the token, label, ID, the
 * subject of its certificate leaf (may be NULL), and the usual usage
 * flags (sign and verify; RSA also encrypt, decrypt, wrap and unwrap;
 * EC derive). On failure pub->failed is set.
 */
void pg_key_templates(pg_tmpl *pub, pg_tmpl *priv, EVP_PKEY *key, const char *label,
                      const unsigned char *id, size_t id_len, X509 *leaf);

/*
 * The attributes every key pair of the store's kinds gets, generated or
 * imported: on the token, label, ID (id may be NULL), and the usual usage
 * flags (sign and verify; RSA also encrypt, decrypt and unwrap, and the
 * public key explicitly not wrap; EC derive). pg_key_templates adds the
 * key values to these.
 */
void pg_key_pair_templates(pg_tmpl *pub, pg_tmpl *priv, const pg_key_kind *kind,
                           const char *label, const unsigned char *id, size_t id_len);
/*
 * Generates a key pair of kind (bits: an RSA modulus size) on the token
 * of kt (a read-write session, logged in) with label and id (NULL: the
 * new public key's pg_key_id; an id an object has already is refused).
 * *pub and *priv get the new objects. Prints problems; returns an exit
 * code (keygen.c).
 */
/*
 * Warns on standard error when a key of this kind on a token keeps
 * OpenSSL's PKCS#11 engine of Debian 12 (libp11 0.4.12) from listing the
 * token's private keys: it gives up at the first key type it does not
 * know (CKK_EC_EDWARDS), so the token's RSA and EC keys go unseen too
 * (keygen.c).
 */
void pg_key_warn_kind(const pg_key_kind *kind);
int pg_key_generate(pg_keytoken *kt, const pg_key_kind *kind, unsigned bits, const char *label,
                    const unsigned char *id, size_t id_len, CK_OBJECT_HANDLE *pub,
                    CK_OBJECT_HANDLE *priv);

/*
 * Writes what imp holds to the token of kt (a read-write session, logged
 * in): the key pair and the certificate that belongs to it under label
 * (NULL: the file's label, else the certificate's common name, else the
 * file name without extension) and id (NULL: the key's pg_key_id), then
 * the other certificates. Warns when the label or ID is taken already.
 * Adds to report (may be NULL) each object made ("public key", "private
 * key", "certificate") and each certificate found on the token already
 * ("skipped certificate", the existing object, with its common name). On
 * a failure what was made is destroyed again and report emptied.
 * Returns an exit code (import-write.c).
 */
struct pg_import;
int pg_import_write(pg_keytoken *kt, struct pg_import *imp, const char *file, const char *label,
                    const unsigned char *id, size_t id_len, pg_report *report);

#endif /* PG_KEYS_H */
