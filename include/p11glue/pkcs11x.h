/*
 * p11glue — vendor-defined PKCS#11 constants that trust stores and their
 * consumers use: Mozilla NSS's (trust objects, NSS attributes and
 * mechanisms), the freedesktop/p11-glue "X" vendor's (p11-kit trust
 * module), and the Russian TC26 GOST extensions p11-kit also publishes.
 *
 * Every value is the one Debian's libnss3-dev (nss/pkcs11n.h) and
 * libp11-kit-dev (p11-kit/pkcs11x.h) headers define; tests/header/ checks
 * each of them at compile time. A few p11-kit constants that Debian's
 * header does not carry (trust assertions, CKA_X_CRITICAL, CKA_X_GENERATED,
 * CKA_X_ORIGIN) have the values p11-kit's trust module uses; they are
 * marked below and cannot be checked against an installed header.
 *
 * Vendor values are written as literals so that they work in #if and as
 * switch labels; the comment beside each gives its offset from its base.
 *
 * Thread safety: declarations only.
 */
#ifndef P11GLUE_PKCS11X_H
#define P11GLUE_PKCS11X_H

#include <p11glue/pkcs11.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================== */
/* Mozilla NSS                                                         */
/* ================================================================== */

/*
 * NSS's vendor tag is "NSCP" (0x4E534350); its bases are the tag with the
 * vendor-defined bit set, the same number for every constant family.
 */
#define CRYPTOKI_NSS_VENDOR_DEFINED	1	/* this section is present */
#define NSSCK_VENDOR_NSS		0x4E534350UL

#define CKO_NSS				0xCE534350UL
#define CKK_NSS				0xCE534350UL
#define CKC_NSS				0xCE534350UL
#define CKA_NSS				0xCE534350UL
#define CKM_NSS				0xCE534350UL
#define CKR_NSS				0xCE534350UL
#define CKT_NSS				0xCE534350UL
#define CKT_VENDOR_DEFINED		0x80000000UL

/* Trust values live in attributes of type CK_TRUST (CKA_TRUST_*). */
typedef CK_ULONG CK_TRUST;

/* --- Object classes ------------------------------------------------ */

#define CKO_NSS_CRL			0xCE534351UL	/* CKO_NSS + 1 */
#define CKO_NSS_SMIME			0xCE534352UL	/* + 2 */
#define CKO_NSS_TRUST			0xCE534353UL	/* + 3 */
#define CKO_NSS_BUILTIN_ROOT_LIST	0xCE534354UL	/* + 4 */
#define CKO_NSS_NEWSLOT			0xCE534355UL	/* + 5 */
#define CKO_NSS_DELSLOT			0xCE534356UL	/* + 6 */
#define CKO_NSS_VALIDATION		0xCE534357UL	/* + 7 */

/* CKA_NSS_VALIDATION_TYPE of a CKO_NSS_VALIDATION object. */
#define CKV_NSS_FIPS_140		0xCE534351UL

/* --- Key types ------------------------------------------------------ */

#define CKK_NSS_PKCS8			0xCE534351UL	/* CKK_NSS + 1 */
#define CKK_NSS_JPAKE_ROUND1		0xCE534352UL	/* + 2 */
#define CKK_NSS_JPAKE_ROUND2		0xCE534353UL	/* + 3 */
#define CKK_NSS_CHACHA20		0xCE534354UL	/* + 4 */

/* --- Attributes ----------------------------------------------------- */

