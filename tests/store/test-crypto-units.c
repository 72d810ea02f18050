/*
 * Units of the mech layer below the entry points: the mechanism table,
 * CKA_EC_PARAMS and CKA_EC_POINT decoding (well-formed and hostile),
 * the ECDSA r||s <-> DER conversion against libcrypto's, keys built from
 * attribute arrays, and the context pools.
 */
#include "crypto.h"

#include "harness.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/rand.h>

#include <string.h>

static void test_mech_table(void)
{
	CK_MECHANISM_TYPE list[256];
	CK_ULONG n = 0;
	CK_MECHANISM_INFO info;

	pg_assert_ulong_eq(pg_mech_list(NULL, &n), CKR_OK);
	pg_assert(n > 60 && n < 256);
	for (CK_ULONG i = 0; i < n; i++) {
		pg_assert_ulong_eq(pg_mech_list(list, &n), CKR_OK);
		pg_assert_not_null(pg_mech_find(list[i]));
		pg_assert_ulong_eq(pg_mech_info(list[i], &info), CKR_OK);
		/* Every mechanism appears once. */
		for (CK_ULONG j = 0; j < i; j++)
			pg_assert(list[i] != list[j]);
	}
	pg_assert_null(pg_mech_find(CKM_DES3_CBC));
	pg_assert(pg_mech_key_type_ok(pg_mech_find(CKM_SHA256_HMAC), CKK_GENERIC_SECRET));
	pg_assert(pg_mech_key_type_ok(pg_mech_find(CKM_SHA256_HMAC), CKK_SHA256_HMAC));
	pg_assert(!pg_mech_key_type_ok(pg_mech_find(CKM_SHA256_HMAC), CKK_SHA384_HMAC));
	pg_assert(!pg_mech_key_type_ok(pg_mech_find(CKM_SHA256_HMAC), CKK_AES));
	pg_assert_int_eq(pg_hash_from_mgf(CKG_MGF1_SHA384), PG_HASH_SHA384);
	pg_assert_int_eq(pg_hash_from_kdf(CKD_SHA3_256_KDF), PG_HASH_SHA3_256);
	pg_assert_int_eq(pg_hash_from_kdf(CKD_NULL), PG_HASH_NONE);
	pg_assert_int_eq(pg_hash_len(PG_HASH_SHA3_512), 64);
	pg_assert_null(pg_aes_cipher(PG_AES_GCM, 20));
}

static void test_curve_params(void)
{
	static const unsigned char p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	const pg_curve *c = pg_curve_from_params(p256, sizeof(p256));

	pg_assert_not_null(c);
	pg_assert_int_eq(c->bits, 256);
	pg_assert(pg_curve_from_params("\x13\x0aprime256v1", 12) == c);
	pg_assert(pg_curve_from_params("\x13\x05P-256", 7) == c);
	/* UTF8String, as some callers write it. */
	pg_assert(pg_curve_from_params("\x0c\x09secp256r1", 11) == c);
	pg_assert_int_eq(pg_curve_from_params("\x13\x0c" "edwards25519", 14)->key_type,
	                 CKK_EC_EDWARDS);
	pg_assert_int_eq(pg_curve_from_params("\x13\x0a" "edwards448", 12)->bits, 448);
	/* Hostile: truncated, trailing bytes, wrong length byte, long form of a short length. */
	pg_assert_null(pg_curve_from_params(p256, sizeof(p256) - 1));
	pg_assert_null(pg_curve_from_params("\x13\x0aprime256v1x", 13));
	pg_assert_null(pg_curve_from_params("\x13\x0bprime256v1", 12));
	pg_assert_null(pg_curve_from_params("\x13\x81\x0aprime256v1", 13));
	pg_assert_null(pg_curve_from_params("\x13\x00", 2));
	pg_assert_null(pg_curve_from_params("", 0));
	pg_assert_null(pg_curve_from_params(NULL, 10));
	/* Not offered: secp256k1, brainpool. */
	pg_assert_null(pg_curve_from_params("\x06\x05\x2b\x81\x04\x00\x0a", 7));
	pg_assert_null(pg_curve_from_params("\x13\x0fbrainpoolP256r1", 17));
}

