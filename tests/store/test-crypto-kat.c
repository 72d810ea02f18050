/*
 * Known-answer tests of the mech layer through the module: vectors from
 * FIPS 180-4 / FIPS 202 (SHA-2, SHA-3 of "abc"), RFC 2202 and RFC 4231
 * (HMAC), RFC 4493 (CMAC), NIST SP 800-38A (AES ECB, CBC, CTR), the GCM
 * specification's test cases (McGrew and Viega), RFC 3394 and RFC 5649
 * (key wrap) and RFC 8032 (Ed25519).
 */
#include "crypto-test.h"

static void check_hex(const unsigned char *got, size_t got_len, const char *hex)
{
	unsigned char want[256];
	size_t n = ct_hex(hex, want, sizeof(want));

	pg_assert_mem_eq(got, got_len, want, n);
}

/* ---------------------------------------------------------------------------
 * Digests.
 */
static const struct {
	CK_MECHANISM_TYPE mech;
	const char *abc;
} digest_abc[] = {
	{ CKM_SHA_1, "a9993e364706816aba3e25717850c26c9cd0d89d" },
	{ CKM_SHA224, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7" },
	{ CKM_SHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ CKM_SHA384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
	              "8086072ba1e7cc2358baeca134c825a7" },
	{ CKM_SHA512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	              "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
	{ CKM_SHA3_224, "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf" },
	{ CKM_SHA3_256, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532" },
	{ CKM_SHA3_384, "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b2"
	                "98d88cea927ac7f539f1edf228376d25" },
	{ CKM_SHA3_512, "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
	                "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0" },
};

static void test_digest_abc(void)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(digest_abc); i++) {
		CK_MECHANISM m = { digest_abc[i].mech, NULL, 0 };
		unsigned char out[64];
		CK_ULONG len = sizeof(out);

		/* Single-part. */
		ck_assert_rv(ct_digest(m.mechanism, "abc", 3, out, &len), CKR_OK);
		check_hex(out, len, digest_abc[i].abc);
		/* Multi-part, in uneven pieces. */
		len = sizeof(out);
		ck_assert_rv(p11->C_DigestInit(ct_session, &m), CKR_OK);
		ck_assert_rv(p11->C_DigestUpdate(ct_session, (CK_BYTE_PTR)"a", 1), CKR_OK);
		ck_assert_rv(p11->C_DigestUpdate(ct_session, (CK_BYTE_PTR)"", 0), CKR_OK);
		ck_assert_rv(p11->C_DigestUpdate(ct_session, (CK_BYTE_PTR)"bc", 2), CKR_OK);
		ck_assert_rv(p11->C_DigestFinal(ct_session, out, &len), CKR_OK);
		check_hex(out, len, digest_abc[i].abc);
	}
}

/* C_DigestKey digests a secret key's value as if it were data. */
static void test_digest_key(void)
{
	CK_MECHANISM m = { CKM_SHA256, NULL, 0 };
	CK_OBJECT_HANDLE key = ct_secret(CKK_GENERIC_SECRET, "bc", 2, NULL, 0);
	unsigned char out[32];
	CK_ULONG len = sizeof(out);

	ck_assert_rv(p11->C_DigestInit(ct_session, &m), CKR_OK);
	ck_assert_rv(p11->C_DigestUpdate(ct_session, (CK_BYTE_PTR)"a", 1), CKR_OK);
	ck_assert_rv(p11->C_DigestKey(ct_session, key), CKR_OK);
	ck_assert_rv(p11->C_DigestFinal(ct_session, out, &len), CKR_OK);
	check_hex(out, len, digest_abc[2].abc);
}

/* ---------------------------------------------------------------------------
 * MACs.
 */
static void mac_case(CK_MECHANISM_TYPE mech, CK_ULONG general, CK_KEY_TYPE type,
                     const char *key_hex, const char *msg, size_t msg_len, const char *want)
{
	unsigned char key[64], out[64];
	size_t key_len = ct_hex(key_hex, key, sizeof(key));
	CK_OBJECT_HANDLE h = ct_secret(type, key, key_len, NULL, 0);
	CK_MECHANISM m = { mech, general ? &general : NULL, general ? sizeof(general) : 0 };
	CK_ULONG len = sizeof(out);

	ck_assert_rv(ct_sign(&m, h, msg, msg_len, out, &len), CKR_OK);
	check_hex(out, len, want);
	ck_assert_rv(ct_verify(&m, h, msg, msg_len, out, len), CKR_OK);
	out[0] ^= 1;
	ck_assert_rv(ct_verify(&m, h, msg, msg_len, out, len), CKR_SIGNATURE_INVALID);
	/* Multi-part gives the same MAC. */
	len = sizeof(out);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, h), CKR_OK);
	for (size_t i = 0; i < msg_len; i++)
		ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)msg + i, 1), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, out, &len), CKR_OK);
	check_hex(out, len, want);
}