#define CKA_NSS_URL			0xCE534351UL	/* CKA_NSS + 1 */
#define CKA_NSS_EMAIL			0xCE534352UL	/* + 2 */
#define CKA_NSS_SMIME_INFO		0xCE534353UL	/* + 3 */
#define CKA_NSS_SMIME_TIMESTAMP		0xCE534354UL	/* + 4 */
#define CKA_NSS_PKCS8_SALT		0xCE534355UL	/* + 5 */
#define CKA_NSS_PASSWORD_CHECK		0xCE534356UL	/* + 6 */
#define CKA_NSS_EXPIRES			0xCE534357UL	/* + 7 */
#define CKA_NSS_KRL			0xCE534358UL	/* + 8 */
#define CKA_NSS_PQG_COUNTER		0xCE534364UL	/* + 20 */
#define CKA_NSS_PQG_SEED		0xCE534365UL	/* + 21 */
#define CKA_NSS_PQG_H			0xCE534366UL	/* + 22 */
#define CKA_NSS_PQG_SEED_BITS		0xCE534367UL	/* + 23 */
#define CKA_NSS_MODULE_SPEC		0xCE534368UL	/* + 24 */
#define CKA_NSS_OVERRIDE_EXTENSIONS	0xCE534369UL	/* + 25 */
#define CKA_NSS_JPAKE_SIGNERID		0xCE53436AUL	/* + 26 */
#define CKA_NSS_JPAKE_PEERID		0xCE53436BUL	/* + 27 */
#define CKA_NSS_JPAKE_GX1		0xCE53436CUL	/* + 28 */
#define CKA_NSS_JPAKE_GX2		0xCE53436DUL	/* + 29 */
#define CKA_NSS_JPAKE_GX3		0xCE53436EUL	/* + 30 */
#define CKA_NSS_JPAKE_GX4		0xCE53436FUL	/* + 31 */
#define CKA_NSS_JPAKE_X2		0xCE534370UL	/* + 32 */
#define CKA_NSS_JPAKE_X2S		0xCE534371UL	/* + 33 */
#define CKA_NSS_MOZILLA_CA_POLICY	0xCE534372UL	/* + 34, CK_BBOOL */
#define CKA_NSS_SERVER_DISTRUST_AFTER	0xCE534373UL	/* + 35, UTCTime */
#define CKA_NSS_EMAIL_DISTRUST_AFTER	0xCE534374UL	/* + 36, UTCTime */
/*
 * NSS gives its validation-object attributes numbers from + 36 on, so
 * CKA_NSS_VALIDATION_TYPE has the same value as
 * CKA_NSS_EMAIL_DISTRUST_AFTER; the object class tells them apart.
 */
#define CKA_NSS_VALIDATION_TYPE		0xCE534374UL	/* + 36 */
#define CKA_NSS_VALIDATION_VERSION	0xCE534375UL	/* + 37 */
#define CKA_NSS_VALIDATION_LEVEL	0xCE534376UL	/* + 38 */
#define CKA_NSS_VALIDATION_MODULE_ID	0xCE534377UL	/* + 39 */

/* Attributes NSS's own databases keep outside its vendor base. */
#define CKA_NSS_DB			0xD5A0DB00UL
#define CKA_NSS_TRUST			0x80000001UL

/* --- Trust objects (class CKO_NSS_TRUST) ---------------------------- */

/* Base of the trust attributes: the NSS tag with 0x2000 added. */
#define CKA_TRUST			0xCE536350UL

/* Key usages, each a CK_TRUST (CKA_TRUST + 1 .. + 7) */
#define CKA_TRUST_DIGITAL_SIGNATURE	0xCE536351UL
#define CKA_TRUST_NON_REPUDIATION	0xCE536352UL
#define CKA_TRUST_KEY_ENCIPHERMENT	0xCE536353UL
#define CKA_TRUST_DATA_ENCIPHERMENT	0xCE536354UL
#define CKA_TRUST_KEY_AGREEMENT		0xCE536355UL
#define CKA_TRUST_KEY_CERT_SIGN		0xCE536356UL
#define CKA_TRUST_CRL_SIGN		0xCE536357UL

/* Extended key usages, each a CK_TRUST (CKA_TRUST + 8 .. + 15) */
#define CKA_TRUST_SERVER_AUTH		0xCE536358UL
#define CKA_TRUST_CLIENT_AUTH		0xCE536359UL
#define CKA_TRUST_CODE_SIGNING		0xCE53635AUL
#define CKA_TRUST_EMAIL_PROTECTION	0xCE53635BUL
#define CKA_TRUST_IPSEC_END_SYSTEM	0xCE53635CUL
#define CKA_TRUST_IPSEC_TUNNEL		0xCE53635DUL
#define CKA_TRUST_IPSEC_USER		0xCE53635EUL
#define CKA_TRUST_TIME_STAMPING		0xCE53635FUL

/* CK_BBOOL: SGC step-up allowed (CKA_TRUST + 16) */
#define CKA_TRUST_STEP_UP_APPROVED	0xCE536360UL

/* Digests of the certificate a trust object is about (+ 100, + 101) */
#define CKA_CERT_SHA1_HASH		0xCE5363B4UL
#define CKA_CERT_MD5_HASH		0xCE5363B5UL

