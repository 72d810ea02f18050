/*
 * AES and secret keys through the module: key generation, every mode
 * round trip against libcrypto, the length rules of each mode, CTR
 * counter room, GCM in parts and with both parameter layouts, wrapping
 * and unwrapping secret and private keys (with the wrapping key's
 * templates), and message-based AES-GCM.
 */
#include "crypto-test.h"

#include <openssl/rand.h>

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static const CK_OBJECT_CLASS secret_cls = CKO_SECRET_KEY;
static const CK_KEY_TYPE aes_type = CKK_AES;

static CK_OBJECT_HANDLE gen_key(CK_MECHANISM_TYPE mech, CK_ULONG len, CK_RV want)
{
	CK_MECHANISM m = { mech, NULL, 0 };
	CK_ATTRIBUTE t[] = {
		{ CKA_TOKEN, &no, 1 },
		{ CKA_ENCRYPT, &yes, 1 },
		{ CKA_DECRYPT, &yes, 1 },
		{ CKA_SIGN, &yes, 1 },
		{ CKA_VERIFY, &yes, 1 },
		{ CKA_WRAP, &yes, 1 },
		{ CKA_UNWRAP, &yes, 1 },
		{ CKA_VALUE_LEN, &len, sizeof(len) },
	};
	CK_OBJECT_HANDLE h = 0;

	ck_assert_rv(p11->C_GenerateKey(ct_session, &m, t, len ? 8 : 7, &h), want);
	return h;
}

static void test_keygen(void)
{
	static const CK_ULONG sizes[] = { 16, 24, 32 };
	CK_MECHANISM hm = { CKM_SHA256_HMAC, NULL, 0 };
	unsigned char mac[32];
	CK_ULONG len = sizeof(mac);
	CK_OBJECT_HANDLE h;

	for (size_t i = 0; i < PG_N_ELEMENTS(sizes); i++) {
		h = gen_key(CKM_AES_KEY_GEN, sizes[i], CKR_OK);
		pg_assert_int_eq(ct_attr_ulong(h, CKA_KEY_TYPE), CKK_AES);
		pg_assert_int_eq(ct_attr_ulong(h, CKA_VALUE_LEN), sizes[i]);
		pg_assert(ct_attr_bool(h, CKA_LOCAL));
		pg_assert_int_eq(ct_attr_ulong(h, CKA_KEY_GEN_MECHANISM), CKM_AES_KEY_GEN);
	}
	gen_key(CKM_AES_KEY_GEN, 20, CKR_ATTRIBUTE_VALUE_INVALID);
	gen_key(CKM_AES_KEY_GEN, 0, CKR_TEMPLATE_INCOMPLETE);
	h = gen_key(CKM_GENERIC_SECRET_KEY_GEN, 40, CKR_OK);
	pg_assert_int_eq(ct_attr_ulong(h, CKA_KEY_TYPE), CKK_GENERIC_SECRET);
	pg_assert_int_eq(ct_attr_ulong(h, CKA_KEY_GEN_MECHANISM), CKM_GENERIC_SECRET_KEY_GEN);
	ck_assert_rv(ct_sign(&hm, h, "data", 4, mac, &len), CKR_OK);
	ck_assert_rv(ct_verify(&hm, h, "data", 4, mac, len), CKR_OK);
	gen_key(CKM_GENERIC_SECRET_KEY_GEN, 0, CKR_TEMPLATE_INCOMPLETE);
	gen_key(CKM_GENERIC_SECRET_KEY_GEN, 513, CKR_ATTRIBUTE_VALUE_INVALID);
	/* A key pair mechanism is not a key mechanism. */
	gen_key(CKM_EC_KEY_PAIR_GEN, 16, CKR_MECHANISM_INVALID);
}

