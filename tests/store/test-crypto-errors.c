/*
 * The mech layer's argument and state rules: every entry point before
 * C_Initialize and with a bad session, NULL arguments, the life of an
 * operation (size queries, short buffers, single-part after multi-part
 * and the reverse, the 3.0 cancel by a NULL mechanism), the key checks
 * in order (handle, mechanism, type, usage, CKA_ALLOWED_MECHANISMS,
 * size), the mechanism list and information, the dual-function calls,
 * random numbers, and signing from several threads at once.
 */
#include "crypto-test.h"

#include <pthread.h>

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

/* Calls every entry point of the mech layer on a session; returns how many did not give want. */
static int call_all(CK_SESSION_HANDLE s, CK_RV want)
{
	CK_MECHANISM m = { CKM_SHA256, NULL, 0 };
	CK_BYTE buf[64] = { 0 };
	CK_ULONG len = sizeof(buf);
	CK_OBJECT_HANDLE h = 0, h2 = 0;
	CK_ATTRIBUTE a = { CKA_TOKEN, &no, 1 };
	CK_RV rvs[] = {
		p11->C_EncryptInit(s, &m, 1), p11->C_Encrypt(s, buf, 1, buf, &len),
		p11->C_EncryptUpdate(s, buf, 1, buf, &len), p11->C_EncryptFinal(s, buf, &len),
		p11->C_DecryptInit(s, &m, 1), p11->C_Decrypt(s, buf, 1, buf, &len),
		p11->C_DecryptUpdate(s, buf, 1, buf, &len), p11->C_DecryptFinal(s, buf, &len),
		p11->C_DigestInit(s, &m), p11->C_Digest(s, buf, 1, buf, &len),
		p11->C_DigestUpdate(s, buf, 1), p11->C_DigestKey(s, 1), p11->C_DigestFinal(s, buf, &len),
		p11->C_SignInit(s, &m, 1), p11->C_Sign(s, buf, 1, buf, &len), p11->C_SignUpdate(s, buf, 1),
		p11->C_SignFinal(s, buf, &len), p11->C_SignRecoverInit(s, &m, 1),
		p11->C_SignRecover(s, buf, 1, buf, &len), p11->C_VerifyInit(s, &m, 1),
		p11->C_Verify(s, buf, 1, buf, 1), p11->C_VerifyUpdate(s, buf, 1),
		p11->C_VerifyFinal(s, buf, 1), p11->C_VerifyRecoverInit(s, &m, 1),
		p11->C_VerifyRecover(s, buf, 1, buf, &len),
		p11->C_DigestEncryptUpdate(s, buf, 1, buf, &len),
		p11->C_DecryptDigestUpdate(s, buf, 1, buf, &len),
		p11->C_SignEncryptUpdate(s, buf, 1, buf, &len),
		p11->C_DecryptVerifyUpdate(s, buf, 1, buf, &len),
		p11->C_GenerateKey(s, &m, &a, 1, &h), p11->C_GenerateKeyPair(s, &m, &a, 1, &a, 1, &h, &h2),
		p11->C_WrapKey(s, &m, 1, 2, buf, &len), p11->C_UnwrapKey(s, &m, 1, buf, 8, &a, 1, &h),
		p11->C_DeriveKey(s, &m, 1, &a, 1, &h), p11->C_SeedRandom(s, buf, 1),
		p11->C_GenerateRandom(s, buf, 1),
		p11->C_MessageEncryptInit(s, &m, 1),
		p11->C_EncryptMessage(s, buf, 8, NULL, 0, buf, 1, buf, &len),
		p11->C_EncryptMessageBegin(s, buf, 8, NULL, 0),
		p11->C_EncryptMessageNext(s, buf, 8, buf, 1, buf, &len, 0), p11->C_MessageEncryptFinal(s),
		p11->C_MessageDecryptInit(s, &m, 1),
		p11->C_DecryptMessage(s, buf, 8, NULL, 0, buf, 1, buf, &len),
		p11->C_DecryptMessageBegin(s, buf, 8, NULL, 0),
		p11->C_DecryptMessageNext(s, buf, 8, buf, 1, buf, &len, 0), p11->C_MessageDecryptFinal(s),
		p11->C_MessageSignInit(s, &m, 1), p11->C_SignMessage(s, NULL, 0, buf, 1, buf, &len),
		p11->C_SignMessageBegin(s, NULL, 0), p11->C_SignMessageNext(s, NULL, 0, buf, 1, buf, &len),
		p11->C_MessageSignFinal(s), p11->C_MessageVerifyInit(s, &m, 1),
		p11->C_VerifyMessage(s, NULL, 0, buf, 1, buf, 1), p11->C_VerifyMessageBegin(s, NULL, 0),
		p11->C_VerifyMessageNext(s, NULL, 0, buf, 1, buf, 1), p11->C_MessageVerifyFinal(s),
	};
	int bad = 0;

	for (size_t i = 0; i < PG_N_ELEMENTS(rvs); i++) {
		if (rvs[i] != want) {
			pg_test_fail(__FILE__, __LINE__, "call %zu: got 0x%lx, want 0x%lx", i, rvs[i], want);
			bad++;
		}
	}
	return bad;
}

