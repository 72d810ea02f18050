/*
 * Elliptic curves through the module: EC and Edwards key pair generation
 * (P-256, P-384, P-521, Ed25519, Ed448) and their attributes, ECDSA with
 * and without hashing and EdDSA cross-checked against libcrypto in both
 * directions, ECDH derivation (CKD_NULL and the X9.63 KDFs) against
 * libcrypto's, and the curve and point encodings PKCS#11 allows.
 */
#include "crypto-test.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

static const char msg[] = "attack at dawn";

/* ECDSA r||s (n bytes each) as DER, for libcrypto. */
static size_t rs_to_der(const unsigned char *rs, size_t n, unsigned char *der)
{
	ECDSA_SIG *sig = ECDSA_SIG_new();
	unsigned char *p = der;
	int len;

	pg_assert(ECDSA_SIG_set0(sig, BN_bin2bn(rs, (int)n, NULL), BN_bin2bn(rs + n, (int)n, NULL)));
	len = i2d_ECDSA_SIG(sig, &p);
	ECDSA_SIG_free(sig);
	pg_assert(len > 0);
	return (size_t)len;
}

static size_t der_to_rs(const unsigned char *der, size_t len, size_t n, unsigned char *rs)
{
	const unsigned char *p = der;
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)len);
	const BIGNUM *r, *s;

	pg_assert_not_null(sig);
	ECDSA_SIG_get0(sig, &r, &s);
	pg_assert(BN_bn2binpad(r, rs, (int)n) == (int)n && BN_bn2binpad(s, rs + n, (int)n) == (int)n);
	ECDSA_SIG_free(sig);
	return 2 * n;
}

/* One ECDSA mechanism on one key: module <-> libcrypto both ways. */
static void ecdsa_case(EVP_PKEY *pkey, CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub,
                       CK_MECHANISM_TYPE mech, const char *md, size_t n)
{
	CK_MECHANISM m = { mech, NULL, 0 };
	unsigned char sig[160], der[160], h[64];
	const void *tbs = msg;
	size_t tbs_len = sizeof(msg) - 1, der_len = sizeof(der);
	unsigned h_len = 0;
	CK_ULONG len = sizeof(sig);
	EVP_PKEY_CTX *ctx;

	/* CKM_ECDSA signs what it is given: a digest the caller made. */
	if (mech == CKM_ECDSA) {
		pg_assert(EVP_Digest(msg, sizeof(msg) - 1, h, &h_len, EVP_get_digestbyname(md), NULL));
		tbs = h;
		tbs_len = h_len;
	}
	ck_assert_rv(ct_sign(&m, priv, tbs, tbs_len, sig, &len), CKR_OK);
	pg_assert_int_eq(len, 2 * n);
	der_len = rs_to_der(sig, n, der);
	if (mech != CKM_ECDSA)
		pg_assert(EVP_Digest(msg, sizeof(msg) - 1, h, &h_len, EVP_get_digestbyname(md), NULL));
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	pg_assert(EVP_PKEY_verify_init(ctx) > 0);
	pg_assert_int_eq(EVP_PKEY_verify(ctx, der, der_len, h, h_len), 1);
	EVP_PKEY_CTX_free(ctx);
	/* libcrypto signs, the module verifies. */
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	pg_assert(EVP_PKEY_sign_init(ctx) > 0);
	der_len = sizeof(der);
	pg_assert(EVP_PKEY_sign(ctx, der, &der_len, h, h_len) > 0);
	EVP_PKEY_CTX_free(ctx);
	len = der_to_rs(der, der_len, n, sig);
	ck_assert_rv(ct_verify(&m, pub, tbs, tbs_len, sig, len), CKR_OK);
	sig[len - 1] ^= 1;
	ck_assert_rv(ct_verify(&m, pub, tbs, tbs_len, sig, len), CKR_SIGNATURE_INVALID);
	ck_assert_rv(ct_verify(&m, pub, tbs, tbs_len, sig, len - 1), CKR_SIGNATURE_LEN_RANGE);
}