/* libcrypto's answer for the same mode (padding on for CBC-PAD). */
static size_t ossl_encrypt(const char *cipher, const unsigned char *key, const unsigned char *iv,
                           bool pad, const unsigned char *in, size_t len, unsigned char *out)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, cipher, NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, m = 0;

	pg_assert(EVP_EncryptInit_ex2(ctx, c, key, iv, NULL));
	EVP_CIPHER_CTX_set_padding(ctx, pad);
	pg_assert(EVP_EncryptUpdate(ctx, out, &n, in, (int)len));
	pg_assert(EVP_EncryptFinal_ex(ctx, out + n, &m));
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(c);
	return (size_t)(n + m);
}

/* Every mode and key size against libcrypto, over lengths 0 to 70. */
static void test_modes_vs_libcrypto(void)
{
	static const char *const names[3][3] = {
		{ "AES-128-ECB", "AES-128-CBC", "AES-128-CTR" },
		{ "AES-192-ECB", "AES-192-CBC", "AES-192-CTR" },
		{ "AES-256-ECB", "AES-256-CBC", "AES-256-CTR" },
	};
	unsigned char key[32], iv[16], data[80], want[96], got[96], back[96];
	CK_AES_CTR_PARAMS ctr = { 128, { 0 } };

	pg_assert(RAND_bytes(key, 32) && RAND_bytes(iv, 16) && RAND_bytes(data, 80));
	memcpy(ctr.cb, iv, 16);
	for (size_t k = 0; k < 3; k++) {
		CK_OBJECT_HANDLE h = ct_aes(key, 16 + 8 * k);
		CK_MECHANISM mechs[] = {
			{ CKM_AES_ECB, NULL, 0 }, { CKM_AES_CBC, iv, 16 }, { CKM_AES_CBC_PAD, iv, 16 },
			{ CKM_AES_CTR, &ctr, sizeof(ctr) },
		};
		for (size_t len = 0; len <= 70; len++) {
			for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++) {
				bool pad = mechs[i].mechanism == CKM_AES_CBC_PAD;
				bool stream = mechs[i].mechanism == CKM_AES_CTR;
				CK_ULONG n = sizeof(got), b = sizeof(back);
				size_t wl;
				if (!pad && !stream && len % 16 != 0)
					continue;
				wl = ossl_encrypt(names[k][i == 3 ? 2 : i == 0 ? 0 : 1], key,
				                  i == 0 ? NULL : iv, pad, data, len, want);
				ck_assert_rv(ct_encrypt(&mechs[i], h, data, len, got, &n), CKR_OK);
				pg_assert_mem_eq(got, n, want, wl);
				ck_assert_rv(ct_decrypt(&mechs[i], h, got, n, back, &b), CKR_OK);
				pg_assert_mem_eq(back, b, data, len);
			}
		}
	}
}

static void test_block_lengths(void)
{
	unsigned char key[16] = { 1 }, iv[16] = { 2 }, buf[64] = { 0 }, out[64];
	CK_OBJECT_HANDLE h = ct_aes(key, 16);
	CK_MECHANISM m = { CKM_AES_CBC, iv, 16 };
	CK_ULONG len = sizeof(out);

	/* Whole blocks only without padding, in one part or at the end of several. */
	ck_assert_rv(ct_encrypt(&m, h, buf, 17, out, &len), CKR_DATA_LEN_RANGE);
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, buf, 31, out, &len), CKR_ENCRYPTED_DATA_LEN_RANGE);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, buf, 20, out, &len), CKR_OK);
	pg_assert_int_eq(len, 16);
	len = sizeof(out);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out, &len), CKR_DATA_LEN_RANGE);
	/* ... which ended the operation. */
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out, &len), CKR_OPERATION_NOT_INITIALIZED);
	/* CBC-PAD: bad padding, a ciphertext not whole blocks, an empty one. */
	len = sizeof(out);
	ck_assert_rv(ct_encrypt(&m, h, buf, 32, out, &len), CKR_OK);
	m.mechanism = CKM_AES_CBC_PAD;
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, out, 32, buf, &len), CKR_ENCRYPTED_DATA_INVALID);
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, out, 31, buf, &len), CKR_ENCRYPTED_DATA_LEN_RANGE);
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, out, 0, buf, &len), CKR_ENCRYPTED_DATA_LEN_RANGE);
}