#define KEY_0B "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"

static void test_hmac(void)
{
	/* RFC 2202 test case 1. */
	mac_case(CKM_SHA_1_HMAC, 0, CKK_GENERIC_SECRET, KEY_0B, "Hi There", 8,
	         "b617318655057264e28bc0b6fb378c8ef146be00");
	/* RFC 4231 test case 1, and 2 (with a key of the HMAC key type). */
	mac_case(CKM_SHA224_HMAC, 0, CKK_GENERIC_SECRET, KEY_0B, "Hi There", 8,
	         "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22");
	mac_case(CKM_SHA256_HMAC, 0, CKK_GENERIC_SECRET, KEY_0B, "Hi There", 8,
	         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	mac_case(CKM_SHA384_HMAC, 0, CKK_GENERIC_SECRET, KEY_0B, "Hi There", 8,
	         "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59c"
	         "faea9ea9076ede7f4af152e8b2fa9cb6");
	mac_case(CKM_SHA512_HMAC, 0, CKK_GENERIC_SECRET, KEY_0B, "Hi There", 8,
	         "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
	         "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854");
	mac_case(CKM_SHA256_HMAC, 0, CKK_SHA256_HMAC, "4a656665", "what do ya want for nothing?", 28,
	         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* RFC 4231 test case 5: output truncated to 128 bits (the _GENERAL form). */
	mac_case(CKM_SHA256_HMAC_GENERAL, 16, CKK_GENERIC_SECRET,
	         "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "Test With Truncation", 20,
	         "a3b6167473100ee06e0c796c2955552b");
}

static void test_cmac(void)
{
	/* RFC 4493 examples 1 and 2. */
	mac_case(CKM_AES_CMAC, 0, CKK_AES, "2b7e151628aed2a6abf7158809cf4f3c", "", 0,
	         "bb1d6929e95937287fa37d129b756746");
	mac_case(CKM_AES_CMAC, 0, CKK_AES, "2b7e151628aed2a6abf7158809cf4f3c",
	         "\x6b\xc1\xbe\xe2\x2e\x40\x9f\x96\xe9\x3d\x7e\x11\x73\x93\x17\x2a", 16,
	         "070a16b46b4d4144f79bdd9dd04a287c");
	mac_case(CKM_AES_CMAC_GENERAL, 8, CKK_AES, "2b7e151628aed2a6abf7158809cf4f3c", "", 0,
	         "bb1d6929e9593728");
}

/* ---------------------------------------------------------------------------
 * AES modes, SP 800-38A appendix F (AES-128).
 */
#define SP_KEY "2b7e151628aed2a6abf7158809cf4f3c"
#define SP_PLAIN "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51" \
                 "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"

static void cipher_case(CK_MECHANISM *m, const char *key_hex, const char *plain_hex,
                        const char *cipher_hex)
{
	unsigned char key[32], plain[64], want[80], out[96], back[96];
	size_t key_len = ct_hex(key_hex, key, sizeof(key));
	size_t plain_len = ct_hex(plain_hex, plain, sizeof(plain));
	size_t want_len = ct_hex(cipher_hex, want, sizeof(want));
	CK_OBJECT_HANDLE h = ct_aes(key, key_len);
	CK_ULONG len = sizeof(out), part, total = 0;

	ck_assert_rv(ct_encrypt(m, h, plain, plain_len, out, &len), CKR_OK);
	pg_assert_mem_eq(out, len, want, want_len);
	len = sizeof(back);
	ck_assert_rv(ct_decrypt(m, h, want, want_len, back, &len), CKR_OK);
	pg_assert_mem_eq(back, len, plain, plain_len);
	/* Multi-part in pieces of 1, 7, 13 ... bytes. */
	ck_assert_rv(p11->C_EncryptInit(ct_session, m, h), CKR_OK);
	for (size_t off = 0, step = 1; off < plain_len; off += step, step += 6) {
		if (step > plain_len - off)
			step = plain_len - off;
		part = sizeof(out) - total;
		ck_assert_rv(p11->C_EncryptUpdate(ct_session, plain + off, step, out + total, &part),
		             CKR_OK);
		total += part;
	}
	part = sizeof(out) - total;
	ck_assert_rv(p11->C_EncryptFinal(ct_session, out + total, &part), CKR_OK);
	total += part;
	pg_assert_mem_eq(out, total, want, want_len);
	/* And back, in pieces of 5. */
	total = 0;
	ck_assert_rv(p11->C_DecryptInit(ct_session, m, h), CKR_OK);
	for (size_t off = 0; off < want_len; off += 5) {
		size_t step = want_len - off < 5 ? want_len - off : 5;
		part = sizeof(back) - total;
		ck_assert_rv(p11->C_DecryptUpdate(ct_session, want + off, step, back + total, &part),
		             CKR_OK);
		total += part;
	}
	part = sizeof(back) - total;
	ck_assert_rv(p11->C_DecryptFinal(ct_session, back + total, &part), CKR_OK);
	total += part;
	pg_assert_mem_eq(back, total, plain, plain_len);
}

static void test_aes_ecb(void)
{
	CK_MECHANISM m = { CKM_AES_ECB, NULL, 0 };

	cipher_case(&m, SP_KEY, SP_PLAIN,
	            "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf"
	            "43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4");
}

static void test_aes_cbc(void)
{
	unsigned char iv[16];
	CK_MECHANISM m = { CKM_AES_CBC, iv, sizeof(iv) };

	ct_hex("000102030405060708090a0b0c0d0e0f", iv, sizeof(iv));
	cipher_case(&m, SP_KEY, SP_PLAIN,
	            "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2"
	            "73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7");
	/* CBC-PAD: the same blocks, then a whole block of padding. */
	m.mechanism = CKM_AES_CBC_PAD;
	cipher_case(&m, SP_KEY, "6bc1bee22e409f96e93d7e117393172a",
	            "7649abac8119b246cee98e9b12e9197d 8964e0b149c10b7b682e6e39aaeb731c");
}

static void test_aes_ctr(void)
{
	CK_AES_CTR_PARAMS p = { 128, { 0 } };
	CK_MECHANISM m = { CKM_AES_CTR, &p, sizeof(p) };

	ct_hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", p.cb, sizeof(p.cb));
	cipher_case(&m, SP_KEY, SP_PLAIN,
	            "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
	            "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee");
	/* A part block at the end is fine in counter mode. */
	cipher_case(&m, SP_KEY, "6bc1bee22e409f96e93d7e11", "874d6191b620e3261bef6864");
}

/* ---------------------------------------------------------------------------
 * AES-GCM: test cases 2, 4 and 16 of the GCM specification.
 */
static void gcm_case(const char *key_hex, const char *iv_hex, const char *aad_hex,
                     const char *plain_hex, const char *cipher_tag_hex)
{
	unsigned char key[32], iv[12], aad[20], plain[64], want[96], out[96];
	size_t key_len = ct_hex(key_hex, key, sizeof(key));
	size_t plain_len = ct_hex(plain_hex, plain, sizeof(plain));
	size_t want_len = ct_hex(cipher_tag_hex, want, sizeof(want));
	CK_GCM_PARAMS p = { iv, ct_hex(iv_hex, iv, sizeof(iv)), 96, aad, 0, 128 };
	CK_MECHANISM m = { CKM_AES_GCM, &p, sizeof(p) };
	CK_OBJECT_HANDLE h = ct_aes(key, key_len);
	CK_ULONG len = sizeof(out);

	p.ulAADLen = ct_hex(aad_hex, aad, sizeof(aad));
	ck_assert_rv(ct_encrypt(&m, h, plain, plain_len, out, &len), CKR_OK);
	pg_assert_mem_eq(out, len, want, want_len);
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, want, want_len, out, &len), CKR_OK);
	pg_assert_mem_eq(out, len, plain, plain_len);
	/* A changed tag: nothing comes out. */
	want[want_len - 1] ^= 0x80;
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, want, want_len, out, &len), CKR_ENCRYPTED_DATA_INVALID);
}

