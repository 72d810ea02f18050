/*
 * p11glue-store: PKCS#11 attributes from libcrypto keys (what key
 * generation and unwrapping contribute to new objects), and PKCS#8, the
 * form private keys take when they are wrapped.
 */
#include "crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/x509.h>

#include <stdlib.h>
#include <string.h>

/* Sets a BIGNUM parameter of the key as a big-endian attribute value. */
static bool set_bn(pg_attrs *out, CK_ATTRIBUTE_TYPE type, EVP_PKEY *pkey, const char *name,
                   size_t pad)
{
	BIGNUM *bn = NULL;
	unsigned char *buf = NULL;
	size_t len = 0;
	bool ok = false;

	if (!EVP_PKEY_get_bn_param(pkey, name, &bn))
		return false;
	len = pad > 0 ? pad : (size_t)BN_num_bytes(bn);
	buf = malloc(len > 0 ? len : 1);
	if (buf != NULL && BN_bn2binpad(bn, buf, (int)len) >= 0)
		ok = pg_attrs_set(out, type, buf, len);
	pg_free_secret(buf, len);
	BN_clear_free(bn);
	return ok;
}

/* CKA_PUBLIC_KEY_INFO: the DER SubjectPublicKeyInfo. */
static bool set_spki(pg_attrs *out, EVP_PKEY *pkey)
{
	unsigned char *der = NULL;
	int len = i2d_PUBKEY(pkey, &der);
	bool ok;

	if (len <= 0)
		return false;
	ok = pg_attrs_set(out, CKA_PUBLIC_KEY_INFO, der, (CK_ULONG)len);
	OPENSSL_free(der);
	return ok;
}

/* The public point, bare: uncompressed for prime curves. */
static bool public_point(EVP_PKEY *pkey, const pg_curve *curve, unsigned char *buf, size_t cap,
                         size_t *len)
{
	*len = cap;
	if (curve->key_type == CKK_EC_EDWARDS)
		return EVP_PKEY_get_raw_public_key(pkey, buf, len) > 0;
	return EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, cap,
	                                       len) > 0;
}

static bool set_ec_point(pg_attrs *out, EVP_PKEY *pkey, const pg_curve *curve)
{
	unsigned char point[2 * 66 + 1];
	unsigned char *der;
	size_t len, der_len;
	bool ok;

	if (!public_point(pkey, curve, point, sizeof(point), &len))
		return false;
	/* Base specification 4.9 / mechanisms 2.3.3: DER of an OCTET STRING. */
	der = pg_ec_point_encode(point, len, &der_len);
	if (der == NULL)
		return false;
	ok = pg_attrs_set(out, CKA_EC_POINT, der, der_len);
	free(der);
	return ok;
}

CK_RV pg_export_public(EVP_PKEY *pkey, const pg_curve *curve, pg_attrs *out)
{
	bool ok;

	if (curve == NULL)
		ok = set_bn(out, CKA_MODULUS, pkey, OSSL_PKEY_PARAM_RSA_N, 0) &&
		     set_bn(out, CKA_PUBLIC_EXPONENT, pkey, OSSL_PKEY_PARAM_RSA_E, 0);
	else
		ok = set_ec_point(out, pkey, curve);
	return ok && set_spki(out, pkey) ? CKR_OK : CKR_HOST_MEMORY;
}

const pg_rsa_part pg_rsa_parts[PG_RSA_PARTS] = {
	{ CKA_MODULUS, OSSL_PKEY_PARAM_RSA_N },
	{ CKA_PUBLIC_EXPONENT, OSSL_PKEY_PARAM_RSA_E },
	{ CKA_PRIVATE_EXPONENT, OSSL_PKEY_PARAM_RSA_D },
	{ CKA_PRIME_1, OSSL_PKEY_PARAM_RSA_FACTOR1 },
	{ CKA_PRIME_2, OSSL_PKEY_PARAM_RSA_FACTOR2 },
	{ CKA_EXPONENT_1, OSSL_PKEY_PARAM_RSA_EXPONENT1 },
	{ CKA_EXPONENT_2, OSSL_PKEY_PARAM_RSA_EXPONENT2 },
	{ CKA_COEFFICIENT, OSSL_PKEY_PARAM_RSA_COEFFICIENT1 },
};

static bool set_rsa_private(pg_attrs *out, EVP_PKEY *pkey)
{
	const pg_rsa_part *parts = pg_rsa_parts;

	for (size_t i = 0; i < PG_RSA_PARTS; i++) {
		BIGNUM *probe = NULL;

		/* Keys without CRT values (n, e, d only) still export. */
		if (i >= 3) {
			if (!EVP_PKEY_get_bn_param(pkey, parts[i].name, &probe))
				break;
			BN_clear_free(probe);
		}
		if (!set_bn(out, parts[i].type, pkey, parts[i].name, 0))
			return false;
	}
	return true;
}

static bool set_ec_private(pg_attrs *out, EVP_PKEY *pkey, const pg_curve *curve)
{
	unsigned char raw[57];
	size_t len = sizeof(raw);
	bool ok;

	if (curve->key_type == CKK_EC)
		return set_bn(out, CKA_VALUE, pkey, OSSL_PKEY_PARAM_PRIV_KEY, curve->scalar_len);
	if (EVP_PKEY_get_raw_private_key(pkey, raw, &len) <= 0)
		return false;
	ok = pg_attrs_set(out, CKA_VALUE, raw, len);
	pg_memzero(raw, sizeof(raw));
	return ok;
}

