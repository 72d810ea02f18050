/*
 * Certificates and requests signed by a callback (src/import/x509-build.c):
 * distinguished names in both spellings and hostile ones, the choice of
 * signature algorithm, and certificates and requests signed by a
 * stand-in for a token (libcrypto with the key, giving what PKCS#11
 * mechanisms give: raw RSA PKCS#1 v1.5 over DigestInfo, ECDSA r || s,
 * EdDSA) checked by libcrypto; forged and failed signatures are refused.
 */
#include "config.h"

#include "harness.h"
#include "x509-build.h"

#include <openssl/ec.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Names
 */

static char *
name_text(X509_NAME *name)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *text = NULL;
	long len;
	char *data;

	pg_assert(bio != NULL);
	X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	len = BIO_get_mem_data(bio, &data);
	text = strndup(data, (size_t)len);
	BIO_free(bio);
	return text;
}

static void
check_name(const char *input, const char *want)
{
	char why[160] = "";
	X509_NAME *name = pg_x509_name_parse(input, why, sizeof(why));
	char *text;

	if (name == NULL)
		pg_test_fail(__FILE__, __LINE__, "'%s' refused: %s", input, why);
	text = name_text(name);
	pg_assert_str_eq(text, want);
	free(text);
	X509_NAME_free(name);
}

static void
test_names(void)
{
	/* RFC 4514 strings name the last RDN first; printing does the same. */
	check_name("CN=Alice,O=Example,C=DE", "CN=Alice,O=Example,C=DE");
	check_name("/C=DE/O=Example/CN=Alice", "CN=Alice,O=Example,C=DE");
	check_name("CN=Alice, O=Example", "CN=Alice,O=Example");
	check_name("CN=a\\,b", "CN=a\\,b");
	check_name("CN=a\\2Cb", "CN=a\\,b");
	check_name("CN=trailing\\ ", "CN=trailing\\ ");
	/* One RDN of two attributes; libcrypto prints a set last to first. */
	check_name("CN=x+UID=42,O=y", "UID=42+CN=x,O=y");
	check_name("/CN=with,comma", "CN=with\\,comma");
	check_name("2.5.4.3=by oid", "CN=by oid");
	check_name("emailAddress=a@b.example", "emailAddress=a@b.example");
	check_name("CN=J\xc3\xbcrgen", "CN=J\xc3\xbcrgen");
}

static void
test_bad_names(void)
{
	static const char *const bad[] = {
		"", "CN", "=x", "CN=", "CN=a,", "/CN=a/", "CN=a\\", "NoSuchType=x",
		"C=Germany", "CN=a,,O=b", "C N=a", "/",
	};
	char why[160];
	char many[64 * 6 + 8];
	size_t off = 0;

	for (size_t i = 0; i < PG_N_ELEMENTS(bad); i++) {
		X509_NAME *name = pg_x509_name_parse(bad[i], why, sizeof(why));
		if (name != NULL)
			pg_test_fail(__FILE__, __LINE__, "'%s' accepted", bad[i]);
		pg_assert(why[0] != 0);
	}
	for (int i = 0; i < 65; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off, "%sCN=a", i ? "," : "");
	pg_assert_null(pg_x509_name_parse(many, why, sizeof(why)));
}

/* ---------------------------------------------------------------------------
 * Signature algorithms
 */

static EVP_PKEY *
keygen(const char *type, const char *param)
{
	EVP_PKEY *key = NULL;

	if (strcmp(type, "RSA") == 0)
		key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	else if (strcmp(type, "EC") == 0)
		key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", param);
	else
		key = EVP_PKEY_Q_keygen(NULL, NULL, type);
	pg_assert_not_null(key);
	return key;
}

