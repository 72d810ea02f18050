/*
 * PKCS#11 key attributes from libcrypto keys, and back (keys.h).
 * Attribute forms follow the PKCS#11 3.0 current mechanisms
 * specification: RSA (2.1.2, 2.1.3), EC (2.3.3, 2.3.4: CKA_EC_PARAMS the
 * DER of the curve's OID, CKA_EC_POINT the DER of an OCTET STRING holding
 * the uncompressed point) and Edwards curves (2.3.5, 2.3.6: the same, the
 * point being the RFC 8032 public key).
 */
#include "config.h"

#include "keys.h"
#include "import.h"
#include "x509-build.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/x509v3.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const pg_key_kind kinds[] = {
	{ "rsa", CKK_RSA, CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 },
	{ "ec:secp256r1", CKK_EC, CKM_EC_KEY_PAIR_GEN, "prime256v1", 256 },
	{ "ec:secp384r1", CKK_EC, CKM_EC_KEY_PAIR_GEN, "secp384r1", 384 },
	{ "ec:secp521r1", CKK_EC, CKM_EC_KEY_PAIR_GEN, "secp521r1", 521 },
	{ "ed25519", CKK_EC_EDWARDS, CKM_EC_EDWARDS_KEY_PAIR_GEN, "ED25519", 255 },
	{ "ed448", CKK_EC_EDWARDS, CKM_EC_EDWARDS_KEY_PAIR_GEN, "ED448", 448 },
};

/* Other spellings users type, for --type. */
static const struct {
	const char *alias;
	unsigned kind;
} kind_aliases[] = {
	{ "ec:prime256v1", 1 }, { "ec:p-256", 1 }, { "ec:nistp256", 1 },
	{ "ec:p-384", 2 }, { "ec:nistp384", 2 },
	{ "ec:p-521", 3 }, { "ec:nistp521", 3 },
	{ "ec:ed25519", 4 }, { "ec:edwards25519", 4 },
	{ "ec:ed448", 5 }, { "ec:edwards448", 5 },
};

bool
pg_key_kind_parse(const char *text, const pg_key_kind **kind, unsigned *bits)
{
	char *end;
	unsigned long n;

	*bits = 0;
	if (strncasecmp(text, "rsa:", 4) == 0) {
		n = strtoul(text + 4, &end, 10);
		if (text[4] < '0' || text[4] > '9' || *end != 0 || n == 0 || n > 16384)
			return false;
		*kind = &kinds[0];
		*bits = (unsigned)n;
		return true;
	}
	for (size_t i = 1; i < PG_N_ELEMENTS(kinds); i++) {
		if (strcasecmp(text, kinds[i].name) == 0) {
			*kind = &kinds[i];
			return true;
		}
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(kind_aliases); i++) {
		if (strcasecmp(text, kind_aliases[i].alias) == 0) {
			*kind = &kinds[kind_aliases[i].kind];
			return true;
		}
	}
	return false;
}

static const pg_key_kind *
kind_of_group(const char *group)
{
	static const char *const nist[] = { NULL, "P-256", "P-384", "P-521" };

	for (size_t i = 1; i < 4; i++) {
		if (strcmp(group, kinds[i].group) == 0 || strcmp(group, nist[i]) == 0)
			return &kinds[i];
	}
	return NULL;
}

const pg_key_kind *
pg_key_kind_of(EVP_PKEY *key)
{
	char group[64];

	if (EVP_PKEY_is_a(key, "RSA"))
		return &kinds[0];
	if (EVP_PKEY_is_a(key, "ED25519"))
		return &kinds[4];
	if (EVP_PKEY_is_a(key, "ED448"))
		return &kinds[5];
	if (EVP_PKEY_is_a(key, "EC") &&
	    EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
	                                   NULL))
		return kind_of_group(group);
	return NULL;
}

void
pg_tmpl_add_ec_params(pg_tmpl *t, const char *group)
{
	ASN1_OBJECT *oid = OBJ_nid2obj(OBJ_sn2nid(group));
	unsigned char *der = NULL;
	int len = oid ? i2d_ASN1_OBJECT(oid, &der) : -1;

	if (len <= 0) {
		t->failed = true;
		return;
	}
	pg_tmpl_add(t, CKA_EC_PARAMS, der, (size_t)len);
	OPENSSL_free(der);
}

bool
pg_key_id(EVP_PKEY *key, unsigned char id[20])
{
	return pg_x509_key_id(key, id);
}

/* ---------------------------------------------------------------------------
 * Key values
 */

