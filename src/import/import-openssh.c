/*
 * OpenSSH private keys, format "openssh-key-v1" (OpenSSH's PROTOCOL.key):
 *
 *   "openssh-key-v1" NUL
 *   string ciphername          "none", "aes256-ctr", "aes256-gcm@openssh.com" ...
 *   string kdfname             "none" or "bcrypt"
 *   string kdfoptions          bcrypt: string salt, uint32 rounds
 *   uint32 number of keys      (1 here)
 *   string public key          the public key blob
 *   string private section     encrypted as a whole; for AES-GCM the
 *                              16-byte tag follows the string
 *
 * The private section, once decrypted:
 *
 *   uint32 checkint, uint32 checkint   equal: a wrong passphrase shows here
 *   string key type, the private key's fields (by type), string comment
 *   padding 1, 2, 3 ... up to the cipher's block size
 *
 * Cipher keys and IVs come from bcrypt_pbkdf(passphrase, salt, rounds).
 * The parser reads from a buffer with a sticky failure flag and checks
 * every length as "len - off < n", so no read runs past the input.
 */
#include "config.h"

#include "import.h"
#include "keys.h"
#include "bcrypt-pbkdf.h"
#include "be-reader.h"

#include <openssl/bn.h>

#include <stdlib.h>
#include <string.h>

#define MAGIC "openssh-key-v1"
#define MAX_MPINT 1025           /* bytes: RSA up to 8192 bits, with sign byte */

/* A string's bytes (a view into the input) and length; NULL on failure. */
static const uint8_t *
get_string(pg_be_reader *r, size_t *n)
{
	size_t len = pg_be_u32(r);
	const uint8_t *p = pg_be_bytes(r, len);

	*n = p != NULL ? len : 0;
	return p;
}

static bool
is(const uint8_t *s, size_t n, const char *text)
{
	return s != NULL && n == strlen(text) && memcmp(s, text, n) == 0;
}

/* A non-negative mpint (RFC 4251 §5) as a new BIGNUM; NULL on failure. */
static BIGNUM *
get_mpint(pg_be_reader *r)
{
	size_t n;
	const uint8_t *p = get_string(r, &n);

	if (p == NULL || n > MAX_MPINT || (n > 0 && (p[0] & 0x80))) {
		r->failed = true;
		return NULL;
	}
	return BN_bin2bn(p, (int)n, NULL);
}

/* ---------------------------------------------------------------------------
 * Ciphers and the KDF
 */

typedef struct {
	const char *name;            /* as in the file */
	const char *evp;             /* libcrypto's name; NULL for "none" */
	size_t key_len;
	size_t iv_len;
	size_t tag_len;
	size_t block;                /* padding of the private section */
} cipher_info;

static const cipher_info ciphers[] = {
	{ "none", NULL, 0, 0, 0, 8 },
	{ "aes128-ctr", "AES-128-CTR", 16, 16, 0, 16 },
	{ "aes192-ctr", "AES-192-CTR", 24, 16, 0, 16 },
	{ "aes256-ctr", "AES-256-CTR", 32, 16, 0, 16 },
	{ "aes128-cbc", "AES-128-CBC", 16, 16, 0, 16 },
	{ "aes192-cbc", "AES-192-CBC", 24, 16, 0, 16 },
	{ "aes256-cbc", "AES-256-CBC", 32, 16, 0, 16 },
	{ "aes128-gcm@openssh.com", "AES-128-GCM", 16, 12, 16, 16 },
	{ "aes256-gcm@openssh.com", "AES-256-GCM", 32, 12, 16, 16 },
};

static const cipher_info *
find_cipher(const uint8_t *name, size_t len)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(ciphers); i++) {
		if (is(name, len, ciphers[i].name))
			return &ciphers[i];
	}
	return NULL;
}