static void
test_sigalg(void)
{
	static const struct {
		const char *type, *param, *hash;
		int nid;
		CK_MECHANISM_TYPE mech;
	} cases[] = {
		{ "RSA", NULL, NULL, NID_sha256WithRSAEncryption, CKM_RSA_PKCS },
		{ "RSA", NULL, "sha512", NID_sha512WithRSAEncryption, CKM_RSA_PKCS },
		{ "EC", "P-256", NULL, NID_ecdsa_with_SHA256, CKM_ECDSA },
		{ "EC", "P-384", NULL, NID_ecdsa_with_SHA384, CKM_ECDSA },
		{ "EC", "P-521", NULL, NID_ecdsa_with_SHA512, CKM_ECDSA },
		{ "EC", "P-256", "sha384", NID_ecdsa_with_SHA384, CKM_ECDSA },
		{ "ED25519", NULL, NULL, NID_ED25519, CKM_EDDSA },
		{ "ED448", NULL, NULL, NID_ED448, CKM_EDDSA },
	};
	pg_sigalg alg;
	const char *why = NULL;
	EVP_PKEY *key;

	for (size_t i = 0; i < PG_N_ELEMENTS(cases); i++) {
		key = keygen(cases[i].type, cases[i].param);
		pg_assert(pg_sigalg_choose(key, cases[i].hash, &alg, &why));
		pg_assert_int_eq(alg.nid, cases[i].nid);
		pg_assert_ulong_eq(alg.mech, cases[i].mech);
		pg_assert(alg.ed448 == (strcmp(cases[i].type, "ED448") == 0));
		EVP_PKEY_free(key);
	}
	key = keygen("ED25519", NULL);
	pg_assert(!pg_sigalg_choose(key, "sha256", &alg, &why));
	EVP_PKEY_free(key);
	key = keygen("EC", "P-256");
	pg_assert(!pg_sigalg_choose(key, "md5", &alg, &why));
	pg_assert(!pg_sigalg_choose(key, "sha1", &alg, &why));
	EVP_PKEY_free(key);
	key = keygen("X25519", NULL);
	pg_assert(!pg_sigalg_choose(key, NULL, &alg, &why));
	EVP_PKEY_free(key);
}

/* ---------------------------------------------------------------------------
 * A stand-in token
 */

typedef enum { SIGN_OK, SIGN_FAIL, SIGN_FLIP, SIGN_ODD } sign_mode;

typedef struct {
	EVP_PKEY *key;
	sign_mode mode;
	size_t calls;
} fake_token;

/* ECDSA DER to r || s, as CKM_ECDSA gives it. */
static unsigned char *
ecdsa_raw(EVP_PKEY *key, const unsigned char *der, size_t len, size_t *out_len)
{
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &der, (long)len);
	size_t half = ((size_t)EVP_PKEY_get_bits(key) + 7) / 8;
	unsigned char *raw = malloc(2 * half);

	pg_assert(sig != NULL && raw != NULL);
	pg_assert(BN_bn2binpad(ECDSA_SIG_get0_r(sig), raw, (int)half) == (int)half);
	pg_assert(BN_bn2binpad(ECDSA_SIG_get0_s(sig), raw + half, (int)half) == (int)half);
	ECDSA_SIG_free(sig);
	*out_len = 2 * half;
	return raw;
}

static bool
fake_sign(void *data, const pg_sigalg *alg, const unsigned char *in, size_t in_len,
          unsigned char **out, size_t *out_len)
{
	fake_token *t = data;
	unsigned char buf[1024];
	size_t len = sizeof(buf);
	EVP_PKEY_CTX *ctx = NULL;
	EVP_MD_CTX *md = NULL;

	t->calls++;
	if (t->mode == SIGN_FAIL)
		return false;
	if (alg->mech == CKM_EDDSA) {
		md = EVP_MD_CTX_new();
		pg_assert(md && EVP_DigestSignInit(md, NULL, NULL, NULL, t->key) == 1 &&
		          EVP_DigestSign(md, buf, &len, in, in_len) == 1);
		EVP_MD_CTX_free(md);
	} else {
		ctx = EVP_PKEY_CTX_new(t->key, NULL);
		pg_assert(ctx && EVP_PKEY_sign_init(ctx) == 1);
		if (alg->mech == CKM_RSA_PKCS)
			pg_assert(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1);
		pg_assert(EVP_PKEY_sign(ctx, buf, &len, in, in_len) == 1);
		EVP_PKEY_CTX_free(ctx);
	}
	if (alg->mech == CKM_ECDSA) {
		*out = ecdsa_raw(t->key, buf, len, out_len);
	} else {
		*out = malloc(len);
		memcpy(*out, buf, len);
		*out_len = len;
	}
	if (t->mode == SIGN_FLIP)
		(*out)[*out_len / 2] ^= 1;
	if (t->mode == SIGN_ODD)
		(*out_len)--;
	return true;
}

