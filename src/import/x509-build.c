/*
 * Certificates and requests signed by a callback (x509-build.h).
 *
 * libcrypto cannot set the signature algorithm of an X509 object without
 * a private key it holds, so the certificate's outer layers are written
 * here: each part is DER from libcrypto's encoders, put together as
 * RFC 5280 §4.1 lays out TBSCertificate and Certificate (RFC 2986 §4
 * CertificationRequest has the same outer shape), then parsed back with
 * d2i to be sure libcrypto reads what was written.
 */
#include "config.h"

#include "x509-build.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void
say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------------------
 * Distinguished names
 */

#define MAX_AVAS 64

typedef struct {
	char type[64];
	unsigned char *value;
	size_t len;
	bool joined;                 /* '+' before it: same RDN as the last */
} ava;

/* One attribute value up to an unescaped separator; RFC 4514 §2.4. */
static bool
parse_value(const char **p, char sep, pg_buf *out, char *why, size_t why_size)
{
	const char *s = *p;
	size_t keep = 0;             /* length without unescaped trailing blanks */
	int hi, lo;

	while (*s && *s != sep && *s != '+') {
		if (*s != '\\') {
			pg_buf_add_byte(out, (unsigned char)*s);
			if (*s++ != ' ')
				keep = out->len;
			continue;
		}
		s++;
		if (*s == 0) {
			say(why, why_size, "a '\\' at the end");
			return false;
		}
		hi = pg_hex_value((unsigned char)s[0]);
		lo = hi >= 0 ? pg_hex_value((unsigned char)s[1]) : -1;
		if (lo >= 0) {
			pg_buf_add_byte(out, (unsigned char)(hi << 4 | lo));
			s += 2;
		} else {
			pg_buf_add_byte(out, (unsigned char)*s++);
		}
		keep = out->len;
	}
	out->len = keep;
	if (out->data != NULL)
		out->data[keep] = 0;
	*p = s;
	return !out->failed;
}

static bool
parse_avas(const char *text, char sep, ava *avas, size_t *n, char *why, size_t why_size)
{
	const char *s = text;
	bool joined = false;
	pg_buf value;
	size_t tlen;

	*n = 0;
	for (;;) {
		while (*s == ' ')
			s++;
		tlen = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-");
		if (tlen == 0 || s[tlen] != '=' || tlen >= sizeof(avas->type)) {
			say(why, why_size, "expected TYPE=VALUE at '%.20s'", s);
			return false;
		}
		if (*n == MAX_AVAS) {
			say(why, why_size, "more than %d attributes", MAX_AVAS);
			return false;
		}
		memcpy(avas[*n].type, s, tlen);
		avas[*n].type[tlen] = 0;
		s += tlen + 1;
		pg_buf_init(&value);
		if (!parse_value(&s, sep, &value, why, why_size)) {
			pg_buf_clear(&value);
			return false;
		}
		avas[*n].joined = joined;
		avas[*n].value = (unsigned char *)pg_buf_steal(&value, &avas[*n].len);
		if (avas[*n].value == NULL || avas[*n].len == 0) {
			say(why, why_size, "%s has no value", avas[*n].type);
			free(avas[*n].value);
			return false;
		}
		(*n)++;
		if (*s == 0)
			return true;
		joined = *s == '+';
		s++;
	}
}

/* Adds the RDN that starts at avas[first] (and the '+'-joined ones). */
static bool
add_rdn(X509_NAME *name, const ava *avas, size_t n, size_t first, char *why, size_t why_size)
{
	for (size_t i = first; i < n && (i == first || avas[i].joined); i++) {
		if (!X509_NAME_add_entry_by_txt(name, avas[i].type, MBSTRING_UTF8, avas[i].value,
		                                (int)avas[i].len, -1, i == first ? 0 : -1)) {
			say(why, why_size, "%s: unknown attribute type, or a value it cannot take",
			    avas[i].type);
			return false;
		}
	}
	return true;
}