/* A BIGNUM parameter as a big-endian value of pad bytes (0: minimal). */
static void
add_bn(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, EVP_PKEY *key, const char *name, size_t pad,
       bool optional)
{
	BIGNUM *bn = NULL;
	unsigned char *buf;
	size_t len;

	if (!EVP_PKEY_get_bn_param(key, name, &bn)) {
		if (!optional)
			t->failed = true;
		return;
	}
	len = pad ? pad : (size_t)BN_num_bytes(bn);
	buf = malloc(len ? len : 1);
	if (buf == NULL || BN_bn2binpad(bn, buf, (int)len) < 0)
		t->failed = true;
	else
		pg_tmpl_add(t, type, buf, len);
	pg_free_secret(buf, len);
	BN_clear_free(bn);
}

/* CKA_EC_POINT: DER OCTET STRING around the point. */
static void
add_point(pg_tmpl *t, const unsigned char *point, size_t len)
{
	unsigned char der[4 + 2 * 66 + 1];
	size_t off = 0;

	if (len > sizeof(der) - 4) {
		t->failed = true;
		return;
	}
	der[off++] = 0x04;
	if (len >= 128)
		der[off++] = 0x81;
	der[off++] = (unsigned char)len;
	memcpy(der + off, point, len);
	pg_tmpl_add(t, CKA_EC_POINT, der, off + len);
}

static void
add_spki(pg_tmpl *t, EVP_PKEY *key)
{
	unsigned char *der = NULL;
	int len = i2d_PUBKEY(key, &der);

	if (len <= 0)
		t->failed = true;
	else
		pg_tmpl_add(t, CKA_PUBLIC_KEY_INFO, der, (size_t)len);
	OPENSSL_free(der);
}

static void
rsa_values(EVP_PKEY *key, pg_tmpl *pub, pg_tmpl *priv)
{
	static const struct {
		CK_ATTRIBUTE_TYPE type;
		const char *name;
	} crt[] = {
		{ CKA_PRIME_1, OSSL_PKEY_PARAM_RSA_FACTOR1 },
		{ CKA_PRIME_2, OSSL_PKEY_PARAM_RSA_FACTOR2 },
		{ CKA_EXPONENT_1, OSSL_PKEY_PARAM_RSA_EXPONENT1 },
		{ CKA_EXPONENT_2, OSSL_PKEY_PARAM_RSA_EXPONENT2 },
		{ CKA_COEFFICIENT, OSSL_PKEY_PARAM_RSA_COEFFICIENT1 },
	};

	for (int i = 0; i < 2; i++) {
		pg_tmpl *t = i == 0 ? pub : priv;
		if (t == NULL)
			continue;
		add_bn(t, CKA_MODULUS, key, OSSL_PKEY_PARAM_RSA_N, 0, false);
		add_bn(t, CKA_PUBLIC_EXPONENT, key, OSSL_PKEY_PARAM_RSA_E, 0, false);
	}
	if (priv == NULL)
		return;
	add_bn(priv, CKA_PRIVATE_EXPONENT, key, OSSL_PKEY_PARAM_RSA_D, 0, false);
	for (size_t i = 0; i < PG_N_ELEMENTS(crt); i++)
		add_bn(priv, crt[i].type, key, crt[i].name, 0, true);
}

static bool
ec_values(EVP_PKEY *key, const pg_key_kind *kind, pg_tmpl *pub, pg_tmpl *priv)
{
	unsigned char point[1 + 2 * 66];
	size_t len = sizeof(point);

	if (kind->key_type == CKK_EC_EDWARDS ? !EVP_PKEY_get_raw_public_key(key, point, &len)
	                                     : !pg_ec_uncompressed_point(key, point, sizeof(point), &len))
		return false;
	if (pub != NULL) {
		pg_tmpl_add_ec_params(pub, kind->group);
		add_point(pub, point, len);
	}
	if (priv != NULL) {
		pg_tmpl_add_ec_params(priv, kind->group);
		if (kind->key_type == CKK_EC_EDWARDS) {
			unsigned char raw[57];
			size_t raw_len = sizeof(raw);
			if (!EVP_PKEY_get_raw_private_key(key, raw, &raw_len))
				return false;
			pg_tmpl_add(priv, CKA_VALUE, raw, raw_len);
			pg_memzero(raw, sizeof(raw));
		} else {
			add_bn(priv, CKA_VALUE, key, OSSL_PKEY_PARAM_PRIV_KEY, (kind->bits + 7) / 8, false);
		}
	}
	return true;
}