/* Decrypts in into out (len bytes); tag follows for AEAD ciphers. */
static bool
decrypt(const cipher_info *c, const uint8_t *key_iv, const uint8_t *in, size_t len,
        const uint8_t *tag, uint8_t *out)
{
	EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, c->evp, NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, last = 0;
	bool ok = false;

	if (cipher == NULL || ctx == NULL || len > INT32_MAX ||
	    !EVP_DecryptInit_ex2(ctx, cipher, NULL, NULL, NULL))
		goto out;
	if (c->tag_len > 0 &&
	    (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)c->iv_len, NULL) <= 0 ||
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)c->tag_len, (void *)tag) <= 0))
		goto out;
	if (!EVP_DecryptInit_ex2(ctx, NULL, key_iv, key_iv + c->key_len, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(ctx, 0) ||
	    !EVP_DecryptUpdate(ctx, out, &n, in, (int)len) ||
	    !EVP_DecryptFinal_ex(ctx, out + n, &last))
		goto out;
	ok = (size_t)n + (size_t)last == len;
out:
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(cipher);
	return ok;
}

/* The KDF options and what they say about the key: returns a result. */
static pg_import_result
derive(pg_import *imp, const pg_import_options *opts, const cipher_info *c,
       const uint8_t *kdf, size_t kdf_len, const uint8_t *kdf_opts, size_t kdf_opts_len,
       uint8_t *key_iv)
{
	pg_be_reader r = { kdf_opts, kdf_opts_len, 0, false };
	unsigned max = opts->max_kdf_rounds ? opts->max_kdf_rounds : PG_IMPORT_DEFAULT_MAX_ROUNDS;
	const p11glue_pin *pass;
	const uint8_t *salt, *pw;
	size_t salt_len, pw_len;
	uint32_t rounds;

	if (!is(kdf, kdf_len, "bcrypt"))
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: unsupported key derivation '%.*s'",
		                      (int)(kdf_len > 40 ? 40 : kdf_len), kdf ? (const char *)kdf : "");
	salt = get_string(&r, &salt_len);
	rounds = pg_be_u32(&r);
	if (r.failed || r.off != r.len || salt_len == 0 || salt_len > 1024 || rounds == 0)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "OpenSSH key: bad bcrypt options");
	if (rounds > max)
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: %u bcrypt rounds, more than the limit of %u",
		                      rounds, max);
	pass = pg_import_passphrase(imp, opts);
	if (pass == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_NO_PASSPHRASE,
		                      "the OpenSSH key is encrypted and no passphrase was given");
	pw = p11glue_pin_value(pass, &pw_len);
	if (!pg_bcrypt_pbkdf(pw, pw_len, salt, salt_len, key_iv, c->key_len + c->iv_len, rounds))
		return pg_import_fail(imp, PG_IMPORT_ERR_NOMEM, "OpenSSH key: bcrypt_pbkdf failed");
	return PG_IMPORT_OK;
}

/* ---------------------------------------------------------------------------
 * Private keys by type
 */

/* ssh-rsa: mpint n, e, d, iqmp, p, q (CRT exponents computed here). */
static EVP_PKEY *
read_rsa(pg_be_reader *r)
{
	BIGNUM *n = get_mpint(r), *e = get_mpint(r), *d = get_mpint(r);
	BIGNUM *iqmp = get_mpint(r), *p = get_mpint(r), *q = get_mpint(r);
	EVP_PKEY *key = r->failed ? NULL : pg_key_rsa_private(n, e, d, p, q, iqmp);

	BN_free(n);
	BN_free(e);
	BN_clear_free(d);
	BN_clear_free(iqmp);
	BN_clear_free(p);
	BN_clear_free(q);
	return key;
}

static const struct {
	const char *type;
	const char *curve;
	const char *group;
} ecdsa_types[] = {
	{ "ecdsa-sha2-nistp256", "nistp256", "P-256" },
	{ "ecdsa-sha2-nistp384", "nistp384", "P-384" },
	{ "ecdsa-sha2-nistp521", "nistp521", "P-521" },
};