static void test_not_initialized(void)
{
	st_fini();
	pg_assert_int_eq(call_all(ct_session, CKR_CRYPTOKI_NOT_INITIALIZED), 0);
	st_init();
}

static void test_bad_session(void)
{
	pg_assert_int_eq(call_all(0x7fffff, CKR_SESSION_HANDLE_INVALID), 0);
	ck_assert_rv(p11->C_CloseSession(ct_session), CKR_OK);
	pg_assert_int_eq(call_all(ct_session, CKR_SESSION_HANDLE_INVALID), 0);
}

/* A session with nothing active: every continuing call finds no operation. */
static void test_not_active(void)
{
	CK_BYTE buf[64];
	CK_ULONG len = sizeof(buf);

	ck_assert_rv(p11->C_Encrypt(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Decrypt(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DecryptFinal(ct_session, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Digest(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DigestKey(ct_session, 1), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Sign(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignFinal(ct_session, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignRecover(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Verify(ct_session, buf, 1, buf, 1), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, buf, 1), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_VerifyRecover(ct_session, buf, 1, buf, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DigestEncryptUpdate(ct_session, buf, 1, buf, &len),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DecryptVerifyUpdate(ct_session, buf, 1, buf, &len),
	             CKR_OPERATION_NOT_INITIALIZED);
}

static void test_sign_lifecycle(void)
{
	CK_OBJECT_HANDLE key = ct_secret(CKK_GENERIC_SECRET, "k", 1, NULL, 0);
	CK_MECHANISM m = { CKM_SHA256_HMAC, NULL, 0 };
	CK_BYTE sig[32];
	CK_ULONG len;

	ck_assert_rv(p11->C_SignInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, key), CKR_OPERATION_ACTIVE);
	/* A length query and a short buffer keep the operation. */
	len = 0;
	ck_assert_rv(p11->C_Sign(ct_session, (CK_BYTE_PTR)"x", 1, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	len = 31;
	ck_assert_rv(p11->C_Sign(ct_session, (CK_BYTE_PTR)"x", 1, sig, &len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(len, 32);
	ck_assert_rv(p11->C_Sign(ct_session, (CK_BYTE_PTR)"x", 1, sig, &len), CKR_OK);
	/* A signature ends it: nothing continues. */
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"x", 1), CKR_OPERATION_NOT_INITIALIZED);
	/* C_Sign cannot finish a multi-part operation (and that ends it). */
	ck_assert_rv(p11->C_SignInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"x", 1), CKR_OK);
	len = sizeof(sig);
	ck_assert_rv(p11->C_Sign(ct_session, (CK_BYTE_PTR)"x", 1, sig, &len), CKR_OPERATION_ACTIVE);
	ck_assert_rv(p11->C_SignFinal(ct_session, sig, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* Bad arguments end an operation too. */
	ck_assert_rv(p11->C_SignInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_Sign(ct_session, (CK_BYTE_PTR)"x", 1, sig, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"x", 1), CKR_OPERATION_NOT_INITIALIZED);
	/* Verification always ends with its answer. */
	ck_assert_rv(p11->C_VerifyInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_Verify(ct_session, (CK_BYTE_PTR)"x", 1, sig, 5), CKR_SIGNATURE_LEN_RANGE);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, sig, 32), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, NULL, 32), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, sig, 1), CKR_OPERATION_NOT_INITIALIZED);
}

static void test_crypt_lifecycle(void)
{
	unsigned char key_v[16] = { 1 }, iv[16] = { 0 }, out[64];
	CK_OBJECT_HANDLE key = ct_aes(key_v, 16);
	CK_MECHANISM m = { CKM_AES_CBC_PAD, iv, 16 };
	CK_ULONG len;

	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OPERATION_ACTIVE);
	len = 0;
	ck_assert_rv(p11->C_Encrypt(ct_session, (CK_BYTE_PTR)"abc", 3, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 16);
	len = 15;
	ck_assert_rv(p11->C_Encrypt(ct_session, (CK_BYTE_PTR)"abc", 3, out, &len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(len, 16);
	ck_assert_rv(p11->C_Encrypt(ct_session, (CK_BYTE_PTR)"abc", 3, out, &len), CKR_OK);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* Parts: a length query consumes nothing. */
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OK);
	len = 0;
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdefXY", 18, NULL, &len),
	             CKR_OK);
	pg_assert_int_eq(len, 16);
	len = 8;
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdefXY", 18, out, &len),
	             CKR_BUFFER_TOO_SMALL);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdefXY", 18, out, &len),
	             CKR_OK);
	pg_assert_int_eq(len, 16);
	len = 0;
	ck_assert_rv(p11->C_EncryptFinal(ct_session, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 16);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out + 16, &len), CKR_OK);
	/* Then C_Encrypt after C_EncryptUpdate. */
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, (CK_BYTE_PTR)"a", 1, out, &len), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(p11->C_Encrypt(ct_session, (CK_BYTE_PTR)"a", 1, out, &len), CKR_OPERATION_ACTIVE);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* Arguments. */
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_Encrypt(ct_session, NULL, 3, out, &len), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, out, 16, out, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_DecryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
}

/* 3.0: *Init with a NULL mechanism ends the active operation. */
static void test_null_mechanism_cancels(void)
{
	CK_OBJECT_HANDLE key = ct_secret(CKK_AES, "0123456789abcdef", 16, NULL, 0);
	CK_MECHANISM m = { CKM_AES_ECB, NULL, 0 }, hm = { CKM_AES_CMAC, NULL, 0 };
	CK_MECHANISM dm = { CKM_SHA256, NULL, 0 };
	CK_BYTE out[32];
	CK_ULONG len = sizeof(out);

	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_EncryptInit(ct_session, NULL, key), CKR_OK);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_DecryptInit(ct_session, NULL, key), CKR_OK);
	ck_assert_rv(p11->C_DecryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignInit(ct_session, &hm, key), CKR_OK);
	ck_assert_rv(p11->C_SignInit(ct_session, NULL, key), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &hm, key), CKR_OK);
	ck_assert_rv(p11->C_VerifyInit(ct_session, NULL, key), CKR_OK);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, out, 16), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DigestInit(ct_session, &dm), CKR_OK);
	ck_assert_rv(p11->C_DigestInit(ct_session, NULL), CKR_OK);
	ck_assert_rv(p11->C_DigestFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* And a new one may start. */
	ck_assert_rv(p11->C_DigestInit(ct_session, &dm), CKR_OK);
}