X509_NAME *
pg_x509_name_parse(const char *text, char *why, size_t why_size)
{
	bool slash = text[0] == '/';
	ava *avas = calloc(MAX_AVAS, sizeof(*avas));
	X509_NAME *name = X509_NAME_new();
	size_t n = 0;
	bool ok = avas != NULL && name != NULL;

	if (!ok)
		say(why, why_size, "out of memory");
	else
		ok = parse_avas(slash ? text + 1 : text, slash ? '/' : ',', avas, &n, why, why_size);
	/* RFC 4514 §2.1: the string starts with the last RDN of the sequence. */
	for (size_t k = 0; ok && k < n; k++) {
		size_t i = slash ? k : n - 1 - k;
		if (!avas[i].joined)
			ok = add_rdn(name, avas, n, i, why, why_size);
	}
	for (size_t i = 0; avas && i < n; i++)
		free(avas[i].value);
	free(avas);
	if (!ok) {
		X509_NAME_free(name);
		return NULL;
	}
	return name;
}

/* ---------------------------------------------------------------------------
 * Signature algorithms
 */

bool
pg_x509_key_id(EVP_PKEY *pub, unsigned char id[20])
{
	X509_PUBKEY *spki = NULL;
	const unsigned char *bits;
	unsigned int n = 0;
	int len;
	bool ok;

	if (!X509_PUBKEY_set(&spki, pub))
		return false;
	ok = X509_PUBKEY_get0_param(NULL, &bits, &len, NULL, spki) && len >= 0 &&
	     EVP_Digest(bits, (size_t)len, id, &n, EVP_sha1(), NULL) && n == 20;
	X509_PUBKEY_free(spki);
	return ok;
}

bool
pg_sigalg_choose(EVP_PKEY *pub, const char *hash, pg_sigalg *alg, const char **why)
{
	bool rsa = EVP_PKEY_is_a(pub, "RSA"), ec = EVP_PKEY_is_a(pub, "EC");
	int bits = EVP_PKEY_get_bits(pub);

	memset(alg, 0, sizeof(*alg));
	if (EVP_PKEY_is_a(pub, "ED25519") || EVP_PKEY_is_a(pub, "ED448")) {
		if (hash != NULL) {
			*why = "Ed25519 and Ed448 signatures take no separate hash";
			return false;
		}
		alg->ed448 = EVP_PKEY_is_a(pub, "ED448");
		alg->nid = alg->ed448 ? NID_ED448 : NID_ED25519;
		alg->mech = CKM_EDDSA;
	} else if (rsa || ec) {
		if (hash == NULL)
			hash = rsa || bits <= 256 ? "sha256" : bits <= 384 ? "sha384" : "sha512";
		if (strcmp(hash, "sha256") == 0)
			alg->md = EVP_sha256();
		else if (strcmp(hash, "sha384") == 0)
			alg->md = EVP_sha384();
		else if (strcmp(hash, "sha512") == 0)
			alg->md = EVP_sha512();
		else {
			*why = "the hash must be sha256, sha384 or sha512";
			return false;
		}
		if (!OBJ_find_sigid_by_algs(&alg->nid, EVP_MD_get_type(alg->md),
		                            rsa ? NID_rsaEncryption : NID_X9_62_id_ecPublicKey)) {
			*why = "no signature algorithm for this hash";
			return false;
		}
		alg->mech = rsa ? CKM_RSA_PKCS : CKM_ECDSA;
	} else {
		*why = "the key is not RSA, EC, Ed25519 or Ed448";
		return false;
	}
	alg->name = OBJ_nid2ln(alg->nid);
	return true;
}

/* The AlgorithmIdentifier: parameters NULL for RSA (RFC 4055 §5),
 * absent for ECDSA (RFC 5758 §3.2) and EdDSA (RFC 8410 §3). */
static X509_ALGOR *
sigalg_algor(const pg_sigalg *alg)
{
	X509_ALGOR *a = X509_ALGOR_new();

	if (a != NULL && !X509_ALGOR_set0(a, OBJ_nid2obj(alg->nid),
	                                  alg->mech == CKM_RSA_PKCS ? V_ASN1_NULL : V_ASN1_UNDEF,
	                                  NULL)) {
		X509_ALGOR_free(a);
		a = NULL;
	}
	return a;
}