/* ecdsa-sha2-*: string curve, string Q, mpint d. */
static EVP_PKEY *
read_ecdsa(pg_be_reader *r, const char *group, const char *curve)
{
	size_t name_len, q_len;
	const uint8_t *name = get_string(r, &name_len);
	const uint8_t *q = get_string(r, &q_len);
	BIGNUM *d = get_mpint(r);
	EVP_PKEY *key = NULL;

	if (!r->failed && d != NULL && is(name, name_len, curve) && q_len > 0 && q_len <= 133)
		key = pg_key_ec(group, q, q_len, d);
	BN_clear_free(d);
	return key;
}

/* ssh-ed25519: string public (32), string secret (64: seed | public). */
static EVP_PKEY *
read_ed25519(pg_be_reader *r)
{
	size_t pk_len, sk_len, len = 32;
	const uint8_t *pk = get_string(r, &pk_len);
	const uint8_t *sk = get_string(r, &sk_len);
	uint8_t derived[32];
	EVP_PKEY *key;

	if (r->failed || pk_len != 32 || sk_len != 64 || memcmp(sk + 32, pk, 32) != 0)
		return NULL;
	key = EVP_PKEY_new_raw_private_key_ex(NULL, "ED25519", NULL, sk, 32);
	if (key != NULL && (!EVP_PKEY_get_raw_public_key(key, derived, &len) || len != 32 ||
	                    memcmp(derived, pk, 32) != 0)) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	return key;
}

/* The key of the private section; sets imp->error when it fails. */
static pg_import_result
read_key(pg_be_reader *r, pg_import *imp, EVP_PKEY **key)
{
	size_t type_len;
	const uint8_t *type = get_string(r, &type_len);
	int shown = (int)(type_len > 60 ? 60 : type_len);

	*key = NULL;
	if (type == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "OpenSSH key: truncated private section");
	if (is(type, type_len, "ssh-rsa"))
		*key = read_rsa(r);
	else if (is(type, type_len, "ssh-ed25519"))
		*key = read_ed25519(r);
	else if (is(type, type_len, "ssh-dss"))
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: DSA keys are not supported");
	else if (type_len > 3 && memcmp(type, "sk-", 3) == 0)
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: '%.*s' is a security key (FIDO) handle; its "
		                      "private key lives on the authenticator", shown, type);
	else {
		for (size_t i = 0; i < PG_N_ELEMENTS(ecdsa_types); i++) {
			if (is(type, type_len, ecdsa_types[i].type)) {
				*key = read_ecdsa(r, ecdsa_types[i].group, ecdsa_types[i].curve);
				goto done;
			}
		}
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: unsupported key type '%.*s'", shown, type);
	}
done:
	if (*key == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
		                      "OpenSSH key: invalid %.*s private key", shown, type);
	return PG_IMPORT_OK;
}