static void test_point_decode(void)
{
	const pg_curve *p256 = pg_curve_by_name("P-256"), *ed = pg_curve_by_name("ED25519");
	unsigned char raw[65], der[67], edk[34];
	const unsigned char *pt;
	size_t len;

	raw[0] = 0x04;
	memset(raw + 1, 0x3f, 64);
	der[0] = 0x04, der[1] = 65;
	memcpy(der + 2, raw, 65);
	pg_assert(pg_ec_point_decode(p256, der, 67, &pt, &len));
	pg_assert(pt == der + 2 && len == 65);
	pg_assert(pg_ec_point_decode(p256, raw, 65, &pt, &len));
	pg_assert(pt == raw && len == 65);
	/* A bare point whose bytes look like a DER header is still read as bare. */
	raw[1] = 0x3f;
	pg_assert(pg_ec_point_decode(p256, raw, 65, &pt, &len) && pt == raw);
	/* Compressed points. */
	raw[0] = 0x02;
	pg_assert(pg_ec_point_decode(p256, raw, 33, &pt, &len) && len == 33);
	/* Hostile: wrong lengths, wrong first byte, a DER length past the end. */
	pg_assert(!pg_ec_point_decode(p256, der, 66, &pt, &len));
	pg_assert(!pg_ec_point_decode(p256, raw, 64, &pt, &len));
	raw[0] = 0x05;
	pg_assert(!pg_ec_point_decode(p256, raw, 65, &pt, &len));
	der[1] = 0x81;
	pg_assert(!pg_ec_point_decode(p256, der, 67, &pt, &len));
	pg_assert(!pg_ec_point_decode(p256, NULL, 0, &pt, &len));
	/* Edwards: 32 bytes bare, or 34 as DER; a 32-byte key starting 04 1e is bare. */
	edk[0] = 0x04, edk[1] = 0x20;
	memset(edk + 2, 7, 32);
	pg_assert(pg_ec_point_decode(ed, edk, 34, &pt, &len) && len == 32 && pt == edk + 2);
	edk[1] = 0x1e;
	pg_assert(pg_ec_point_decode(ed, edk, 32, &pt, &len) && pt == edk);
	pg_assert(!pg_ec_point_decode(ed, edk, 33, &pt, &len));
}

static void test_ecdsa_conversion(void)
{
	for (int i = 0; i < 200; i++) {
		size_t n = i % 3 == 0 ? 32 : i % 3 == 1 ? 48 : 66;
		unsigned char rs[132], back[132], *der, *ref = NULL;
		size_t der_len;
		ECDSA_SIG *sig = ECDSA_SIG_new();
		int ref_len;

		pg_assert(RAND_bytes(rs, (int)(2 * n)));
		/* Leading zeros and high bits, the cases DER encodes differently. */
		if (i % 4 == 0)
			memset(rs, 0, 5);
		if (i % 5 == 0)
			rs[n] |= 0x80;
		der = pg_ecdsa_rs_to_der(rs, n, &der_len);
		pg_assert_not_null(der);
		pg_assert(ECDSA_SIG_set0(sig, BN_bin2bn(rs, (int)n, NULL), BN_bin2bn(rs + n, (int)n, NULL)));
		ref_len = i2d_ECDSA_SIG(sig, &ref);
		pg_assert_mem_eq(der, der_len, ref, (size_t)ref_len);
		pg_assert(pg_ecdsa_der_to_rs(der, der_len, n, back));
		pg_assert_mem_eq(back, 2 * n, rs, 2 * n);
		OPENSSL_free(ref);
		ECDSA_SIG_free(sig);
		free(der);
	}
}

static void test_ecdsa_hostile(void)
{
	unsigned char rs[64];
	/* SEQUENCE { INTEGER 1, INTEGER 2 } and broken variants. */
	static const unsigned char good[] = { 0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02 };
	static const unsigned char extra[] = { 0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x00 };
	static const unsigned char negative[] = { 0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x02 };
	static const unsigned char padded[] = { 0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x02 };
	static const unsigned char short_len[] = { 0x30, 0x06, 0x02, 0x05, 0x01, 0x02, 0x01, 0x02 };
	unsigned char big[80] = { 0x30, 0x44, 0x02, 0x21, 0x00, 0x80 };

	pg_assert(pg_ecdsa_der_to_rs(good, sizeof(good), 32, rs));
	pg_assert(rs[31] == 1 && rs[63] == 2);
	pg_assert(!pg_ecdsa_der_to_rs(good, sizeof(good) - 1, 32, rs));
	pg_assert(!pg_ecdsa_der_to_rs(extra, sizeof(extra), 32, rs));
	pg_assert(!pg_ecdsa_der_to_rs(negative, sizeof(negative), 32, rs));
	pg_assert(!pg_ecdsa_der_to_rs(padded, sizeof(padded), 32, rs));
	pg_assert(!pg_ecdsa_der_to_rs(short_len, sizeof(short_len), 32, rs));
	/* An r of 33 significant bytes does not fit a P-256 signature. */
	big[36] = 0x02, big[37] = 0x20, big[38] = 0x01;
	memset(big + 6, 1, 30);
	pg_assert(!pg_ecdsa_der_to_rs(big, 70, 32, rs));
}