/* What the mechanism signs: RFC 8017 §9.2 DigestInfo, a hash, or all. */
static bool
sign_input(const pg_sigalg *alg, const unsigned char *tbs, size_t len, unsigned char **in,
           size_t *in_len)
{
	unsigned char hash[EVP_MAX_MD_SIZE];
	unsigned int hlen = 0;
	X509_SIG *info;
	X509_ALGOR *dalg;
	ASN1_OCTET_STRING *digest;
	unsigned char *der = NULL;
	int dlen;

	*in = NULL;
	if (alg->md == NULL) {
		*in = pg_memdup0(tbs, len);
		*in_len = len;
		return *in != NULL;
	}
	if (!EVP_Digest(tbs, len, hash, &hlen, alg->md, NULL))
		return false;
	if (alg->mech == CKM_ECDSA) {
		*in = pg_memdup0(hash, hlen);
		*in_len = hlen;
		return *in != NULL;
	}
	info = X509_SIG_new();
	if (info == NULL)
		return false;
	X509_SIG_getm(info, &dalg, &digest);
	dlen = X509_ALGOR_set0(dalg, OBJ_nid2obj(EVP_MD_get_type(alg->md)), V_ASN1_NULL, NULL) &&
	       ASN1_OCTET_STRING_set(digest, hash, (int)hlen) ? i2d_X509_SIG(info, &der) : -1;
	X509_SIG_free(info);
	if (dlen > 0) {
		*in = pg_memdup0(der, (size_t)dlen);
		*in_len = (size_t)dlen;
	}
	OPENSSL_free(der);
	return *in != NULL;
}

/* X.509 wants ECDSA-Sig-Value (RFC 3279 §2.2.3); PKCS#11 gives r || s
 * (current mechanisms 2.3.1). Takes raw. */
static bool
x509_signature(const pg_sigalg *alg, unsigned char *raw, size_t len, unsigned char **sig,
               size_t *sig_len)
{
	ECDSA_SIG *es;
	BIGNUM *r, *s;
	unsigned char *der = NULL;
	int dlen = -1;

	if (alg->mech != CKM_ECDSA) {
		*sig = raw;
		*sig_len = len;
		return true;
	}
	es = ECDSA_SIG_new();
	r = len > 0 && len % 2 == 0 ? BN_bin2bn(raw, (int)(len / 2), NULL) : NULL;
	s = r ? BN_bin2bn(raw + len / 2, (int)(len / 2), NULL) : NULL;
	if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s)) {
		r = s = NULL;
		dlen = i2d_ECDSA_SIG(es, &der);
	}
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(es);
	free(raw);
	*sig = dlen > 0 ? pg_memdup0(der, (size_t)dlen) : NULL;
	*sig_len = dlen > 0 ? (size_t)dlen : 0;
	OPENSSL_free(der);
	return *sig != NULL;
}

/* ---------------------------------------------------------------------------
 * DER
 */

static void
der_header(pg_buf *b, unsigned char tag, size_t len)
{
	unsigned char n[sizeof(size_t)];
	size_t k = 0;

	pg_buf_add_byte(b, tag);
	if (len < 0x80) {
		pg_buf_add_byte(b, (unsigned char)len);
		return;
	}
	for (size_t v = len; v > 0; v >>= 8)
		n[k++] = (unsigned char)v;
	pg_buf_add_byte(b, (unsigned char)(0x80 | k));
	while (k > 0)
		pg_buf_add_byte(b, n[--k]);
}

/* Appends tag, length and content (content is cleared). */
static void
der_wrap(pg_buf *b, unsigned char tag, pg_buf *content)
{
	if (content->failed)
		b->failed = true;
	der_header(b, tag, content->len);
	pg_buf_add(b, content->data, content->len);
	pg_buf_clear(content);
}