static void test_key_checks(void)
{
	EVP_PKEY *rsa = ct_rsa2048();
	CK_MECHANISM_TYPE only[] = { CKM_SHA256_RSA_PKCS };
	CK_ATTRIBUTE allowed = { CKA_ALLOWED_MECHANISMS, only, sizeof(only) };
	CK_ATTRIBUTE no_sign = { CKA_SIGN, &no, 1 };
	CK_OBJECT_HANDLE priv = ct_import(rsa, true, NULL, 0), pub = ct_import(rsa, false, NULL, 0);
	CK_OBJECT_HANDLE limited = ct_import(rsa, true, &allowed, 1);
	CK_OBJECT_HANDLE unsigned_ = ct_import(rsa, true, &no_sign, 1);
	CK_OBJECT_HANDLE aes = ct_secret(CKK_AES, "0123456789abcdef", 16, NULL, 0);
	CK_OBJECT_HANDLE data = st_data(ct_session, "data", false, false);
	CK_MECHANISM m = { CKM_RSA_PKCS, NULL, 0 };

	ck_assert_rv(p11->C_SignInit(ct_session, &m, 0x7777), CKR_KEY_HANDLE_INVALID);
	/* An object that is no key is no key handle. */
	ck_assert_rv(p11->C_SignInit(ct_session, &m, data), CKR_KEY_HANDLE_INVALID);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, aes), CKR_KEY_TYPE_INCONSISTENT);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, unsigned_), CKR_KEY_FUNCTION_NOT_PERMITTED);
	/* The public half neither signs nor decrypts; the private half does not encrypt. */
	ck_assert_rv(p11->C_SignInit(ct_session, &m, pub), CKR_KEY_FUNCTION_NOT_PERMITTED);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, pub), CKR_KEY_FUNCTION_NOT_PERMITTED);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, priv), CKR_KEY_FUNCTION_NOT_PERMITTED);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &m, priv), CKR_KEY_FUNCTION_NOT_PERMITTED);
	/* CKA_ALLOWED_MECHANISMS. */
	ck_assert_rv(p11->C_SignInit(ct_session, &m, limited), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_SHA256_RSA_PKCS;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, limited), CKR_OK);
	ck_assert_rv(p11->C_SignInit(ct_session, NULL, 0), CKR_OK);
	/* Mechanisms unknown, or not for this function. */
	m.mechanism = 0x7654321;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_SHA256;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_RSA_PKCS_OAEP;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_SHA256_HMAC;
	ck_assert_rv(p11->C_DigestInit(ct_session, &m), CKR_MECHANISM_INVALID);
	/* An RSA key outside 2048 to 4096 bits. */
	{
		EVP_PKEY *small = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
		CK_OBJECT_HANDLE k = ct_import(small, true, NULL, 0);
		m.mechanism = CKM_RSA_PKCS;
		ck_assert_rv(p11->C_SignInit(ct_session, &m, k), CKR_KEY_SIZE_RANGE);
		EVP_PKEY_free(small);
	}
}

