/*
 * RSA through the module: key pair generation (2048, 3072, 4096 bits)
 * and the attributes it makes, every signing and encryption mechanism
 * cross-checked against libcrypto in both directions, recovery, wrapping
 * with RSA, and the length and parameter errors.
 */
#include "crypto-test.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/rsa.h>

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

/* A libcrypto context for the same operation, padding and hashes. */
static EVP_PKEY_CTX *ossl_ctx(EVP_PKEY *pkey, int op, int pad, const char *md, const char *mgf,
                              int salt)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);

	pg_assert_not_null(ctx);
	switch (op) {
	case 0: pg_assert(EVP_PKEY_sign_init(ctx) > 0); break;
	case 1: pg_assert(EVP_PKEY_verify_init(ctx) > 0); break;
	case 2: pg_assert(EVP_PKEY_encrypt_init(ctx) > 0); break;
	default: pg_assert(EVP_PKEY_decrypt_init(ctx) > 0); break;
	}
	pg_assert(EVP_PKEY_CTX_set_rsa_padding(ctx, pad) > 0);
	if (pad == RSA_PKCS1_OAEP_PADDING) {
		pg_assert(EVP_PKEY_CTX_set_rsa_oaep_md_name(ctx, md, NULL) > 0);
		pg_assert(EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, mgf, NULL) > 0);
	} else if (md != NULL) {
		pg_assert(EVP_PKEY_CTX_set_signature_md(ctx, EVP_get_digestbyname(md)) > 0);
	}
	if (pad == RSA_PKCS1_PSS_PADDING) {
		pg_assert(EVP_PKEY_CTX_set_rsa_mgf1_md_name(ctx, mgf, NULL) > 0);
		pg_assert(EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, salt) > 0);
	}
	return ctx;
}

static void digest(const char *md, const void *data, size_t len, unsigned char *out,
                   unsigned *out_len)
{
	pg_assert(EVP_Digest(data, len, out, out_len, EVP_get_digestbyname(md), NULL));
}

static const char msg[] = "the quick brown fox jumps over the lazy dog";

/* Signs through the module and verifies with libcrypto, then the other way. */
static void sign_both_ways(CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub, EVP_PKEY *pkey,
                           CK_MECHANISM *m, const char *md, int pad, const char *mgf, int salt,
                           bool hashed)
{
	unsigned char sig[512], h[64];
	unsigned h_len = 0;
	const unsigned char *tbs = (const unsigned char *)msg;
	size_t tbs_len = sizeof(msg) - 1, sig_len = sizeof(sig);
	CK_ULONG len = sizeof(sig);
	EVP_PKEY_CTX *ctx;

	if (!hashed && md != NULL) {
		digest(md, msg, sizeof(msg) - 1, h, &h_len);
		tbs = h;
		tbs_len = h_len;
	}
	ck_assert_rv(ct_sign(m, priv, hashed ? (const unsigned char *)msg : tbs,
	                     hashed ? sizeof(msg) - 1 : tbs_len, sig, &len), CKR_OK);
	pg_assert_int_eq(len, EVP_PKEY_get_size(pkey));
	if (hashed) {
		/* libcrypto's own hash-and-sign. */
		EVP_MD_CTX *mctx = EVP_MD_CTX_new();
		EVP_PKEY_CTX *pctx = NULL;
		pg_assert(EVP_DigestVerifyInit_ex(mctx, &pctx, md, NULL, NULL, pkey, NULL) > 0);
		pg_assert(EVP_PKEY_CTX_set_rsa_padding(pctx, pad) > 0);
		if (pad == RSA_PKCS1_PSS_PADDING) {
			pg_assert(EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, mgf, NULL) > 0);
			pg_assert(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, salt) > 0);
		}
		pg_assert_int_eq(EVP_DigestVerify(mctx, sig, len, (const unsigned char *)msg,
		                                  sizeof(msg) - 1), 1);
		EVP_MD_CTX_free(mctx);
		digest(md, msg, sizeof(msg) - 1, h, &h_len);
		tbs = h;
		tbs_len = h_len;
	} else {
		ctx = ossl_ctx(pkey, 1, pad, pad == RSA_PKCS1_PSS_PADDING ? md : NULL, mgf, salt);
		pg_assert_int_eq(EVP_PKEY_verify(ctx, sig, len, tbs, tbs_len), 1);
		EVP_PKEY_CTX_free(ctx);
	}
	/* libcrypto signs the digest; the module verifies the message. */
	ctx = ossl_ctx(pkey, 0, pad, md, mgf, salt);
	pg_assert(EVP_PKEY_sign(ctx, sig, &sig_len, tbs, tbs_len) > 0);
	EVP_PKEY_CTX_free(ctx);
	if (hashed)
		ck_assert_rv(ct_verify(m, pub, msg, sizeof(msg) - 1, sig, sig_len), CKR_OK);
	else
		ck_assert_rv(ct_verify(m, pub, tbs, tbs_len, sig, sig_len), CKR_OK);
	sig[sig_len / 2] ^= 1;
	ck_assert_rv(ct_verify(m, pub, hashed ? (const void *)msg : (const void *)tbs,
	                       hashed ? sizeof(msg) - 1 : tbs_len, sig, sig_len),
	             CKR_SIGNATURE_INVALID);
}