CK_RV pg_export_private(EVP_PKEY *pkey, const pg_curve *curve, pg_attrs *out)
{
	bool ok;

	if (curve == NULL)
		ok = set_rsa_private(out, pkey);
	else
		ok = set_ec_private(out, pkey, curve) &&
		     pg_attrs_set(out, CKA_EC_PARAMS, curve->oid, curve->oid_len);
	return ok && set_spki(out, pkey) ? CKR_OK : CKR_HOST_MEMORY;
}

bool pg_export_key_type(EVP_PKEY *pkey, CK_KEY_TYPE *type, const pg_curve **curve)
{
	char group[64];
	size_t len;
	const pg_curve *c = NULL;

	*curve = NULL;
	if (EVP_PKEY_is_a(pkey, "RSA")) {
		*type = CKK_RSA;
		return true;
	}
	if (EVP_PKEY_is_a(pkey, "ED25519"))
		c = pg_curve_by_name("ED25519");
	else if (EVP_PKEY_is_a(pkey, "ED448"))
		c = pg_curve_by_name("ED448");
	else if (EVP_PKEY_is_a(pkey, "EC") &&
	         EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
	                                        sizeof(group), &len) > 0)
		c = pg_curve_by_name(group);
	if (c == NULL)
		return false;
	*type = c->key_type;
	*curve = c;
	return true;
}

unsigned char *pg_export_pkcs8(EVP_PKEY *pkey, size_t *len)
{
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(pkey);
	unsigned char *der = NULL, *p;
	int n = p8 != NULL ? i2d_PKCS8_PRIV_KEY_INFO(p8, NULL) : -1;

	if (n > 0)
		der = malloc((size_t)n);
	p = der;
	if (der != NULL && i2d_PKCS8_PRIV_KEY_INFO(p8, &p) != n) {
		pg_free_secret(der, (size_t)n);
		der = NULL;
	}
	PKCS8_PRIV_KEY_INFO_free(p8);
	*len = der != NULL ? (size_t)n : 0;
	return der;
}

EVP_PKEY *pg_import_pkcs8(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	PKCS8_PRIV_KEY_INFO *p8;
	EVP_PKEY *pkey = NULL;

	if (len == 0 || len > 65536)
		return NULL;
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
	/* One structure, followed at most by the zeros of a block cipher's padding. */
	while (p8 != NULL && p < der + len && *p == 0)
		p++;
	if (p8 != NULL && p == der + len)
		pkey = EVP_PKCS82PKEY(p8);
	PKCS8_PRIV_KEY_INFO_free(p8);
	return pkey;
}

/* ---------------------------------------------------------------------------
 * Values for new key objects.
 */
CK_RV pg_gen_common(pg_attrs *gen, CK_OBJECT_CLASS cls, CK_KEY_TYPE type, CK_MECHANISM_TYPE mech)
{
	bool local = mech != CK_UNAVAILABLE_INFORMATION;

	if (!pg_attrs_set_ulong(gen, CKA_CLASS, cls) || !pg_attrs_set_ulong(gen, CKA_KEY_TYPE, type) ||
	    !pg_attrs_set_bool(gen, CKA_LOCAL, local) ||
	    !pg_attrs_set_ulong(gen, CKA_KEY_GEN_MECHANISM, mech))
		return CKR_HOST_MEMORY;
	return CKR_OK;
}

CK_RV pg_gen_add(pg_attrs *gen, const pg_attrs *values, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < values->n; i++) {
		const CK_ATTRIBUTE *a = &values->items[i];
		if ((a->type == CKA_PUBLIC_EXPONENT || a->type == CKA_EC_PARAMS) &&
		    pg_tmpl_find(t, n, a->type) != NULL)
			continue;
		if (!pg_attrs_set(gen, a->type, a->pValue, a->ulValueLen))
			return CKR_HOST_MEMORY;
	}
	return CKR_OK;
}

CK_RV pg_tmpl_merge(const CK_ATTRIBUTE *t, CK_ULONG n, const pg_attrs *base,
                    CK_ATTRIBUTE_TYPE which, pg_attrs *out)
{
	const CK_ATTRIBUTE *given = pg_attrs_find(base, which);
	pg_attrs extra = { 0 };
	CK_RV rv = CKR_OK;

	if (given != NULL && given->ulValueLen > 0 && !pg_attrs_template(base, which, &extra))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		rv = pg_attrs_add_all(out, t, n);
	for (CK_ULONG i = 0; rv == CKR_OK && i < extra.n; i++) {
		const CK_ATTRIBUTE *a = &extra.items[i];
		const CK_ATTRIBUTE *have = pg_tmpl_find(t, n, a->type);
		if (have == NULL)
			rv = pg_attrs_set(out, a->type, a->pValue, a->ulValueLen) ? CKR_OK : CKR_HOST_MEMORY;
		else if (have->ulValueLen != a->ulValueLen ||
		         (a->ulValueLen > 0 && memcmp(have->pValue, a->pValue, a->ulValueLen) != 0))
			rv = CKR_TEMPLATE_INCONSISTENT;
	}
	pg_attrs_clear(&extra);
	return rv;
}
