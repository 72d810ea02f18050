/*
 * p11glue-store: internals shared by the files of the mech layer
 * (crypto-*.c) and their tests (never installed).
 *
 *   crypto-mechs.c    hashes, ciphers, the mechanism table, C_GetMechanismInfo,
 *                     RSA mechanism parameters
 *   crypto-key.c      parsed keys (pg_key): from attributes, pools of ready contexts
 *   crypto-ec.c       curves, CKA_EC_PARAMS / CKA_EC_POINT, ECDSA r||s
 *   crypto-export.c   attributes from libcrypto keys, PKCS#8, new keys' values
 *   crypto-sign.c     the sign/verify engine (RSA, ECDSA, EdDSA, HMAC, CMAC)
 *   crypto-cipher.c   the encrypt/decrypt engine (AES modes, key wraps, RSA)
 *   crypto-aes.c      AES key wrap (KW, KW with PKCS#7 padding, KWP) and GCM
 *   crypto-op.c       what every entry point shares: sessions, key checks, the
 *                     key cache on objects
 *   entry points (declared in mech.h): crypto-signop.c (C_Sign*, C_Verify*,
 *   recovery), crypto-cryptop.c (C_Encrypt*, C_Decrypt*), crypto-digest.c
 *   (C_Digest*, dual-function calls, random), crypto-keygen.c, crypto-wrap.c,
 *   crypto-derive.c (ECDH), crypto-message.c (3.0 message-based calls)
 *
 * Engines work on a pg_key and caller buffers and know nothing of
 * sessions; entry points add the specification's argument and state
 * rules around them. Every engine function returns the CKR_ code the
 * entry point passes on.
 */
#ifndef PG_STORE_CRYPTO_H
#define PG_STORE_CRYPTO_H

/* Only the non-deprecated libcrypto 3 interfaces. */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include "store.h"

#include <openssl/evp.h>

#include <stdatomic.h>

/*
 * Key types named by OID for EVP_PKEY_CTX_new_from_name: by its short
 * name ("RSA", "EC") libcrypto hands the request to a default ENGINE when
 * the host program set one (openssl -engine pkcs11, curl --engine), whose
 * legacy methods cannot build keys from parameters; by OID it goes to the
 * providers.
 */
#define PG_OID_RSA "1.2.840.113549.1.1.1"
#define PG_OID_EC "1.2.840.10045.2.1"

/* ---------------------------------------------------------------------------
 * Hashes (crypto-mechs.c). Fetched once per process, never freed.
 */
typedef enum {
	PG_HASH_NONE = 0,
	PG_HASH_SHA1,
	PG_HASH_SHA224,
	PG_HASH_SHA256,
	PG_HASH_SHA384,
	PG_HASH_SHA512,
	PG_HASH_SHA3_224,
	PG_HASH_SHA3_256,
	PG_HASH_SHA3_384,
	PG_HASH_SHA3_512,
	PG_HASH_COUNT
} pg_hash;

/* The fetched digest (NULL for PG_HASH_NONE or when unavailable). */
const EVP_MD *pg_hash_md(pg_hash hash);
const char *pg_hash_name(pg_hash hash);
size_t pg_hash_len(pg_hash hash);
/* CKM_SHA256 -> PG_HASH_SHA256 ...; PG_HASH_NONE when not a digest. */
pg_hash pg_hash_from_mech(CK_MECHANISM_TYPE type);
/* CKG_MGF1_SHA256 -> PG_HASH_SHA256 ...; PG_HASH_NONE when unknown. */
pg_hash pg_hash_from_mgf(CK_RSA_PKCS_MGF_TYPE mgf);
/* CKD_SHA256_KDF -> PG_HASH_SHA256 ...; PG_HASH_NONE for CKD_NULL or unknown. */
pg_hash pg_hash_from_kdf(CK_EC_KDF_TYPE kdf);

/* AES in a mode, for a key of 16, 24 or 32 bytes; NULL otherwise. */
typedef enum {
	PG_AES_ECB, PG_AES_CBC, PG_AES_CTR, PG_AES_GCM, PG_AES_WRAP, PG_AES_WRAP_PAD, PG_AES_MODES
} pg_aes_mode;
const EVP_CIPHER *pg_aes_cipher(pg_aes_mode mode, size_t key_len);
/* The fetched HMAC and CMAC implementations. */
EVP_MAC *pg_mac_hmac(void);
EVP_MAC *pg_mac_cmac(void);

