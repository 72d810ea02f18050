/*
 * The readers of `p11glue import` (src/import/import-*.c, bcrypt-pbkdf.c,
 * sshkey.c): Blowfish against libcrypto's, bcrypt_pbkdf against vectors
 * of an independent implementation, OpenSSH keys written by ssh-keygen
 * (every cipher it offers) and forged ones, and the PEM / DER / PKCS#8 /
 * PKCS#12 dispatch with right, wrong and missing passphrases.
 *
 * Environment: P11GLUE_TEST_SRCDIR, the source tree (tests/data and the
 * import fuzz seeds, encrypted with the passphrase "fuzz").
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* BF_*: the reference Blowfish */
#include "config.h"

#include "harness.h"
#include "bcrypt-pbkdf.h"
#include "import.h"

#include <openssl/blowfish.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_PASS "p11glue test"

static char *
path_of(const char *rel)
{
	const char *src = getenv("P11GLUE_TEST_SRCDIR");
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", src ? src : ".", rel);
	return buf;
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	long n;

	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)n + 1);
	pg_assert(data != NULL && fread(data, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	data[n] = 0;
	*len = (size_t)n;
	return data;
}

static size_t
unhex(const char *hex, unsigned char *out, size_t cap)
{
	size_t n = 0;

	while (hex[0] && hex[1] && n < cap) {
		unsigned v;
		pg_assert(sscanf(hex, "%2x", &v) == 1);
		out[n++] = (unsigned char)v;
		hex += 2;
	}
	return n;
}

/* ---------------------------------------------------------------------------
 * Blowfish and bcrypt_pbkdf
 */

static void
test_blowfish_vectors(void)
{
	/* Classic known answers (key, plaintext, ciphertext). */
	static const char *const v[][3] = {
		{ "0000000000000000", "0000000000000000", "4ef997456198dd78" },
		{ "ffffffffffffffff", "ffffffffffffffff", "51866fd5b85ecb8a" },
		{ "3000000000000000", "1000000000000001", "7d856f9a613063f2" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char key[8], pt[8], ct[8];
		pg_blowfish bf;
		uint32_t l, r;
		unhex(v[i][0], key, 8);
		unhex(v[i][1], pt, 8);
		unhex(v[i][2], ct, 8);
		pg_blowfish_init(&bf, key, 8);
		l = (uint32_t)pt[0] << 24 | (uint32_t)pt[1] << 16 | (uint32_t)pt[2] << 8 | pt[3];
		r = (uint32_t)pt[4] << 24 | (uint32_t)pt[5] << 16 | (uint32_t)pt[6] << 8 | pt[7];
		pg_blowfish_encrypt(&bf, &l, &r);
		pg_assert_ulong_eq(l, (uint32_t)ct[0] << 24 | (uint32_t)ct[1] << 16 | (uint32_t)ct[2] << 8 | ct[3]);
		pg_assert_ulong_eq(r, (uint32_t)ct[4] << 24 | (uint32_t)ct[5] << 16 | (uint32_t)ct[6] << 8 | ct[7]);
		pg_blowfish_clear(&bf);
	}
}

/* Our Blowfish (hence the digits of pi computed at build time) against
 * libcrypto's, for keys of every length. */
static void
test_blowfish_libcrypto(void)
{
	for (int len = 1; len <= 56; len++) {
		unsigned char key[56], block[8], ours[8];
		BF_KEY ref;
		pg_blowfish bf;
		uint32_t l, r;
		pg_assert(RAND_bytes(key, len) == 1 && RAND_bytes(block, 8) == 1);
		BF_set_key(&ref, len, key);
		pg_blowfish_init(&bf, key, (size_t)len);
		l = (uint32_t)block[0] << 24 | (uint32_t)block[1] << 16 | (uint32_t)block[2] << 8 | block[3];
		r = (uint32_t)block[4] << 24 | (uint32_t)block[5] << 16 | (uint32_t)block[6] << 8 | block[7];
		pg_blowfish_encrypt(&bf, &l, &r);
		for (int i = 0; i < 4; i++) {
			ours[i] = (unsigned char)(l >> (24 - 8 * i));
			ours[4 + i] = (unsigned char)(r >> (24 - 8 * i));
		}
		BF_ecb_encrypt(block, block, &ref, BF_ENCRYPT);
		pg_assert_mem_eq(ours, 8, block, 8);
		pg_blowfish_decrypt(&bf, &l, &r);
		BF_ecb_encrypt(block, block, &ref, BF_DECRYPT);
		pg_assert_ulong_eq(l, (uint32_t)block[0] << 24 | (uint32_t)block[1] << 16 |
		                      (uint32_t)block[2] << 8 | block[3]);
	}
}

static void
test_bcrypt_vectors(void)
{
	size_t len;
	char *text = (char *)slurp(path_of("tests/data/bcrypt-pbkdf.txt"), &len);
	int count = 0;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char pass_hex[512], salt_hex[512], key_hex[512];
		unsigned char pass[256], salt[256], want[256], got[256];
		unsigned rounds;
		size_t np, ns, nk;
		if (line[0] == '#')
			continue;
		pg_assert(sscanf(line, "%511s %511s %u %511s", pass_hex, salt_hex, &rounds, key_hex) == 4);
		np = unhex(pass_hex, pass, sizeof(pass));
		ns = unhex(salt_hex, salt, sizeof(salt));
		nk = unhex(key_hex, want, sizeof(want));
		pg_assert(pg_bcrypt_pbkdf(pass, np, salt, ns, got, nk, rounds));
		pg_assert_mem_eq(got, nk, want, nk);
		count++;
	}
	pg_assert(count >= 8);
	free(text);
}

static void
test_bcrypt_args(void)
{
	unsigned char key[1025];

	pg_assert(!pg_bcrypt_pbkdf((const uint8_t *)"p", 1, (const uint8_t *)"s", 1, key, 32, 0));
	pg_assert(!pg_bcrypt_pbkdf((const uint8_t *)"p", 1, (const uint8_t *)"s", 1, key, 0, 1));
	pg_assert(!pg_bcrypt_pbkdf((const uint8_t *)"p", 1, (const uint8_t *)"s", 1, key, 1025, 1));
	pg_assert(!pg_bcrypt_pbkdf((const uint8_t *)"p", 1, (const uint8_t *)"s", 0, key, 32, 1));
	pg_assert(!pg_bcrypt_pbkdf(NULL, 3, (const uint8_t *)"s", 1, key, 32, 1));
	/* The empty passphrase is a passphrase. */
	pg_assert(pg_bcrypt_pbkdf((const uint8_t *)"", 0, (const uint8_t *)"s", 1, key, 32, 1));
}

/* ---------------------------------------------------------------------------
 * Passphrases
 */

typedef struct {
	const char *value;           /* NULL: none */
	int asked;
} pass_box;

static p11glue_pin *
give_pass(void *data)
{
	pass_box *box = data;

	box->asked++;
	return box->value ? p11glue_pin_new(box->value, strlen(box->value)) : NULL;
}

static pg_import_result
parse_with(const unsigned char *data, size_t len, const char *pass, int *asked, pg_import *imp)
{
	pass_box box = { pass, 0 };
	pg_import_options opts = { give_pass, &box, 0, 0 };
	pg_import_result rv;

	pg_import_init(imp);
	rv = pg_import_parse(data, len, &opts, imp);
	if (asked)
		*asked = box.asked;
	return rv;
}

/* ---------------------------------------------------------------------------
 * OpenSSH keys from ssh-keygen
 */

static void
check_ssh_file(const void *data)
{
	const char *name = data;
	char rel[256], *pub_text, *line, *nl;
	unsigned char *key;
	size_t len, pub_len;
	pg_import imp;
	int asked;
	bool encrypted = strstr(name, "plain") == NULL && strcmp(name, "dsa") != 0 &&
	                 strstr(name, "pem-format") == NULL;

	snprintf(rel, sizeof(rel), "tests/data/openssh/%s", name);
	key = slurp(path_of(rel), &len);
	snprintf(rel, sizeof(rel), "tests/data/openssh/%s.pub", name);
	pub_text = (char *)slurp(path_of(rel), &pub_len);
	if ((nl = strchr(pub_text, '\n')) != NULL)
		*nl = 0;
	if (strcmp(name, "dsa") == 0 || strstr(name, "chacha20") != NULL) {
		pg_assert_int_eq(parse_with(key, len, TEST_PASS, NULL, &imp), PG_IMPORT_ERR_UNSUPPORTED);
		pg_assert(strstr(imp.error, strcmp(name, "dsa") == 0 ? "DSA" : "cipher") != NULL);
		pg_import_clear(&imp);
		goto out;
	}
	pg_assert_int_eq(parse_with(key, len, TEST_PASS, &asked, &imp), PG_IMPORT_OK);
	pg_assert_int_eq(asked, encrypted ? 1 : 0);
	pg_assert_null(imp.certs);
	line = pg_ssh_public_line(imp.key, strstr(name, "pem-format") ? "x" : imp.key_label);
	pg_assert_str_eq(line, pub_text);
	free(line);
	pg_import_clear(&imp);
	if (encrypted) {
		pg_assert_int_eq(parse_with(key, len, "p11glue tesT", NULL, &imp), PG_IMPORT_ERR_PASSPHRASE);
		pg_assert_null(imp.key);
		pg_import_clear(&imp);
		pg_assert_int_eq(parse_with(key, len, NULL, &asked, &imp), PG_IMPORT_ERR_NO_PASSPHRASE);
		pg_assert_int_eq(asked, 1);
		pg_import_clear(&imp);
	}
out:
	free(key);
	free(pub_text);
}

/* The binary structure inside a file's PEM armor. */
static unsigned char *
ssh_blob(const char *rel, size_t *len)
{
	size_t n;
	unsigned char *text = slurp(path_of(rel), &n), *der = NULL;
	BIO *bio = BIO_new_mem_buf(text, (int)n);
	char *name = NULL, *header = NULL;
	long der_len = 0;

	pg_assert(PEM_read_bio(bio, &name, &header, &der, &der_len) == 1);
	BIO_free(bio);
	OPENSSL_free(name);
	OPENSSL_free(header);
	free(text);
	*len = (size_t)der_len;
	return der;
}

static void
test_ssh_truncated(void)
{
	static const char *const files[] = {
		"tests/data/openssh/ed25519-plain", "tests/data/openssh/ed25519-aes256-gcm",
		"tests/data/openssh/ecdsa-256", "tests/data/openssh/ed25519-aes128-cbc",
	};
	pass_box box = { TEST_PASS, 0 };
	pg_import_options opts = { give_pass, &box, 0, 0 };

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		unsigned char *blob = ssh_blob(files[f], &len);
		for (size_t n = 0; n < len; n++) {
			/* A copy of exactly n bytes, so ASan sees any overread. */
			unsigned char *part = malloc(n ? n : 1);
			pg_import imp;
			memcpy(part, blob, n);
			pg_import_init(&imp);
			pg_assert(pg_import_openssh(part, n, &opts, &imp) != PG_IMPORT_OK);
			pg_assert_null(imp.key);
			pg_import_clear(&imp);
			free(part);
		}
		OPENSSL_free(blob);
	}
}