static void test_sign_mechanisms(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	static const struct {
		CK_MECHANISM_TYPE pkcs, pss, hash;
		CK_RSA_PKCS_MGF_TYPE mgf;
		const char *md;
	} hashes[] = {
		{ CKM_SHA1_RSA_PKCS, CKM_SHA1_RSA_PKCS_PSS, CKM_SHA_1, CKG_MGF1_SHA1, "SHA1" },
		{ CKM_SHA224_RSA_PKCS, CKM_SHA224_RSA_PKCS_PSS, CKM_SHA224, CKG_MGF1_SHA224, "SHA224" },
		{ CKM_SHA256_RSA_PKCS, CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256, "SHA256" },
		{ CKM_SHA384_RSA_PKCS, CKM_SHA384_RSA_PKCS_PSS, CKM_SHA384, CKG_MGF1_SHA384, "SHA384" },
		{ CKM_SHA512_RSA_PKCS, CKM_SHA512_RSA_PKCS_PSS, CKM_SHA512, CKG_MGF1_SHA512, "SHA512" },
		{ CKM_SHA3_256_RSA_PKCS, CKM_SHA3_256_RSA_PKCS_PSS, CKM_SHA3_256, CKG_MGF1_SHA3_256,
		  "SHA3-256" },
		{ CKM_SHA3_512_RSA_PKCS, CKM_SHA3_512_RSA_PKCS_PSS, CKM_SHA3_512, CKG_MGF1_SHA3_512,
		  "SHA3-512" },
	};

	for (size_t i = 0; i < PG_N_ELEMENTS(hashes); i++) {
		CK_MECHANISM m = { hashes[i].pkcs, NULL, 0 };
		CK_RSA_PKCS_PSS_PARAMS pss = { hashes[i].hash, hashes[i].mgf, 20 };
		CK_MECHANISM mp = { hashes[i].pss, &pss, sizeof(pss) };

		sign_both_ways(priv, pub, pkey, &m, hashes[i].md, RSA_PKCS1_PADDING, NULL, 0, true);
		sign_both_ways(priv, pub, pkey, &mp, hashes[i].md, RSA_PKCS1_PSS_PADDING,
		               hashes[i].md, 20, true);
		/* CKM_RSA_PKCS_PSS signs a digest the caller made. */
		mp.mechanism = CKM_RSA_PKCS_PSS;
		sign_both_ways(priv, pub, pkey, &mp, hashes[i].md, RSA_PKCS1_PSS_PADDING,
		               hashes[i].md, 20, false);
	}
}

