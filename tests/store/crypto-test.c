/*
 * Helpers for the mech layer tests.
 */
#include "crypto-test.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/x509.h>

#include <ctype.h>
#include <stdlib.h>

CK_SESSION_HANDLE ct_session;
CK_SLOT_ID ct_slot;

const unsigned char ct_p256[10] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
const unsigned char ct_p384[7] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
const unsigned char ct_p521[7] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23 };
const unsigned char ct_ed25519[5] = { 0x06, 0x03, 0x2b, 0x65, 0x70 };
const unsigned char ct_ed448[5] = { 0x06, 0x03, 0x2b, 0x65, 0x71 };

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

void ct_setup(void)
{
	/* The mechanism tests make keys with every use at once (ct_secret,
	 * ct_import, ct_keypair); test-crypto-policy.c tests the default. */
	ck_assert_rv(st_initialize("wrap-decrypt=allow"), CKR_OK);
	ct_slot = st_token("crypto");
	ct_session = st_open(ct_slot, true);
	st_login(ct_session);
}

void ct_teardown(void)
{
	st_fini();
}

size_t ct_hex(const char *hex, unsigned char *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;
		if (isspace((unsigned char)*hex))
			continue;
		v = isdigit((unsigned char)*hex) ? *hex - '0' : tolower((unsigned char)*hex) - 'a' + 10;
		if (hi < 0) {
			hi = v;
			continue;
		}
		pg_assert(n < cap);
		out[n++] = (unsigned char)(hi << 4 | v);
		hi = -1;
	}
	pg_assert(hi < 0);
	return n;
}

static CK_OBJECT_HANDLE create(CK_ATTRIBUTE *base, CK_ULONG n, const CK_ATTRIBUTE *extra,
                               CK_ULONG n_extra)
{
	CK_ATTRIBUTE all[48];
	CK_OBJECT_HANDLE h = 0;
	CK_ULONG total = 0;

	/* A caller's attribute replaces a default of the same type. */
	for (CK_ULONG i = 0; i < n; i++) {
		bool over = false;
		for (CK_ULONG j = 0; j < n_extra; j++)
			over |= extra[j].type == base[i].type;
		if (!over)
			all[total++] = base[i];
	}
	for (CK_ULONG j = 0; j < n_extra; j++)
		all[total++] = extra[j];
	ck_assert_rv(p11->C_CreateObject(ct_session, all, total, &h), CKR_OK);
	pg_assert(h != 0);
	return h;
}

CK_OBJECT_HANDLE ct_secret(CK_KEY_TYPE type, const void *value, size_t len,
                           const CK_ATTRIBUTE *extra, CK_ULONG n_extra)
{
	static CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = type;
	CK_ATTRIBUTE base[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_VALUE, (void *)value, len },
		{ CKA_ENCRYPT, &yes, 1 },
		{ CKA_DECRYPT, &yes, 1 },
		{ CKA_SIGN, &yes, 1 },
		{ CKA_VERIFY, &yes, 1 },
		{ CKA_WRAP, &yes, 1 },
		{ CKA_UNWRAP, &yes, 1 },
		{ CKA_DERIVE, &yes, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_SENSITIVE, &no, 1 },
	};

	return create(base, PG_N_ELEMENTS(base), extra, n_extra);
}

/* Big-endian bytes of a BIGNUM parameter of a key. */
static size_t bn_bytes(EVP_PKEY *pkey, const char *name, unsigned char *out, size_t pad)
{
	BIGNUM *bn = NULL;
	size_t len;

	pg_assert(EVP_PKEY_get_bn_param(pkey, name, &bn));
	len = pad ? pad : (size_t)BN_num_bytes(bn);
	pg_assert(BN_bn2binpad(bn, out, (int)len) >= 0);
	BN_clear_free(bn);
	return len;
}

static CK_OBJECT_HANDLE import_rsa(EVP_PKEY *pkey, bool priv, const CK_ATTRIBUTE *extra,
                                   CK_ULONG n_extra)
{
	static const char *const names[] = {
		OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D,
		OSSL_PKEY_PARAM_RSA_FACTOR1, OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT1,
		OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1,
	};
	static const CK_ATTRIBUTE_TYPE types[] = {
		CKA_MODULUS, CKA_PUBLIC_EXPONENT, CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2,
		CKA_EXPONENT_1, CKA_EXPONENT_2, CKA_COEFFICIENT,
	};
	static unsigned char parts[8][520];
	CK_OBJECT_CLASS cls = priv ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
	CK_KEY_TYPE kt = CKK_RSA;
	CK_ATTRIBUTE base[24] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_TOKEN, &no, 1 },
	};
	CK_ULONG n = 3;

	for (size_t i = 0; i < (priv ? 8U : 2U); i++) {
		base[n].type = types[i];
		base[n].pValue = parts[i];
		base[n++].ulValueLen = bn_bytes(pkey, names[i], parts[i], 0);
	}
	if (priv) {
		CK_ATTRIBUTE more[] = {
			{ CKA_SIGN, &yes, 1 }, { CKA_DECRYPT, &yes, 1 }, { CKA_UNWRAP, &yes, 1 },
			{ CKA_SIGN_RECOVER, &yes, 1 }, { CKA_EXTRACTABLE, &yes, 1 },
			{ CKA_SENSITIVE, &no, 1 },
		};
		memcpy(base + n, more, sizeof(more));
		n += PG_N_ELEMENTS(more);
	} else {
		CK_ATTRIBUTE more[] = {
			{ CKA_VERIFY, &yes, 1 }, { CKA_ENCRYPT, &yes, 1 }, { CKA_WRAP, &yes, 1 },
			{ CKA_VERIFY_RECOVER, &yes, 1 },
		};
		memcpy(base + n, more, sizeof(more));
		n += PG_N_ELEMENTS(more);
	}
	return create(base, n, extra, n_extra);
}