static void test_gcm(void)
{
	gcm_case("00000000000000000000000000000000", "000000000000000000000000", "",
	         "00000000000000000000000000000000",
	         "0388dace60b6a392f328c2b971b2fe78 ab6e47d42cec13bdf53a67b21257bddf");
	gcm_case("feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	         "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
	         "5bc94fbc3221a5db94fae95ae7121a47");
	gcm_case("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	         "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	         "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
	         "76fc6ece0f4e1768cddf8853bb2d551b");
}

/* ---------------------------------------------------------------------------
 * Key wrap: RFC 3394 4.1 and 4.6, RFC 5649 section 6.
 */
static void wrap_case(CK_MECHANISM_TYPE mech, const char *kek_hex, const char *key_hex,
                      const char *want_hex)
{
	CK_MECHANISM m = { mech, NULL, 0 };

	cipher_case(&m, kek_hex, key_hex, want_hex);
}

static void test_key_wrap(void)
{
	wrap_case(CKM_AES_KEY_WRAP, "000102030405060708090a0b0c0d0e0f",
	          "00112233445566778899aabbccddeeff",
	          "1fa68b0a8112b447 aef34bd8fb5a7b82 9d3e862371d2cfe5");
	wrap_case(CKM_AES_KEY_WRAP, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	          "00112233445566778899aabbccddeeff000102030405060708090a0b0c0d0e0f",
	          "28c9f404c4b810f4 cbccb35cfb87f826 3f5786e2d80ed326 cbc7f0e71a99f43b fb988b9b7a02dd21");
	wrap_case(CKM_AES_KEY_WRAP_KWP, "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
	          "c37b7e6492584340bed12207808941155068f738",
	          "138bdeaa9b8fa7fc 61f97742e72248ee 5ae6ae5360d1ae6a 5f54f373fa543b6a");
	wrap_case(CKM_AES_KEY_WRAP_KWP, "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8",
	          "466f7250617369", "afbeb0f07dfbf541 9200f2ccb50bb24f");
}