/* CKM_RSA_PKCS signs any short input (a DigestInfo, typically); CKM_RSA_X_509 a block. */
static void test_sign_raw(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_RSA_PKCS, NULL, 0 };
	unsigned char sig[256], rec[256], block[256] = { 0 };
	size_t rec_len = sizeof(rec);
	CK_ULONG len = sizeof(sig);
	EVP_PKEY_CTX *ctx;

	sign_both_ways(priv, pub, pkey, &m, NULL, RSA_PKCS1_PADDING, NULL, 0, false);
	/* Raw RSA: the input is left-padded with zeros to the modulus length. */
	m.mechanism = CKM_RSA_X_509;
	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, sig, &len), CKR_OK);
	pg_assert_int_eq(len, 256);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	pg_assert(EVP_PKEY_verify_recover_init(ctx) > 0);
	pg_assert(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0);
	pg_assert(EVP_PKEY_verify_recover(ctx, rec, &rec_len, sig, len) > 0);
	EVP_PKEY_CTX_free(ctx);
	memcpy(block + 256 - (sizeof(msg) - 1), msg, sizeof(msg) - 1);
	pg_assert_mem_eq(rec, rec_len, block, sizeof(block));
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	ck_assert_rv(ct_verify(&m, pub, block, sizeof(block), sig, len), CKR_OK);
	/* A block that is not below the modulus cannot be signed. */
	memset(block, 0xff, sizeof(block));
	len = sizeof(sig);
	ck_assert_rv(ct_sign(&m, priv, block, sizeof(block), sig, &len), CKR_DATA_INVALID);
}

/* Hashing mechanisms also sign in parts, the same as in one. */
static void test_sign_multipart(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_SHA256_RSA_PKCS, NULL, 0 };
	unsigned char one[256], parts[256];
	CK_ULONG len1 = sizeof(one), len2 = sizeof(parts);

	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, one, &len1), CKR_OK);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)msg, 10), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)msg + 10, sizeof(msg) - 11), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, parts, &len2), CKR_OK);
	/* PKCS#1 v1.5 is deterministic. */
	pg_assert_mem_eq(parts, len2, one, len1);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &m, pub), CKR_OK);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, (CK_BYTE_PTR)msg, 20), CKR_OK);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, (CK_BYTE_PTR)msg + 20, sizeof(msg) - 21), CKR_OK);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, parts, len2), CKR_OK);
	/* A single-part mechanism collects its parts. */
	m.mechanism = CKM_RSA_PKCS;
	len2 = sizeof(parts);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"abc", 3), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"def", 3), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, parts, &len2), CKR_OK);
	ck_assert_rv(ct_verify(&m, pub, "abcdef", 6, parts, len2), CKR_OK);
}

static void crypt_both_ways(CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub, EVP_PKEY *pkey,
                            CK_MECHANISM *m, int pad, const char *md, const char *label)
{
	unsigned char ct[256], pt[256];
	size_t ct_len = sizeof(ct);
	CK_ULONG len = sizeof(ct);
	EVP_PKEY_CTX *ctx;

	ck_assert_rv(ct_encrypt(m, pub, msg, sizeof(msg) - 1, ct, &len), CKR_OK);
	pg_assert_int_eq(len, 256);
	ctx = ossl_ctx(pkey, 3, pad, md, md, 0);
	if (label != NULL)
		pg_assert(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, OPENSSL_strdup(label),
		                                           (int)strlen(label)) > 0);
	ct_len = sizeof(pt);
	pg_assert(EVP_PKEY_decrypt(ctx, pt, &ct_len, ct, len) > 0);
	pg_assert_mem_eq(pt, ct_len, msg, sizeof(msg) - 1);
	EVP_PKEY_CTX_free(ctx);
	ctx = ossl_ctx(pkey, 2, pad, md, md, 0);
	if (label != NULL)
		pg_assert(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, OPENSSL_strdup(label),
		                                           (int)strlen(label)) > 0);
	ct_len = sizeof(ct);
	pg_assert(EVP_PKEY_encrypt(ctx, ct, &ct_len, (const unsigned char *)msg, sizeof(msg) - 1) > 0);
	EVP_PKEY_CTX_free(ctx);
	len = sizeof(pt);
	ck_assert_rv(ct_decrypt(m, priv, ct, ct_len, pt, &len), CKR_OK);
	pg_assert_mem_eq(pt, len, msg, sizeof(msg) - 1);
	/* Damaged ciphertext. */
	ct[5] ^= 0x40;
	len = sizeof(pt);
	ck_assert_rv(ct_decrypt(m, priv, ct, ct_len, pt, &len), CKR_ENCRYPTED_DATA_INVALID);
}