static void test_ecdsa_mechanisms(void)
{
	static const struct {
		const char *curve;
		size_t n;
	} curves[] = { { "P-256", 32 }, { "P-384", 48 }, { "P-521", 66 } };
	static const struct {
		CK_MECHANISM_TYPE mech;
		const char *md;
	} mechs[] = {
		{ CKM_ECDSA, "SHA256" }, { CKM_ECDSA, "SHA512" }, { CKM_ECDSA_SHA1, "SHA1" },
		{ CKM_ECDSA_SHA224, "SHA224" }, { CKM_ECDSA_SHA256, "SHA256" },
		{ CKM_ECDSA_SHA384, "SHA384" }, { CKM_ECDSA_SHA512, "SHA512" },
		{ CKM_ECDSA_SHA3_256, "SHA3-256" }, { CKM_ECDSA_SHA3_512, "SHA3-512" },
	};

	for (size_t c = 0; c < PG_N_ELEMENTS(curves); c++) {
		EVP_PKEY *pkey = ct_pkey(curves[c].curve);
		CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
		CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
		for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++)
			ecdsa_case(pkey, priv, pub, mechs[i].mech, mechs[i].md, curves[c].n);
		EVP_PKEY_free(pkey);
	}
}

/* Hashing ECDSA in parts; raw ECDSA collects its parts. */
static void test_ecdsa_multipart(void)
{
	EVP_PKEY *pkey = ct_pkey("P-256");
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0);
	CK_OBJECT_HANDLE pub = ct_import(pkey, false, NULL, 0);
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	unsigned char sig[64];
	CK_ULONG len = sizeof(sig);

	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)msg, 4), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)msg + 4, sizeof(msg) - 5), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, sig, &len), CKR_OK);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	m.mechanism = CKM_ECDSA;
	len = sizeof(sig);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdef", 16), CKR_OK);
	ck_assert_rv(p11->C_SignUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdef", 16), CKR_OK);
	ck_assert_rv(p11->C_SignFinal(ct_session, sig, &len), CKR_OK);
	ck_assert_rv(p11->C_VerifyInit(ct_session, &m, pub), CKR_OK);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, (CK_BYTE_PTR)"0123456789abcdef0123456789", 26),
	             CKR_OK);
	ck_assert_rv(p11->C_VerifyUpdate(ct_session, (CK_BYTE_PTR)"abcdef", 6), CKR_OK);
	ck_assert_rv(p11->C_VerifyFinal(ct_session, sig, len), CKR_OK);
	EVP_PKEY_free(pkey);
}

/* Generated EC keys: attributes, and the point the module gives is the key's. */
static void ec_keygen_case(const void *params, size_t params_len, size_t n)
{
	CK_OBJECT_HANDLE pub, priv;
	unsigned char point[160], got[40], sig[140];
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ULONG len, plen;
	EVP_PKEY *pkey;
	size_t raw_len = sizeof(sig);
	unsigned char raw[140];

	ct_keypair(CKM_EC_KEY_PAIR_GEN, 0, params, params_len, &pub, &priv);
	pg_assert_int_eq(ct_attr_ulong(pub, CKA_KEY_TYPE), CKK_EC);
	pg_assert(ct_attr_bool(priv, CKA_LOCAL));
	pg_assert_int_eq(ct_attr_ulong(priv, CKA_KEY_GEN_MECHANISM), CKM_EC_KEY_PAIR_GEN);
	/* Both halves name the curve as the caller did. */
	pg_assert_mem_eq(got, ct_attr(pub, CKA_EC_PARAMS, got, sizeof(got)), params, params_len);
	pg_assert_mem_eq(got, ct_attr(priv, CKA_EC_PARAMS, got, sizeof(got)), params, params_len);
	/* CKA_EC_POINT: DER OCTET STRING of the uncompressed point. */
	plen = ct_attr(pub, CKA_EC_POINT, point, sizeof(point));
	pg_assert_int_eq(point[0], 0x04);
	pg_assert(point[plen - (2 * n + 1)] == 0x04);
	pg_assert_int_eq(plen, 2 * n + 1 + (2 * n + 1 < 128 ? 2 : 3));
	pkey = ct_public(pub);
	pg_assert(EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, raw,
	                                          sizeof(raw), &raw_len));
	pg_assert_mem_eq(point + plen - raw_len, raw_len, raw, raw_len);
	len = sizeof(sig);
	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, sig, &len), CKR_OK);
	pg_assert_int_eq(len, 2 * n);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	EVP_PKEY_free(pkey);
}

static void test_ec_keygen(void)
{
	static const char named[] = "\x13\x0aprime256v1";

	ec_keygen_case(ct_p256, sizeof(ct_p256), 32);
	ec_keygen_case(ct_p384, sizeof(ct_p384), 48);
	ec_keygen_case(ct_p521, sizeof(ct_p521), 66);
	/* A curve named by a PrintableString. */
	ec_keygen_case(named, 12, 32);
}