/* The DER OCTET STRING of CKA_EC_POINT around a bare point. */
static size_t ec_point_der(const unsigned char *raw, size_t len, unsigned char *der)
{
	size_t hdr = len < 0x80 ? 2 : 3;

	der[0] = 0x04;
	if (hdr == 2) {
		der[1] = (unsigned char)len;
	} else {
		der[1] = 0x81;
		der[2] = (unsigned char)len;
	}
	memcpy(der + hdr, raw, len);
	return hdr + len;
}

static CK_OBJECT_HANDLE import_ec(EVP_PKEY *pkey, bool priv, const CK_ATTRIBUTE *extra,
                                  CK_ULONG n_extra)
{
	static unsigned char value[140], point[140];
	unsigned char raw[140];
	CK_OBJECT_CLASS cls = priv ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
	CK_KEY_TYPE kt = CKK_EC;
	const unsigned char *params = ct_p256;
	size_t params_len = sizeof(ct_p256), len = sizeof(raw), scalar = 32;
	bool ed = EVP_PKEY_is_a(pkey, "ED25519") || EVP_PKEY_is_a(pkey, "ED448");
	char group[32] = "";
	CK_ATTRIBUTE base[16];
	CK_ULONG n = 0;

	if (ed) {
		kt = CKK_EC_EDWARDS;
		params = EVP_PKEY_is_a(pkey, "ED25519") ? ct_ed25519 : ct_ed448;
		params_len = 5;
	} else {
		pg_assert(EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
		                                         sizeof(group), NULL));
		if (strcmp(group, "secp384r1") == 0) {
			params = ct_p384, params_len = 7, scalar = 48;
		} else if (strcmp(group, "secp521r1") == 0) {
			params = ct_p521, params_len = 7, scalar = 66;
		}
	}
	base[n++] = (CK_ATTRIBUTE){ CKA_CLASS, &cls, sizeof(cls) };
	base[n++] = (CK_ATTRIBUTE){ CKA_KEY_TYPE, &kt, sizeof(kt) };
	base[n++] = (CK_ATTRIBUTE){ CKA_TOKEN, &no, 1 };
	base[n++] = (CK_ATTRIBUTE){ CKA_EC_PARAMS, (void *)params, params_len };
	if (priv) {
		if (ed)
			pg_assert(EVP_PKEY_get_raw_private_key(pkey, value, &len));
		else
			len = bn_bytes(pkey, OSSL_PKEY_PARAM_PRIV_KEY, value, scalar);
		base[n++] = (CK_ATTRIBUTE){ CKA_VALUE, value, len };
		base[n++] = (CK_ATTRIBUTE){ CKA_SIGN, &yes, 1 };
		base[n++] = (CK_ATTRIBUTE){ CKA_DERIVE, &yes, 1 };
		base[n++] = (CK_ATTRIBUTE){ CKA_EXTRACTABLE, &yes, 1 };
		base[n++] = (CK_ATTRIBUTE){ CKA_SENSITIVE, &no, 1 };
	} else {
		if (ed)
			pg_assert(EVP_PKEY_get_raw_public_key(pkey, raw, &len));
		else
			pg_assert(EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
			                                          raw, sizeof(raw), &len));
		base[n++] = (CK_ATTRIBUTE){ CKA_EC_POINT, point, ec_point_der(raw, len, point) };
		base[n++] = (CK_ATTRIBUTE){ CKA_VERIFY, &yes, 1 };
	}
	return create(base, n, extra, n_extra);
}

CK_OBJECT_HANDLE ct_import(EVP_PKEY *pkey, bool priv, const CK_ATTRIBUTE *extra, CK_ULONG n_extra)
{
	if (EVP_PKEY_is_a(pkey, "RSA"))
		return import_rsa(pkey, priv, extra, n_extra);
	return import_ec(pkey, priv, extra, n_extra);
}