bool
pg_key_values(EVP_PKEY *key, pg_tmpl *pub, pg_tmpl *priv)
{
	const pg_key_kind *kind = pg_key_kind_of(key);

	if (kind == NULL)
		return false;
	if (pub != NULL) {
		pg_tmpl_add_ulong(pub, CKA_CLASS, CKO_PUBLIC_KEY);
		pg_tmpl_add_ulong(pub, CKA_KEY_TYPE, kind->key_type);
		add_spki(pub, key);
	}
	if (priv != NULL) {
		pg_tmpl_add_ulong(priv, CKA_CLASS, CKO_PRIVATE_KEY);
		pg_tmpl_add_ulong(priv, CKA_KEY_TYPE, kind->key_type);
		add_spki(priv, key);
	}
	if (kind->key_type == CKK_RSA)
		rsa_values(key, pub, priv);
	else if (!ec_values(key, kind, pub, priv))
		return false;
	return !(pub && pub->failed) && !(priv && priv->failed);
}

/* ---------------------------------------------------------------------------
 * Public keys of token objects
 */

/* The libcrypto name of the curve CKA_EC_PARAMS names, or NULL. */
static const char *
curve_of_params(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	ASN1_OBJECT *oid;
	int nid;

	/* 3.0 also allows the curve's name as a PrintableString. */
	if (len > 2 && der[0] == 0x13 && der[1] == len - 2) {
		if (len - 2 == 12 && memcmp(der + 2, "edwards25519", 12) == 0)
			return "ED25519";
		if (len - 2 == 10 && memcmp(der + 2, "edwards448", 10) == 0)
			return "ED448";
		return NULL;
	}
	oid = d2i_ASN1_OBJECT(NULL, &p, (long)len);
	nid = oid != NULL && p == der + len ? OBJ_obj2nid(oid) : NID_undef;
	ASN1_OBJECT_free(oid);
	return nid != NID_undef ? OBJ_nid2sn(nid) : NULL;
}

/* The point inside CKA_EC_POINT's OCTET STRING (or a bare point). */
static const unsigned char *
unwrap_point(const unsigned char *der, size_t len, size_t *out_len)
{
	if (len >= 2 && der[0] == 0x04 && der[1] < 0x80 && der[1] == len - 2) {
		*out_len = len - 2;
		return der + 2;
	}
	if (len >= 3 && der[0] == 0x04 && der[1] == 0x81 && der[2] >= 0x80 && der[2] == len - 3) {
		*out_len = len - 3;
		return der + 3;
	}
	*out_len = len;
	return der;
}

EVP_PKEY *
pg_key_from_params(const char *type, int selection, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY_CTX *check = NULL;
	EVP_PKEY *key = NULL;

	if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &key, selection, params) <= 0)
		key = NULL;
	/* The private and public halves must belong together. */
	if (key != NULL && selection == EVP_PKEY_KEYPAIR &&
	    ((check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL)) == NULL ||
	     EVP_PKEY_pairwise_check(check) <= 0)) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	EVP_PKEY_CTX_free(check);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return key;
}

EVP_PKEY *
pg_key_rsa_public(const unsigned char *n, size_t n_len, const unsigned char *e, size_t e_len)
{
	BIGNUM *bn = BN_bin2bn(n, (int)n_len, NULL), *be = BN_bin2bn(e, (int)e_len, NULL);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *key = NULL;

	if (bn != NULL && be != NULL && bld != NULL &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be))
		key = pg_key_from_params("RSA", EVP_PKEY_PUBLIC_KEY, bld);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	return key;
}

EVP_PKEY *
pg_key_rsa_private(const BIGNUM *n, const BIGNUM *e, const BIGNUM *d, const BIGNUM *p,
                   const BIGNUM *q, const BIGNUM *qinv)
{
	BIGNUM *dp = BN_secure_new(), *dq = BN_secure_new(), *t = BN_secure_new();
	BIGNUM *inv = qinv == NULL ? BN_secure_new() : NULL;
	BN_CTX *bn = BN_CTX_secure_new();
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *key = NULL;

	if (n == NULL || e == NULL || d == NULL || p == NULL || q == NULL || dp == NULL ||
	    dq == NULL || t == NULL || (qinv == NULL && inv == NULL) || bn == NULL ||
	    bld == NULL || BN_is_zero(p) || BN_is_zero(q) || BN_is_one(p) || BN_is_one(q))
		goto out;
	if (!BN_sub(t, p, BN_value_one()) || !BN_mod(dp, d, t, bn) ||
	    !BN_sub(t, q, BN_value_one()) || !BN_mod(dq, d, t, bn) ||
	    (inv != NULL && BN_mod_inverse(inv, q, p, bn) == NULL))
		goto out;
	if (OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, p) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, q) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, dp) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, dq) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, inv ? inv : qinv))
		key = pg_key_from_params("RSA", EVP_PKEY_KEYPAIR, bld);