/* CK_TRUST values */
#define CKT_NSS_TRUSTED			0xCE534351UL	/* CKT_NSS + 1 */
#define CKT_NSS_TRUSTED_DELEGATOR	0xCE534352UL	/* + 2, a trust anchor */
#define CKT_NSS_MUST_VERIFY_TRUST	0xCE534353UL	/* + 3 */
#define CKT_NSS_TRUST_UNKNOWN		0xCE534355UL	/* + 5 */
#define CKT_NSS_NOT_TRUSTED		0xCE53435AUL	/* + 10, distrusted */
#define CKT_NSS_VALID_DELEGATOR		0xCE53435BUL	/* + 11 */

/*
 * Deprecated NSS spellings whose names mislead: UNTRUSTED is
 * MUST_VERIFY_TRUST, VALID is NOT_TRUSTED, and MUST_VERIFY (+ 4) is a
 * value of its own that NSS handles as TRUST_UNKNOWN.
 */
#define CKT_NSS_UNTRUSTED		CKT_NSS_MUST_VERIFY_TRUST
#define CKT_NSS_VALID			CKT_NSS_NOT_TRUSTED
#define CKT_NSS_MUST_VERIFY		0xCE534354UL

/* --- Mechanisms ------------------------------------------------------ */

#define CKM_NSS_AES_KEY_WRAP		0xCE534351UL	/* CKM_NSS + 1 */
#define CKM_NSS_AES_KEY_WRAP_PAD	0xCE534352UL	/* + 2 */
#define CKM_NSS_HKDF_SHA1		0xCE534353UL	/* + 3 */
#define CKM_NSS_HKDF_SHA256		0xCE534354UL	/* + 4 */
#define CKM_NSS_HKDF_SHA384		0xCE534355UL	/* + 5 */
#define CKM_NSS_HKDF_SHA512		0xCE534356UL	/* + 6 */
#define CKM_NSS_JPAKE_ROUND1_SHA1	0xCE534357UL	/* + 7 */
#define CKM_NSS_JPAKE_ROUND1_SHA256	0xCE534358UL	/* + 8 */
#define CKM_NSS_JPAKE_ROUND1_SHA384	0xCE534359UL	/* + 9 */
#define CKM_NSS_JPAKE_ROUND1_SHA512	0xCE53435AUL	/* + 10 */
#define CKM_NSS_JPAKE_ROUND2_SHA1	0xCE53435BUL	/* + 11 */
#define CKM_NSS_JPAKE_ROUND2_SHA256	0xCE53435CUL	/* + 12 */
#define CKM_NSS_JPAKE_ROUND2_SHA384	0xCE53435DUL	/* + 13 */
#define CKM_NSS_JPAKE_ROUND2_SHA512	0xCE53435EUL	/* + 14 */
#define CKM_NSS_JPAKE_FINAL_SHA1	0xCE53435FUL	/* + 15 */
#define CKM_NSS_JPAKE_FINAL_SHA256	0xCE534360UL	/* + 16 */
#define CKM_NSS_JPAKE_FINAL_SHA384	0xCE534361UL	/* + 17 */
#define CKM_NSS_JPAKE_FINAL_SHA512	0xCE534362UL	/* + 18 */
#define CKM_NSS_HMAC_CONSTANT_TIME	0xCE534363UL	/* + 19 */
#define CKM_NSS_SSL3_MAC_CONSTANT_TIME	0xCE534364UL	/* + 20 */
#define CKM_NSS_TLS_PRF_GENERAL_SHA256	0xCE534365UL	/* + 21 */
#define CKM_NSS_TLS_MASTER_KEY_DERIVE_SHA256 0xCE534366UL	/* + 22 */
#define CKM_NSS_TLS_KEY_AND_MAC_DERIVE_SHA256 0xCE534367UL	/* + 23 */
#define CKM_NSS_TLS_MASTER_KEY_DERIVE_DH_SHA256 0xCE534368UL	/* + 24 */
#define CKM_NSS_TLS_EXTENDED_MASTER_KEY_DERIVE 0xCE534369UL	/* + 25 */
#define CKM_NSS_TLS_EXTENDED_MASTER_KEY_DERIVE_DH 0xCE53436AUL	/* + 26 */
#define CKM_NSS_CHACHA20_KEY_GEN	0xCE53436BUL	/* + 27 */
#define CKM_NSS_CHACHA20_POLY1305	0xCE53436CUL	/* + 28 */
#define CKM_NSS_PKCS12_PBE_SHA224_HMAC_KEY_GEN 0xCE53436DUL	/* + 29 */
#define CKM_NSS_PKCS12_PBE_SHA256_HMAC_KEY_GEN 0xCE53436EUL	/* + 30 */
#define CKM_NSS_PKCS12_PBE_SHA384_HMAC_KEY_GEN 0xCE53436FUL	/* + 31 */
#define CKM_NSS_PKCS12_PBE_SHA512_HMAC_KEY_GEN 0xCE534370UL	/* + 32 */
#define CKM_NSS_CHACHA20_CTR		0xCE534371UL	/* + 33 */
#define CKM_NSS_IKE_PRF_PLUS_DERIVE	0xCE534372UL	/* + 34 */
#define CKM_NSS_IKE_PRF_DERIVE		0xCE534373UL	/* + 35 */
#define CKM_NSS_IKE1_PRF_DERIVE		0xCE534374UL	/* + 36 */
#define CKM_NSS_IKE1_APP_B_PRF_DERIVE	0xCE534375UL	/* + 37 */
#define CKM_NSS_PUB_FROM_PRIV		0xCE534378UL	/* + 40 */
#define CKM_NSS_SP800_108_COUNTER_KDF_DERIVE_DATA 0xCE53437AUL	/* + 42 */
#define CKM_NSS_SP800_108_FEEDBACK_KDF_DERIVE_DATA 0xCE53437BUL	/* + 43 */
#define CKM_NSS_SP800_108_DOUBLE_PIPELINE_KDF_DERIVE_DATA 0xCE53437CUL /* + 44 */

