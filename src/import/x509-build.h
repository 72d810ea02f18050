/*
 * Certificates (RFC 5280) and certification requests (RFC 2986) whose
 * signature is made elsewhere, by a PKCS#11 token: libcrypto builds the
 * to-be-signed part, a callback signs the bytes the token's mechanism
 * takes, and the result is assembled here. Nothing here talks PKCS#11
 * (the callback does); the tool's `certify` and `request` commands
 * (cmd-certify.c) and tests/tools/test-x509-build.c use it.
 *
 * Thread safety: no shared state.
 */
#ifndef PG_X509_BUILD_H
#define PG_X509_BUILD_H

#include "common.h"

#include <p11glue/pkcs11.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <time.h>

/*
 * Parses a distinguished name in one of two spellings:
 *   "CN=Alice,O=Example,C=DE"  RFC 4514: the most specific RDN first, so
 *                              the name's sequence is read backwards;
 *   "/C=DE/O=Example/CN=Alice" OpenSSL's -subj form, in sequence order.
 * Attribute types are short names libcrypto knows (CN, O, OU, C, L, ST,
 * emailAddress, DC, UID, serialNumber ...) or dotted OIDs; '+' joins
 * attributes into one RDN; '\' escapes the next character, or two hex
 * digits give a byte (RFC 4514 §2.4). Values are UTF-8. Returns a new
 * name, or NULL with the reason in why.
 */
X509_NAME *pg_x509_name_parse(const char *text, char *why, size_t why_size);

/* A signature algorithm for a key and the token mechanism behind it. */
typedef struct {
	int nid;                     /* the AlgorithmIdentifier's OID */
	const EVP_MD *md;            /* the hash; NULL for EdDSA */
	CK_MECHANISM_TYPE mech;      /* CKM_RSA_PKCS, CKM_ECDSA or CKM_EDDSA */
	bool ed448;                  /* CKM_EDDSA takes CK_EDDSA_PARAMS */
	const char *name;            /* "sha256WithRSAEncryption" ... */
} pg_sigalg;

/*
 * Chooses the algorithm for a public key: RSA PKCS#1 v1.5 (RFC 4055)
 * with SHA-256 by default; ECDSA (RFC 5758) with the hash of the curve's
 * size (SHA-256 for P-256, SHA-384 for P-384, SHA-512 for P-521); Ed25519
 * and Ed448 (RFC 8410), which take no hash. hash ("sha256", "sha384",
 * "sha512", or NULL for the default) overrides the hash. False with the
 * reason in *why for other keys or a hash EdDSA cannot take.
 */
bool pg_sigalg_choose(EVP_PKEY *pub, const char *hash, pg_sigalg *alg, const char **why);

/*
 * Signs in: the bytes alg's mechanism takes (DigestInfo for RSA, the hash
 * for ECDSA, the whole message for EdDSA). Returns the token's signature
 * in a new buffer (*out, free()), as PKCS#11 gives it (ECDSA: r || s).
 */
typedef bool (*pg_sign_func)(void *data, const pg_sigalg *alg, const unsigned char *in,
                             size_t in_len, unsigned char **out, size_t *out_len);

/* What a certificate says. Everything is lent for the call. */
typedef struct {
	X509_NAME *subject;
	X509_NAME *issuer;           /* the subject for a self-signed one */
	EVP_PKEY *pub;               /* the subject's public key */
	EVP_PKEY *issuer_pub;        /* the issuer's; NULL when self-signed */
	/* The issuer's key identifier (authorityKeyIdentifier); NULL for a
	 * self-signed certificate, whose is the subject key identifier. */
	const unsigned char *issuer_key_id;
	size_t issuer_key_id_len;
	time_t not_before;
	unsigned days;               /* validity from not_before, 1 or more */
	bool is_ca;                  /* may sign certificates */
	const char *san;             /* subjectAltName ("DNS:a,email:b"), or NULL */
} pg_cert_spec;

/*
 * Builds the TBSCertificate (RFC 5280 §4.1) for spec: version 3, a random
 * positive 127-bit serial number, extensions basicConstraints (critical),
 * keyUsage (critical; keyCertSign and cRLSign for a CA, else
 * digitalSignature, plus keyEncipherment for RSA), subjectKeyIdentifier
 * (SHA-1 of the public key bits, RFC 5280 §4.2.1.2 method 1),
 * authorityKeyIdentifier and subjectAltName; has sign sign it,
 * assembles the certificate and checks its signature with the issuer's
 * public key. Returns it, or NULL with the reason in why.
 */
X509 *pg_x509_make_cert(const pg_cert_spec *spec, const pg_sigalg *alg, pg_sign_func sign,
                        void *data, char *why, size_t why_size);

/*
 * A PKCS#10 certification request (RFC 2986) for subject and pub, with an
 * extensionRequest attribute holding san when not NULL, signed by sign
 * and checked with pub. Returns it, or NULL with the reason in why.
 */
X509_REQ *pg_x509_make_req(X509_NAME *subject, EVP_PKEY *pub, const char *san,
                           const pg_sigalg *alg, pg_sign_func sign, void *data, char *why,
                           size_t why_size);

/* The key identifier of pub: SHA-1 of its subjectPublicKey bits. */
bool pg_x509_key_id(EVP_PKEY *pub, unsigned char id[20]) PG_MUST_CHECK;

#endif /* PG_X509_BUILD_H */