static void test_encrypt_mechanisms(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_RSA_PKCS, NULL, 0 };
	CK_RSA_PKCS_OAEP_PARAMS oaep = { CKM_SHA_1, CKG_MGF1_SHA1, CKZ_DATA_SPECIFIED, NULL, 0 };
	CK_MECHANISM mo = { CKM_RSA_PKCS_OAEP, &oaep, sizeof(oaep) };

	crypt_both_ways(priv, pub, pkey, &m, RSA_PKCS1_PADDING, NULL, NULL);
	crypt_both_ways(priv, pub, pkey, &mo, RSA_PKCS1_OAEP_PADDING, "SHA1", NULL);
	oaep.hashAlg = CKM_SHA256;
	oaep.mgf = CKG_MGF1_SHA256;
	oaep.pSourceData = (void *)"label";
	oaep.ulSourceDataLen = 5;
	crypt_both_ways(priv, pub, pkey, &mo, RSA_PKCS1_OAEP_PADDING, "SHA256", "label");
	oaep.hashAlg = CKM_SHA512;
	oaep.mgf = CKG_MGF1_SHA512;
	oaep.pSourceData = NULL;
	oaep.ulSourceDataLen = 0;
	crypt_both_ways(priv, pub, pkey, &mo, RSA_PKCS1_OAEP_PADDING, "SHA512", NULL);
}

static void test_encrypt_raw_and_limits(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_RSA_X_509, NULL, 0 };
	CK_RSA_PKCS_OAEP_PARAMS oaep = { CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 0 };
	unsigned char ct[256], pt[256], big[256] = { 1 };
	CK_ULONG len = sizeof(ct);

	ck_assert_rv(ct_encrypt(&m, pub, "hello", 5, ct, &len), CKR_OK);
	len = sizeof(pt);
	ck_assert_rv(ct_decrypt(&m, priv, ct, 256, pt, &len), CKR_OK);
	/* Raw decryption gives the whole block. */
	pg_assert_int_eq(len, 256);
	pg_assert_mem_eq(pt + 251, 5, "hello", 5);
	/* PKCS#1 v1.5 takes at most k - 11 bytes, OAEP k - 2 - 2 hLen. */
	m.mechanism = CKM_RSA_PKCS;
	len = sizeof(ct);
	ck_assert_rv(ct_encrypt(&m, pub, big, 246, ct, &len), CKR_DATA_LEN_RANGE);
	len = sizeof(ct);
	ck_assert_rv(ct_encrypt(&m, pub, big, 245, ct, &len), CKR_OK);
	m.mechanism = CKM_RSA_PKCS_OAEP;
	m.pParameter = &oaep;
	m.ulParameterLen = sizeof(oaep);
	len = sizeof(ct);
	ck_assert_rv(ct_encrypt(&m, pub, big, 256 - 66 + 1, ct, &len), CKR_DATA_LEN_RANGE);
	len = sizeof(ct);
	ck_assert_rv(ct_encrypt(&m, pub, big, 256 - 66, ct, &len), CKR_OK);
	/* Ciphertext must be exactly a modulus long. */
	len = sizeof(pt);
	ck_assert_rv(ct_decrypt(&m, priv, ct, 255, pt, &len), CKR_ENCRYPTED_DATA_LEN_RANGE);
	/* A length query gives a bound; the real length comes with the result. */
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, priv), CKR_OK);
	len = 0;
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 256, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 256);
	len = 10;
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 256, pt, &len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(len, 256 - 66);
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 256, pt, &len), CKR_OK);
	pg_assert_mem_eq(pt, len, big, 256 - 66);
}