/* Older NSS mechanisms numbered from the bare vendor bit. */
#define CKM_NSS_PBE_SHA1_DES_CBC	0x80000002UL
#define CKM_NSS_PBE_SHA1_TRIPLE_DES_CBC	0x80000003UL
#define CKM_NSS_PBE_SHA1_40_BIT_RC2_CBC	0x80000004UL
#define CKM_NSS_PBE_SHA1_128_BIT_RC2_CBC 0x80000005UL
#define CKM_NSS_PBE_SHA1_40_BIT_RC4	0x80000006UL
#define CKM_NSS_PBE_SHA1_128_BIT_RC4	0x80000007UL
#define CKM_NSS_PBE_SHA1_FAULTY_3DES_CBC 0x80000008UL
#define CKM_NSS_PBE_SHA1_HMAC_KEY_GEN	0x80000009UL
#define CKM_NSS_PBE_MD5_HMAC_KEY_GEN	0x8000000AUL
#define CKM_NSS_PBE_MD2_HMAC_KEY_GEN	0x8000000BUL
#define CKM_TLS_PRF_GENERAL		0x80000373UL

/* --- Return values ------------------------------------------------ */

#define CKR_NSS_CERTDB_FAILED		0xCE534351UL	/* CKR_NSS + 1 */
#define CKR_NSS_KEYDB_FAILED		0xCE534352UL	/* + 2 */

/* --- NSS FIPS indicators ------------------------------------------ */

/* Status reported by NSS's FIPS indicator interface. */
#define CKS_NSS_UNINITIALIZED		0xFFFFFFFFUL
#define CKS_NSS_FIPS_NOT_OK		0x00000000UL
#define CKS_NSS_FIPS_OK			0x00000001UL

/* What the indicator query looks at. */
#define CKT_NSS_SESSION_CHECK		0x00000001UL
#define CKT_NSS_OBJECT_CHECK		0x00000002UL
#define CKT_NSS_BOTH_CHECK		0x00000003UL
#define CKT_NSS_SESSION_LAST_CHECK	0x00000004UL

/* --- Netscape-era names (NSS keeps them under NSS_PKCS11_2_0_COMPAT) - */