out:
	OSSL_PARAM_BLD_free(bld);
	BN_CTX_free(bn);
	BN_clear_free(dp);
	BN_clear_free(dq);
	BN_clear_free(t);
	BN_clear_free(inv);
	return key;
}

EVP_PKEY *
pg_key_ec(const char *group, const unsigned char *point, size_t point_len, const BIGNUM *d)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY *key = NULL;

	if (bld != NULL &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, point_len) &&
	    (d == NULL || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d)))
		key = pg_key_from_params("EC", d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, bld);
	OSSL_PARAM_BLD_free(bld);
	return key;
}

static EVP_PKEY *
rsa_public(pg_keytoken *kt, CK_OBJECT_HANDLE obj)
{
	size_t n_len, e_len;
	unsigned char *n = pg_keytoken_get(kt, obj, CKA_MODULUS, &n_len);
	unsigned char *e = pg_keytoken_get(kt, obj, CKA_PUBLIC_EXPONENT, &e_len);
	EVP_PKEY *key = n && e ? pg_key_rsa_public(n, n_len, e, e_len) : NULL;

	free(n);
	free(e);
	return key;
}

static EVP_PKEY *
ec_public(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char **why)
{
	size_t params_len, point_len, len;
	unsigned char *params = pg_keytoken_get(kt, obj, CKA_EC_PARAMS, &params_len);
	unsigned char *der = pg_keytoken_get(kt, obj, CKA_EC_POINT, &point_len);
	const char *curve = params ? curve_of_params(params, params_len) : NULL;
	const unsigned char *point = der ? unwrap_point(der, point_len, &len) : NULL;
	EVP_PKEY *key = NULL;

	if (curve == NULL || point == NULL)
		*why = curve == NULL ? "unknown curve" : "no public point";
	else if (strcmp(curve, "ED25519") == 0 || strcmp(curve, "ED448") == 0)
		key = EVP_PKEY_new_raw_public_key_ex(NULL, curve, NULL, point, len);
	else
		key = pg_key_ec(curve, point, len, NULL);
	free(params);
	free(der);
	return key;
}

EVP_PKEY *
pg_keytoken_public_key(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char **why)
{
	size_t len = 0;
	unsigned char *klass = pg_keytoken_get(kt, obj, CKA_CLASS, &len);
	CK_OBJECT_CLASS cls = klass && len == sizeof(CK_ULONG) ? *(CK_ULONG *)klass : (CK_ULONG)-1;
	unsigned char *value, *type;
	const unsigned char *p;
	EVP_PKEY *key = NULL;
	CK_KEY_TYPE key_type;

	free(klass);
	*why = "cannot build the public key";
	if (cls == CKO_CERTIFICATE) {
		X509 *cert;
		value = pg_keytoken_get(kt, obj, CKA_VALUE, &len);
		p = value;
		cert = value ? d2i_X509(NULL, &p, (long)len) : NULL;
		key = cert ? X509_get_pubkey(cert) : NULL;
		X509_free(cert);
		free(value);
		return key;
	}
	/* The whole SubjectPublicKeyInfo, when the token keeps it. */
	value = pg_keytoken_get(kt, obj, CKA_PUBLIC_KEY_INFO, &len);
	p = value;
	if (value != NULL && len > 0)
		key = d2i_PUBKEY(NULL, &p, (long)len);
	free(value);
	if (key != NULL)
		return key;
	type = pg_keytoken_get(kt, obj, CKA_KEY_TYPE, &len);
	if (type == NULL || len != sizeof(CK_ULONG)) {
		free(type);
		*why = "not a key";
		return NULL;
	}
	key_type = *(CK_ULONG *)type;
	free(type);
	if (key_type == CKK_RSA)
		return rsa_public(kt, obj);
	if (key_type == CKK_EC || key_type == CKK_EC_EDWARDS)
		return ec_public(kt, obj, why);
	*why = "unsupported key type";
	return NULL;
}

/* Adds a DER encoding made by i2d to t. */
#define ADD_DER(t, type, i2d, obj)                                  \
	do {                                                            \
		unsigned char *der_ = NULL;                                 \
		int len_ = i2d(obj, &der_);                                 \
		if (len_ <= 0)                                              \
			(t)->failed = true;                                     \
		else                                                        \
			pg_tmpl_add(t, type, der_, (size_t)len_);               \
		OPENSSL_free(der_);                                         \
	} while (0)