/* ---------------------------------------------------------------------------
 * Forged OpenSSH keys, built here
 */

typedef struct {
	const char *cipher;          /* "none" */
	const char *kdf;             /* "none" */
	const void *kdf_opts;
	size_t kdf_opts_len;
	uint32_t nkeys;              /* 1 */
	const pg_buf *pub;           /* the public key blob */
	const pg_buf *priv;          /* the private section, padded by the builder */
	bool bad_padding;
	const char *trailer;         /* bytes after the structure */
} forged;

static void
put_u32(pg_buf *b, uint32_t v)
{
	pg_buf_add(b, (uint8_t[4]){ (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v }, 4);
}

static pg_import_result
parse_forged(const forged *f, pg_import *imp)
{
	pass_box box = { "x", 0 };
	pg_import_options opts = { give_pass, &box, 4, 0 };
	pg_buf out, section;
	pg_import_result rv;

	pg_buf_init(&out);
	pg_buf_init(&section);
	pg_buf_add(&out, "openssh-key-v1", 15);
	pg_ssh_put_string(&out, f->cipher ? f->cipher : "none", strlen(f->cipher ? f->cipher : "none"));
	pg_ssh_put_string(&out, f->kdf ? f->kdf : "none", strlen(f->kdf ? f->kdf : "none"));
	pg_ssh_put_string(&out, f->kdf_opts, f->kdf_opts_len);
	put_u32(&out, f->nkeys ? f->nkeys : 1);
	pg_ssh_put_string(&out, f->pub->data, f->pub->len);
	pg_buf_add(&section, f->priv->data, f->priv->len);
	for (uint8_t i = 1; section.len % 8 != 0; i++)
		pg_buf_add_byte(&section, f->bad_padding ? 0 : i);
	pg_ssh_put_string(&out, section.data, section.len);
	if (f->trailer)
		pg_buf_add_str(&out, f->trailer);
	pg_assert(!out.failed);
	pg_import_init(imp);
	rv = pg_import_openssh(out.data, out.len, &opts, imp);
	pg_buf_clear(&out);
	pg_buf_clear(&section);
	return rv;
}

/* An Ed25519 key's public blob and private section (checkints c1, c2). */
static void
ed25519_parts(EVP_PKEY *key, pg_buf *pub, pg_buf *priv, uint32_t c1, uint32_t c2,
              const char *type, bool wrong_half)
{
	unsigned char pk[32], sk[64];
	size_t n = 32;
	const char *ignored;

	pg_assert(EVP_PKEY_get_raw_public_key(key, pk, &n) && n == 32);
	pg_assert(EVP_PKEY_get_raw_private_key(key, sk, &n) && n == 32);
	memcpy(sk + 32, pk, 32);
	if (wrong_half)
		sk[40] ^= 1;
	pg_buf_init(pub);
	pg_buf_init(priv);
	pg_assert(pg_ssh_public_blob(key, pub, &ignored));
	put_u32(priv, c1);
	put_u32(priv, c2);
	pg_ssh_put_string(priv, type, strlen(type));
	pg_ssh_put_string(priv, pk, 32);
	pg_ssh_put_string(priv, sk, 64);
	pg_ssh_put_string(priv, "forged", 6);
}

static void
test_ssh_forged(void)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	EVP_PKEY *other = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	pg_buf pub, priv, other_pub, other_priv, opts;
	pg_import imp;
	forged f;

	pg_assert(key != NULL && other != NULL);
	ed25519_parts(key, &pub, &priv, 7, 7, "ssh-ed25519", false);
	ed25519_parts(other, &other_pub, &other_priv, 7, 7, "ssh-ed25519", false);

	/* The well-formed key, as a baseline. */
	f = (forged){ .pub = &pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_OK);
	pg_assert_str_eq(imp.key_label, "forged");
	pg_import_clear(&imp);

	f.bad_padding = true;
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	f = (forged){ .pub = &other_pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_assert(strstr(imp.error, "does not match") != NULL);
	pg_import_clear(&imp);
	f = (forged){ .pub = &pub, .priv = &priv, .nkeys = 2 };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);
	f = (forged){ .pub = &pub, .priv = &priv, .trailer = "x" };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	f = (forged){ .pub = &pub, .priv = &priv, .cipher = "3des-cbc" };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);
	/* A KDF without a cipher. */
	f = (forged){ .pub = &pub, .priv = &priv, .kdf = "bcrypt" };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	/* Too many bcrypt rounds (the limit here is 4), bad KDF options. */
	pg_buf_init(&opts);
	pg_ssh_put_string(&opts, "saltsaltsaltsalt", 16);
	put_u32(&opts, 5);
	f = (forged){ .pub = &pub, .priv = &priv, .cipher = "aes256-ctr", .kdf = "bcrypt",
	              .kdf_opts = opts.data, .kdf_opts_len = opts.len };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_assert(strstr(imp.error, "rounds") != NULL);
	pg_import_clear(&imp);
	f.kdf_opts_len = opts.len - 1;
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	f.kdf = "scrypt";
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);
	pg_buf_clear(&opts);

	/* Unencrypted, different check values are damage. */
	pg_buf_clear(&priv);
	pg_buf_clear(&pub);
	ed25519_parts(key, &pub, &priv, 7, 8, "ssh-ed25519", false);
	f = (forged){ .pub = &pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	/* A secret whose second half is not the public key. */
	pg_buf_clear(&priv);
	pg_buf_clear(&pub);
	ed25519_parts(key, &pub, &priv, 7, 7, "ssh-ed25519", true);
	f = (forged){ .pub = &pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	/* Types the store has no use for. */
	pg_buf_clear(&priv);
	pg_buf_clear(&pub);
	ed25519_parts(key, &pub, &priv, 7, 7, "sk-ssh-ed25519@openssh.com", false);
	f = (forged){ .pub = &pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_assert(strstr(imp.error, "security key") != NULL);
	pg_import_clear(&imp);
	pg_buf_clear(&priv);
	pg_buf_clear(&pub);
	ed25519_parts(key, &pub, &priv, 7, 7, "ssh-dss", false);
	f = (forged){ .pub = &pub, .priv = &priv };
	pg_assert_int_eq(parse_forged(&f, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);

	pg_buf_clear(&pub);
	pg_buf_clear(&priv);
	pg_buf_clear(&other_pub);
	pg_buf_clear(&other_priv);
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
}

/* RSA with one parameter changed: the key must be refused. */
static void
test_ssh_forged_rsa(void)
{
	static const char *const order[] = {
		OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D,
		OSSL_PKEY_PARAM_RSA_COEFFICIENT1, OSSL_PKEY_PARAM_RSA_FACTOR1,
		OSSL_PKEY_PARAM_RSA_FACTOR2,
	};
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	const char *ignored;

	pg_assert(key != NULL);
	/* -1: unchanged (accepted); 0-5: that field altered; 6: a negative n. */
	for (int bad = -1; bad <= 6; bad++) {
		pg_buf pub, priv;
		pg_import imp;
		forged f;
		pg_buf_init(&pub);
		pg_buf_init(&priv);
		pg_assert(pg_ssh_public_blob(key, &pub, &ignored));
		put_u32(&priv, 1);
		put_u32(&priv, 1);
		pg_ssh_put_string(&priv, "ssh-rsa", 7);
		for (int i = 0; i < 6; i++) {
			BIGNUM *bn = NULL;
			unsigned char buf[600];
			int n;
			pg_assert(EVP_PKEY_get_bn_param(key, order[i], &bn));
			if (i == bad)
				BN_add_word(bn, 2);
			n = BN_bn2bin(bn, buf);
			if (bad == 6 && i == 0)
				pg_ssh_put_string(&priv, buf, (size_t)n);    /* high bit set, no 0 byte */
			else
				pg_ssh_put_mpint(&priv, buf, (size_t)n);
			BN_clear_free(bn);
		}
		pg_ssh_put_string(&priv, "", 0);
		f = (forged){ .pub = &pub, .priv = &priv };
		pg_assert_int_eq(parse_forged(&f, &imp), bad == -1 ? PG_IMPORT_OK : PG_IMPORT_ERR_FORMAT);
		pg_assert(bad == -1 ? imp.key != NULL : imp.key == NULL);
		pg_import_clear(&imp);
		pg_buf_clear(&pub);
		pg_buf_clear(&priv);
	}
	EVP_PKEY_free(key);
}

/* ---------------------------------------------------------------------------
 * PEM, DER, PKCS#8, PKCS#12 (the fuzz seeds, passphrase "fuzz")
 */

typedef struct {
	const char *file;
	bool key;
	int certs;
	bool encrypted;
	const char *label;
} seed_case;

static const seed_case seeds[] = {
	{ "pkcs8-ec.pem", true, 0, false, NULL },
	{ "pkcs8-ed448.der", true, 0, false, NULL },
	{ "pkcs8-enc.pem", true, 0, true, NULL },
	{ "pkcs8-enc-scrypt.der", true, 0, true, NULL },
	{ "pkcs8-enc-pbe1.pem", true, 0, true, NULL },
	{ "rsa-trad-enc.pem", true, 0, true, NULL },
	{ "ec-trad.der", true, 0, false, NULL },
	{ "cert.pem", false, 1, false, NULL },
	{ "cert.der", false, 1, false, NULL },
	{ "bundle.pem", true, 1, false, NULL },
	{ "p12-pass.p12", true, 1, true, "fuzz" },
	{ "p12-nomac.p12", true, 1, true, NULL },
	{ "p12-plain.p12", true, 1, false, NULL },
	{ "p12-legacy.p12", true, 1, true, NULL },
	{ "openssh-ecdsa384.pem", true, 0, false, "armored" },
	{ "openssh-ed25519-cbc.pem", true, 0, true, "cbc" },
};

static void
check_seed(const void *data)
{
	const seed_case *c = data;
	char rel[256];
	size_t len;
	unsigned char *bytes;
	pg_import imp;
	int asked;

	snprintf(rel, sizeof(rel), "fuzz/import.in/%s", c->file);
	bytes = slurp(path_of(rel), &len);
	pg_assert_int_eq(parse_with(bytes, len, "fuzz", &asked, &imp), PG_IMPORT_OK);
	pg_assert_int_eq(asked, c->encrypted ? 1 : 0);
	pg_assert(c->key ? imp.key != NULL : imp.key == NULL);
	pg_assert_int_eq(imp.certs ? sk_X509_num(imp.certs) : 0, c->certs);
	if (c->label)
		pg_assert_str_eq(imp.key_label, c->label);
	if (c->key && c->certs)
		pg_assert(EVP_PKEY_eq(X509_get0_pubkey(sk_X509_value(imp.certs, 0)), imp.key) == 1);
	pg_import_clear(&imp);
	if (c->encrypted) {
		pg_assert_int_eq(parse_with(bytes, len, "fuzZ", NULL, &imp), PG_IMPORT_ERR_PASSPHRASE);
		pg_assert(imp.key == NULL && imp.certs == NULL);
		pg_import_clear(&imp);
		pg_assert_int_eq(parse_with(bytes, len, NULL, NULL, &imp), PG_IMPORT_ERR_NO_PASSPHRASE);
		pg_import_clear(&imp);
	}
	/* Every truncation fails cleanly, or (PEM) reads the blocks before it. */
	for (size_t n = 0; n < len; n += (len > 400 ? 7 : 1)) {
		unsigned char *part = malloc(n ? n : 1);
		pg_import_result rv;
		memcpy(part, bytes, n);
		rv = parse_with(part, n, "fuzz", NULL, &imp);
		pg_assert(rv == PG_IMPORT_OK ? (imp.key != NULL || imp.certs != NULL)
		                             : (imp.key == NULL && imp.certs == NULL));
		pg_import_clear(&imp);
		free(part);
	}
	free(bytes);
}

static pg_import_result
parse_text(const char *text, pg_import *imp)
{
	return parse_with((const unsigned char *)text, strlen(text), "fuzz", NULL, imp);
}

static void
test_refusals(void)
{
	pg_import imp;
	size_t len;
	unsigned char *two, *a, *b;
	size_t la, lb;

	pg_assert_int_eq(parse_text("", &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	pg_assert_int_eq(parse_text("not a key at all", &imp), PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	pg_assert_int_eq(parse_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDv/ x\n", &imp),
	                 PG_IMPORT_ERR_UNSUPPORTED);
	pg_assert(strstr(imp.error, ".pub") != NULL);
	pg_import_clear(&imp);
	pg_assert_int_eq(parse_text("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAvHMxmD6RU5AHdKHGO0JXBdcVO85dJM8UYXPoEbIs8l0=\n"
	                            "-----END PUBLIC KEY-----\n", &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);
	pg_assert_int_eq(parse_text("-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n", &imp),
	                 PG_IMPORT_ERR_UNSUPPORTED);
	pg_import_clear(&imp);
	pg_assert_int_eq(parse_text("-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n", &imp),
	                 PG_IMPORT_ERR_FORMAT);
	pg_import_clear(&imp);
	/* Two private keys in one file. */
	a = slurp(path_of("fuzz/import.in/pkcs8-ec.pem"), &la);
	b = slurp(path_of("fuzz/import.in/openssh-ecdsa384.pem"), &lb);
	two = malloc(la + lb);
	memcpy(two, a, la);
	memcpy(two + la, b, lb);
	len = la + lb;
	pg_assert_int_eq(parse_with(two, len, "fuzz", NULL, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_assert(imp.key == NULL);
	pg_import_clear(&imp);
	free(two);
	free(a);
	free(b);
}

/* A password-based encryption over the cost limit is refused unrun. */
static void
test_pbe_cost(void)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(key);
	X509_SIG *sig = PKCS8_encrypt(-1, EVP_aes_256_cbc(), "x", 1, NULL, 0, 5000, p8);
	unsigned char *der = NULL;
	int len = i2d_X509_SIG(sig, &der);
	pass_box box = { "x", 0 };
	pg_import_options opts = { give_pass, &box, 0, 4999 };
	pg_import imp;

	pg_assert(len > 0);
	pg_import_init(&imp);
	pg_assert_int_eq(pg_import_parse(der, (size_t)len, &opts, &imp), PG_IMPORT_ERR_UNSUPPORTED);
	pg_assert(strstr(imp.error, "5000") != NULL);
	pg_assert_int_eq(box.asked, 0);
	pg_import_clear(&imp);
	opts.max_pbe_cost = 5000;
	pg_import_init(&imp);
	pg_assert_int_eq(pg_import_parse(der, (size_t)len, &opts, &imp), PG_IMPORT_OK);
	pg_assert(EVP_PKEY_eq(imp.key, key) == 1);
	pg_import_clear(&imp);
	OPENSSL_free(der);
	X509_SIG_free(sig);
	PKCS8_PRIV_KEY_INFO_free(p8);
	EVP_PKEY_free(key);
}

int
main(int argc, char **argv)
{
	DIR *dir;
	struct dirent *e;

	pg_test("blowfish/vectors", test_blowfish_vectors);
	pg_test("blowfish/libcrypto", test_blowfish_libcrypto);
	pg_test("bcrypt-pbkdf/vectors", test_bcrypt_vectors);
	pg_test("bcrypt-pbkdf/arguments", test_bcrypt_args);
	dir = opendir(path_of("tests/data/openssh"));
	while (dir && (e = readdir(dir)) != NULL) {
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.' || (n > 4 && strcmp(e->d_name + n - 4, ".pub") == 0))
			continue;
		pg_test_dataf(check_ssh_file, strdup(e->d_name), free, "openssh/ssh-keygen/%s", e->d_name);
	}
	if (dir)
		closedir(dir);
	pg_test("openssh/truncated", test_ssh_truncated);
	pg_test("openssh/forged", test_ssh_forged);
	pg_test("openssh/forged-rsa", test_ssh_forged_rsa);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		pg_test_dataf(check_seed, (void *)&seeds[i], NULL, "file/%s", seeds[i].file);
	pg_test("file/refusals", test_refusals);
	pg_test("file/pbe-cost", test_pbe_cost);
	return pg_test_run(argc, argv);
}