static void test_ec_keygen_errors(void)
{
	static const unsigned char k256[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a };
	CK_MECHANISM m = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_ATTRIBUTE pub_t[] = {
		{ CKA_TOKEN, &no, 1 },
		{ CKA_EC_PARAMS, (void *)k256, sizeof(k256) },
	};
	CK_ATTRIBUTE priv_t[] = { { CKA_TOKEN, &no, 1 } };
	CK_OBJECT_HANDLE pub, priv;

	/* secp256k1 is not offered. */
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 1, &pub, &priv),
	             CKR_CURVE_NOT_SUPPORTED);
	/* Nor an Edwards curve for an EC key, nor the other way round. */
	pub_t[1].pValue = (void *)ct_ed25519;
	pub_t[1].ulValueLen = sizeof(ct_ed25519);
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 1, &pub, &priv),
	             CKR_CURVE_NOT_SUPPORTED);
	m.mechanism = CKM_EC_EDWARDS_KEY_PAIR_GEN;
	pub_t[1].pValue = (void *)ct_p256;
	pub_t[1].ulValueLen = sizeof(ct_p256);
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 1, &pub, &priv),
	             CKR_CURVE_NOT_SUPPORTED);
	/* The curve is needed. */
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 1, priv_t, 1, &pub, &priv),
	             CKR_TEMPLATE_INCOMPLETE);
	/* A malformed curve name. */
	pub_t[1].pValue = (void *)"\x13\x05P-25";
	pub_t[1].ulValueLen = 6;
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 1, &pub, &priv),
	             CKR_CURVE_NOT_SUPPORTED);
}

/* A public key whose CKA_EC_POINT is the bare point (as some callers give it). */
static void test_ec_point_raw(void)
{
	static const CK_OBJECT_CLASS cls = CKO_PUBLIC_KEY;
	static const CK_KEY_TYPE kt = CKK_EC;
	EVP_PKEY *pkey = ct_pkey("P-256");
	CK_OBJECT_HANDLE priv = ct_import(pkey, true, NULL, 0), pub;
	unsigned char raw[65], sig[64];
	size_t raw_len = sizeof(raw);
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ULONG len = sizeof(sig);
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, (void *)&cls, sizeof(cls) },
		{ CKA_KEY_TYPE, (void *)&kt, sizeof(kt) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_VERIFY, &yes, 1 },
		{ CKA_EC_PARAMS, (void *)ct_p256, sizeof(ct_p256) },
		{ CKA_EC_POINT, raw, 0 },
	};

	pg_assert(EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, raw,
	                                          sizeof(raw), &raw_len));
	t[5].ulValueLen = raw_len;
	ck_assert_rv(p11->C_CreateObject(ct_session, t, PG_N_ELEMENTS(t), &pub), CKR_OK);
	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, sig, &len), CKR_OK);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	EVP_PKEY_free(pkey);
}

/* ---------------------------------------------------------------------------
 * ECDH.
 */
static CK_RV derive(CK_OBJECT_HANDLE base, CK_MECHANISM_TYPE mech, CK_EC_KDF_TYPE kdf,
                    const void *shared, size_t shared_len, const void *pub, size_t pub_len,
                    CK_KEY_TYPE type, CK_ULONG value_len, CK_OBJECT_HANDLE *out)
{
	static const CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_ECDH1_DERIVE_PARAMS p = { kdf, shared_len, (CK_BYTE_PTR)shared, pub_len, (CK_BYTE_PTR)pub };
	CK_MECHANISM m = { mech, &p, sizeof(p) };
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, (void *)&cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &type, sizeof(type) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_ENCRYPT, &yes, 1 },
		{ CKA_VALUE_LEN, &value_len, sizeof(value_len) },
	};

	return p11->C_DeriveKey(ct_session, &m, base, t, value_len ? 7 : 6, out);
}

