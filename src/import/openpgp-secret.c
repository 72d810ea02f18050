/*
 * The secret half of an OpenPGP secret key packet (openpgp.h): the S2K
 * usage conventions and encryption of RFC 9580 §5.5.3, the string-to-key
 * specifiers of §3.7 and the secret key material of each algorithm
 * (§5.5.5), made into a libcrypto key and checked against the public
 * key. Every secret on the way lives in buffers wiped before they are
 * freed, on failures too.
 */
#include "config.h"

#include "openpgp.h"
#include "be-reader.h"
#include "keys.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* S2K usage octets (§5.5.3). */
enum { USAGE_NONE = 0, USAGE_AEAD = 253, USAGE_CFB_SHA1 = 254, USAGE_CFB_SUM = 255 };
/* S2K specifier types (§3.7.1) and GnuPG's private extension. */
enum { S2K_SIMPLE = 0, S2K_SALTED = 1, S2K_ITERATED = 3, S2K_ARGON2 = 4, S2K_GNU = 101 };

#define MAX_SECRET (16 * 1024)

/* ---------------------------------------------------------------------------
 * String-to-key (§3.7)
 */

typedef struct {
	unsigned type;
	const EVP_MD *md;
	const uint8_t *salt;         /* 8 octets, salted and iterated types */
	unsigned long count;         /* octets hashed, iterated type */
} s2k_spec;

static const EVP_MD *
hash_of(unsigned id)
{
	switch (id) {
	case 2: return EVP_sha1();
	case 8: return EVP_sha256();
	case 9: return EVP_sha384();
	case 10: return EVP_sha512();
	case 11: return EVP_sha224();
	case 12: return EVP_sha3_256();
	case 14: return EVP_sha3_512();
	default: return NULL;
	}
}

static const EVP_CIPHER *
cipher_of(unsigned id)
{
	switch (id) {
	case 7: return EVP_aes_128_cfb128();
	case 8: return EVP_aes_192_cfb128();
	case 9: return EVP_aes_256_cfb128();
	default: return NULL;
	}
}

/* Reads an S2K specifier; the result says why it is refused. */
static pg_pgp_result
read_s2k(pg_be_reader *r, unsigned long max_count, s2k_spec *s, char *why, size_t size)
{
	const uint8_t *p = pg_be_bytes(r, 1);
	const uint8_t *gnu;

	if (p == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated S2K specifier");
	s->type = p[0];
	if (s->type == S2K_GNU) {
		/* "GNU" and a mode: 1 no secret (gnu-dummy), 2 on a card. */
		gnu = pg_be_bytes(r, 5);
		if (gnu != NULL && memcmp(gnu + 1, "GNU", 3) == 0 && (gnu[4] == 1 || gnu[4] == 2))
			return pg_pgp_fail(why, size, PG_PGP_ERR_NO_SECRET, "%s",
			                   gnu[4] == 1 ? "GnuPG holds no secret for this key (gnu-dummy)"
			                               : "the secret key is on a smart card (divert-to-card)");
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED, "an unknown GnuPG S2K extension");
	}
	if (s->type == S2K_ARGON2)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED, "Argon2 S2K is not supported");
	if (s->type != S2K_SIMPLE && s->type != S2K_SALTED && s->type != S2K_ITERATED)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED, "an unknown S2K type (%u)", s->type);
	p = pg_be_bytes(r, 1);
	s->md = p ? hash_of(p[0]) : NULL;
	if (p != NULL && s->md == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED,
		                   "an S2K hash that is not supported (%u)", p[0]);
	s->salt = s->type != S2K_SIMPLE ? pg_be_bytes(r, 8) : NULL;
	if (s->type == S2K_ITERATED) {
		p = pg_be_bytes(r, 1);
		/* §3.7.1.3: the coded count. */
		s->count = p ? (16ul + (p[0] & 15)) << ((p[0] >> 4) + 6) : 0;
		if (s->count > max_count)
			return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED,
			                   "an S2K count of %lu exceeds the limit of %lu", s->count, max_count);
	}
	if (r->failed)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated S2K specifier");
	return PG_PGP_OK;
}

/* Hashes count octets of salt || pass repeated (at least all of it
 * once), in large chunks. */
