/*
 * SHA-1 (FIPS 180-4 §6.1) and MD5 (RFC 1321), written for the trust
 * module so that it needs no cryptographic library to read certificates.
 * They compute the identifiers PKCS#11 and NSS store with certificates
 * (CKA_CERT_SHA1_HASH, CKA_CERT_MD5_HASH, CKA_CHECK_VALUE, key ids):
 * fingerprints, never security decisions.
 *
 * One-shot functions over a byte string; no state, thread-safe.
 */
#ifndef PG_TRUST_DIGEST_H
#define PG_TRUST_DIGEST_H

#include <stddef.h>

#define PG_SHA1_LEN 20
#define PG_MD5_LEN 16

void pg_sha1(const void *data, size_t len, unsigned char out[static PG_SHA1_LEN]);
void pg_md5(const void *data, size_t len, unsigned char out[static PG_MD5_LEN]);

#endif /* PG_TRUST_DIGEST_H */