static void test_keygen_arguments(void)
{
	CK_MECHANISM m = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_ULONG len = 16;
	CK_ATTRIBUTE t[] = { { CKA_VALUE_LEN, &len, sizeof(len) }, { CKA_TOKEN, &yes, 1 } };
	CK_OBJECT_HANDLE h, h2;
	CK_SESSION_HANDLE ro;

	ck_assert_rv(p11->C_GenerateKey(ct_session, NULL, t, 1, &h), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GenerateKey(ct_session, &m, t, 1, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GenerateKey(ct_session, &m, NULL, 1, &h), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, t, 1, t, 1, NULL, &h2), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, t, 1, t, 1, &h, &h2), CKR_MECHANISM_INVALID);
	ck_assert_rv(p11->C_DeriveKey(ct_session, &m, 1, t, 1, NULL), CKR_ARGUMENTS_BAD);
	/* A token key needs a R/W session; a session key does not. */
	ro = st_open(ct_slot, false);
	ck_assert_rv(p11->C_GenerateKey(ro, &m, t, 2, &h), CKR_SESSION_READ_ONLY);
	ck_assert_rv(p11->C_GenerateKey(ro, &m, t, 1, &h), CKR_OK);
	ck_assert_rv(p11->C_GenerateKey(ct_session, &m, t, 2, &h), CKR_OK);
	pg_assert(ct_attr_bool(h, CKA_TOKEN));
	/* A class or key type other than the mechanism's. */
	{
		CK_KEY_TYPE rsa = CKK_RSA;
		CK_ATTRIBUTE bad[] = { { CKA_VALUE_LEN, &len, sizeof(len) }, { CKA_KEY_TYPE, &rsa, sizeof(rsa) } };
		ck_assert_rv(p11->C_GenerateKey(ct_session, &m, bad, 2, &h), CKR_TEMPLATE_INCONSISTENT);
	}
}