/* The decrypted private section: checkints, key, comment, padding. */
static pg_import_result
read_private(pg_import *imp, const uint8_t *data, size_t len, size_t block, bool encrypted,
             const uint8_t *pub, size_t pub_len)
{
	pg_be_reader r = { data, len, 0, false };
	uint32_t check1 = pg_be_u32(&r), check2 = pg_be_u32(&r);
	const uint8_t *comment;
	size_t comment_len, pad;
	pg_buf blob;
	const char *type;
	EVP_PKEY *key = NULL;
	pg_import_result rv;

	if (r.failed)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "OpenSSH key: truncated private section");
	if (check1 != check2)
		return encrypted ? pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE,
		                                  "wrong passphrase for the OpenSSH key")
		                 : pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
		                                  "OpenSSH key: check values differ");
	rv = read_key(&r, imp, &key);
	if (rv != PG_IMPORT_OK)
		return rv;
	comment = get_string(&r, &comment_len);
	/* Padding: 1, 2, 3 ... to a whole number of blocks. */
	pad = r.len - r.off;
	for (size_t i = 0; !r.failed && i < pad; i++) {
		if (r.data[r.off + i] != (uint8_t)(i + 1))
			r.failed = true;
	}
	if (r.failed || pad >= block || len % block != 0) {
		EVP_PKEY_free(key);
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "OpenSSH key: bad comment or padding");
	}
	/* The public key outside must be this key's. */
	pg_buf_init(&blob);
	if (!pg_ssh_public_blob(key, &blob, &type) || blob.len != pub_len ||
	    memcmp(blob.data, pub, pub_len) != 0) {
		pg_buf_clear(&blob);
		EVP_PKEY_free(key);
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
		                      "OpenSSH key: the public key does not match the private key");
	}
	pg_buf_clear(&blob);
	if (comment_len > 0) {
		imp->key_label = (char *)pg_memdup0(comment, comment_len);
		if (imp->key_label == NULL) {
			EVP_PKEY_free(key);
			return PG_IMPORT_ERR_NOMEM;
		}
	}
	imp->key = key;
	return PG_IMPORT_OK;
}

pg_import_result
pg_import_openssh(const uint8_t *blob, size_t len, const pg_import_options *opts, pg_import *imp)
{
	pg_be_reader r = { blob, len, 0, false };
	const uint8_t *cname, *kdf, *kdf_opts, *pub, *priv, *tag = NULL;
	size_t cname_len, kdf_len, kdf_opts_len, pub_len, priv_len;
	const cipher_info *c;
	uint8_t key_iv[64], *plain = NULL;
	uint32_t nkeys;
	pg_import_result rv;

	imp->format = "OpenSSH private key";
	if (pg_be_bytes(&r, sizeof(MAGIC)) == NULL || memcmp(blob, MAGIC, sizeof(MAGIC)) != 0)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "not an openssh-key-v1 private key");
	cname = get_string(&r, &cname_len);
	kdf = get_string(&r, &kdf_len);
	kdf_opts = get_string(&r, &kdf_opts_len);
	nkeys = pg_be_u32(&r);
	if (r.failed)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "OpenSSH key: truncated header");
	if (nkeys != 1)
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: the file holds %u keys; one is imported at a time",
		                      nkeys);
	pub = get_string(&r, &pub_len);
	priv = get_string(&r, &priv_len);
	c = find_cipher(cname, cname_len);
	if (c == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "OpenSSH key: unsupported cipher '%.*s'",
		                      (int)(cname_len > 40 ? 40 : cname_len), cname ? (const char *)cname : "");
	if (c->tag_len > 0)
		tag = pg_be_bytes(&r, c->tag_len);
	if (r.failed || r.off != r.len)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
		                      r.failed ? "OpenSSH key: truncated" : "OpenSSH key: data after the key");
	if (c->evp == NULL) {
		if (!is(kdf, kdf_len, "none") || kdf_opts_len != 0)
			return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
			                      "OpenSSH key: a KDF without a cipher");
		return read_private(imp, priv, priv_len, c->block, false, pub, pub_len);
	}
	if (priv_len == 0 || priv_len % c->block != 0)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
		                      "OpenSSH key: encrypted section is not whole blocks");
	rv = derive(imp, opts, c, kdf, kdf_len, kdf_opts, kdf_opts_len, key_iv);
	if (rv != PG_IMPORT_OK)
		goto out;
	plain = malloc(priv_len);
	if (plain == NULL) {
		rv = PG_IMPORT_ERR_NOMEM;
		goto out;
	}
	if (!decrypt(c, key_iv, priv, priv_len, tag, plain)) {
		rv = pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE, "wrong passphrase for the OpenSSH key");
		goto out;
	}
	rv = read_private(imp, plain, priv_len, c->block, true, pub, pub_len);
out:
	pg_memzero(key_iv, sizeof(key_iv));
	pg_free_secret(plain, priv_len);
	return rv;
}