/* ---------------------------------------------------------------------------
 * The mechanism table (crypto-mechs.c).
 */
typedef enum {
	PG_KIND_DIGEST,
	PG_KIND_RSA_PKCS,      /* PKCS#1 v1.5: sign (raw or hashed), encrypt, wrap */
	PG_KIND_RSA_PSS,
	PG_KIND_RSA_OAEP,
	PG_KIND_RSA_X509,      /* raw RSA */
	PG_KIND_ECDSA,
	PG_KIND_EDDSA,
	PG_KIND_HMAC,
	PG_KIND_CMAC,
	PG_KIND_AES_ECB,
	PG_KIND_AES_CBC,
	PG_KIND_AES_CBC_PAD,
	PG_KIND_AES_CTR,
	PG_KIND_AES_GCM,
	PG_KIND_AES_KW,        /* RFC 3394 */
	PG_KIND_AES_KW_PAD,    /* PKCS#7 padding, then RFC 3394 */
	PG_KIND_AES_KWP,       /* RFC 5649 */
	PG_KIND_ECDH,
	PG_KIND_GEN_RSA,
	PG_KIND_GEN_EC,
	PG_KIND_GEN_EDWARDS,
	PG_KIND_GEN_AES,
	PG_KIND_GEN_SECRET
} pg_mech_kind;

/* What the mechanism table says about one mechanism. */
typedef struct {
	CK_MECHANISM_TYPE type;
	pg_mech_kind kind;
	pg_hash hash;          /* the hash it applies to the data, or PG_HASH_NONE */
	CK_KEY_TYPE key_type;  /* key type it works with (keygen: it makes) */
	CK_ULONG min_size;     /* CK_MECHANISM_INFO units: bits (RSA, EC, generic */
	CK_ULONG max_size;     /*   key generation) or bytes (AES, HMAC keys) */
	CK_FLAGS flags;
	bool general;          /* *_GENERAL MAC: output length from the parameter */
} pg_mech;

/* The table entry of a mechanism the store offers; NULL otherwise. */
const pg_mech *pg_mech_find(CK_MECHANISM_TYPE type);
/* Whether a key of this type may be used with the mechanism. */
bool pg_mech_key_type_ok(const pg_mech *mech, CK_KEY_TYPE key_type);

/* ---------------------------------------------------------------------------
 * Curves (crypto-ec.c).
 */
typedef struct {
	const char *name;             /* libcrypto group or key type name */
	CK_KEY_TYPE key_type;         /* CKK_EC or CKK_EC_EDWARDS */
	CK_ULONG bits;                /* field size in bits (mechanism info units) */
	size_t scalar_len;            /* ECDSA: bytes of r and s; EdDSA: key length */
	size_t sig_len;               /* signature length in bytes */
	const unsigned char *oid;     /* DER of the OBJECT IDENTIFIER, tag included */
	size_t oid_len;
} pg_curve;

/*
 * The curve named by a CKA_EC_PARAMS value: DER of an OBJECT IDENTIFIER
 * or of a PrintableString (or UTF8String) curve name. NULL when the value
 * is malformed or the curve is not supported.
 */
const pg_curve *pg_curve_from_params(const void *der, size_t len);
/* A curve by libcrypto or usual name ("prime256v1", "P-256", "ED25519"); NULL if none. */
const pg_curve *pg_curve_by_name(const char *name);

/*
 * Decodes a CKA_EC_POINT value (or ECDH public data) for a curve: the DER
 * OCTET STRING the specification prescribes, or the bare point. Returns a
 * view into `der` and its length; false when neither form fits.
 */
bool pg_ec_point_decode(const pg_curve *curve, const unsigned char *der, size_t len,
                        const unsigned char **point, size_t *point_len);
/* DER OCTET STRING of a point; free with free(). NULL when out of memory. */
unsigned char *pg_ec_point_encode(const unsigned char *point, size_t len, size_t *der_len);

/* A public key of a curve from a (bare) encoded point; NULL when invalid. */
EVP_PKEY *pg_ec_public_key(const pg_curve *curve, const unsigned char *point, size_t len);

