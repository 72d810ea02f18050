/*
 * p11glue-store: elliptic curves. The curves the store supports, the
 * encodings PKCS#11 uses for them (CKA_EC_PARAMS, CKA_EC_POINT, ECDSA
 * signatures as r||s) and their conversion to what libcrypto takes.
 */
#include "crypto.h"

#include <openssl/core_names.h>
#include <openssl/params.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const unsigned char oid_p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
static const unsigned char oid_p384[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
static const unsigned char oid_p521[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23 };
static const unsigned char oid_ed25519[] = { 0x06, 0x03, 0x2b, 0x65, 0x70 };
static const unsigned char oid_ed448[] = { 0x06, 0x03, 0x2b, 0x65, 0x71 };

static const pg_curve curves[] = {
	{ "prime256v1", CKK_EC, 256, 32, 64, oid_p256, sizeof(oid_p256) },
	{ "secp384r1", CKK_EC, 384, 48, 96, oid_p384, sizeof(oid_p384) },
	{ "secp521r1", CKK_EC, 521, 66, 132, oid_p521, sizeof(oid_p521) },
	{ "ED25519", CKK_EC_EDWARDS, 255, 32, 64, oid_ed25519, sizeof(oid_ed25519) },
	{ "ED448", CKK_EC_EDWARDS, 448, 57, 114, oid_ed448, sizeof(oid_ed448) },
};

/*
 * Curve names accepted in a PrintableString CKA_EC_PARAMS: the
 * specification's names for Edwards curves (current mechanisms 2.3.10),
 * and the usual names of the prime curves.
 */
static const struct {
	const char *name;
	unsigned curve;
} curve_names[] = {
	{ "prime256v1", 0 }, { "secp256r1", 0 }, { "P-256", 0 }, { "nistp256", 0 },
	{ "secp384r1", 1 }, { "P-384", 1 }, { "nistp384", 1 },
	{ "secp521r1", 2 }, { "P-521", 2 }, { "nistp521", 2 },
	{ "edwards25519", 3 }, { "Ed25519", 3 },
	{ "edwards448", 4 }, { "Ed448", 4 },
};

/*
 * Reads one DER element with the given tag that spans exactly len bytes
 * (definite length, at most two length octets).
 */
static bool der_exact(unsigned char tag, const unsigned char *der, size_t len,
                      const unsigned char **content, size_t *content_len)
{
	size_t n, hdr;

	if (len < 2 || der[0] != tag)
		return false;
	if (der[1] < 0x80) {
		n = der[1];
		hdr = 2;
	} else if (der[1] == 0x81 && len >= 3 && der[2] >= 0x80) {
		n = der[2];
		hdr = 3;
	} else if (der[1] == 0x82 && len >= 4 && der[2] != 0) {
		n = ((size_t)der[2] << 8) | der[3];
		hdr = 4;
	} else {
		return false;
	}
	if (len - hdr != n)
		return false;
	*content = der + hdr;
	*content_len = n;
	return true;
}

const pg_curve *pg_curve_from_params(const void *params, size_t len)
{
	const unsigned char *der = params, *s;
	size_t n;

	if (der == NULL)
		return NULL;
	for (size_t i = 0; i < PG_N_ELEMENTS(curves); i++)
		if (len == curves[i].oid_len && memcmp(der, curves[i].oid, len) == 0)
			return &curves[i];
	/* PrintableString, or the UTF8String some callers use. */
	if (!der_exact(0x13, der, len, &s, &n) && !der_exact(0x0c, der, len, &s, &n))
		return NULL;
	for (size_t i = 0; i < PG_N_ELEMENTS(curve_names); i++)
		if (strlen(curve_names[i].name) == n && strncasecmp(curve_names[i].name, (const char *)s, n) == 0)
			return &curves[curve_names[i].curve];
	return NULL;
}

const pg_curve *pg_curve_by_name(const char *name)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(curve_names); i++)
		if (strcasecmp(curve_names[i].name, name) == 0)
			return &curves[curve_names[i].curve];
	for (size_t i = 0; i < PG_N_ELEMENTS(curves); i++)
		if (strcasecmp(curves[i].name, name) == 0)
			return &curves[i];
	return NULL;
}

/* Whether len is the length of an encoded point (key) of the curve. */
static bool point_len_ok(const pg_curve *curve, const unsigned char *p, size_t len)
{
	size_t f = (curve->bits + 7) / 8;

	if (curve->key_type == CKK_EC_EDWARDS)
		return len == curve->scalar_len;
	if (len == 2 * f + 1)
		return p[0] == 0x04;
	if (len == f + 1)
		return p[0] == 0x02 || p[0] == 0x03;
	return false;
}