/* CBC-PAD decryption: a bound for a length query, the exact length when short. */
static void test_cbc_pad_output(void)
{
	unsigned char key[16] = { 3 }, iv[16] = { 4 }, ct[48], pt[48];
	CK_OBJECT_HANDLE h = ct_aes(key, 16);
	CK_MECHANISM m = { CKM_AES_CBC_PAD, iv, 16 };
	CK_ULONG len = sizeof(ct), n, total;

	ck_assert_rv(ct_encrypt(&m, h, "twenty bytes of dat", 20, ct, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, h), CKR_OK);
	n = 0;
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 32, NULL, &n), CKR_OK);
	pg_assert(n >= 20 && n <= 32);
	n = 19;
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 32, pt, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 20);
	ck_assert_rv(p11->C_Decrypt(ct_session, ct, 32, pt, &n), CKR_OK);
	pg_assert_mem_eq(pt, n, "twenty bytes of dat", 20);
	/* In parts: the last block stays back until C_DecryptFinal. */
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, h), CKR_OK);
	n = 0;
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, ct, 32, NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 16);
	n = 15;
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, ct, 32, pt, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 16);
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, ct, 32, pt, &n), CKR_OK);
	total = n;
	n = 3;
	ck_assert_rv(p11->C_DecryptFinal(ct_session, pt + total, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 4);
	ck_assert_rv(p11->C_DecryptFinal(ct_session, pt + total, &n), CKR_OK);
	pg_assert_mem_eq(pt, total + n, "twenty bytes of dat", 20);
}

static void test_ctr_counter(void)
{
	unsigned char key[16] = { 5 }, buf[64] = { 0 }, out[64];
	CK_OBJECT_HANDLE h = ct_aes(key, 16);
	/* Two counter bits, starting at 2: blocks 2 and 3 before they wrap. */
	CK_AES_CTR_PARAMS p = { 2, { [15] = 2 } };
	CK_MECHANISM m = { CKM_AES_CTR, &p, sizeof(p) };
	CK_ULONG len = sizeof(out);

	ck_assert_rv(ct_encrypt(&m, h, buf, 32, out, &len), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(ct_encrypt(&m, h, buf, 33, out, &len), CKR_DATA_LEN_RANGE);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, buf, 30, out, &len), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(p11->C_EncryptUpdate(ct_session, buf, 3, out, &len), CKR_DATA_LEN_RANGE);
	/* Counter bits out of range. */
	p.ulCounterBits = 0;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	p.ulCounterBits = 129;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	/* 64 bits all ones: one block left; the bits above it stay as they are. */
	p.ulCounterBits = 64;
	memset(p.cb + 8, 0xff, 8);
	len = sizeof(out);
	ck_assert_rv(ct_encrypt(&m, h, buf, 16, out, &len), CKR_OK);
	len = sizeof(out);
	ck_assert_rv(ct_encrypt(&m, h, buf, 17, out, &len), CKR_DATA_LEN_RANGE);
}