static X509_NAME *
name(const char *text)
{
	char why[160];
	X509_NAME *n = pg_x509_name_parse(text, why, sizeof(why));

	pg_assert_not_null(n);
	return n;
}

static X509 *
self_signed(EVP_PKEY *key, sign_mode mode, bool is_ca, const char *san, char *why, size_t size)
{
	fake_token t = { key, mode, 0 };
	pg_cert_spec spec = { 0 };
	pg_sigalg alg;
	const char *reason;
	X509 *cert;

	spec.subject = spec.issuer = name("CN=Self,O=p11glue tests");
	spec.pub = key;
	spec.not_before = time(NULL);
	spec.days = 10;
	spec.is_ca = is_ca;
	spec.san = san;
	pg_assert(pg_sigalg_choose(key, NULL, &alg, &reason));
	cert = pg_x509_make_cert(&spec, &alg, fake_sign, &t, why, size);
	X509_NAME_free(spec.subject);
	return cert;
}

static void
check_self_signed(const void *data)
{
	const char *const *kind = data;
	EVP_PKEY *key = keygen(kind[0], kind[1]);
	char why[200] = "";
	X509 *cert = self_signed(key, SIGN_OK, false, "DNS:a.example,email:b@c.example", why,
	                         sizeof(why));
	unsigned char id[20];
	const ASN1_OCTET_STRING *skid;

	if (cert == NULL)
		pg_test_fail(__FILE__, __LINE__, "no certificate: %s", why);
	pg_assert_int_eq(X509_verify(cert, key), 1);
	pg_assert_int_eq(X509_get_version(cert), 2);
	pg_assert_int_eq(X509_check_ca(cert), 0);
	pg_assert_int_eq(EVP_PKEY_eq(X509_get0_pubkey(cert), key), 1);
	pg_assert(X509_check_host(cert, "a.example", 0, 0, NULL) == 1);
	pg_assert(X509_check_email(cert, "b@c.example", 0, 0) == 1);
	skid = X509_get0_subject_key_id(cert);
	pg_assert(skid != NULL && pg_x509_key_id(key, id));
	pg_assert_mem_eq(ASN1_STRING_get0_data(skid), (size_t)ASN1_STRING_length(skid), id, 20);
	pg_assert_int_eq(X509_cmp_time(X509_get0_notAfter(cert), NULL), 1);
	/* A positive 16-byte serial number. */
	pg_assert_int_eq(ASN1_STRING_length(X509_get0_serialNumber(cert)), 16);
	pg_assert_int_eq(ASN1_STRING_type(X509_get0_serialNumber(cert)), V_ASN1_INTEGER);
	X509_free(cert);
	EVP_PKEY_free(key);
}

static void
test_forged(void)
{
	static const sign_mode modes[] = { SIGN_FAIL, SIGN_FLIP };
	EVP_PKEY *rsa = keygen("RSA", NULL), *ec = keygen("EC", "P-256");
	char why[200];

	for (size_t i = 0; i < PG_N_ELEMENTS(modes); i++) {
		why[0] = 0;
		pg_assert_null(self_signed(rsa, modes[i], false, NULL, why, sizeof(why)));
		pg_assert(why[0] != 0);
		pg_assert_null(self_signed(ec, modes[i], false, NULL, why, sizeof(why)));
	}
	pg_assert_null(self_signed(ec, SIGN_ODD, false, NULL, why, sizeof(why)));
	pg_assert(strstr(why, "malformed") != NULL);
	pg_assert_null(self_signed(ec, SIGN_OK, false, "DNS", why, sizeof(why)));
	pg_assert(strstr(why, "subjectAltName") != NULL);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ec);
}