static void test_mechanism_info(void)
{
	CK_MECHANISM_TYPE list[256];
	CK_ULONG n = 0, n2;
	CK_MECHANISM_INFO info;

	ck_assert_rv(p11->C_GetMechanismList(ct_slot, NULL, &n), CKR_OK);
	pg_assert(n > 60 && n <= 256);
	n2 = 3;
	ck_assert_rv(p11->C_GetMechanismList(ct_slot, list, &n2), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n2, n);
	ck_assert_rv(p11->C_GetMechanismList(ct_slot, list, &n2), CKR_OK);
	for (CK_ULONG i = 0; i < n; i++) {
		ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, list[i], &info), CKR_OK);
		/* A software token: nothing is done by hardware. */
		pg_assert((info.flags & CKF_HW) == 0);
		pg_assert(info.flags != 0);
		pg_assert(info.ulMinKeySize <= info.ulMaxKeySize);
		/* No DES of any kind. */
		pg_assert(list[i] < CKM_DES_KEY_GEN || list[i] > CKM_DES3_CMAC);
	}
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_RSA_PKCS_PSS, &info), CKR_OK);
	pg_assert_int_eq(info.ulMinKeySize, 2048);
	pg_assert_int_eq(info.ulMaxKeySize, 4096);
	pg_assert_ulong_eq(info.flags, CKF_SIGN | CKF_VERIFY);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_RSA_PKCS, &info), CKR_OK);
	pg_assert_ulong_eq(info.flags, CKF_SIGN | CKF_VERIFY | CKF_SIGN_RECOVER | CKF_VERIFY_RECOVER |
	                               CKF_ENCRYPT | CKF_DECRYPT | CKF_WRAP | CKF_UNWRAP);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_EC_KEY_PAIR_GEN, &info), CKR_OK);
	pg_assert_int_eq(info.ulMinKeySize, 256);
	pg_assert_int_eq(info.ulMaxKeySize, 521);
	pg_assert((info.flags & (CKF_GENERATE_KEY_PAIR | CKF_EC_F_P | CKF_EC_OID | CKF_EC_UNCOMPRESS)) ==
	          (CKF_GENERATE_KEY_PAIR | CKF_EC_F_P | CKF_EC_OID | CKF_EC_UNCOMPRESS));
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_ECDH1_DERIVE, &info), CKR_OK);
	pg_assert(info.flags & CKF_DERIVE);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_AES_GCM, &info), CKR_OK);
	pg_assert_int_eq(info.ulMinKeySize, 16);
	pg_assert_int_eq(info.ulMaxKeySize, 32);
	pg_assert(info.flags & CKF_MESSAGE_ENCRYPT);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_SHA3_256, &info), CKR_OK);
	pg_assert_ulong_eq(info.flags, CKF_DIGEST);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_GENERIC_SECRET_KEY_GEN, &info), CKR_OK);
	pg_assert_ulong_eq(info.flags, CKF_GENERATE);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, CKM_DES3_CBC, &info), CKR_MECHANISM_INVALID);
	ck_assert_rv(p11->C_GetMechanismInfo(ct_slot, 0x7654321, &info), CKR_MECHANISM_INVALID);
}