static void test_pss_params(void)
{
	CK_OBJECT_HANDLE priv = ct_import(ct_rsa2048(), true, NULL, 0);
	CK_RSA_PKCS_PSS_PARAMS pss = { CKM_SHA256, CKG_MGF1_SHA256, 32 };
	CK_MECHANISM m = { CKM_SHA256_RSA_PKCS_PSS, &pss, sizeof(pss) };
	unsigned char sig[256];
	CK_ULONG len = sizeof(sig);

	/* The hash of a hashing mechanism and its parameter must agree. */
	pss.hashAlg = CKM_SHA384;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	pss.hashAlg = CKM_SHA256;
	pss.mgf = 0x1234;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	pss.mgf = CKG_MGF1_SHA256;
	/* emLen 256 >= hLen + sLen + 2: 222 fits, 223 not. */
	pss.sLen = 223;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	pss.sLen = 222;
	ck_assert_rv(ct_sign(&m, priv, "x", 1, sig, &len), CKR_OK);
	m.ulParameterLen = sizeof(pss) - 1;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	m.pParameter = NULL;
	m.ulParameterLen = 0;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	/* The raw form signs a digest of exactly the hash's length. */
	m.mechanism = CKM_RSA_PKCS_PSS;
	m.pParameter = &pss;
	m.ulParameterLen = sizeof(pss);
	pss.sLen = 32;
	len = sizeof(sig);
	ck_assert_rv(ct_sign(&m, priv, "0123456789abcdef0123456789abcde", 31, sig, &len),
	             CKR_DATA_LEN_RANGE);
}