void
pg_cert_template(pg_tmpl *t, X509 *cert, const char *label, const unsigned char *id, size_t id_len,
                 bool leaf)
{
	CK_ULONG category = leaf ? CK_CERTIFICATE_CATEGORY_TOKEN_USER
	                         : X509_check_ca(cert) > 0 ? CK_CERTIFICATE_CATEGORY_AUTHORITY
	                                                   : CK_CERTIFICATE_CATEGORY_UNSPECIFIED;

	pg_tmpl_add_ulong(t, CKA_CLASS, CKO_CERTIFICATE);
	pg_tmpl_add_ulong(t, CKA_CERTIFICATE_TYPE, CKC_X_509);
	pg_tmpl_add_bool(t, CKA_TOKEN, true);
	pg_tmpl_add_bool(t, CKA_PRIVATE, false);
	pg_tmpl_add_ulong(t, CKA_CERTIFICATE_CATEGORY, category);
	if (label != NULL)
		pg_tmpl_add(t, CKA_LABEL, label, strlen(label));
	pg_tmpl_add(t, CKA_ID, id, id_len);
	ADD_DER(t, CKA_SUBJECT, i2d_X509_NAME, X509_get_subject_name(cert));
	ADD_DER(t, CKA_ISSUER, i2d_X509_NAME, X509_get_issuer_name(cert));
	ADD_DER(t, CKA_SERIAL_NUMBER, i2d_ASN1_INTEGER, X509_get0_serialNumber(cert));
	ADD_DER(t, CKA_VALUE, i2d_X509, cert);
	if (X509_get0_pubkey(cert) != NULL)
		ADD_DER(t, CKA_PUBLIC_KEY_INFO, i2d_PUBKEY, X509_get0_pubkey(cert));
}

CK_RV
pg_cert_create_leaf(pg_keytoken *kt, X509 *cert, const char *label, const unsigned char *id,
                    size_t id_len, CK_OBJECT_HANDLE *obj)
{
	pg_tmpl t;
	CK_RV rv;

	pg_tmpl_init(&t);
	pg_cert_template(&t, cert, label, id, id_len, true);
	rv = t.failed ? CKR_HOST_MEMORY : kt->f->C_CreateObject(kt->session, t.items, t.n, obj);
	pg_tmpl_clear(&t);
	return rv;
}

void
pg_key_templates(pg_tmpl *pub, pg_tmpl *priv, EVP_PKEY *key, const char *label,
                 const unsigned char *id, size_t id_len, X509 *leaf)
{
	const pg_key_kind *kind = pg_key_kind_of(key);

	if (!pg_key_values(key, pub, priv)) {
		pub->failed = true;
		return;
	}
	if (leaf != NULL) {
		ADD_DER(pub, CKA_SUBJECT, i2d_X509_NAME, X509_get_subject_name(leaf));
		ADD_DER(priv, CKA_SUBJECT, i2d_X509_NAME, X509_get_subject_name(leaf));
	}
	pg_key_pair_templates(pub, priv, kind, label, id, id_len);
}

void
pg_key_pair_templates(pg_tmpl *pub, pg_tmpl *priv, const pg_key_kind *kind, const char *label,
                      const unsigned char *id, size_t id_len)
{
	for (int i = 0; i < 2; i++) {
		pg_tmpl *t = i == 0 ? pub : priv;
		pg_tmpl_add_bool(t, CKA_TOKEN, true);
		pg_tmpl_add(t, CKA_LABEL, label, strlen(label));
		if (id != NULL)
			pg_tmpl_add(t, CKA_ID, id, id_len);
	}
	pg_tmpl_add_bool(pub, CKA_PRIVATE, false);
	pg_tmpl_add_bool(pub, CKA_VERIFY, true);
	pg_tmpl_add_bool(priv, CKA_PRIVATE, true);
	pg_tmpl_add_bool(priv, CKA_SENSITIVE, true);
	pg_tmpl_add_bool(priv, CKA_EXTRACTABLE, false);
	pg_tmpl_add_bool(priv, CKA_SIGN, true);
	if (kind->key_type == CKK_RSA) {
		/* The private key decrypts (GnuPG, OpenSSL) and unwraps (NSS's
		 * TLS key exchange), so the public key must not wrap: what it
		 * wrapped, the private key would decrypt. Said explicitly, as
		 * other modules' defaults (SoftHSM2's) let a public key wrap. */
		pg_tmpl_add_bool(pub, CKA_ENCRYPT, true);
		pg_tmpl_add_bool(pub, CKA_WRAP, false);
		pg_tmpl_add_bool(priv, CKA_DECRYPT, true);
		pg_tmpl_add_bool(priv, CKA_UNWRAP, true);
	} else if (kind->key_type == CKK_EC) {
		pg_tmpl_add_bool(priv, CKA_DERIVE, true);
	}
}