static void test_gcm_parts(void)
{
	unsigned char key[32] = { 6 }, iv[16] = { 7 }, aad[5] = "head", data[100], one[120],
	              parts[120], back[120];
	CK_OBJECT_HANDLE h = ct_aes(key, 32);
	CK_GCM_PARAMS p = { iv, 16, 128, aad, 5, 96 };
	CK_MECHANISM m = { CKM_AES_GCM, &p, sizeof(p) };
	CK_ULONG len = sizeof(one), n, total = 0;

	memset(data, 0x5a, sizeof(data));
	ck_assert_rv(ct_encrypt(&m, h, data, 100, one, &len), CKR_OK);
	pg_assert_int_eq(len, 112);
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_OK);
	for (size_t off = 0; off < 100; off += 33) {
		n = sizeof(parts) - total;
		ck_assert_rv(p11->C_EncryptUpdate(ct_session, data + off, off + 33 > 100 ? 100 - off : 33,
		                                  parts + total, &n), CKR_OK);
		total += n;
	}
	n = 0;
	ck_assert_rv(p11->C_EncryptFinal(ct_session, NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 12);
	ck_assert_rv(p11->C_EncryptFinal(ct_session, parts + total, &n), CKR_OK);
	pg_assert_mem_eq(parts, total + n, one, len);
	/* Decryption in parts releases nothing before the tag is checked. */
	ck_assert_rv(p11->C_DecryptInit(ct_session, &m, h), CKR_OK);
	n = sizeof(back);
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, one, 50, back, &n), CKR_OK);
	pg_assert_int_eq(n, 0);
	n = sizeof(back);
	ck_assert_rv(p11->C_DecryptUpdate(ct_session, one + 50, len - 50, back, &n), CKR_OK);
	pg_assert_int_eq(n, 0);
	n = sizeof(back);
	ck_assert_rv(p11->C_DecryptFinal(ct_session, back, &n), CKR_OK);
	pg_assert_mem_eq(back, n, data, 100);
	/* The 2.40 layout of CK_GCM_PARAMS (no ulIvBits) still works. */
	{
		struct { CK_BYTE_PTR iv; CK_ULONG iv_len; CK_BYTE_PTR aad; CK_ULONG aad_len, tag; }
			old = { iv, 16, aad, 5, 96 };
		CK_MECHANISM mo = { CKM_AES_GCM, &old, sizeof(old) };
		n = sizeof(back);
		ck_assert_rv(ct_decrypt(&mo, h, one, len, back, &n), CKR_OK);
		pg_assert_mem_eq(back, n, data, 100);
	}
}

static void test_gcm_bad_params(void)
{
	unsigned char key[32] = { 6 }, iv[16] = { 7 }, aad[5] = "head", buf[32] = { 0 };
	CK_OBJECT_HANDLE h = ct_aes(key, 32);
	CK_GCM_PARAMS p = { iv, 16, 128, aad, 5, 96 };
	CK_MECHANISM m = { CKM_AES_GCM, &p, sizeof(p) };
	CK_ULONG n = sizeof(buf);

	p.ulTagBits = 0;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	p.ulTagBits = 136;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	p.ulTagBits = 128;
	p.pIv = NULL;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	p.pIv = iv;
	p.pAAD = NULL;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	m.ulParameterLen = 7;
	ck_assert_rv(p11->C_EncryptInit(ct_session, &m, h), CKR_MECHANISM_PARAM_INVALID);
	/* Shorter than a tag. */
	p.pAAD = aad;
	m.ulParameterLen = sizeof(p);
	ck_assert_rv(ct_decrypt(&m, h, buf, 15, buf, &n), CKR_ENCRYPTED_DATA_LEN_RANGE);
}

/* A MiB through GCM in one call, and back (the size the benchmarks use). */
static void test_gcm_large(void)
{
	size_t size = 1 << 20;
	unsigned char key[32] = { 8 }, iv[12] = { 9 };
	unsigned char *data = malloc(size), *ct = malloc(size + 16), *pt = malloc(size);
	CK_GCM_PARAMS p = { iv, 12, 96, NULL, 0, 128 };
	CK_MECHANISM m = { CKM_AES_GCM, &p, sizeof(p) };
	CK_OBJECT_HANDLE h = ct_aes(key, 32);
	CK_ULONG len = size + 16, n = size;

	pg_assert(data && ct && pt && RAND_bytes(data, (int)size));
	ck_assert_rv(ct_encrypt(&m, h, data, size, ct, &len), CKR_OK);
	ck_assert_rv(ct_decrypt(&m, h, ct, len, pt, &n), CKR_OK);
	pg_assert(n == size && memcmp(pt, data, size) == 0);
	free(data);
	free(ct);
	free(pt);
}

/* ---------------------------------------------------------------------------
 * Wrapping.
 */