void ct_keypair(CK_MECHANISM_TYPE mech, CK_ULONG bits, const void *params, size_t params_len,
                CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM m = { mech, NULL, 0 };
	CK_ATTRIBUTE rsa_pub[] = {
		{ CKA_TOKEN, &no, 1 }, { CKA_VERIFY, &yes, 1 }, { CKA_ENCRYPT, &yes, 1 },
		{ CKA_WRAP, &yes, 1 }, { CKA_VERIFY_RECOVER, &yes, 1 },
		{ CKA_MODULUS_BITS, &bits, sizeof(bits) },
	};
	CK_ATTRIBUTE rsa_priv[] = {
		{ CKA_TOKEN, &no, 1 }, { CKA_SIGN, &yes, 1 }, { CKA_DECRYPT, &yes, 1 },
		{ CKA_UNWRAP, &yes, 1 }, { CKA_SIGN_RECOVER, &yes, 1 }, { CKA_EXTRACTABLE, &yes, 1 },
	};
	CK_ATTRIBUTE ec_pub[] = {
		{ CKA_TOKEN, &no, 1 }, { CKA_VERIFY, &yes, 1 },
		{ CKA_EC_PARAMS, (void *)params, params_len },
	};
	CK_ATTRIBUTE ec_priv[] = {
		{ CKA_TOKEN, &no, 1 }, { CKA_SIGN, &yes, 1 }, { CKA_DERIVE, &yes, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
	};
	CK_RV rv;

	if (mech == CKM_RSA_PKCS_KEY_PAIR_GEN)
		rv = p11->C_GenerateKeyPair(ct_session, &m, rsa_pub, PG_N_ELEMENTS(rsa_pub), rsa_priv,
		                            PG_N_ELEMENTS(rsa_priv), pub, priv);
	else
		rv = p11->C_GenerateKeyPair(ct_session, &m, ec_pub, PG_N_ELEMENTS(ec_pub), ec_priv,
		                            PG_N_ELEMENTS(ec_priv), pub, priv);
	ck_assert_rv(rv, CKR_OK);
}

EVP_PKEY *ct_public(CK_OBJECT_HANDLE key)
{
	static unsigned char der[2048];
	CK_ULONG len = ct_attr(key, CKA_PUBLIC_KEY_INFO, der, sizeof(der));
	const unsigned char *p = der;
	EVP_PKEY *pkey = d2i_PUBKEY(NULL, &p, (long)len);

	pg_assert_not_null(pkey);
	return pkey;
}

EVP_PKEY *ct_rsa2048(void)
{
	static EVP_PKEY *key;

	if (key == NULL)
		key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	pg_assert_not_null(key);
	return key;
}

EVP_PKEY *ct_pkey(const char *type)
{
	EVP_PKEY *key;

	if (strncmp(type, "P-", 2) == 0)
		key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", type);
	else
		key = EVP_PKEY_Q_keygen(NULL, NULL, type);
	pg_assert_not_null(key);
	return key;
}

CK_ULONG ct_attr(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type, void *buf, CK_ULONG cap)
{
	CK_ATTRIBUTE a = { type, buf, cap };

	ck_assert_rv(p11->C_GetAttributeValue(ct_session, obj, &a, 1), CKR_OK);
	return a.ulValueLen;
}

CK_ULONG ct_attr_ulong(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type)
{
	CK_ULONG v = 0;

	pg_assert_int_eq(ct_attr(obj, type, &v, sizeof(v)), sizeof(v));
	return v;
}

bool ct_attr_bool(CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type)
{
	CK_BBOOL v = 0;

	pg_assert_int_eq(ct_attr(obj, type, &v, sizeof(v)), 1);
	return v != CK_FALSE;
}

CK_RV ct_sign(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
              unsigned char *out, CK_ULONG *out_len)
{
	CK_RV rv = p11->C_SignInit(ct_session, m, key);

	if (rv != CKR_OK)
		return rv;
	return p11->C_Sign(ct_session, (CK_BYTE_PTR)data, len, out, out_len);
}

CK_RV ct_verify(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                const unsigned char *sig, CK_ULONG sig_len)
{
	CK_RV rv = p11->C_VerifyInit(ct_session, m, key);

	if (rv != CKR_OK)
		return rv;
	return p11->C_Verify(ct_session, (CK_BYTE_PTR)data, len, (CK_BYTE_PTR)sig, sig_len);
}

CK_RV ct_encrypt(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                 unsigned char *out, CK_ULONG *out_len)
{
	CK_RV rv = p11->C_EncryptInit(ct_session, m, key);

	if (rv != CKR_OK)
		return rv;
	return p11->C_Encrypt(ct_session, (CK_BYTE_PTR)data, len, out, out_len);
}

CK_RV ct_decrypt(CK_MECHANISM *m, CK_OBJECT_HANDLE key, const void *data, size_t len,
                 unsigned char *out, CK_ULONG *out_len)
{
	CK_RV rv = p11->C_DecryptInit(ct_session, m, key);

	if (rv != CKR_OK)
		return rv;
	return p11->C_Decrypt(ct_session, (CK_BYTE_PTR)data, len, out, out_len);
}

CK_RV ct_digest(CK_MECHANISM_TYPE mech, const void *data, size_t len, unsigned char *out,
                CK_ULONG *out_len)
{
	CK_MECHANISM m = { mech, NULL, 0 };
	CK_RV rv = p11->C_DigestInit(ct_session, &m);

	if (rv != CKR_OK)
		return rv;
	return p11->C_Digest(ct_session, (CK_BYTE_PTR)data, len, out, out_len);
}