/* ECDSA signature format conversion: DER SEQUENCE <-> r||s (2 * scalar_len). */
bool pg_ecdsa_der_to_rs(const unsigned char *der, size_t der_len, size_t scalar_len,
                        unsigned char *rs);
unsigned char *pg_ecdsa_rs_to_der(const unsigned char *rs, size_t scalar_len, size_t *der_len);

/* ---------------------------------------------------------------------------
 * Parsed keys (crypto-key.c). Reference counted; what pg_object.key holds.
 * Immutable once made, except for the context pools (guarded by lock), so
 * several threads use one key at the same time.
 */
#define PG_KEY_POOL 16

/* What a pooled context is. */
typedef enum {
	PG_CTX_PKEY,                   /* EVP_PKEY_CTX, set up for one operation */
	PG_CTX_MAC                     /* EVP_MAC_CTX holding the key */
} pg_ctx_type;

/* Identifies how a pooled context was set up. */
typedef struct {
	pg_ctx_type type;
	int op;                        /* pg_op_kind it was made for */
	CK_MECHANISM_TYPE mech;
	pg_hash hash, mgf;
	CK_ULONG salt;
} pg_profile;

typedef struct {
	pg_profile profile;
	void *ctx;
} pg_pool_entry;

typedef struct pg_key {
	atomic_uint refs;
	CK_OBJECT_CLASS cls;
	CK_KEY_TYPE type;
	CK_ULONG size;                 /* bits (RSA, EC) or bytes (secret keys) */
	EVP_PKEY *pkey;                /* asymmetric keys */
	const pg_curve *curve;         /* EC and Edwards keys */
	unsigned char *secret;         /* secret keys: CKA_VALUE */
	size_t secret_len;
	pthread_mutex_t lock;          /* guards what follows */
	EVP_MD_CTX *eddsa[2];          /* EdDSA templates: sign, verify */
	pg_pool_entry pool[PG_KEY_POOL];
	unsigned n_pool;
} pg_key;

/*
 * A key from attribute values (an object's, or a template's): class,
 * key type and the values for that type. CKR_KEY_TYPE_INCONSISTENT for
 * types the store cannot use, CKR_CURVE_NOT_SUPPORTED for other curves,
 * CKR_ATTRIBUTE_VALUE_INVALID for values libcrypto rejects.
 */
CK_RV pg_key_from_attrs(const CK_ATTRIBUTE *attrs, CK_ULONG n, pg_key **key) PG_MUST_CHECK;
/* Wraps a libcrypto key (taken) or secret bytes (copied) in a pg_key. */
pg_key *pg_key_new_pkey(EVP_PKEY *pkey, CK_OBJECT_CLASS cls, CK_KEY_TYPE type,
                        const pg_curve *curve);
pg_key *pg_key_new_secret(CK_KEY_TYPE type, const void *value, size_t len);
pg_key *pg_key_ref(pg_key *key);
void pg_key_unref(pg_key *key);

/* A ready context of the given profile from the key's pool, or NULL. */
void *pg_key_pool_take(pg_key *key, const pg_profile *profile);
/* Gives a context back (freed when the pool is full). */
void pg_key_pool_put(pg_key *key, const pg_profile *profile, void *ctx);
/* A fresh EdDSA context (sign or verify) copied from the key's template. */
EVP_MD_CTX *pg_key_eddsa_ctx(pg_key *key, bool verify);

/* Finds attribute `type` in an array; NULL when absent. */
const CK_ATTRIBUTE *pg_tmpl_find(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type);
/* Reads a CK_BBOOL / CK_ULONG; false when absent or of the wrong size. */
bool pg_tmpl_bool(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type, bool *value);
bool pg_tmpl_ulong(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type,
                   CK_ULONG *value);

/* ---------------------------------------------------------------------------
 * Attributes from libcrypto keys (crypto-export.c).
 */

/*
 * Adds the attributes a key pair generation (or an unwrap) contributes:
 * public: CKA_MODULUS, CKA_PUBLIC_EXPONENT (RSA) or CKA_EC_POINT (EC,
 * Edwards), CKA_PUBLIC_KEY_INFO; private: the private values, CKA_EC_PARAMS
 * and CKA_PUBLIC_KEY_INFO. CKR_HOST_MEMORY or CKR_FUNCTION_FAILED.
 */