static void test_recover(void)
{
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_RSA_PKCS, NULL, 0 };
	unsigned char sig[256], out[256];
	CK_ULONG len = sizeof(sig), out_len;

	ck_assert_rv(p11->C_SignRecoverInit(ct_session, &m, priv), CKR_OK);
	ck_assert_rv(p11->C_SignRecover(ct_session, (CK_BYTE_PTR)"recover me", 10, sig, &len), CKR_OK);
	ck_assert_rv(p11->C_VerifyRecoverInit(ct_session, &m, pub), CKR_OK);
	out_len = 0;
	ck_assert_rv(p11->C_VerifyRecover(ct_session, sig, len, NULL, &out_len), CKR_OK);
	pg_assert_int_eq(out_len, 256);
	out_len = 5;
	ck_assert_rv(p11->C_VerifyRecover(ct_session, sig, len, out, &out_len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(out_len, 10);
	ck_assert_rv(p11->C_VerifyRecover(ct_session, sig, len, out, &out_len), CKR_OK);
	pg_assert_mem_eq(out, out_len, "recover me", 10);
	/* A damaged signature recovers nothing. */
	sig[7] ^= 1;
	out_len = sizeof(out);
	ck_assert_rv(p11->C_VerifyRecoverInit(ct_session, &m, pub), CKR_OK);
	ck_assert_rv(p11->C_VerifyRecover(ct_session, sig, len, out, &out_len), CKR_SIGNATURE_INVALID);
	/* Mechanisms without recovery. */
	m.mechanism = CKM_SHA256_RSA_PKCS;
	ck_assert_rv(p11->C_SignRecoverInit(ct_session, &m, priv), CKR_MECHANISM_INVALID);
	/* A key without CKA_SIGN_RECOVER. */
	{
		CK_ATTRIBUTE off = { CKA_SIGN_RECOVER, &no, 1 };
		CK_OBJECT_HANDLE k = ct_import(pkey, true, &off, 1);
		m.mechanism = CKM_RSA_PKCS;
		ck_assert_rv(p11->C_SignRecoverInit(ct_session, &m, k), CKR_KEY_FUNCTION_NOT_PERMITTED);
	}
}

/* Wraps an AES key under RSA and unwraps it into a working key. */
static void test_wrap(void)
{
	static const CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	static const CK_KEY_TYPE aes = CKK_AES;
	EVP_PKEY *pkey = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	unsigned char value[32] = "0123456789abcdef0123456789abcdef";
	CK_OBJECT_HANDLE key = ct_aes(value, 32), back;
	CK_RSA_PKCS_OAEP_PARAMS oaep = { CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 0 };
	CK_MECHANISM mechs[] = { { CKM_RSA_PKCS_OAEP, &oaep, sizeof(oaep) }, { CKM_RSA_PKCS, NULL, 0 } };
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, (void *)&cls, sizeof(cls) },
		{ CKA_KEY_TYPE, (void *)&aes, sizeof(aes) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_ENCRYPT, &yes, 1 },
		{ CKA_DECRYPT, &yes, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_SENSITIVE, &no, 1 },
	};

	for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++) {
		unsigned char wrapped[256], got[32];
		CK_ULONG len = 0;

		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[i], pub, key, NULL, &len), CKR_OK);
		pg_assert_int_eq(len, 256);
		len = 100;
		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[i], pub, key, wrapped, &len),
		             CKR_BUFFER_TOO_SMALL);
		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[i], pub, key, wrapped, &len), CKR_OK);
		ck_assert_rv(p11->C_UnwrapKey(ct_session, &mechs[i], priv, wrapped, len, tmpl,
		                              PG_N_ELEMENTS(tmpl), &back), CKR_OK);
		pg_assert_int_eq(ct_attr(back, CKA_VALUE, got, sizeof(got)), 32);
		pg_assert_mem_eq(got, 32, value, 32);
		pg_assert_int_eq(ct_attr_ulong(back, CKA_VALUE_LEN), 32);
		/* An unwrapped key was not made on the token. */
		pg_assert(!ct_attr_bool(back, CKA_LOCAL));
		pg_assert_ulong_eq(ct_attr_ulong(back, CKA_KEY_GEN_MECHANISM), CK_UNAVAILABLE_INFORMATION);
		pg_assert(!ct_attr_bool(back, CKA_ALWAYS_SENSITIVE));
		pg_assert(!ct_attr_bool(back, CKA_NEVER_EXTRACTABLE));
		wrapped[9] ^= 1;
		ck_assert_rv(p11->C_UnwrapKey(ct_session, &mechs[i], priv, wrapped, len, tmpl,
		                              PG_N_ELEMENTS(tmpl), &back), CKR_WRAPPED_KEY_INVALID);
	}
	/* RSA never wraps a private key. */
	{
		CK_ULONG len = 0;
		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[0], pub, priv, NULL, &len),
		             CKR_KEY_NOT_WRAPPABLE);
	}
}