#define CKO_NETSCAPE_CRL		CKO_NSS_CRL
#define CKO_NETSCAPE_SMIME		CKO_NSS_SMIME
#define CKO_NETSCAPE_TRUST		CKO_NSS_TRUST
#define CKO_NETSCAPE_BUILTIN_ROOT_LIST	CKO_NSS_BUILTIN_ROOT_LIST
#define CKO_NETSCAPE_NEWSLOT		CKO_NSS_NEWSLOT
#define CKO_NETSCAPE_DELSLOT		CKO_NSS_DELSLOT
#define CKK_NETSCAPE_PKCS8		CKK_NSS_PKCS8
#define CKA_NETSCAPE_URL		CKA_NSS_URL
#define CKA_NETSCAPE_EMAIL		CKA_NSS_EMAIL
#define CKA_NETSCAPE_SMIME_INFO		CKA_NSS_SMIME_INFO
#define CKA_NETSCAPE_SMIME_TIMESTAMP	CKA_NSS_SMIME_TIMESTAMP
#define CKA_NETSCAPE_PKCS8_SALT		CKA_NSS_PKCS8_SALT
#define CKA_NETSCAPE_PASSWORD_CHECK	CKA_NSS_PASSWORD_CHECK
#define CKA_NETSCAPE_EXPIRES		CKA_NSS_EXPIRES
#define CKA_NETSCAPE_KRL		CKA_NSS_KRL
#define CKA_NETSCAPE_PQG_COUNTER	CKA_NSS_PQG_COUNTER
#define CKA_NETSCAPE_PQG_SEED		CKA_NSS_PQG_SEED
#define CKA_NETSCAPE_PQG_H		CKA_NSS_PQG_H
#define CKA_NETSCAPE_PQG_SEED_BITS	CKA_NSS_PQG_SEED_BITS
#define CKA_NETSCAPE_MODULE_SPEC	CKA_NSS_MODULE_SPEC
#define CKA_NETSCAPE_DB			CKA_NSS_DB
#define CKA_NETSCAPE_TRUST		CKA_NSS_TRUST
#define CKM_NETSCAPE_AES_KEY_WRAP	CKM_NSS_AES_KEY_WRAP
#define CKM_NETSCAPE_AES_KEY_WRAP_PAD	CKM_NSS_AES_KEY_WRAP_PAD
#define CKM_NETSCAPE_PBE_SHA1_DES_CBC	CKM_NSS_PBE_SHA1_DES_CBC
#define CKM_NETSCAPE_PBE_SHA1_TRIPLE_DES_CBC CKM_NSS_PBE_SHA1_TRIPLE_DES_CBC
#define CKM_NETSCAPE_PBE_SHA1_40_BIT_RC2_CBC CKM_NSS_PBE_SHA1_40_BIT_RC2_CBC
#define CKM_NETSCAPE_PBE_SHA1_128_BIT_RC2_CBC CKM_NSS_PBE_SHA1_128_BIT_RC2_CBC
#define CKM_NETSCAPE_PBE_SHA1_40_BIT_RC4 CKM_NSS_PBE_SHA1_40_BIT_RC4
#define CKM_NETSCAPE_PBE_SHA1_128_BIT_RC4 CKM_NSS_PBE_SHA1_128_BIT_RC4
#define CKM_NETSCAPE_PBE_SHA1_FAULTY_3DES_CBC CKM_NSS_PBE_SHA1_FAULTY_3DES_CBC
#define CKM_NETSCAPE_PBE_SHA1_HMAC_KEY_GEN CKM_NSS_PBE_SHA1_HMAC_KEY_GEN
#define CKM_NETSCAPE_PBE_MD5_HMAC_KEY_GEN CKM_NSS_PBE_MD5_HMAC_KEY_GEN
#define CKM_NETSCAPE_PBE_MD2_HMAC_KEY_GEN CKM_NSS_PBE_MD2_HMAC_KEY_GEN
#define CKR_NETSCAPE_CERTDB_FAILED	CKR_NSS_CERTDB_FAILED
#define CKR_NETSCAPE_KEYDB_FAILED	CKR_NSS_KEYDB_FAILED
#define CKT_NETSCAPE_TRUSTED		CKT_NSS_TRUSTED
#define CKT_NETSCAPE_TRUSTED_DELEGATOR	CKT_NSS_TRUSTED_DELEGATOR
#define CKT_NETSCAPE_UNTRUSTED		CKT_NSS_UNTRUSTED
#define CKT_NETSCAPE_MUST_VERIFY	CKT_NSS_MUST_VERIFY
#define CKT_NETSCAPE_TRUST_UNKNOWN	CKT_NSS_TRUST_UNKNOWN
#define CKT_NETSCAPE_VALID		CKT_NSS_VALID
#define CKT_NETSCAPE_VALID_DELEGATOR	CKT_NSS_VALID_DELEGATOR

/* ================================================================== */
/* p11-glue / p11-kit ("X" vendor, tag "XDG")                          */
/* ================================================================== */

#define CRYPTOKI_X_VENDOR_DEFINED	1	/* this section is present */

/* The vendor bit with "XDG" (0x58444700): one base for CKA_ and CKO_. */
#define CKA_X_VENDOR			0xD8444700UL
#define CKO_X_VENDOR			0xD8444700UL