CK_RV pg_export_public(EVP_PKEY *pkey, const pg_curve *curve, pg_attrs *out) PG_MUST_CHECK;
CK_RV pg_export_private(EVP_PKEY *pkey, const pg_curve *curve, pg_attrs *out) PG_MUST_CHECK;
/*
 * An RSA key's attributes and libcrypto's names for them, in the order
 * of PKCS#1's RSAPrivateKey: n, e, d, then the CRT values (p, q, dP,
 * dQ, qInv), which a key may lack all together.
 */
typedef struct {
	CK_ATTRIBUTE_TYPE type;
	const char *name;
} pg_rsa_part;
#define PG_RSA_PARTS 8
extern const pg_rsa_part pg_rsa_parts[PG_RSA_PARTS];
/* The key type and curve of a libcrypto key; false when not supported. */
bool pg_export_key_type(EVP_PKEY *pkey, CK_KEY_TYPE *type, const pg_curve **curve);
/*
 * The attributes every new key gets from the mech layer: class, key
 * type, CKA_LOCAL and CKA_KEY_GEN_MECHANISM; mech is the generating
 * mechanism, or CK_UNAVAILABLE_INFORMATION for an unwrapped or derived
 * key (CKA_LOCAL false).
 */
CK_RV pg_gen_common(pg_attrs *gen, CK_OBJECT_CLASS cls, CK_KEY_TYPE type,
                    CK_MECHANISM_TYPE mech) PG_MUST_CHECK;
/*
 * Adds exported values to generated attributes, leaving out the public
 * exponent and the curve where the caller's template gives them (in its
 * own encoding, which is the one kept).
 */
CK_RV pg_gen_add(pg_attrs *gen, const pg_attrs *values, const CK_ATTRIBUTE *tmpl,
                 CK_ULONG n) PG_MUST_CHECK;
/*
 * A caller's template for a key made with base (derived or unwrapped)
 * merged with base's template attribute which (CKA_DERIVE_TEMPLATE,
 * CKA_UNWRAP_TEMPLATE) when it has one: CKR_TEMPLATE_INCONSISTENT when
 * they give different values for an attribute.
 */
CK_RV pg_tmpl_merge(const CK_ATTRIBUTE *tmpl, CK_ULONG n, const pg_attrs *base,
                    CK_ATTRIBUTE_TYPE which, pg_attrs *out) PG_MUST_CHECK;
/* PKCS#8 PrivateKeyInfo of a private key; free with pg_free_secret. */
unsigned char *pg_export_pkcs8(EVP_PKEY *pkey, size_t *len);
/* A private key from PKCS#8 PrivateKeyInfo; NULL when malformed. */
EVP_PKEY *pg_import_pkcs8(const unsigned char *der, size_t len);

/* ---------------------------------------------------------------------------
 * Mechanism parameters (crypto-mechs.c): checked copies.
 */
typedef struct {
	pg_hash hash;          /* PSS/OAEP hashAlg */
	pg_hash mgf;           /* MGF1 hash */
	CK_ULONG salt;         /* PSS sLen */
	unsigned char *label;  /* OAEP source data (owned) */
	size_t label_len;
} pg_rsa_params;

/* CKR_MECHANISM_PARAM_INVALID when the parameter is malformed. */
CK_RV pg_params_pss(const pg_mech *mech, const CK_MECHANISM *m, pg_rsa_params *out);
CK_RV pg_params_oaep(const CK_MECHANISM *m, pg_rsa_params *out);
void pg_rsa_params_clear(pg_rsa_params *p);

/* ---------------------------------------------------------------------------
 * The sign/verify engine (crypto-sign.c). One per operation; not shared.
 */
typedef struct pg_sign pg_sign;

/*
 * Starts signing (kind PG_OP_SIGN or PG_OP_SIGN_RECOVER) or verifying
 * (PG_OP_VERIFY, PG_OP_VERIFY_RECOVER) with a key the caller checked for
 * type and permission. Takes a reference on key. Returns
 * CKR_MECHANISM_PARAM_INVALID, CKR_KEY_SIZE_RANGE or CKR_HOST_MEMORY.
 */
CK_RV pg_sign_new(const pg_mech *mech, const CK_MECHANISM *m, pg_key *key,
                  pg_op_kind kind, pg_sign **out) PG_MUST_CHECK;