static void check_keypair(CK_ULONG bits, CK_OBJECT_HANDLE pub, CK_OBJECT_HANDLE priv)
{
	unsigned char mod[512], e[8], spki1[1024], spki2[1024], sig[512];
	CK_MECHANISM m = { CKM_SHA256_RSA_PKCS_PSS, NULL, 0 };
	CK_RSA_PKCS_PSS_PARAMS pss = { CKM_SHA256, CKG_MGF1_SHA256, 32 };
	CK_ULONG len = sizeof(sig), n1, n2;
	EVP_PKEY *pkey;
	BIGNUM *bn = NULL;

	pg_assert_int_eq(ct_attr(pub, CKA_MODULUS, mod, sizeof(mod)), bits / 8);
	pg_assert_mem_eq(e, ct_attr(pub, CKA_PUBLIC_EXPONENT, e, sizeof(e)), "\x01\x00\x01", 3);
	pg_assert_int_eq(ct_attr_ulong(pub, CKA_MODULUS_BITS), bits);
	pg_assert_int_eq(ct_attr_ulong(pub, CKA_KEY_TYPE), CKK_RSA);
	pg_assert_int_eq(ct_attr_ulong(priv, CKA_KEY_TYPE), CKK_RSA);
	pg_assert(ct_attr_bool(pub, CKA_LOCAL));
	pg_assert(ct_attr_bool(priv, CKA_LOCAL));
	pg_assert_int_eq(ct_attr_ulong(pub, CKA_KEY_GEN_MECHANISM), CKM_RSA_PKCS_KEY_PAIR_GEN);
	pg_assert_int_eq(ct_attr_ulong(priv, CKA_KEY_GEN_MECHANISM), CKM_RSA_PKCS_KEY_PAIR_GEN);
	/* Both halves carry the same SubjectPublicKeyInfo, of this modulus. */
	n1 = ct_attr(pub, CKA_PUBLIC_KEY_INFO, spki1, sizeof(spki1));
	n2 = ct_attr(priv, CKA_PUBLIC_KEY_INFO, spki2, sizeof(spki2));
	pg_assert_mem_eq(spki1, n1, spki2, n2);
	pkey = ct_public(pub);
	pg_assert(EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &bn));
	pg_assert_int_eq(BN_num_bits(bn), bits);
	BN_free(bn);
	/* And it signs. */
	m.pParameter = &pss;
	m.ulParameterLen = sizeof(pss);
	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, sig, &len), CKR_OK);
	pg_assert_int_eq(len, bits / 8);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	EVP_PKEY_free(pkey);
}

static void test_keygen(void)
{
	static const CK_ULONG sizes[] = { 2048, 3072, 4096 };

	for (size_t i = 0; i < PG_N_ELEMENTS(sizes); i++) {
		CK_OBJECT_HANDLE pub, priv;
		ct_keypair(CKM_RSA_PKCS_KEY_PAIR_GEN, sizes[i], NULL, 0, &pub, &priv);
		check_keypair(sizes[i], pub, priv);
	}
}

static void test_keygen_template(void)
{
	CK_MECHANISM m = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_ULONG bits = 2048;
	unsigned char e3[] = { 3 }, even[] = { 1, 0, 0 }, got[4];
	CK_ATTRIBUTE pub_t[] = {
		{ CKA_TOKEN, &no, 1 },
		{ CKA_MODULUS_BITS, &bits, sizeof(bits) },
		{ CKA_PUBLIC_EXPONENT, e3, 1 },
	};
	CK_ATTRIBUTE priv_t[] = { { CKA_TOKEN, &no, 1 } };
	CK_OBJECT_HANDLE pub, priv;

	/* A public exponent of the caller's choosing. */
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 3, priv_t, 1, &pub, &priv), CKR_OK);
	pg_assert_mem_eq(got, ct_attr(priv, CKA_PUBLIC_EXPONENT, got, sizeof(got)), e3, 1);
	pub_t[2].pValue = even;
	pub_t[2].ulValueLen = 3;
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 3, priv_t, 1, &pub, &priv),
	             CKR_ATTRIBUTE_VALUE_INVALID);
	/* The size is needed, and must be one the mechanism takes. */
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 1, priv_t, 1, &pub, &priv),
	             CKR_TEMPLATE_INCOMPLETE);
	bits = 1024;
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 1, &pub, &priv),
	             CKR_ATTRIBUTE_VALUE_INVALID);
}

int main(int argc, char **argv)
{
	pg_test_fixture(ct_setup, ct_teardown);
	pg_test("rsa/sign-mechanisms", test_sign_mechanisms);
	pg_test("rsa/sign-raw", test_sign_raw);
	pg_test("rsa/sign-multipart", test_sign_multipart);
	pg_test("rsa/encrypt-mechanisms", test_encrypt_mechanisms);
	pg_test("rsa/encrypt-raw-limits", test_encrypt_raw_and_limits);
	pg_test("rsa/pss-params", test_pss_params);
	pg_test("rsa/recover", test_recover);
	pg_test("rsa/wrap", test_wrap);
	pg_test("rsa/keygen", test_keygen);
	pg_test("rsa/keygen-template", test_keygen_template);
	return pg_test_run(argc, argv);
}