static CK_RV unwrap(CK_MECHANISM *m, CK_OBJECT_HANDLE kek, const unsigned char *wrapped,
                    CK_ULONG len, CK_OBJECT_CLASS cls, CK_KEY_TYPE type, CK_ULONG value_len,
                    CK_OBJECT_HANDLE *out)
{
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &type, sizeof(type) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_SIGN, &yes, 1 },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_VALUE_LEN, &value_len, sizeof(value_len) },
	};

	return p11->C_UnwrapKey(ct_session, m, kek, (CK_BYTE_PTR)wrapped, len, t, value_len ? 7 : 6,
	                        out);
}

static void test_wrap_secret(void)
{
	unsigned char kek_v[32] = { 10 }, iv[16] = { 11 }, gcm_iv[12] = { 12 };
	unsigned char value[20] = "a twenty byte secret", wrapped[96], got[32];
	CK_GCM_PARAMS gp = { gcm_iv, 12, 96, NULL, 0, 128 };
	CK_MECHANISM mechs[] = {
		{ CKM_AES_KEY_WRAP, NULL, 0 }, { CKM_AES_KEY_WRAP_PAD, NULL, 0 },
		{ CKM_AES_KEY_WRAP_KWP, NULL, 0 }, { CKM_AES_CBC_PAD, iv, 16 },
		{ CKM_AES_GCM, &gp, sizeof(gp) }, { CKM_AES_ECB, NULL, 0 },
	};
	CK_OBJECT_HANDLE kek = ct_aes(kek_v, 32);
	CK_OBJECT_HANDLE key = ct_secret(CKK_GENERIC_SECRET, value, 20, NULL, 0), back;

	for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++) {
		CK_ULONG len = sizeof(wrapped);
		/* Mechanisms of whole blocks pad with zeros; CKA_VALUE_LEN cuts them off. */
		bool padded = i == 0 || i == 5;
		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[i], kek, key, wrapped, &len), CKR_OK);
		ck_assert_rv(unwrap(&mechs[i], kek, wrapped, len, CKO_SECRET_KEY, CKK_GENERIC_SECRET,
		                    padded ? 20 : 0, &back), CKR_OK);
		pg_assert_mem_eq(got, ct_attr(back, CKA_VALUE, got, sizeof(got)), value, 20);
		pg_assert(!ct_attr_bool(back, CKA_LOCAL));
	}
	/* Errors of the wrapped key. */
	{
		CK_ULONG len = sizeof(wrapped);
		ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[2], kek, key, wrapped, &len), CKR_OK);
		ck_assert_rv(unwrap(&mechs[2], kek, wrapped, len - 1, CKO_SECRET_KEY, CKK_GENERIC_SECRET,
		                    0, &back), CKR_WRAPPED_KEY_LEN_RANGE);
		wrapped[1] ^= 1;
		ck_assert_rv(unwrap(&mechs[2], kek, wrapped, len, CKO_SECRET_KEY, CKK_GENERIC_SECRET, 0,
		                    &back), CKR_WRAPPED_KEY_INVALID);
		/* The class and key type must be given. */
		ck_assert_rv(p11->C_UnwrapKey(ct_session, &mechs[2], kek, wrapped, len, NULL, 0, &back),
		             CKR_TEMPLATE_INCOMPLETE);
	}
}