void pg_sign_free(pg_sign *sign);
/* The signature (or MAC) length in bytes. */
size_t pg_sign_len(const pg_sign *sign);
/* Whether a part was fed (C_Sign may then no longer be used). */
bool pg_sign_started(const pg_sign *sign);
CK_RV pg_sign_update(pg_sign *sign, const unsigned char *data, size_t len);
/* Signs what was fed; sig holds pg_sign_len bytes; *sig_len gets the length. */
CK_RV pg_sign_final(pg_sign *sign, unsigned char *sig, size_t *sig_len);
/* CKR_OK, CKR_SIGNATURE_INVALID or CKR_SIGNATURE_LEN_RANGE. */
CK_RV pg_verify_final(pg_sign *sign, const unsigned char *sig, size_t sig_len);
/* Single-part forms: the data goes to the signature without a copy. */
CK_RV pg_sign_oneshot(pg_sign *sign, const unsigned char *data, size_t len,
                      unsigned char *sig, size_t *sig_len);
CK_RV pg_verify_oneshot(pg_sign *sign, const unsigned char *data, size_t len,
                        const unsigned char *sig, size_t sig_len);
/* Signing with recovery: data in, signature of pg_sign_len bytes out. */
CK_RV pg_sign_recover(pg_sign *sign, const unsigned char *data, size_t len,
                      unsigned char *sig, size_t *sig_len);
/* Recovers into out (of *out_len bytes); on CKR_BUFFER_TOO_SMALL *out_len is the need. */
CK_RV pg_verify_recover(pg_sign *sign, const unsigned char *sig, size_t sig_len,
                        unsigned char *out, size_t *out_len);

/* ---------------------------------------------------------------------------
 * The encrypt/decrypt engine (crypto-cipher.c). One per operation.
 */
typedef struct pg_cipher pg_cipher;

/* Takes a reference on key. CKR_MECHANISM_PARAM_INVALID, CKR_HOST_MEMORY. */
CK_RV pg_cipher_new(const pg_mech *mech, const CK_MECHANISM *m, pg_key *key, bool encrypt,
                    pg_cipher **out) PG_MUST_CHECK;
void pg_cipher_free(pg_cipher *c);
bool pg_cipher_started(const pg_cipher *c);
/*
 * Output lengths: exact, or an upper bound where only the computation
 * tells (RSA and padded decryption); the functions below then compute
 * into their own buffer and report CKR_BUFFER_TOO_SMALL with the exact
 * length, without changing the operation.
 */
size_t pg_cipher_oneshot_len(const pg_cipher *c, size_t in_len);
size_t pg_cipher_update_len(const pg_cipher *c, size_t in_len);
size_t pg_cipher_final_len(const pg_cipher *c);
/* out holds *out_len bytes; on return *out_len is the length produced (or needed). */
CK_RV pg_cipher_oneshot(pg_cipher *c, const unsigned char *in, size_t in_len,
                        unsigned char *out, size_t *out_len);
CK_RV pg_cipher_update(pg_cipher *c, const unsigned char *in, size_t in_len,
                       unsigned char *out, size_t *out_len);
CK_RV pg_cipher_final(pg_cipher *c, unsigned char *out, size_t *out_len);

/* AES key wrap, one-shot (crypto-aes.c); iv may be NULL for the default. */
CK_RV pg_aes_wrap(pg_mech_kind kind, const pg_key *key, const unsigned char *iv,
                  bool encrypt, const unsigned char *in, size_t in_len,
                  unsigned char *out, size_t *out_len);
size_t pg_aes_wrap_len(pg_mech_kind kind, bool encrypt, size_t in_len);

/* AES-GCM in one piece; tag follows (encrypt) or ends (decrypt) the data. */
typedef struct {
	const unsigned char *iv;
	size_t iv_len;
	const unsigned char *aad;
	size_t aad_len;
	size_t tag_len;
} pg_gcm;
CK_RV pg_gcm_params(const CK_MECHANISM *m, pg_gcm *out);
/* A GCM context with key, IV and AAD set; NULL with *rv set on failure. */
EVP_CIPHER_CTX *pg_gcm_start(const pg_key *key, const pg_gcm *gcm, bool encrypt, CK_RV *rv);
/* Ends GCM: writes the tag (encrypt) or checks it (CKR_ENCRYPTED_DATA_INVALID). */
CK_RV pg_gcm_finish(EVP_CIPHER_CTX *ctx, bool encrypt, unsigned char *tag, size_t tag_len);
/* EVP_CipherUpdate over any length; *out_len gets what was written. */
CK_RV pg_cipher_run(EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t len,
                    unsigned char *out, size_t *out_len);