bool pg_ec_point_decode(const pg_curve *curve, const unsigned char *der, size_t len,
                        const unsigned char **point, size_t *point_len)
{
	const unsigned char *p;
	size_t n;

	if (der == NULL || len == 0)
		return false;
	/* The lengths of the two forms never coincide, so neither is misread. */
	if (der_exact(0x04, der, len, &p, &n) && n > 0 && point_len_ok(curve, p, n)) {
		*point = p;
		*point_len = n;
		return true;
	}
	if (!point_len_ok(curve, der, len))
		return false;
	*point = der;
	*point_len = len;
	return true;
}

/* A DER element of tag holding value[len] (len at most 0xffff), in a
 * malloc()ed buffer of *der_len bytes; NULL when out of memory. */
static unsigned char *der_element(unsigned char tag, const unsigned char *value, size_t len,
                                  size_t *der_len)
{
	size_t hdr = len < 0x80 ? 2 : len < 0x100 ? 3 : 4;
	unsigned char *der = malloc(hdr + len);

	if (der == NULL)
		return NULL;
	der[0] = tag;
	if (hdr == 2) {
		der[1] = (unsigned char)len;
	} else if (hdr == 3) {
		der[1] = 0x81;
		der[2] = (unsigned char)len;
	} else {
		der[1] = 0x82;
		der[2] = (unsigned char)(len >> 8);
		der[3] = (unsigned char)len;
	}
	memcpy(der + hdr, value, len);
	*der_len = hdr + len;
	return der;
}

unsigned char *pg_ec_point_encode(const unsigned char *point, size_t len, size_t *der_len)
{
	if (len > 0xffff)
		return NULL;
	return der_element(0x04, point, len, der_len);
}

EVP_PKEY *pg_ec_public_key(const pg_curve *curve, const unsigned char *point, size_t len)
{
	EVP_PKEY_CTX *ctx;
	EVP_PKEY *pkey = NULL;
	OSSL_PARAM params[3];

	if (!point_len_ok(curve, point, len))
		return NULL;
	if (curve->key_type == CKK_EC_EDWARDS)
		return EVP_PKEY_new_raw_public_key_ex(NULL, curve->name, NULL, point, len);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, PG_OID_EC, NULL);
	if (ctx == NULL)
		return NULL;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
	                                             (char *)curve->name, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
	                                              (void *)point, len);
	params[2] = OSSL_PARAM_construct_end();
	/* Decoding checks that the point lies on the curve. */
	if (EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

/* ---------------------------------------------------------------------------
 * ECDSA signatures: libcrypto speaks DER (SEQUENCE { INTEGER r, INTEGER s }),
 * PKCS#11 the two values concatenated, each as long as the group order
 * (current mechanisms 2.3.1). Done by hand: this runs on every signature.
 */

/* Reads an INTEGER into n bytes, big-endian, left-padded; advances *p. */
static bool int_to_fixed(const unsigned char **p, const unsigned char *end, size_t n,
                         unsigned char *out)
{
	const unsigned char *q = *p;
	size_t len;

	if (end - q < 2 || q[0] != 0x02 || q[1] >= 0x80)
		return false;
	len = q[1];
	q += 2;
	if (len == 0 || (size_t)(end - q) < len || (q[0] & 0x80) != 0)
		return false;
	*p = q + len;
	/* A leading zero only keeps a positive value positive. */
	if (len > 1 && q[0] == 0) {
		if ((q[1] & 0x80) == 0)
			return false;
		q++;
		len--;
	}
	if (len > n)
		return false;
	memset(out, 0, n - len);
	memcpy(out + n - len, q, len);
	return true;
}

bool pg_ecdsa_der_to_rs(const unsigned char *der, size_t der_len, size_t n, unsigned char *rs)
{
	const unsigned char *body, *end;
	size_t body_len;

	if (!der_exact(0x30, der, der_len, &body, &body_len))
		return false;
	end = body + body_len;
	if (!int_to_fixed(&body, end, n, rs) || !int_to_fixed(&body, end, n, rs + n))
		return false;
	return body == end;
}

/* Appends an unsigned big-endian value as a DER INTEGER; returns the new end. */
static unsigned char *fixed_to_int(const unsigned char *v, size_t n, unsigned char *out)
{
	while (n > 1 && v[0] == 0) {
		v++;
		n--;
	}
	*out++ = 0x02;
	*out++ = (unsigned char)(n + (v[0] >> 7));
	if (v[0] & 0x80)
		*out++ = 0;
	memcpy(out, v, n);
	return out + n;
}

unsigned char *pg_ecdsa_rs_to_der(const unsigned char *rs, size_t n, size_t *der_len)
{
	/* Each INTEGER takes at most n + 3 bytes; the SEQUENCE header 3. */
	unsigned char body[2 * (66 + 3)];
	unsigned char *end;

	if (n == 0 || n > 66)
		return NULL;
	end = fixed_to_int(rs, n, body);
	end = fixed_to_int(rs + n, n, end);
	return der_element(0x30, body, (size_t)(end - body), der_len);
}