static bool
hash_iterated(EVP_MD_CTX *ctx, const uint8_t *salt, const uint8_t *pass, size_t pass_len,
              unsigned long count)
{
	size_t unit = 8 + pass_len, reps = 8192 / unit + 1, chunk = unit * reps;
	uint8_t *buf = malloc(chunk);
	unsigned long left = count < unit ? unit : count;
	bool ok = buf != NULL;

	for (size_t i = 0; ok && i < reps; i++) {
		memcpy(buf + i * unit, salt, 8);
		memcpy(buf + i * unit + 8, pass, pass_len);
	}
	while (ok && left > 0) {
		size_t n = left < chunk ? left : chunk;
		ok = EVP_DigestUpdate(ctx, buf, n) == 1;
		left -= n;
	}
	pg_free_secret(buf, chunk);
	return ok;
}

/* The key of s for pass: the hash output of as many contexts as needed,
 * each preloaded with one more zero octet (§3.7.1). */
static bool
s2k_derive(const s2k_spec *s, const uint8_t *pass, size_t pass_len, uint8_t *key, size_t key_len)
{
	static const uint8_t zero = 0;
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx != NULL;

	for (size_t done = 0, preload = 0; ok && done < key_len; preload++) {
		ok = EVP_DigestInit_ex(ctx, s->md, NULL) == 1;
		for (size_t i = 0; ok && i < preload; i++)
			ok = EVP_DigestUpdate(ctx, &zero, 1) == 1;
		if (ok && s->type == S2K_ITERATED)
			ok = hash_iterated(ctx, s->salt, pass, pass_len, s->count);
		else if (ok)
			ok = (s->salt == NULL || EVP_DigestUpdate(ctx, s->salt, 8) == 1) &&
			     EVP_DigestUpdate(ctx, pass, pass_len) == 1;
		ok = ok && EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len > 0;
		if (ok) {
			size_t n = key_len - done < md_len ? key_len - done : md_len;
			memcpy(key + done, md, n);
			done += n;
		}
	}
	pg_memzero(md, sizeof(md));
	EVP_MD_CTX_free(ctx);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Secret key material (§5.5.5)
 */

/* A secret MPI into a new BIGNUM (BN_clear_free), or NULL. */
static BIGNUM *
read_bn(pg_be_reader *r)
{
	uint16_t bits = pg_be_u16(r);
	const uint8_t *p = pg_be_bytes(r, ((size_t)bits + 7) / 8);

	return p != NULL ? BN_bin2bn(p, (int)(((size_t)bits + 7) / 8), BN_secure_new()) : NULL;
}

/* The public key's RSA values with d, p and q: libcrypto's CRT form
 * (OpenPGP's u is not needed: it is recomputed). */
static EVP_PKEY *
rsa_private(const pg_pgp_key *key, pg_be_reader *r)
{
	BIGNUM *n = NULL, *e = NULL, *d = read_bn(r), *p = read_bn(r), *q = read_bn(r);
	BIGNUM *u = read_bn(r);
	EVP_PKEY *priv = NULL;

	if (!r->failed && r->off == r->len && u != NULL &&
	    EVP_PKEY_get_bn_param(key->public_key, OSSL_PKEY_PARAM_RSA_N, &n) &&
	    EVP_PKEY_get_bn_param(key->public_key, OSSL_PKEY_PARAM_RSA_E, &e))
		priv = pg_key_rsa_private(n, e, d, p, q, NULL);
	BN_free(n);
	BN_free(e);
	BN_clear_free(d);
	BN_clear_free(p);
	BN_clear_free(q);
	BN_clear_free(u);
	return priv;
}

static EVP_PKEY *
ec_private(const pg_pgp_key *key, pg_be_reader *r)
{
	BIGNUM *d = read_bn(r);
	unsigned char point[200];
	size_t point_len = 0;
	EVP_PKEY *priv = NULL;

	if (!r->failed && r->off == r->len && d != NULL &&
	    EVP_PKEY_get_octet_string_param(key->public_key, OSSL_PKEY_PARAM_PUB_KEY, point,
	                                    sizeof(point), &point_len))
		priv = pg_key_ec(key->curve, point, point_len, d);
	BN_clear_free(d);
	return priv;
}

/* An Edwards key from its secret octets (legacy EdDSA: an MPI of them,
 * leading zeros dropped), checked against the public key. */
static EVP_PKEY *
ed_private(const pg_pgp_key *key, pg_be_reader *r)
{
	size_t want = strcmp(key->curve, "ED25519") == 0 ? 32 : 57, len = want;
	uint8_t seed[57];
	const uint8_t *p;
	EVP_PKEY *priv = NULL;

	memset(seed, 0, sizeof(seed));
	if (key->algo == PG_PGP_EDDSA_LEGACY) {
		len = ((size_t)pg_be_u16(r) + 7) / 8;
		if (len > want)
			r->failed = true;
	}
	p = pg_be_bytes(r, len);
	if (p != NULL && r->off == r->len) {
		memcpy(seed + want - len, p, len);
		priv = EVP_PKEY_new_raw_private_key_ex(NULL, key->curve, NULL, seed, want);
	}
	if (priv != NULL && EVP_PKEY_eq(priv, key->public_key) != 1) {
		EVP_PKEY_free(priv);
		priv = NULL;
	}
	pg_memzero(seed, sizeof(seed));
	return priv;
}

/* The private key of plaintext material m (check values removed). */
static pg_pgp_result
make_key(const pg_pgp_key *key, const uint8_t *m, size_t len, EVP_PKEY **priv, char *why,
         size_t size)
{
	pg_be_reader r = { m, len, 0, false };

	switch (key->algo) {
	case PG_PGP_RSA:
	case PG_PGP_RSA_E:
	case PG_PGP_RSA_S:
		*priv = rsa_private(key, &r);
		break;
	case PG_PGP_ECDH:
	case PG_PGP_ECDSA:
		*priv = ec_private(key, &r);
		break;
	default:
		*priv = ed_private(key, &r);
		break;
	}
	if (*priv == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT,
		                   "the secret %s key is malformed or does not match its public key",
		                   pg_pgp_algo_name(key->algo));
	return PG_PGP_OK;
}

/* ---------------------------------------------------------------------------
 * Unlocking
 */

/* The two-octet checksum of §5.5.3: the sum of the octets mod 65536. */
static bool
sum16_ok(const uint8_t *m, size_t len, const uint8_t *check)
{
	unsigned sum = 0;
	uint8_t want[2];

	for (size_t i = 0; i < len; i++)
		sum += m[i];
	want[0] = (uint8_t)(sum >> 8);
	want[1] = (uint8_t)sum;
	return pg_ct_equal(want, check, 2);
}

/* Checks plain material + check value (usage 254: SHA-1 of the material;
 * else, and for unprotected version 4 keys, the sum) and makes the key. */
static pg_pgp_result
check_and_make(const pg_pgp_key *key, unsigned usage, const uint8_t *plain, size_t len,
               EVP_PKEY **priv, char *why, size_t size)
{
	size_t check = usage == USAGE_CFB_SHA1 ? 20 : usage == USAGE_NONE && key->version == 6 ? 0 : 2;
	uint8_t md[20];
	bool ok;

	if (len < check)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "the secret key material is truncated");
	if (usage == USAGE_CFB_SHA1)
		ok = EVP_Digest(plain, len - 20, md, NULL, EVP_sha1(), NULL) == 1 &&
		     pg_ct_equal(md, plain + len - 20, 20);
	else
		ok = check == 0 || sum16_ok(plain, len - 2, plain + len - 2);
	pg_memzero(md, sizeof(md));
	if (!ok && usage == USAGE_NONE)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "the secret key's checksum is wrong");
	if (!ok)
		return pg_pgp_fail(why, size, PG_PGP_ERR_PASSPHRASE, "wrong passphrase for the %s key",
		                   pg_pgp_algo_name(key->algo));
	return make_key(key, plain, len - check, priv, why, size);
}