static void test_key_from_attrs(void)
{
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE type = CKK_AES;
	unsigned char value[16] = { 1 };
	CK_ATTRIBUTE a[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &type, sizeof(type) },
		{ CKA_VALUE, value, sizeof(value) },
	};
	unsigned char bad_scalar[40];
	CK_ATTRIBUTE ec[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &type, sizeof(type) },
		{ CKA_EC_PARAMS, (void *)"\x13\x05P-256", 7 },
		{ CKA_VALUE, bad_scalar, sizeof(bad_scalar) },
	};
	pg_key *key = NULL;

	pg_assert_ulong_eq(pg_key_from_attrs(a, 3, &key), CKR_OK);
	pg_assert_int_eq(key->size, 16);
	pg_assert_mem_eq(key->secret, key->secret_len, value, 16);
	pg_key_unref(key);
	/* No value, no class, an unknown key type. */
	pg_assert_ulong_eq(pg_key_from_attrs(a, 2, &key), CKR_ATTRIBUTE_VALUE_INVALID);
	pg_assert_ulong_eq(pg_key_from_attrs(a + 1, 2, &key), CKR_KEY_TYPE_INCONSISTENT);
	cls = CKO_PRIVATE_KEY;
	type = CKK_DSA;
	pg_assert_ulong_eq(pg_key_from_attrs(a, 3, &key), CKR_KEY_TYPE_INCONSISTENT);
	/* An EC private value longer than the group order: refused. */
	type = CKK_EC;
	memset(bad_scalar, 0xff, sizeof(bad_scalar));
	pg_assert_ulong_eq(pg_key_from_attrs(ec, 4, &key), CKR_ATTRIBUTE_VALUE_INVALID);
	/* Another curve: not supported; an Edwards curve for an EC key: inconsistent. */
	ec[2].pValue = (void *)"\x06\x05\x2b\x81\x04\x00\x0a";
	pg_assert_ulong_eq(pg_key_from_attrs(ec, 4, &key), CKR_CURVE_NOT_SUPPORTED);
	ec[2].pValue = (void *)"\x06\x03\x2b\x65\x70";
	ec[2].ulValueLen = 5;
	pg_assert_ulong_eq(pg_key_from_attrs(ec, 4, &key), CKR_KEY_TYPE_INCONSISTENT);
}

static void test_pool(void)
{
	pg_key *key = pg_key_new_pkey(EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), CKO_PRIVATE_KEY,
	                              CKK_EC, pg_curve_by_name("P-256"));
	pg_profile a = { PG_CTX_PKEY, PG_OP_SIGN, CKM_ECDSA, PG_HASH_NONE, PG_HASH_NONE, 0 };
	pg_profile b = a;
	EVP_PKEY_CTX *ctx[PG_KEY_POOL + 2];

	b.op = PG_OP_VERIFY;
	pg_assert_not_null(key);
	pg_assert_null(pg_key_pool_take(key, &a));
	for (int i = 0; i < PG_KEY_POOL + 2; i++) {
		ctx[i] = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
		pg_key_pool_put(key, &a, ctx[i]);
	}
	/* Only the same profile takes a context out; a full pool frees what comes back. */
	pg_assert_null(pg_key_pool_take(key, &b));
	for (int i = 0; i < PG_KEY_POOL; i++) {
		EVP_PKEY_CTX *c = pg_key_pool_take(key, &a);
		pg_assert_not_null(c);
		EVP_PKEY_CTX_free(c);
	}
	pg_assert_null(pg_key_pool_take(key, &a));
	pg_key_unref(key);
}

int main(int argc, char **argv)
{
	pg_test("mechs/table", test_mech_table);
	pg_test("ec/params", test_curve_params);
	pg_test("ec/point-decode", test_point_decode);
	pg_test("ecdsa/conversion", test_ecdsa_conversion);
	pg_test("ecdsa/hostile", test_ecdsa_hostile);
	pg_test("key/from-attrs", test_key_from_attrs);
	pg_test("key/pool", test_pool);
	return pg_test_run(argc, argv);
}