/* Appends what an i2d function writes for obj. */
#define DER_ADD(b, i2d, obj)                                        \
	do {                                                            \
		unsigned char *der_ = NULL;                                 \
		int len_ = i2d(obj, &der_);                                 \
		if (len_ <= 0)                                              \
			(b)->failed = true;                                     \
		else                                                        \
			pg_buf_add(b, der_, (size_t)len_);                      \
		OPENSSL_free(der_);                                         \
	} while (0)

/*
 * Signs tbs and appends SEQUENCE { tbs, AlgorithmIdentifier, BIT STRING
 * signature }, the shape of RFC 5280 Certificate and RFC 2986
 * CertificationRequest.
 */
static bool
sign_and_wrap(pg_buf *tbs, const pg_sigalg *alg, pg_sign_func sign, void *data, pg_buf *out,
              char *why, size_t why_size)
{
	X509_ALGOR *algor = sigalg_algor(alg);
	unsigned char *in = NULL, *raw = NULL, *sig = NULL;
	size_t in_len = 0, raw_len = 0, sig_len = 0;
	pg_buf body, bits;
	bool ok = false;

	pg_buf_init(&body);
	pg_buf_init(&bits);
	if (algor == NULL || tbs->failed || !sign_input(alg, tbs->data, tbs->len, &in, &in_len)) {
		say(why, why_size, "out of memory");
		goto out;
	}
	if (!sign(data, alg, in, in_len, &raw, &raw_len)) {
		say(why, why_size, "the token did not sign");
		goto out;
	}
	if (!x509_signature(alg, raw, raw_len, &sig, &sig_len)) {
		say(why, why_size, "the token's signature is malformed");
		goto out;
	}
	pg_buf_add(&body, tbs->data, tbs->len);
	DER_ADD(&body, i2d_X509_ALGOR, algor);
	pg_buf_add_byte(&bits, 0);   /* no unused bits */
	pg_buf_add(&bits, sig, sig_len);
	der_wrap(&body, V_ASN1_BIT_STRING, &bits);
	der_wrap(out, V_ASN1_SEQUENCE | V_ASN1_CONSTRUCTED, &body);
	ok = !out->failed;
	if (!ok)
		say(why, why_size, "out of memory");
out:
	X509_ALGOR_free(algor);
	free(in);
	free(sig);
	pg_buf_clear(&body);
	pg_buf_clear(&bits);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Extensions
 */

static bool
push_ext(STACK_OF(X509_EXTENSION) *exts, int nid, int critical, void *value)
{
	X509_EXTENSION *ext = value ? X509V3_EXT_i2d(nid, critical, value) : NULL;

	if (ext == NULL || !sk_X509_EXTENSION_push(exts, ext)) {
		X509_EXTENSION_free(ext);
		return false;
	}
	return true;
}

static bool
push_san(STACK_OF(X509_EXTENSION) *exts, const char *san, char *why, size_t why_size)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&ctx, NULL, NULL, NULL, NULL, 0);
	ext = X509V3_EXT_nconf_nid(NULL, &ctx, NID_subject_alt_name, san);
	if (ext == NULL || !sk_X509_EXTENSION_push(exts, ext)) {
		X509_EXTENSION_free(ext);
		say(why, why_size, "subjectAltName: not TYPE:VALUE,... with DNS, email, IP or URI");
		return false;
	}
	return true;
}

static bool
push_key_ids(STACK_OF(X509_EXTENSION) *exts, const pg_cert_spec *spec)
{
	unsigned char id[20];
	ASN1_OCTET_STRING *ski = ASN1_OCTET_STRING_new();
	AUTHORITY_KEYID *aki = AUTHORITY_KEYID_new();
	bool ok = ski != NULL && aki != NULL && pg_x509_key_id(spec->pub, id) &&
	          ASN1_OCTET_STRING_set(ski, id, sizeof(id));

	/* A CA-signed certificate names its issuer's key, never its own. */
	if (spec->issuer_pub != NULL && spec->issuer_key_id == NULL)
		ok = false;
	if (ok) {
		aki->keyid = ASN1_OCTET_STRING_new();
		ok = aki->keyid != NULL &&
		     (spec->issuer_key_id
		          ? ASN1_OCTET_STRING_set(aki->keyid, spec->issuer_key_id,
		                                  (int)spec->issuer_key_id_len)
		          : ASN1_OCTET_STRING_set(aki->keyid, id, sizeof(id)));
	}
	ok = ok && push_ext(exts, NID_subject_key_identifier, 0, ski) &&
	     push_ext(exts, NID_authority_key_identifier, 0, aki);
	ASN1_OCTET_STRING_free(ski);
	AUTHORITY_KEYID_free(aki);
	return ok;
}