/* ANSI X9.63 KDF, written out for the check. */
static void x963(const char *md, const unsigned char *z, size_t z_len, const void *info,
                 size_t info_len, unsigned char *out, size_t len)
{
	unsigned char block[64], ctr[4];
	unsigned n = 0;

	for (uint32_t i = 1, done = 0; done < len; i++) {
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		ctr[0] = (unsigned char)(i >> 24), ctr[1] = (unsigned char)(i >> 16);
		ctr[2] = (unsigned char)(i >> 8), ctr[3] = (unsigned char)i;
		pg_assert(EVP_DigestInit_ex2(ctx, EVP_get_digestbyname(md), NULL));
		pg_assert(EVP_DigestUpdate(ctx, z, z_len) && EVP_DigestUpdate(ctx, ctr, 4));
		pg_assert(EVP_DigestUpdate(ctx, info, info_len) && EVP_DigestFinal_ex(ctx, block, &n));
		EVP_MD_CTX_free(ctx);
		memcpy(out + done, block, len - done < n ? len - done : n);
		done += n;
	}
}

static void test_ecdh(void)
{
	CK_OBJECT_HANDLE pub, priv, key;
	EVP_PKEY *peer = ct_pkey("P-256"), *mine;
	unsigned char z[32], raw[65], der[67], got[64], want[64];
	size_t z_len = sizeof(z), raw_len = sizeof(raw);
	EVP_PKEY_CTX *ctx;

	ct_keypair(CKM_EC_KEY_PAIR_GEN, 0, ct_p256, sizeof(ct_p256), &pub, &priv);
	/* libcrypto's side: Z from the peer's private key and the module's public key. */
	mine = ct_public(pub);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, peer, NULL);
	pg_assert(EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_derive_set_peer(ctx, mine) > 0);
	pg_assert(EVP_PKEY_derive(ctx, z, &z_len) > 0);
	EVP_PKEY_CTX_free(ctx);
	pg_assert(EVP_PKEY_get_octet_string_param(peer, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, raw,
	                                          sizeof(raw), &raw_len));
	der[0] = 0x04, der[1] = 65;
	memcpy(der + 2, raw, 65);

	/* CKD_NULL: Z itself, from the bare point and from the DER form. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_GENERIC_SECRET, 0,
	                    &key), CKR_OK);
	pg_assert_mem_eq(got, ct_attr(key, CKA_VALUE, got, sizeof(got)), z, 32);
	pg_assert_int_eq(ct_attr_ulong(key, CKA_VALUE_LEN), 32);
	pg_assert(!ct_attr_bool(key, CKA_LOCAL));
	pg_assert_ulong_eq(ct_attr_ulong(key, CKA_KEY_GEN_MECHANISM), CK_UNAVAILABLE_INFORMATION);
	ck_assert_rv(derive(priv, CKM_ECDH1_COFACTOR_DERIVE, CKD_NULL, NULL, 0, der, 67,
	                    CKK_GENERIC_SECRET, 0, &key), CKR_OK);
	pg_assert_mem_eq(got, ct_attr(key, CKA_VALUE, got, sizeof(got)), z, 32);
	/* A shorter key keeps the trailing bytes of Z. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_AES, 16, &key),
	             CKR_OK);
	pg_assert_mem_eq(got, ct_attr(key, CKA_VALUE, got, sizeof(got)), z + 16, 16);
	/* The X9.63 KDF, with and without shared info. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_SHA256_KDF, "info", 4, raw, 65,
	                    CKK_GENERIC_SECRET, 48, &key), CKR_OK);
	x963("SHA256", z, 32, "info", 4, want, 48);
	pg_assert_mem_eq(got, ct_attr(key, CKA_VALUE, got, sizeof(got)), want, 48);
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_SHA1_KDF, NULL, 0, raw, 65, CKK_AES, 24,
	                    &key), CKR_OK);
	x963("SHA1", z, 32, "", 0, want, 24);
	pg_assert_mem_eq(got, ct_attr(key, CKA_VALUE, got, sizeof(got)), want, 24);

	EVP_PKEY_free(peer);
	EVP_PKEY_free(mine);
}

static void test_ecdh_errors(void)
{
	CK_OBJECT_HANDLE pub, priv, key;
	EVP_PKEY *peer = ct_pkey("P-256");
	unsigned char raw[65];
	size_t raw_len = sizeof(raw);

	ct_keypair(CKM_EC_KEY_PAIR_GEN, 0, ct_p256, sizeof(ct_p256), &pub, &priv);
	pg_assert(EVP_PKEY_get_octet_string_param(peer, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, raw,
	                                          sizeof(raw), &raw_len));
	/* Shared data with CKD_NULL, an unknown KDF, a point off the curve or cut short. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, "x", 1, raw, 65, CKK_GENERIC_SECRET, 0,
	                    &key), CKR_MECHANISM_PARAM_INVALID);
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, 0x999, NULL, 0, raw, 65, CKK_GENERIC_SECRET, 0,
	                    &key), CKR_MECHANISM_PARAM_INVALID);
	raw[40] ^= 1;
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_GENERIC_SECRET, 0,
	                    &key), CKR_MECHANISM_PARAM_INVALID);
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 64, CKK_GENERIC_SECRET, 0,
	                    &key), CKR_MECHANISM_PARAM_INVALID);
	raw[40] ^= 1;
	/* Longer than Z without a KDF. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_GENERIC_SECRET,
	                    33, &key), CKR_TEMPLATE_INCONSISTENT);
	/* Without CKA_VALUE_LEN an AES key takes Z whole, when Z is an AES key's length. */
	ck_assert_rv(derive(priv, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_AES, 0, &key),
	             CKR_OK);
	/* The public half cannot derive. */
	ck_assert_rv(derive(pub, CKM_ECDH1_DERIVE, CKD_NULL, NULL, 0, raw, 65, CKK_GENERIC_SECRET,
	                    0, &key), CKR_KEY_FUNCTION_NOT_PERMITTED);
	EVP_PKEY_free(peer);
}