/* CK_BBOOL on a certificate: explicitly distrusted (blocklist). */
#define CKA_X_DISTRUSTED		0xD8444764UL	/* CKA_X_VENDOR + 100 */

/*
 * A certificate extension stapled to a certificate (CKA_OBJECT_ID,
 * CKA_VALUE, CKA_PUBLIC_KEY_INFO identify and carry it).
 */
#define CKO_X_CERTIFICATE_EXTENSION	0xD84447C8UL	/* CKO_X_VENDOR + 200 */

/*
 * Not in Debian's installed pkcs11x.h: p11-kit keeps these in its own
 * sources (common/pkcs11i.h, trust/). Values from the p11-kit trust
 * module; they are not checked by tests/header.
 */

/* Trust assertions: retired by p11-kit, still read by older consumers. */
#define CKO_X_TRUST_ASSERTION		0xD8444764UL	/* CKO_X_VENDOR + 100 */
#define CKA_X_ASSERTION_TYPE		0xD8444701UL	/* CKA_X_VENDOR + 1 */
#define CKA_X_CERTIFICATE_VALUE		0xD8444702UL	/* + 2, DER */
#define CKA_X_PURPOSE			0xD8444703UL	/* + 3, EKU OID text */
#define CKA_X_PEER			0xD8444704UL	/* + 4, pinned peer */

typedef CK_ULONG CK_X_ASSERTION_TYPE;
#define CKT_X_DISTRUSTED_CERTIFICATE	1UL
#define CKT_X_PINNED_CERTIFICATE	2UL
#define CKT_X_ANCHORED_CERTIFICATE	3UL

/* CK_BBOOL on a CKO_X_CERTIFICATE_EXTENSION: the extension is critical. */
#define CKA_X_CRITICAL			0xD8444765UL	/* CKA_X_VENDOR + 101 */

/* Set by p11-kit's trust module on every object it builds. */
#define CKA_X_GENERATED			0xD8446640UL	/* + 8000, CK_BBOOL */
#define CKA_X_ORIGIN			0xD8446641UL	/* + 8001, file path */

/* An OpenPGP certificate type that p11-kit's pkcs11.h defines. */
#define CKC_OPENPGP			0x80504750UL	/* vendor bit | "PGP" */

/* ================================================================== */
/* TC26 (Russian standards committee) GOST R 34.10/34.11-2012          */
/* ================================================================== */

#define CRYPTOKI_RU_TEAM_TC26_VENDOR_DEFINED 1	/* this section is present */

#define NSSCK_VENDOR_PKCS11_RU_TEAM	0xD4321000UL
#define CK_VENDOR_PKCS11_RU_TEAM_TC26	NSSCK_VENDOR_PKCS11_RU_TEAM

#define CKK_GOSTR3410_512		0xD4321003UL
#define CKK_KUZNECHIK			0xD4321004UL
#define CKK_MAGMA			0xD4321005UL

#define CKP_PKCS5_PBKD2_HMAC_GOSTR3411_2012_512 0xD4321003UL

#define CKM_GOSTR3410_512_KEY_PAIR_GEN	0xD4321005UL
#define CKM_GOSTR3410_512		0xD4321006UL
#define CKM_GOSTR3410_2012_DERIVE	0xD4321007UL
#define CKM_GOSTR3410_WITH_GOSTR3411_2012_256 0xD4321008UL
#define CKM_GOSTR3410_WITH_GOSTR3411_2012_512 0xD4321009UL
#define CKM_GOSTR3410_PUBLIC_KEY_DERIVE	0xD432100AUL
#define CKM_GOSTR3411_2012_256		0xD4321012UL
#define CKM_GOSTR3411_2012_512		0xD4321013UL
#define CKM_GOSTR3411_2012_256_HMAC	0xD4321014UL
#define CKM_GOSTR3411_2012_512_HMAC	0xD4321015UL
#define CKM_TLS_GOST_PRF_2012_256	0xD4321016UL
#define CKM_TLS_GOST_PRF_2012_512	0xD4321017UL
#define CKM_TLS_GOST_MASTER_KEY_DERIVE_2012_256 0xD4321018UL
#define CKM_KDF_4357			0xD4321025UL
#define CKM_KDF_GOSTR3411_2012_256	0xD4321026UL

#ifdef __cplusplus
}
#endif

#endif /* P11GLUE_PKCS11X_H */