/* RFC 5280 §4.2.1.3 and §4.2.1.9. */
static bool
push_usage(STACK_OF(X509_EXTENSION) *exts, const pg_cert_spec *spec)
{
	enum { DIGITAL_SIGNATURE = 0, KEY_ENCIPHERMENT = 2, KEY_CERT_SIGN = 5, CRL_SIGN = 6 };
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	ASN1_BIT_STRING *ku = ASN1_BIT_STRING_new();
	bool ok = bc != NULL && ku != NULL && ASN1_BIT_STRING_set_bit(ku, DIGITAL_SIGNATURE, 1);

	if (ok && spec->is_ca) {
		bc->ca = 0xff;
		ok = ASN1_BIT_STRING_set_bit(ku, KEY_CERT_SIGN, 1) &&
		     ASN1_BIT_STRING_set_bit(ku, CRL_SIGN, 1);
	} else if (ok && EVP_PKEY_is_a(spec->pub, "RSA")) {
		ok = ASN1_BIT_STRING_set_bit(ku, KEY_ENCIPHERMENT, 1);
	}
	ok = ok && push_ext(exts, NID_basic_constraints, 1, bc) &&
	     push_ext(exts, NID_key_usage, 1, ku);
	BASIC_CONSTRAINTS_free(bc);
	ASN1_BIT_STRING_free(ku);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Certificates and requests
 */

static ASN1_INTEGER *
random_serial(void)
{
	BIGNUM *bn = BN_new();
	ASN1_INTEGER *serial = NULL;

	/* RFC 5280 §4.1.2.2: positive, at most 20 octets, unique per issuer:
	 * 127 random bits (the top one set) make 16 octets. */
	if (bn != NULL && BN_rand(bn, 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY))
		serial = BN_to_ASN1_INTEGER(bn, NULL);
	BN_free(bn);
	return serial;
}

static void
add_tbs_fields(pg_buf *b, const pg_cert_spec *spec, X509_ALGOR *algor, ASN1_INTEGER *serial,
               STACK_OF(X509_EXTENSION) *exts)
{
	static const unsigned char v3[] = { 0xa0, 0x03, 0x02, 0x01, 0x02 };
	ASN1_TIME *nb = ASN1_TIME_adj(NULL, spec->not_before, 0, 0);
	ASN1_TIME *na = ASN1_TIME_adj(NULL, spec->not_before, (int)spec->days, 0);
	pg_buf part;

	pg_buf_init(&part);
	pg_buf_add(b, v3, sizeof(v3));
	DER_ADD(b, i2d_ASN1_INTEGER, serial);
	DER_ADD(b, i2d_X509_ALGOR, algor);
	DER_ADD(b, i2d_X509_NAME, spec->issuer);
	/* ASN1_TIME_adj makes UTCTime through 2049, GeneralizedTime after,
	 * as RFC 5280 §4.1.2.5 requires. */
	if (nb == NULL || na == NULL)
		b->failed = true;
	else {
		DER_ADD(&part, i2d_ASN1_TIME, nb);
		DER_ADD(&part, i2d_ASN1_TIME, na);
	}
	der_wrap(b, V_ASN1_SEQUENCE | V_ASN1_CONSTRUCTED, &part);
	DER_ADD(b, i2d_X509_NAME, spec->subject);
	DER_ADD(b, i2d_PUBKEY, spec->pub);
	DER_ADD(&part, i2d_X509_EXTENSIONS, exts);
	der_wrap(b, 0xa3, &part);
	ASN1_TIME_free(nb);
	ASN1_TIME_free(na);
}

X509 *
pg_x509_make_cert(const pg_cert_spec *spec, const pg_sigalg *alg, pg_sign_func sign,
                  void *data, char *why, size_t why_size)
{
	STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
	ASN1_INTEGER *serial = random_serial();
	X509_ALGOR *algor = sigalg_algor(alg);
	pg_buf fields, tbs, cert;
	const unsigned char *p;
	X509 *x = NULL;

	pg_buf_init(&fields);
	pg_buf_init(&tbs);
	pg_buf_init(&cert);
	say(why, why_size, "out of memory");
	if (exts == NULL || serial == NULL || algor == NULL || !push_usage(exts, spec) ||
	    !push_key_ids(exts, spec))
		goto out;
	if (spec->san != NULL && !push_san(exts, spec->san, why, why_size))
		goto out;
	add_tbs_fields(&fields, spec, algor, serial, exts);
	der_wrap(&tbs, V_ASN1_SEQUENCE | V_ASN1_CONSTRUCTED, &fields);
	if (!sign_and_wrap(&tbs, alg, sign, data, &cert, why, why_size))
		goto out;
	p = cert.data;
	x = d2i_X509(NULL, &p, (long)cert.len);
	if (x == NULL || p != cert.data + cert.len) {
		say(why, why_size, "the certificate does not parse back");
	} else if (X509_verify(x, spec->issuer_pub ? spec->issuer_pub : spec->pub) != 1) {
		say(why, why_size, "the token's signature does not verify with the %s public key",
		    spec->issuer_pub ? "issuer's" : "key's");
	} else {
		goto out;
	}
	X509_free(x);
	x = NULL;
out:
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	ASN1_INTEGER_free(serial);
	X509_ALGOR_free(algor);
	pg_buf_clear(&fields);
	pg_buf_clear(&tbs);
	pg_buf_clear(&cert);
	return x;
}

X509_REQ *
pg_x509_make_req(X509_NAME *subject, EVP_PKEY *pub, const char *san, const pg_sigalg *alg,
                 pg_sign_func sign, void *data, char *why, size_t why_size)
{
	STACK_OF(X509_EXTENSION) *exts = NULL;
	X509_REQ *info = X509_REQ_new(), *req = NULL;
	pg_buf tbs, out;
	const unsigned char *p;

	pg_buf_init(&tbs);
	pg_buf_init(&out);
	say(why, why_size, "out of memory");
	/* RFC 2986 §4.1: version 0; the extensions go in an extensionRequest
	 * attribute (RFC 2985 §5.4.2). */
	if (info == NULL || !X509_REQ_set_version(info, 0) ||
	    !X509_REQ_set_subject_name(info, subject) || !X509_REQ_set_pubkey(info, pub))
		goto out;
	if (san != NULL) {
		if ((exts = sk_X509_EXTENSION_new_null()) == NULL ||
		    !push_san(exts, san, why, why_size))
			goto out;
		if (!X509_REQ_add_extensions(info, exts)) {
			say(why, why_size, "out of memory");
			goto out;
		}
	}
	DER_ADD(&tbs, i2d_re_X509_REQ_tbs, info);
	if (!sign_and_wrap(&tbs, alg, sign, data, &out, why, why_size))
		goto out;
	p = out.data;
	req = d2i_X509_REQ(NULL, &p, (long)out.len);
	if (req == NULL || p != out.data + out.len) {
		say(why, why_size, "the request does not parse back");
	} else if (X509_REQ_verify(req, pub) != 1) {
		say(why, why_size, "the token's signature does not verify with the key's public key");
	} else {
		goto out;
	}
	X509_REQ_free(req);
	req = NULL;
out:
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	X509_REQ_free(info);
	pg_buf_clear(&tbs);
	pg_buf_clear(&out);
	return req;
}