/* The derived key continues the base key's history (CKA_ALWAYS_SENSITIVE ...). */
static void test_ecdh_history(void)
{
	static const CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	static const CK_KEY_TYPE gen = CKK_GENERIC_SECRET;
	CK_MECHANISM m = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_ATTRIBUTE pub_t[] = {
		{ CKA_TOKEN, &no, 1 },
		{ CKA_EC_PARAMS, (void *)ct_p256, sizeof(ct_p256) },
	};
	CK_ATTRIBUTE priv_t[] = {
		{ CKA_TOKEN, &no, 1 },
		{ CKA_DERIVE, &yes, 1 },
		{ CKA_SENSITIVE, &yes, 1 },
		{ CKA_EXTRACTABLE, &no, 1 },
	};
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, (void *)&cls, sizeof(cls) },
		{ CKA_KEY_TYPE, (void *)&gen, sizeof(gen) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_SENSITIVE, &yes, 1 },
		{ CKA_EXTRACTABLE, &no, 1 },
	};
	unsigned char raw[65];
	size_t raw_len = sizeof(raw);
	EVP_PKEY *peer = ct_pkey("P-256");
	CK_ECDH1_DERIVE_PARAMS p = { CKD_NULL, 0, NULL, 65, raw };
	CK_MECHANISM dm = { CKM_ECDH1_DERIVE, &p, sizeof(p) };
	CK_OBJECT_HANDLE pub, priv, key;

	pg_assert(EVP_PKEY_get_octet_string_param(peer, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, raw,
	                                          sizeof(raw), &raw_len));
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &m, pub_t, 2, priv_t, 4, &pub, &priv), CKR_OK);
	pg_assert(ct_attr_bool(priv, CKA_ALWAYS_SENSITIVE));
	pg_assert(ct_attr_bool(priv, CKA_NEVER_EXTRACTABLE));
	ck_assert_rv(p11->C_DeriveKey(ct_session, &dm, priv, t, 5, &key), CKR_OK);
	pg_assert(ct_attr_bool(key, CKA_ALWAYS_SENSITIVE));
	pg_assert(ct_attr_bool(key, CKA_NEVER_EXTRACTABLE));
	EVP_PKEY_free(peer);
}

/* ---------------------------------------------------------------------------
 * EdDSA.
 */