/* A wrapped key that does not authenticate is refused. */
static void test_key_wrap_tampered(void)
{
	unsigned char kek[16], wrapped[24], out[32];
	CK_MECHANISM m = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_OBJECT_HANDLE h = ct_aes(kek, ct_hex("000102030405060708090a0b0c0d0e0f", kek, 16));
	CK_ULONG len = sizeof(out);

	ct_hex("1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5", wrapped, sizeof(wrapped));
	wrapped[3] ^= 4;
	ck_assert_rv(ct_decrypt(&m, h, wrapped, sizeof(wrapped), out, &len),
	             CKR_ENCRYPTED_DATA_INVALID);
	m.mechanism = CKM_AES_KEY_WRAP_KWP;
	len = sizeof(out);
	ck_assert_rv(ct_decrypt(&m, h, wrapped, sizeof(wrapped), out, &len),
	             CKR_ENCRYPTED_DATA_INVALID);
}

/* ---------------------------------------------------------------------------
 * Ed25519, RFC 8032 section 7.1, tests 1 and 2.
 */
static void ed25519_case(const char *secret_hex, const char *public_hex, const char *msg_hex,
                         const char *sig_hex)
{
	static const CK_OBJECT_CLASS priv_cls = CKO_PRIVATE_KEY, pub_cls = CKO_PUBLIC_KEY;
	static const CK_KEY_TYPE kt = CKK_EC_EDWARDS;
	/* The curve as the specification's PrintableString, the point as bare bytes. */
	static const char curve[] = "\x13\x0c" "edwards25519";
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	unsigned char secret[32], point[32], msg[8], sig[64], out[64];
	size_t msg_len = ct_hex(msg_hex, msg, sizeof(msg));
	CK_ATTRIBUTE priv_t[] = {
		{ CKA_CLASS, (void *)&priv_cls, sizeof(priv_cls) },
		{ CKA_KEY_TYPE, (void *)&kt, sizeof(kt) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_SIGN, &yes, 1 },
		{ CKA_EC_PARAMS, (void *)curve, 14 },
		{ CKA_VALUE, secret, ct_hex(secret_hex, secret, sizeof(secret)) },
	};
	CK_ATTRIBUTE pub_t[] = {
		{ CKA_CLASS, (void *)&pub_cls, sizeof(pub_cls) },
		{ CKA_KEY_TYPE, (void *)&kt, sizeof(kt) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_VERIFY, &yes, 1 },
		{ CKA_EC_PARAMS, (void *)ct_ed25519, sizeof(ct_ed25519) },
		{ CKA_EC_POINT, point, ct_hex(public_hex, point, sizeof(point)) },
	};
	CK_MECHANISM m = { CKM_EDDSA, NULL, 0 };
	CK_OBJECT_HANDLE priv, pub;
	CK_ULONG len = sizeof(out);

	ct_hex(sig_hex, sig, sizeof(sig));
	ck_assert_rv(p11->C_CreateObject(ct_session, priv_t, PG_N_ELEMENTS(priv_t), &priv), CKR_OK);
	ck_assert_rv(p11->C_CreateObject(ct_session, pub_t, PG_N_ELEMENTS(pub_t), &pub), CKR_OK);
	ck_assert_rv(ct_sign(&m, priv, msg, msg_len, out, &len), CKR_OK);
	pg_assert_mem_eq(out, len, sig, sizeof(sig));
	ck_assert_rv(ct_verify(&m, pub, msg, msg_len, sig, sizeof(sig)), CKR_OK);
	sig[10] ^= 1;
	ck_assert_rv(ct_verify(&m, pub, msg, msg_len, sig, sizeof(sig)), CKR_SIGNATURE_INVALID);
}

static void test_ed25519(void)
{
	ed25519_case("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
	             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	             "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
	ed25519_case("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
	             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
	             "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
}

int main(int argc, char **argv)
{
	pg_test_fixture(ct_setup, ct_teardown);
	pg_test("digest/abc", test_digest_abc);
	pg_test("digest/key", test_digest_key);
	pg_test("mac/hmac", test_hmac);
	pg_test("mac/cmac", test_cmac);
	pg_test("aes/ecb", test_aes_ecb);
	pg_test("aes/cbc", test_aes_cbc);
	pg_test("aes/ctr", test_aes_ctr);
	pg_test("aes/gcm", test_gcm);
	pg_test("wrap/kw-kwp", test_key_wrap);
	pg_test("wrap/tampered", test_key_wrap_tampered);
	pg_test("eddsa/rfc8032", test_ed25519);
	return pg_test_run(argc, argv);
}