/* The dual-function calls give what the two operations give apart. */
static void test_dual(void)
{
	unsigned char key_v[16] = { 2 }, iv[16] = { 3 }, data[40], ct[48], pt[48], d1[32], d2[32];
	CK_OBJECT_HANDLE key = ct_aes(key_v, 16);
	CK_OBJECT_HANDLE mac = ct_secret(CKK_GENERIC_SECRET, "mac key", 7, NULL, 0);
	CK_MECHANISM cm = { CKM_AES_CBC_PAD, iv, 16 }, dm = { CKM_SHA256, NULL, 0 };
	CK_MECHANISM hm = { CKM_SHA256_HMAC, NULL, 0 };
	CK_ULONG len, total, l1 = 32, l2 = 32;

	memset(data, 'd', sizeof(data));
	ck_assert_rv(p11->C_EncryptInit(ct_session, &cm, key), CKR_OK);
	len = sizeof(ct);
	ck_assert_rv(p11->C_DigestEncryptUpdate(ct_session, data, 40, ct, &len),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_DigestInit(ct_session, &dm), CKR_OK);
	len = 0;
	ck_assert_rv(p11->C_DigestEncryptUpdate(ct_session, data, 40, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	ck_assert_rv(p11->C_DigestEncryptUpdate(ct_session, data, 40, ct, &len), CKR_OK);
	total = len;
	len = sizeof(ct) - total;
	ck_assert_rv(p11->C_EncryptFinal(ct_session, ct + total, &len), CKR_OK);
	total += len;
	ck_assert_rv(p11->C_DigestFinal(ct_session, d1, &l1), CKR_OK);
	ck_assert_rv(ct_digest(CKM_SHA256, data, 40, d2, &l2), CKR_OK);
	pg_assert_mem_eq(d1, l1, d2, l2);
	/* Decrypt and digest what comes out. */
	ck_assert_rv(p11->C_DecryptInit(ct_session, &cm, key), CKR_OK);
	ck_assert_rv(p11->C_DigestInit(ct_session, &dm), CKR_OK);
	len = sizeof(pt);
	ck_assert_rv(p11->C_DecryptDigestUpdate(ct_session, ct, total, pt, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	ck_assert_rv(p11->C_DigestFinal(ct_session, d1, &l1), CKR_OK);
	ck_assert_rv(ct_digest(CKM_SHA256, data, 32, d2, &l2), CKR_OK);
	pg_assert_mem_eq(d1, l1, d2, l2);
	ck_assert_rv(p11->C_DecryptInit(ct_session, NULL, 0), CKR_OK);
	/* Sign and encrypt; decrypt and verify. */
	ck_assert_rv(p11->C_SignInit(ct_session, &hm, mac), CKR_OK);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &cm, key), CKR_OK);
	len = sizeof(ct);
	ck_assert_rv(p11->C_SignEncryptUpdate(ct_session, data, 40, ct, &len), CKR_OK);
	total = len;
	len = sizeof(ct) - total;
	ck_assert_rv(p11->C_EncryptFinal(ct_session, ct + total, &len), CKR_OK);
	total += len;
	l1 = sizeof(d1);
	ck_assert_rv(p11->C_SignFinal(ct_session, d1, &l1), CKR_OK);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &hm, mac), CKR_OK);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &cm, key), CKR_OK);
	len = sizeof(pt);
	ck_assert_rv(p11->C_DecryptVerifyUpdate(ct_session, ct, total, pt, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	l2 = sizeof(pt) - len;
	ck_assert_rv(p11->C_DecryptFinal(ct_session, pt + len, &l2), CKR_OK);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, pt + len, l2), CKR_OK);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, d1, l1), CKR_OK);
}

static void test_random(void)
{
	unsigned char a[32] = { 0 }, b[32] = { 0 };

	ck_assert_rv(p11->C_GenerateRandom(ct_session, NULL, 5), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GenerateRandom(ct_session, NULL, 0), CKR_OK);
	ck_assert_rv(p11->C_GenerateRandom(ct_session, a, sizeof(a)), CKR_OK);
	ck_assert_rv(p11->C_GenerateRandom(ct_session, b, sizeof(b)), CKR_OK);
	pg_assert(memcmp(a, b, sizeof(a)) != 0);
	ck_assert_rv(p11->C_SeedRandom(ct_session, a, sizeof(a)), CKR_OK);
	ck_assert_rv(p11->C_SeedRandom(ct_session, NULL, 5), CKR_ARGUMENTS_BAD);
}

/* After C_Logout, private keys are out of reach. */
static void test_logout(void)
{
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	CK_ATTRIBUTE priv_attr = { CKA_PRIVATE, &yes, 1 };
	EVP_PKEY *pkey = ct_pkey("P-256");
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, &priv_attr, 1);
	unsigned char sig[64];
	CK_ULONG len = sizeof(sig);

	ck_assert_rv(ct_sign(&m, priv, "0123456789abcdef0123456789abcdef", 32, sig, &len), CKR_OK);
	ck_assert_rv(p11->C_Logout(ct_session), CKR_OK);
	pg_assert(p11->C_SignInit(ct_session, &m, priv) != CKR_OK);
	EVP_PKEY_free(pkey);
}