static void eddsa_case(const void *params, size_t params_len, size_t sig_len)
{
	CK_OBJECT_HANDLE pub, priv;
	CK_MECHANISM m = { CKM_EDDSA, NULL, 0 };
	unsigned char sig[114], point[64];
	CK_ULONG len = sizeof(sig), plen;
	EVP_PKEY *pkey;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t slen = sizeof(sig);

	ct_keypair(CKM_EC_EDWARDS_KEY_PAIR_GEN, 0, params, params_len, &pub, &priv);
	pg_assert_int_eq(ct_attr_ulong(pub, CKA_KEY_TYPE), CKK_EC_EDWARDS);
	pg_assert_int_eq(ct_attr_ulong(priv, CKA_KEY_GEN_MECHANISM), CKM_EC_EDWARDS_KEY_PAIR_GEN);
	plen = ct_attr(pub, CKA_EC_POINT, point, sizeof(point));
	pg_assert_int_eq(plen, sig_len / 2 + 2);
	pg_assert_int_eq(point[0], 0x04);
	ck_assert_rv(ct_sign(&m, priv, msg, sizeof(msg) - 1, sig, &len), CKR_OK);
	pg_assert_int_eq(len, sig_len);
	/* libcrypto verifies the module's signature ... */
	pkey = ct_public(pub);
	pg_assert(EVP_DigestVerifyInit_ex(ctx, NULL, NULL, NULL, NULL, pkey, NULL) > 0);
	pg_assert_int_eq(EVP_DigestVerify(ctx, sig, len, (const unsigned char *)msg, sizeof(msg) - 1), 1);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len), CKR_OK);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 2, sig, len), CKR_SIGNATURE_INVALID);
	ck_assert_rv(ct_verify(&m, pub, msg, sizeof(msg) - 1, sig, len - 1), CKR_SIGNATURE_LEN_RANGE);
	/* ... and the module a libcrypto signature. */
	pkey = ct_pkey(sig_len == 64 ? "ED25519" : "ED448");
	priv = ct_import(pkey, false, NULL, 0);
	ctx = EVP_MD_CTX_new();
	pg_assert(EVP_DigestSignInit_ex(ctx, NULL, NULL, NULL, NULL, pkey, NULL) > 0);
	pg_assert(EVP_DigestSign(ctx, sig, &slen, (const unsigned char *)msg, sizeof(msg) - 1) > 0);
	ck_assert_rv(ct_verify(&m, priv, msg, sizeof(msg) - 1, sig, slen), CKR_OK);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
}

static void test_eddsa(void)
{
	eddsa_case(ct_ed25519, sizeof(ct_ed25519), 64);
	eddsa_case("\x13\x0c" "edwards25519", 14, 64);
	eddsa_case(ct_ed448, sizeof(ct_ed448), 114);
	eddsa_case("\x13\x0a" "edwards448", 12, 114);
}

static void test_eddsa_params(void)
{
	CK_OBJECT_HANDLE pub, priv;
	CK_EDDSA_PARAMS p = { CK_FALSE, 0, NULL };
	CK_MECHANISM m = { CKM_EDDSA, &p, sizeof(p) };
	unsigned char sig[114];
	CK_ULONG len = sizeof(sig);

	/* Ed448 with an empty context and no prehash is plain Ed448. */
	ct_keypair(CKM_EC_EDWARDS_KEY_PAIR_GEN, 0, ct_ed448, sizeof(ct_ed448), &pub, &priv);
	ck_assert_rv(ct_sign(&m, priv, msg, 3, sig, &len), CKR_OK);
	m.ulParameterLen = 0;
	m.pParameter = NULL;
	ck_assert_rv(ct_verify(&m, pub, msg, 3, sig, len), CKR_OK);
	/* The prehashed and context forms are not offered. */
	m.pParameter = &p;
	m.ulParameterLen = sizeof(p);
	p.phFlag = CK_TRUE;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	p.phFlag = CK_FALSE;
	ct_keypair(CKM_EC_EDWARDS_KEY_PAIR_GEN, 0, ct_ed25519, sizeof(ct_ed25519), &pub, &priv);
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	m.ulParameterLen = 3;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_MECHANISM_PARAM_INVALID);
	/* ECDSA does not take an Edwards key. */
	m.mechanism = CKM_ECDSA;
	ck_assert_rv(p11->C_SignInit(ct_session, &m, priv), CKR_KEY_TYPE_INCONSISTENT);
}

int main(int argc, char **argv)
{
	pg_test_fixture(ct_setup, ct_teardown);
	pg_test("ecdsa/mechanisms", test_ecdsa_mechanisms);
	pg_test("ecdsa/multipart", test_ecdsa_multipart);
	pg_test("ec/keygen", test_ec_keygen);
	pg_test("ec/keygen-errors", test_ec_keygen_errors);
	pg_test("ec/point-raw", test_ec_point_raw);
	pg_test("ecdh/derive", test_ecdh);
	pg_test("ecdh/errors", test_ecdh_errors);
	pg_test("ecdh/history", test_ecdh_history);
	pg_test("eddsa/keygen-sign", test_eddsa);
	pg_test("eddsa/params", test_eddsa_params);
	return pg_test_run(argc, argv);
}