CK_RV pg_aes_gcm(const pg_key *key, const pg_gcm *gcm, bool encrypt,
                 const unsigned char *in, size_t in_len, unsigned char *out, size_t *out_len);

/* ---------------------------------------------------------------------------
 * Entry point helpers (crypto-op.c).
 */

/* Acquires the session and starts using libcrypto; end with pg_call_end. */
CK_RV pg_call_begin(CK_SESSION_HANDLE handle, pg_session **session) PG_MUST_CHECK;
/* Releases the session; returns rv. libcrypto's errors of the call are dropped. */
CK_RV pg_call_end(pg_session *session, CK_RV rv);
/*
 * Ends a call that made a secret or private key (derive, unwrap): after
 * pg_call_end, and when rv is CKR_OK, stores the key made of the template
 * tmpl and the generated attributes gen as a new object (*key). Clears
 * both. Returns the call's result.
 */
CK_RV pg_call_end_new_key(pg_session *session, CK_RV rv, CK_SESSION_HANDLE handle,
                          pg_attrs *tmpl, pg_attrs *gen, CK_OBJECT_HANDLE *key);
/* Starts/ends a use of libcrypto outside pg_call_begin/end. */
void pg_ossl_enter(void);
void pg_ossl_leave(void);

/* The state of the session's operation of a kind (NULL: none active). */
void *pg_op_state(pg_session *session, pg_op_kind kind);
void pg_op_set(pg_session *session, pg_op_kind kind, void *state, void (*free_state)(void *));
/*
 * PKCS#11 5.2: whether an operation stays active after a call that
 * returned rv with output buffer out (a length query, or a buffer too
 * small); any other outcome ends it.
 */
bool pg_op_keep(CK_RV rv, const void *out);
/*
 * The state of an active operation that may produce output: NULL with
 * *rv CKR_OPERATION_NOT_INITIALIZED when there is none, or
 * CKR_USER_NOT_LOGGED_IN (the operation ended) when its key needs a
 * context-specific login that has not been made.
 */
void *pg_op_ready(pg_session *session, pg_op_kind kind, CK_RV *rv);

/*
 * The skeleton every operation's calls share (crypto-op.c).
 *
 * pg_op_init is C_XxxInit: the session, a NULL mechanism (ends the
 * active operation), an active one (CKR_OPERATION_ACTIVE), the key for
 * the mechanism (pg_op_key), then make builds the state from them (the
 * key is lent: make takes a reference to keep it), freed by free_state.
 * Digesting (PG_OP_DIGEST) takes no key: hkey is ignored, make gets NULL.
 */
typedef CK_RV (*pg_op_make)(const pg_mech *mech, CK_MECHANISM_PTR m, pg_key *key,
                            pg_op_kind kind, void **state);
CK_RV pg_op_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE hkey, pg_op_kind kind,
                 pg_op_make make, void (*free_state)(void *));
/*
 * Starts a call on the active operation of kind: the session, then the
 * arguments (args_ok false: CKR_ARGUMENTS_BAD, which ends the
 * operation), then the state (pg_op_ready). NULL when the call is over
 * already, with *rv its result; else the state, with *s held until
 * pg_op_finish, pg_op_finish_update or pg_call_end.
 */
void *pg_op_enter(CK_SESSION_HANDLE h, pg_op_kind kind, bool args_ok, pg_session **s, CK_RV *rv);
/* Ends a single-part or final call: the operation ends unless 5.2 keeps
 * it (pg_op_keep). Returns rv. */
CK_RV pg_op_finish(pg_session *s, pg_op_kind kind, CK_RV rv, const void *out);
/* Ends an update: any failure but a short buffer ends the operation. */
CK_RV pg_op_finish_update(pg_session *s, pg_op_kind kind, CK_RV rv);

/* What a single-part or final call asks of its operation's output function. */
typedef enum { PG_OUT_ONESHOT, PG_OUT_FINAL, PG_OUT_RECOVER } pg_op_out_how;
/* Makes a call's output from state per 5.2 (*out_len in and out). */
typedef CK_RV (*pg_op_out)(void *state, pg_op_out_how how, CK_BYTE_PTR in, CK_ULONG in_len,
                           CK_BYTE_PTR out, CK_ULONG_PTR out_len);