static void test_wrap_errors(void)
{
	unsigned char v[16] = { 13 }, wrapped[64];
	CK_ATTRIBUTE no_wrap = { CKA_WRAP, &no, 1 };
	CK_ATTRIBUTE locked = { CKA_EXTRACTABLE, &no, 1 };
	CK_ATTRIBUTE trusted_only = { CKA_WRAP_WITH_TRUSTED, &yes, 1 };
	CK_OBJECT_HANDLE kek = ct_aes(v, 16), key = ct_aes(v, 16);
	CK_OBJECT_HANDLE weak = ct_secret(CKK_AES, v, 16, &no_wrap, 1);
	CK_OBJECT_HANDLE stuck = ct_secret(CKK_AES, v, 16, &locked, 1);
	CK_OBJECT_HANDLE fussy = ct_secret(CKK_AES, v, 16, &trusted_only, 1);
	CK_OBJECT_HANDLE rsa = ct_import(ct_rsa2048(), false, NULL, 0);
	CK_MECHANISM m = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_ULONG len = sizeof(wrapped);

	ck_assert_rv(p11->C_WrapKey(ct_session, NULL, kek, key, wrapped, &len), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, key, wrapped, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, 0x7777, key, wrapped, &len),
	             CKR_WRAPPING_KEY_HANDLE_INVALID);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, 0x7777, wrapped, &len),
	             CKR_KEY_HANDLE_INVALID);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, weak, key, wrapped, &len),
	             CKR_KEY_FUNCTION_NOT_PERMITTED);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, rsa, key, wrapped, &len),
	             CKR_WRAPPING_KEY_TYPE_INCONSISTENT);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, stuck, wrapped, &len), CKR_KEY_UNEXTRACTABLE);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, fussy, wrapped, &len), CKR_KEY_NOT_WRAPPABLE);
	m.mechanism = CKM_SHA256_HMAC;
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, key, wrapped, &len), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_AES_KEY_WRAP;
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &m, 0x7777, wrapped, 24, NULL, 0, &key),
	             CKR_UNWRAPPING_KEY_HANDLE_INVALID);
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &m, kek, NULL, 24, NULL, 0, &key), CKR_ARGUMENTS_BAD);
}

/* Private keys travel as PKCS#8 and come back as working keys. */
static void test_wrap_private(void)
{
	static const char *const types[] = { "RSA", "P-384", "ED25519" };
	unsigned char kek_v[32] = { 14 }, iv[16] = { 15 }, wrapped[2048], sig[512];
	CK_MECHANISM mechs[] = { { CKM_AES_KEY_WRAP_KWP, NULL, 0 }, { CKM_AES_CBC_PAD, iv, 16 } };
	CK_OBJECT_HANDLE kek = ct_aes(kek_v, 32);

	for (size_t t = 0; t < PG_N_ELEMENTS(types); t++) {
		EVP_PKEY *pkey = t == 0 ? ct_rsa2048() : ct_pkey(types[t]);
		CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
		CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
		CK_KEY_TYPE kt = t == 0 ? CKK_RSA : t == 1 ? CKK_EC : CKK_EC_EDWARDS;
		CK_MECHANISM sm = { t == 0 ? CKM_SHA256_RSA_PKCS : t == 1 ? CKM_ECDSA_SHA256 : CKM_EDDSA,
		                    NULL, 0 };
		for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++) {
			CK_OBJECT_HANDLE back;
			CK_ULONG len = sizeof(wrapped), slen = sizeof(sig);
			ck_assert_rv(p11->C_WrapKey(ct_session, &mechs[i], kek, priv, wrapped, &len), CKR_OK);
			ck_assert_rv(unwrap(&mechs[i], kek, wrapped, len, CKO_PRIVATE_KEY, kt, 0, &back),
			             CKR_OK);
			pg_assert_int_eq(ct_attr_ulong(back, CKA_KEY_TYPE), kt);
			ck_assert_rv(ct_sign(&sm, back, "msg", 3, sig, &slen), CKR_OK);
			ck_assert_rv(ct_verify(&sm, pub, "msg", 3, sig, slen), CKR_OK);
			/* The template's key type must be the wrapped key's. */
			ck_assert_rv(unwrap(&mechs[i], kek, wrapped, len, CKO_PRIVATE_KEY,
			                    t == 0 ? CKK_EC : CKK_RSA, 0, &back), CKR_TEMPLATE_INCONSISTENT);
		}
		if (t != 0)
			EVP_PKEY_free(pkey);
	}
}