/* Usage 254 and 255: the cipher, the S2K and the IV, then the secrets. */
static pg_pgp_result
decrypt(const pg_pgp_key *key, pg_be_reader *r, unsigned usage, const p11glue_pin *pass,
        unsigned long max_count, EVP_PKEY **priv, char *why, size_t size)
{
	const uint8_t *p = pg_be_bytes(r, 1), *iv, *secret, *pw;
	const EVP_CIPHER *cipher = p ? cipher_of(p[0]) : NULL;
	uint8_t dk[32], *plain = NULL;
	size_t pw_len = 0, len;
	s2k_spec s = { 0 };
	EVP_CIPHER_CTX *ctx = NULL;
	pg_pgp_result rv;
	int out = 0, fin = 0;

	if (p == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated secret key");
	if (cipher == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED,
		                   "a secret key cipher that is not supported (%u; AES is)", p[0]);
	/* Version 6: a count of the S2K specifier's octets (§5.5.3). */
	if (key->version == 6 && (p = pg_be_bytes(r, 1)) == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated secret key");
	if ((rv = read_s2k(r, max_count, &s, why, size)) != PG_PGP_OK)
		return rv;
	iv = pg_be_bytes(r, (size_t)EVP_CIPHER_get_iv_length(cipher));
	secret = iv ? pg_be_bytes(r, r->len - r->off) : NULL;
	len = r->len - (size_t)(secret ? secret - r->data : 0);
	if (secret == NULL || len == 0 || len > MAX_SECRET)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated or oversized secret key");
	if (pass == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_NO_PASSPHRASE,
		                   "the %s key is protected by a passphrase",
		                   pg_pgp_algo_name(key->algo));
	pw = p11glue_pin_value(pass, &pw_len);
	plain = malloc(len);
	rv = pg_pgp_fail(why, size, PG_PGP_ERR_NOMEM, "out of memory");
	if (plain != NULL && s2k_derive(&s, pw, pw_len, dk, (size_t)EVP_CIPHER_get_key_length(cipher)) &&
	    (ctx = EVP_CIPHER_CTX_new()) != NULL &&
	    EVP_DecryptInit_ex(ctx, cipher, NULL, dk, iv) == 1 &&
	    EVP_DecryptUpdate(ctx, plain, &out, secret, (int)len) == 1 &&
	    EVP_DecryptFinal_ex(ctx, plain + out, &fin) == 1 && (size_t)(out + fin) == len)
		rv = check_and_make(key, usage, plain, len, priv, why, size);
	EVP_CIPHER_CTX_free(ctx);
	pg_memzero(dk, sizeof(dk));
	pg_free_secret(plain, len);
	return rv;
}

pg_pgp_result
pg_pgp_unlock(const pg_pgp_key *key, const p11glue_pin *pass, unsigned long max_count,
              EVP_PKEY **priv, char *why, size_t why_size)
{
	pg_be_reader r = { key->sec, key->sec_len, 0, false };
	const uint8_t *u, *n;
	unsigned usage;

	*priv = NULL;
	if (why != NULL && why_size > 0)
		why[0] = 0;
	if (!key->secret)
		return pg_pgp_fail(why, why_size, PG_PGP_ERR_NO_SECRET, "a public key holds no secret");
	if (key->public_key == NULL || key->sec == NULL)
		return pg_pgp_fail(why, why_size, PG_PGP_ERR_UNSUPPORTED, "%s",
		                   key->unsupported ? key->unsupported : "an unsupported key");
	if (max_count == 0)
		max_count = PG_PGP_MAX_S2K_COUNT;
	u = pg_be_bytes(&r, 1);
	usage = u ? u[0] : 0;
	if (u == NULL)
		return pg_pgp_fail(why, why_size, PG_PGP_ERR_FORMAT, "a truncated secret key");
	if (usage == USAGE_NONE)
		return check_and_make(key, usage, key->sec + 1, key->sec_len - 1, priv, why, why_size);
	if (usage == USAGE_AEAD)
		return pg_pgp_fail(why, why_size, PG_PGP_ERR_UNSUPPORTED,
		                   "AEAD-protected secret keys are not supported");
	if (usage != USAGE_CFB_SHA1 && usage != USAGE_CFB_SUM)
		return pg_pgp_fail(why, why_size, PG_PGP_ERR_UNSUPPORTED,
		                   "a legacy secret key protection (S2K usage %u)", usage);
	/* Version 6: a count of the conditional fields that follow; no
	 * usage 255 (§5.5.3). */
	if (key->version == 6) {
		n = pg_be_bytes(&r, 1);
		if (n == NULL || usage == USAGE_CFB_SUM)
			return pg_pgp_fail(why, why_size, PG_PGP_ERR_FORMAT,
			                   "a malformed version 6 secret key");
	}
	return decrypt(key, &r, usage, pass, max_count, priv, why, why_size);
}