static void
test_issued(void)
{
	EVP_PKEY *ca_key = keygen("EC", "P-384"), *key = keygen("ED25519", NULL);
	fake_token t = { ca_key, SIGN_OK, 0 };
	char why[200] = "";
	X509 *ca = self_signed(ca_key, SIGN_OK, true, NULL, why, sizeof(why)), *cert;
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	pg_cert_spec spec = { 0 };
	const ASN1_OCTET_STRING *skid;
	AUTHORITY_KEYID *akid;
	pg_sigalg alg;
	const char *reason;

	pg_assert(ca != NULL && X509_check_ca(ca) > 0);
	skid = X509_get0_subject_key_id(ca);
	spec.subject = name("/CN=Leaf");
	spec.issuer = X509_get_subject_name(ca);
	spec.pub = key;
	spec.issuer_pub = ca_key;
	spec.issuer_key_id = ASN1_STRING_get0_data(skid);
	spec.issuer_key_id_len = (size_t)ASN1_STRING_length(skid);
	spec.not_before = time(NULL);
	spec.days = 1;
	pg_assert(pg_sigalg_choose(ca_key, NULL, &alg, &reason));
	cert = pg_x509_make_cert(&spec, &alg, fake_sign, &t, why, sizeof(why));
	if (cert == NULL)
		pg_test_fail(__FILE__, __LINE__, "no certificate: %s", why);
	pg_assert(X509_STORE_add_cert(store, ca) == 1);
	pg_assert(X509_STORE_CTX_init(ctx, store, cert, NULL) == 1);
	pg_assert_int_eq(X509_verify_cert(ctx), 1);
	akid = X509_get_ext_d2i(cert, NID_authority_key_identifier, NULL, NULL);
	pg_assert_int_eq(X509_check_akid(ca, akid), X509_V_OK);
	AUTHORITY_KEYID_free(akid);
	/* Signed by another key than the issuer's: refused. */
	X509_free(cert);
	t.key = key;
	pg_assert(pg_sigalg_choose(key, NULL, &alg, &reason));
	pg_assert_null(pg_x509_make_cert(&spec, &alg, fake_sign, &t, why, sizeof(why)));
	pg_assert(strstr(why, "does not verify") != NULL);
	/* Issued without the issuer's key identifier: refused rather than
	 * naming the subject's own key as the authority's. */
	t.key = ca_key;
	pg_assert(pg_sigalg_choose(ca_key, NULL, &alg, &reason));
	spec.issuer_key_id = NULL;
	spec.issuer_key_id_len = 0;
	pg_assert_null(pg_x509_make_cert(&spec, &alg, fake_sign, &t, why, sizeof(why)));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	X509_NAME_free(spec.subject);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key);
}

static void
test_request(void)
{
	EVP_PKEY *key = keygen("RSA", NULL);
	fake_token t = { key, SIGN_OK, 0 };
	X509_NAME *subject = name("CN=Req");
	STACK_OF(X509_EXTENSION) *exts;
	X509_REQ *req;
	pg_sigalg alg;
	const char *reason;
	char why[200] = "";

	pg_assert(pg_sigalg_choose(key, "sha384", &alg, &reason));
	req = pg_x509_make_req(subject, key, "DNS:req.example", &alg, fake_sign, &t, why, sizeof(why));
	if (req == NULL)
		pg_test_fail(__FILE__, __LINE__, "no request: %s", why);
	pg_assert_int_eq(X509_REQ_verify(req, key), 1);
	pg_assert_int_eq(X509_REQ_get_signature_nid(req), NID_sha384WithRSAEncryption);
	pg_assert_int_eq(X509_NAME_cmp(X509_REQ_get_subject_name(req), subject), 0);
	exts = X509_REQ_get_extensions(req);
	pg_assert(exts != NULL && sk_X509_EXTENSION_num(exts) == 1);
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	X509_REQ_free(req);
	t.mode = SIGN_FLIP;
	pg_assert_null(pg_x509_make_req(subject, key, NULL, &alg, fake_sign, &t, why, sizeof(why)));
	X509_NAME_free(subject);
	EVP_PKEY_free(key);
}

int
main(int argc, char **argv)
{
	static const char *const kinds[][2] = {
		{ "RSA", NULL }, { "EC", "P-256" }, { "EC", "P-384" }, { "EC", "P-521" },
		{ "ED25519", NULL }, { "ED448", NULL },
	};

	pg_test("name/valid", test_names);
	pg_test("name/hostile", test_bad_names);
	pg_test("sigalg/choose", test_sigalg);
	for (size_t i = 0; i < PG_N_ELEMENTS(kinds); i++)
		pg_test_dataf(check_self_signed, (void *)kinds[i], NULL, "cert/self-signed/%s%s%s",
		              kinds[i][0], kinds[i][1] ? "-" : "", kinds[i][1] ? kinds[i][1] : "");
	pg_test("cert/forged", test_forged);
	pg_test("cert/issued", test_issued);
	pg_test("request", test_request);
	return pg_test_run(argc, argv);
}
