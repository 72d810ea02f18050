/*
 * Helpers for the mech layer tests (test-crypto*.c): a token with a
 * logged-in R/W session per case, keys made through the module or
 * imported from libcrypto, and one-call sign/verify/encrypt/decrypt.
 */
#ifndef PG_CRYPTO_TEST_H
#define PG_CRYPTO_TEST_H

#include "common.h"
#include "store-test.h"

#include <openssl/evp.h>

/* The session of the current case (made by ct_setup). */
extern CK_SESSION_HANDLE ct_session;
extern CK_SLOT_ID ct_slot;

/* Fixture: C_Initialize (with wrap-decrypt=allow), a fresh token, a
 * logged-in R/W session; and back. */
void ct_setup(void);
void ct_teardown(void);

/* Decodes hex (spaces ignored) into out; returns the length. */
size_t ct_hex(const char *hex, unsigned char *out, size_t cap);

/* A session secret key by value with every usage allowed (and extra attributes). */
CK_OBJECT_HANDLE ct_secret(CK_KEY_TYPE type, const void *value, size_t len,
                           const CK_ATTRIBUTE *extra, CK_ULONG n_extra);
#define ct_aes(value, len) ct_secret(CKK_AES, value, len, NULL, 0)

/* Imports a libcrypto key (its private or public half) with every usage allowed. */
CK_OBJECT_HANDLE ct_import(EVP_PKEY *pkey, bool priv, const CK_ATTRIBUTE *extra, CK_ULONG n_extra);

/* Generates a session key pair through the module; curve: DER of CKA_EC_PARAMS or NULL. */
void ct_keypair(CK_MECHANISM_TYPE mech, CK_ULONG bits, const void *params, size_t params_len,
                CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv);

/* The public key of an object (CKA_PUBLIC_KEY_INFO) as a libcrypto key. */
EVP_PKEY *ct_public(CK_OBJECT_HANDLE key);

/* A test RSA key made once per process by libcrypto (2048 bits). */
EVP_PKEY *ct_rsa2048(void);
/* A fresh libcrypto key: "P-256", "ED25519" ... */
EVP_PKEY *ct_pkey(const char *type);

/* Reads an attribute into buf; returns its length (asserts success). */
CK_ULONG ct_attr(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type, void *buf, CK_ULONG cap);
CK_ULONG ct_attr_ulong(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type);
bool ct_attr_bool(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type);

/* Single-part operations through the module; out holds *out_len bytes. */
CK_RV ct_sign(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
              unsigned char *out, CK_ULONG *out_len);
CK_RV ct_verify(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                const unsigned char *sig, CK_ULONG sig_len);
CK_RV ct_encrypt(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                 unsigned char *out, CK_ULONG *out_len);
CK_RV ct_decrypt(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                 unsigned char *out, CK_ULONG *out_len);
CK_RV ct_digest(CK_MECHANISM_TYPE mech, const void *data, size_t len, unsigned char *out,
                CK_ULONG *out_len);

/* The DER of CKA_EC_PARAMS for the curves (OIDs). */
extern const unsigned char ct_p256[10], ct_p384[7], ct_p521[7], ct_ed25519[5], ct_ed448[5];

#endif /* PG_CRYPTO_TEST_H */