/*
 * A single-part or final call with output (C_Encrypt, C_Decrypt, C_Sign,
 * C_SignRecover, C_Digest and their final calls, which pass in NULL,
 * in_len 0): pg_op_enter with the arguments checked, out_fn, then
 * pg_op_finish.
 */
CK_RV pg_op_output(CK_SESSION_HANDLE h, pg_op_kind kind, pg_op_out out_fn, pg_op_out_how how,
                   CK_BYTE_PTR in, CK_ULONG in_len, CK_BYTE_PTR out, CK_ULONG_PTR out_len);
/*
 * An update without output (C_DigestUpdate, C_SignUpdate, C_VerifyUpdate):
 * pg_op_enter with the arguments checked, update_fn on the state, then
 * pg_op_finish_update.
 */
CK_RV pg_op_update(CK_SESSION_HANDLE h, pg_op_kind kind,
                   CK_RV (*update_fn)(void *state, const unsigned char *in, size_t in_len),
                   CK_BYTE_PTR in, CK_ULONG in_len);

/* The CKF_ mechanism flag and the CKA_ key attribute an operation needs. */
CK_FLAGS pg_op_flag(pg_op_kind kind);
CK_ATTRIBUTE_TYPE pg_op_usage(pg_op_kind kind);

/* What an operation wants of its key, and the codes for its failures. */
typedef struct {
	CK_FLAGS flag;               /* CKF_SIGN ... */
	CK_ATTRIBUTE_TYPE usage;     /* CKA_SIGN ... */
	CK_RV invalid_rv;            /* no such key (CKR_KEY_HANDLE_INVALID ...) */
	CK_RV type_rv;               /* wrong key type (CKR_KEY_TYPE_INCONSISTENT ...) */
	bool always_auth;            /* out: a private key with CKA_ALWAYS_AUTHENTICATE */
} pg_key_use;

/* The use of an operation kind with the plain CKR_KEY_* codes. */
void pg_key_use_init(pg_key_use *use, pg_op_kind kind);

/*
 * Looks up a key for an operation and checks it in this order: the
 * handle (use->invalid_rv), the mechanism (CKR_MECHANISM_INVALID when
 * unknown or not for use->flag), the key class and type (use->type_rv),
 * the usage attribute (CKR_KEY_FUNCTION_NOT_PERMITTED),
 * CKA_ALLOWED_MECHANISMS (CKR_MECHANISM_INVALID), then the key size
 * (CKR_KEY_SIZE_RANGE). Returns the mechanism and a reference to the
 * parsed key. pg_op_key_checked does the same for an object at hand.
 */
CK_RV pg_op_key(pg_session *session, CK_OBJECT_HANDLE handle, const CK_MECHANISM *m,
                pg_key_use *use, const pg_mech **mech, pg_key **key) PG_MUST_CHECK;
CK_RV pg_op_key_checked(pg_object *obj, const CK_MECHANISM *m, pg_key_use *use,
                        const pg_mech **mech, pg_key **key) PG_MUST_CHECK;

/* The parsed key of an object, made once and cached on it; a reference. */
CK_RV pg_object_key(pg_object *obj, pg_key **key) PG_MUST_CHECK;

/*
 * The update step of an active encryption or decryption (crypto-cryptop.c)
 * with the 5.2 output rules; a failure other than a short buffer ends the
 * operation. CKR_OPERATION_NOT_INITIALIZED when none is active.
 */
CK_RV pg_crypt_update(pg_session *s, pg_op_kind kind, CK_BYTE_PTR in, CK_ULONG in_len,
                      CK_BYTE_PTR out, CK_ULONG_PTR out_len);

/* The digest of a digesting operation (crypto-digest.c). */
typedef struct pg_digest pg_digest;
CK_RV pg_digest_update(pg_digest *d, const void *data, size_t len);

/* Copies attributes (values included) into a pg_attrs; CKR_HOST_MEMORY. */
CK_RV pg_attrs_add_all(pg_attrs *dst, const CK_ATTRIBUTE *src, CK_ULONG n) PG_MUST_CHECK;

#endif /* PG_STORE_CRYPTO_H */