/* CKA_WRAP_TEMPLATE and CKA_UNWRAP_TEMPLATE of the wrapping key. */
static void test_wrap_templates(void)
{
	unsigned char v[16] = { 16 }, wrapped[64];
	CK_ATTRIBUTE want_label[] = { { CKA_LABEL, (void *)"ok", 2 } };
	CK_ATTRIBUTE force[] = { { CKA_EXTRACTABLE, &no, 1 } };
	CK_ATTRIBUTE kek_t[] = {
		{ CKA_WRAP_TEMPLATE, want_label, sizeof(want_label) },
		{ CKA_UNWRAP_TEMPLATE, force, sizeof(force) },
	};
	CK_ATTRIBUTE label = { CKA_LABEL, (void *)"ok", 2 };
	CK_OBJECT_HANDLE kek = ct_secret(CKK_AES, v, 16, kek_t, 2);
	CK_OBJECT_HANDLE good = ct_secret(CKK_AES, v, 16, &label, 1), bad = ct_aes(v, 16), back;
	CK_MECHANISM m = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_ULONG len = sizeof(wrapped);
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, (void *)&secret_cls, sizeof(secret_cls) },
		{ CKA_KEY_TYPE, (void *)&aes_type, sizeof(aes_type) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
	};

	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, bad, wrapped, &len), CKR_KEY_NOT_WRAPPABLE);
	ck_assert_rv(p11->C_WrapKey(ct_session, &m, kek, good, wrapped, &len), CKR_OK);
	/* The unwrap template wins over silence, and clashes with a contrary value. */
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &m, kek, wrapped, len, t, 3, &back), CKR_OK);
	pg_assert(!ct_attr_bool(back, CKA_EXTRACTABLE));
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &m, kek, wrapped, len, t, 4, &back),
	             CKR_TEMPLATE_INCONSISTENT);
}

/* ---------------------------------------------------------------------------
 * Message-based AES-GCM (3.0).
 */