/* ---------------------------------------------------------------------------
 * Several threads, each with its own session, signing with the same keys.
 */
typedef struct {
	CK_OBJECT_HANDLE ec, ed, rsa, ec_pub;
	int failures;
} thread_job;

static void *signer(void *arg)
{
	thread_job *job = arg;
	CK_SESSION_HANDLE s;
	CK_MECHANISM em = { CKM_ECDSA_SHA256, NULL, 0 }, dm = { CKM_EDDSA, NULL, 0 };
	CK_MECHANISM rm = { CKM_SHA256_RSA_PKCS, NULL, 0 };
	unsigned char sig[256];

	if (p11->C_OpenSession(ct_slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK) {
		job->failures++;
		return NULL;
	}
	for (int i = 0; i < 200; i++) {
		CK_ULONG len = sizeof(sig);
		CK_MECHANISM *m = i % 3 == 0 ? &em : i % 3 == 1 ? &dm : &rm;
		CK_OBJECT_HANDLE k = i % 3 == 0 ? job->ec : i % 3 == 1 ? job->ed : job->rsa;
		if (i % 10 == 9 && m == &rm)
			continue;
		if (p11->C_SignInit(s, m, k) != CKR_OK ||
		    p11->C_Sign(s, (CK_BYTE_PTR)"thread", 6, sig, &len) != CKR_OK)
			job->failures++;
		if (m == &em && (p11->C_VerifyInit(s, m, job->ec_pub) != CKR_OK ||
		                 p11->C_Verify(s, (CK_BYTE_PTR)"thread", 6, sig, len) != CKR_OK))
			job->failures++;
	}
	p11->C_CloseSession(s);
	return NULL;
}

static void test_threads(void)
{
	CK_OBJECT_HANDLE ec_pub, ec, ed_pub, ed, rsa_pub, rsa;
	thread_job jobs[4];
	pthread_t threads[4];

	ct_keypair(CKM_EC_KEY_PAIR_GEN, 0, ct_p256, sizeof(ct_p256), &ec_pub, &ec);
	ct_keypair(CKM_EC_EDWARDS_KEY_PAIR_GEN, 0, ct_ed25519, sizeof(ct_ed25519), &ed_pub, &ed);
	rsa = ct_import(ct_rsa2048(), true, NULL, 0);
	(void)ed_pub;
	(void)rsa_pub;
	for (int i = 0; i < 4; i++) {
		jobs[i] = (thread_job){ ec, ed, rsa, ec_pub, 0 };
		pg_assert_int_eq(pthread_create(&threads[i], NULL, signer, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		pg_assert_int_eq(jobs[i].failures, 0);
	}
}

/*
 * CKA_ALWAYS_AUTHENTICATE (4.9): a private key that has it gives no
 * signature or plaintext until C_Login(CKU_CONTEXT_SPECIFIC) follows its
 * C_SignInit or C_DecryptInit, and the next operation asks again. A
 * context-specific login without such an operation is refused.
 */
static void test_always_authenticate(void)
{
	CK_ATTRIBUTE always = { CKA_ALWAYS_AUTHENTICATE, &yes, 1 };
	EVP_PKEY *ec = ct_pkey("P-256"), *rsa = ct_rsa2048();
	CK_OBJECT_HANDLE priv = ct_import(ec, true, &always, 1), plain = ct_import(ec, true, NULL, 0);
	CK_OBJECT_HANDLE rsa_priv = ct_import(rsa, true, &always, 1);
	CK_OBJECT_HANDLE rsa_pub = ct_import(rsa, false, NULL, 0);
	CK_MECHANISM ecdsa = { CKM_ECDSA, NULL, 0 }, pkcs = { CKM_RSA_PKCS, NULL, 0 };
	unsigned char hash[32] = { 1, 2, 3 }, sig[256], ct[256], pt[256];
	CK_ULONG len = sizeof(sig), ct_len = sizeof(ct), pt_len = sizeof(pt);
	CK_UTF8CHAR pin[] = "1234", wrong[] = "9999";

	pg_assert(ct_attr_bool(priv, CKA_ALWAYS_AUTHENTICATE));
	/* No operation waits for it. */
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, pin, 4),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignInit(ct_session, &ecdsa, plain), CKR_OK);
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, pin, 4),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Sign(ct_session, hash, 32, sig, &len), CKR_OK);
	/* Without the login: refused, and the operation is over. */
	ck_assert_rv(p11->C_SignInit(ct_session, &ecdsa, priv), CKR_OK);
	len = sizeof(sig);
	ck_assert_rv(p11->C_Sign(ct_session, hash, 32, NULL, &len), CKR_USER_NOT_LOGGED_IN);
	ck_assert_rv(p11->C_Sign(ct_session, hash, 32, sig, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* A wrong PIN does not open it; the right one does, for this operation. */
	ck_assert_rv(p11->C_SignInit(ct_session, &ecdsa, priv), CKR_OK);
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, NULL, 4), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, wrong, 4), CKR_PIN_INCORRECT);
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, pin, 4), CKR_OK);
	len = 0;
	ck_assert_rv(p11->C_Sign(ct_session, hash, 32, NULL, &len), CKR_OK);
	ck_assert_rv(p11->C_Sign(ct_session, hash, 32, sig, &len), CKR_OK);
	pg_assert_ulong_eq(len, 64);
	ck_assert_rv(p11->C_SignInit(ct_session, &ecdsa, priv), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, hash, 32), CKR_USER_NOT_LOGGED_IN);
	/* Decryption the same way. */
	ck_assert_rv(ct_encrypt(&pkcs, rsa_pub, "secret", 6, ct, &ct_len), CKR_OK);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &pkcs, rsa_priv), CKR_OK);
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, ct_len, pt, &pt_len), CKR_USER_NOT_LOGGED_IN);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &pkcs, rsa_priv), CKR_OK);
	ck_assert_rv(p11->C_Login(ct_session, CKU_CONTEXT_SPECIFIC, pin, 4), CKR_OK);
	pt_len = sizeof(pt);
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, ct_len, pt, &pt_len), CKR_OK);
	pg_assert(pt_len == 6 && memcmp(pt, "secret", 6) == 0);
	/* One-call uses leave no room for the login: refused. */
	{
		CK_OBJECT_CLASS secret = CKO_SECRET_KEY;
		CK_KEY_TYPE generic = CKK_GENERIC_SECRET;
		CK_ULONG bytes = 16;
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &secret, sizeof(secret) },
		                     { CKA_KEY_TYPE, &generic, sizeof(generic) },
		                     { CKA_VALUE_LEN, &bytes, sizeof(bytes) } };
		unsigned char point[65] = { 4 };
		CK_ECDH1_DERIVE_PARAMS ecdh = { CKD_NULL, 0, NULL, sizeof(point), point };
		CK_MECHANISM derive = { CKM_ECDH1_DERIVE, &ecdh, sizeof(ecdh) };
		CK_OBJECT_HANDLE k;

		ck_assert_rv(p11->C_UnwrapKey(ct_session, &pkcs, rsa_priv, ct, ct_len, t, 2, &k),
		             CKR_KEY_FUNCTION_NOT_PERMITTED);
		ck_assert_rv(p11->C_DeriveKey(ct_session, &derive, priv, t, 3, &k),
		             CKR_KEY_FUNCTION_NOT_PERMITTED);
	}
	EVP_PKEY_free(ec);
}

int main(int argc, char **argv)
{
	pg_test_fixture(ct_setup, ct_teardown);
	pg_test("calls/not-initialized", test_not_initialized);
	pg_test("calls/bad-session", test_bad_session);
	pg_test("calls/not-active", test_not_active);
	pg_test("state/sign", test_sign_lifecycle);
	pg_test("state/crypt", test_crypt_lifecycle);
	pg_test("state/null-mechanism-cancels", test_null_mechanism_cancels);
	pg_test("keys/checks", test_key_checks);
	pg_test("keys/keygen-arguments", test_keygen_arguments);
	pg_test("mechanisms/info", test_mechanism_info);
	pg_test("dual/functions", test_dual);
	pg_test("random", test_random);
	pg_test("keys/logout", test_logout);
	pg_test("keys/always-authenticate", test_always_authenticate);
	pg_test("threads/sign", test_threads);
	return pg_test_run(argc, argv);
}