static void test_message_gcm(void)
{
	unsigned char key_v[16] = { 17 }, iv[12] = { 1, 2, 3, 4 }, tag[16], ct[64], pt[64];
	CK_OBJECT_HANDLE key = ct_aes(key_v, 16);
	CK_MECHANISM m = { CKM_AES_GCM, NULL, 0 };
	CK_GCM_MESSAGE_PARAMS p = { iv, 12, 32, CKG_GENERATE_COUNTER, tag, 128 };
	CK_ULONG len = sizeof(ct), n;
	unsigned char first_iv[12];

	ck_assert_rv(p11->C_EncryptMessage(ct_session, &p, sizeof(p), NULL, 0, (CK_BYTE_PTR)"x", 1,
	                                   ct, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_MessageEncryptInit(ct_session, &m, key), CKR_OK);
	ck_assert_rv(p11->C_MessageEncryptInit(ct_session, &m, key), CKR_OPERATION_ACTIVE);
	/* The token fills the IV after the fixed 32 bits, from a counter. */
	ck_assert_rv(p11->C_EncryptMessage(ct_session, &p, sizeof(p), (CK_BYTE_PTR)"aad", 3,
	                                   (CK_BYTE_PTR)"hello world", 11, ct, &len), CKR_OK);
	pg_assert_int_eq(len, 11);
	pg_assert_mem_eq(iv, 4, "\x01\x02\x03\x04", 4);
	memcpy(first_iv, iv, 12);
	len = sizeof(ct);
	ck_assert_rv(p11->C_EncryptMessage(ct_session, &p, sizeof(p), NULL, 0, (CK_BYTE_PTR)"again",
	                                   5, ct + 16, &len), CKR_OK);
	pg_assert(memcmp(first_iv, iv, 12) != 0);
	pg_assert_mem_eq(iv, 4, "\x01\x02\x03\x04", 4);
	/* The second message decrypts with the IV the token chose. */
	ck_assert_rv(p11->C_MessageDecryptInit(ct_session, &m, key), CKR_OK);
	n = sizeof(pt);
	ck_assert_rv(p11->C_DecryptMessage(ct_session, &p, sizeof(p), NULL, 0, ct + 16, 5, pt, &n),
	             CKR_OK);
	pg_assert_mem_eq(pt, n, "again", 5);
	tag[0] ^= 1;
	n = sizeof(pt);
	ck_assert_rv(p11->C_DecryptMessage(ct_session, &p, sizeof(p), NULL, 0, ct + 16, 5, pt, &n),
	             CKR_AEAD_DECRYPT_FAILED);
	/* A message in parts. */
	p.ivGenerator = CKG_NO_GENERATE;
	ck_assert_rv(p11->C_EncryptMessageBegin(ct_session, &p, sizeof(p), (CK_BYTE_PTR)"aad", 3),
	             CKR_OK);
	len = sizeof(ct);
	ck_assert_rv(p11->C_EncryptMessageNext(ct_session, &p, sizeof(p), (CK_BYTE_PTR)"hello ", 6,
	                                       ct, &len, 0), CKR_OK);
	n = sizeof(ct) - len;
	ck_assert_rv(p11->C_EncryptMessageNext(ct_session, &p, sizeof(p), (CK_BYTE_PTR)"world", 5,
	                                       ct + len, &n, CKF_END_OF_MESSAGE), CKR_OK);
	ck_assert_rv(p11->C_DecryptMessageBegin(ct_session, &p, sizeof(p), (CK_BYTE_PTR)"aad", 3),
	             CKR_OK);
	n = sizeof(pt);
	ck_assert_rv(p11->C_DecryptMessageNext(ct_session, &p, sizeof(p), ct, 11, pt, &n,
	                                       CKF_END_OF_MESSAGE), CKR_OK);
	pg_assert_mem_eq(pt, n, "hello world", 11);
	ck_assert_rv(p11->C_MessageEncryptFinal(ct_session), CKR_OK);
	ck_assert_rv(p11->C_MessageDecryptFinal(ct_session), CKR_OK);
	ck_assert_rv(p11->C_MessageEncryptFinal(ct_session), CKR_OPERATION_NOT_INITIALIZED);
}

/* Only GCM is message-based, and no mechanism signs messages. */
static void test_message_others(void)
{
	unsigned char key_v[16] = { 17 }, out[32];
	CK_OBJECT_HANDLE key = ct_aes(key_v, 16);
	CK_MECHANISM m = { CKM_AES_CBC, NULL, 0 };
	CK_ULONG len = sizeof(out);

	ck_assert_rv(p11->C_MessageEncryptInit(ct_session, &m, key), CKR_MECHANISM_INVALID);
	m.mechanism = CKM_SHA256_HMAC;
	ck_assert_rv(p11->C_MessageSignInit(ct_session, &m, key), CKR_MECHANISM_INVALID);
	ck_assert_rv(p11->C_MessageVerifyInit(ct_session, &m, key), CKR_MECHANISM_INVALID);
	ck_assert_rv(p11->C_SignMessage(ct_session, NULL, 0, (CK_BYTE_PTR)"x", 1, out, &len),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignMessage(ct_session, NULL, 0, (CK_BYTE_PTR)"x", 1, out, NULL),
	             CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_MessageVerifyFinal(ct_session), CKR_OPERATION_NOT_INITIALIZED);
}

int main(int argc, char **argv)
{
	pg_test_fixture(ct_setup, ct_teardown);
	pg_test("aes/keygen", test_keygen);
	pg_test("aes/modes-vs-libcrypto", test_modes_vs_libcrypto);
	pg_test("aes/block-lengths", test_block_lengths);
	pg_test("aes/cbc-pad-output", test_cbc_pad_output);
	pg_test("aes/ctr-counter", test_ctr_counter);
	pg_test("aes/gcm-parts", test_gcm_parts);
	pg_test("aes/gcm-bad-params", test_gcm_bad_params);
	pg_test("aes/gcm-large", test_gcm_large);
	pg_test("wrap/secret", test_wrap_secret);
	pg_test("wrap/errors", test_wrap_errors);
	pg_test("wrap/private", test_wrap_private);
	pg_test("wrap/templates", test_wrap_templates);
	pg_test("message/gcm", test_message_gcm);
	pg_test("message/others", test_message_others);
	return pg_test_run(argc, argv);
}
