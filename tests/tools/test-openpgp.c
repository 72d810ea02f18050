/*
 * The OpenPGP key reader of `p11glue adopt` (src/import/openpgp.c,
 * openpgp-secret.c): keys exported by gpg 2.2 (tests/data/openpgp: RSA,
 * Ed25519 with cv25519, NIST P-256; protected ones with the passphrase
 * "p11glue test"), read with the fingerprints and keygrips gpg printed
 * for them (gpg --with-colons --with-keygrip -K), unlocked with the right
 * passphrase and refused with a wrong or missing one; then hostile input:
 * every truncation, bad lengths, wrong checksums and check values,
 * partial lengths, packets out of order, unknown versions and
 * algorithms, S2K costs above the limit, GnuPG's stubs; and secret keys
 * protected in ways gpg 2.2 does not write (AES-256 with SHA-256,
 * salted and simple S2K, the two-octet checksum, version 6 keys), made
 * here with an encoder of the test's own.
 *
 * Environment: P11GLUE_TEST_SRCDIR, the source tree.
 */
#include "config.h"

#include "harness.h"
#include "openpgp.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS "p11glue test"

typedef struct {
	uint8_t *data;
	size_t len;
} blob;

static blob
load(const char *name)
{
	const char *src = getenv("P11GLUE_TEST_SRCDIR");
	char path[4096];
	blob b = { NULL, 0 };
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/data/openpgp/%s", src ? src : ".", name);
	f = fopen(path, "rb");
	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b.data = malloc((size_t)n);
	pg_assert(b.data != NULL && fread(b.data, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	b.len = (size_t)n;
	return b;
}

static void
hex(const unsigned char *p, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02X", p[i]);
	out[2 * len] = 0;
}

static void
assert_fpr(const pg_pgp_key *key, const char *want)
{
	char text[65];

	hex(key->fpr, key->fpr_len, text);
	pg_assert_str_eq(text, want);
}

static void
assert_grip(const pg_pgp_key *key, const char *want)
{
	unsigned char grip[20];
	char text[41];

	pg_assert(pg_pgp_keygrip(key, grip));
	hex(grip, 20, text);
	pg_assert_str_eq(text, want);
}

static pg_pgp_result
unlock(const pg_pgp_key *key, const char *pass, EVP_PKEY **priv)
{
	p11glue_pin *pin = pass ? p11glue_pin_new(pass, strlen(pass)) : NULL;
	char why[200];
	pg_pgp_result rv = pg_pgp_unlock(key, pin, 0, priv, why, sizeof(why));

	p11glue_pin_free(pin);
	return rv;
}

/* Unlocks with pass and checks the key against its public half. */
static void
assert_unlocks(const pg_pgp_key *key, const char *pass)
{
	EVP_PKEY *priv = NULL;

	pg_assert_int_eq(unlock(key, pass, &priv), PG_PGP_OK);
	pg_assert_not_null(priv);
	pg_assert_int_eq(EVP_PKEY_eq(priv, key->public_key), 1);
	EVP_PKEY_free(priv);
}

static void
assert_refused(const pg_pgp_key *key, const char *pass, pg_pgp_result want)
{
	EVP_PKEY *priv = NULL;

	pg_assert_int_eq(unlock(key, pass, &priv), want);
	pg_assert_null(priv);
}

static void
parse_ok(const blob *b, pg_pgp_ring *ring)
{
	char why[200];

	pg_pgp_ring_init(ring);
	pg_assert_int_eq(pg_pgp_parse(b->data, b->len, ring, why, sizeof(why)), PG_PGP_OK);
}

static pg_pgp_result
parse_result(const uint8_t *data, size_t len)
{
	pg_pgp_ring ring;
	char why[200];
	pg_pgp_result rv;

	pg_pgp_ring_init(&ring);
	rv = pg_pgp_parse(data, len, &ring, why, sizeof(why));
	if (rv != PG_PGP_OK)
		pg_assert_int_eq(ring.n, 0);
	pg_pgp_ring_clear(&ring);
	return rv;
}

/* ---------------------------------------------------------------------------
 * What gpg exported
 */

static void
test_rsa(void)
{
	blob b = load("rsa-protected.gpg");
	pg_pgp_ring ring;

	parse_ok(&b, &ring);
	pg_assert_int_eq(ring.n, 2);
	pg_assert(ring.keys[0].secret && !ring.keys[0].subkey && ring.keys[1].subkey);
	pg_assert_int_eq(ring.keys[0].version, 4);
	pg_assert_int_eq(ring.keys[0].algo, PG_PGP_RSA);
	pg_assert_int_eq(ring.keys[1].primary, 0);
	assert_fpr(&ring.keys[0], "C32F15185785E0ED86DE38DC69DDD2C464905EC6");
	assert_fpr(&ring.keys[1], "050377B5A4667C3FE50A8EB3349E4EE1DE4571C8");
	assert_grip(&ring.keys[0], "C83541238AACD6E7EDB164D917DA93B06E76CD3E");
	assert_grip(&ring.keys[1], "40310F46903F3C429BBB13F9DE38EEAB97159F33");
	pg_assert_str_eq(pg_pgp_uid(&ring, &ring.keys[1]), "RSA Test <rsa@example.org>");
	for (size_t i = 0; i < 2; i++) {
		pg_assert(pg_pgp_protected(&ring.keys[i]));
		assert_unlocks(&ring.keys[i], PASS);
		assert_refused(&ring.keys[i], "p11glue tesT", PG_PGP_ERR_PASSPHRASE);
		assert_refused(&ring.keys[i], "", PG_PGP_ERR_PASSPHRASE);
		assert_refused(&ring.keys[i], NULL, PG_PGP_ERR_NO_PASSPHRASE);
	}
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

static void
test_rsa_public(void)
{
	blob b = load("rsa-public.gpg");
	pg_pgp_ring ring;

	parse_ok(&b, &ring);
	pg_assert_int_eq(ring.n, 2);
	pg_assert(!ring.keys[0].secret && !ring.keys[1].secret);
	assert_fpr(&ring.keys[0], "C32F15185785E0ED86DE38DC69DDD2C464905EC6");
	assert_fpr(&ring.keys[1], "050377B5A4667C3FE50A8EB3349E4EE1DE4571C8");
	pg_assert_not_null(ring.keys[1].public_key);
	assert_refused(&ring.keys[0], PASS, PG_PGP_ERR_NO_SECRET);
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

static void
test_ed25519(void)
{
	blob b = load("ed25519-cv25519.gpg");
	pg_pgp_ring ring;
	unsigned char grip[20];

	parse_ok(&b, &ring);
	pg_assert_int_eq(ring.n, 2);
	assert_fpr(&ring.keys[0], "DC7269E144436BB0EE110C4C46AE38F083F6560A");
	assert_fpr(&ring.keys[1], "2690BC24EEB59AE5C3FEAC5D2155DEB14F40035F");
	pg_assert_int_eq(ring.keys[0].algo, PG_PGP_EDDSA_LEGACY);
	pg_assert_str_eq(ring.keys[0].curve, "ED25519");
	pg_assert(!pg_pgp_protected(&ring.keys[0]));
	pg_assert(!pg_pgp_keygrip(&ring.keys[0], grip));
	assert_unlocks(&ring.keys[0], NULL);
	/* cv25519 is read, and said to be a key the store cannot hold. */
	pg_assert_null(ring.keys[1].public_key);
	pg_assert_str_eq(ring.keys[1].curve, "X25519");
	pg_assert_not_null(ring.keys[1].unsupported);
	assert_refused(&ring.keys[1], NULL, PG_PGP_ERR_UNSUPPORTED);
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

static void
test_nist(void)
{
	blob b = load("nistp256-protected.gpg");
	pg_pgp_ring ring;

	parse_ok(&b, &ring);
	pg_assert_int_eq(ring.n, 2);
	assert_fpr(&ring.keys[0], "B1B744A9D24284A45C5DC63D235034B34738679B");
	assert_fpr(&ring.keys[1], "67F653ABF18ED9BF8CC1EC839F460192D3686A76");
	pg_assert_int_eq(ring.keys[0].algo, PG_PGP_ECDSA);
	pg_assert_int_eq(ring.keys[1].algo, PG_PGP_ECDH);
	pg_assert_str_eq(ring.keys[1].curve, "prime256v1");
	assert_unlocks(&ring.keys[0], PASS);
	assert_unlocks(&ring.keys[1], PASS);
	assert_refused(&ring.keys[1], "wrong", PG_PGP_ERR_PASSPHRASE);
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

/* ---------------------------------------------------------------------------
 * Hostile input
 */

/* Every prefix of every file parses or fails cleanly; what parses
 * unlocks or is refused without a crash. */
static void
test_truncated(void)
{
	static const char *const files[] = { "rsa-protected.gpg", "ed25519-cv25519.gpg",
		                             "nistp256-protected.gpg", "rsa-public.gpg" };

	for (size_t f = 0; f < PG_N_ELEMENTS(files); f++) {
		blob b = load(files[f]);
		for (size_t len = 0; len < b.len; len++) {
			uint8_t *copy = malloc(len + 1);
			pg_pgp_ring ring;
			char why[200];
			pg_pgp_result rv;

			memcpy(copy, b.data, len);
			pg_pgp_ring_init(&ring);
			rv = pg_pgp_parse(copy, len, &ring, why, sizeof(why));
			pg_assert(rv == PG_PGP_OK || rv == PG_PGP_ERR_FORMAT);
			for (size_t i = 0; i < ring.n; i++) {
				EVP_PKEY *priv = NULL;
				if (unlock(&ring.keys[i], PASS, &priv) == PG_PGP_OK)
					pg_assert_int_eq(EVP_PKEY_eq(priv, ring.keys[i].public_key), 1);
				EVP_PKEY_free(priv);
			}
			pg_pgp_ring_clear(&ring);
			free(copy);
		}
		free(b.data);
	}
}

/* The offset of p in b. */
static size_t
at(const blob *b, const uint8_t *p)
{
	return (size_t)(p - b->data);
}

static void
test_wrong_checksum(void)
{
	blob b = load("ed25519-cv25519.gpg");
	pg_pgp_ring ring;
	size_t end;

	parse_ok(&b, &ring);
	end = at(&b, ring.keys[0].sec) + ring.keys[0].sec_len;
	pg_pgp_ring_clear(&ring);
	b.data[end - 1] ^= 0x01;
	parse_ok(&b, &ring);
	assert_refused(&ring.keys[0], NULL, PG_PGP_ERR_FORMAT);
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

static void
test_wrong_check_value(void)
{
	blob b = load("rsa-protected.gpg");
	pg_pgp_ring ring;
	size_t end;

	/* The last octet of the encrypted part is the SHA-1 check value's. */
	parse_ok(&b, &ring);
	end = at(&b, ring.keys[0].sec) + ring.keys[0].sec_len;
	pg_pgp_ring_clear(&ring);
	b.data[end - 1] ^= 0x80;
	parse_ok(&b, &ring);
	assert_refused(&ring.keys[0], PASS, PG_PGP_ERR_PASSPHRASE);
	assert_unlocks(&ring.keys[1], PASS);
	pg_pgp_ring_clear(&ring);
	free(b.data);
}

static void
test_bad_lengths(void)
{
	blob b = load("rsa-protected.gpg");
	pg_pgp_ring ring;
	size_t n_at;

	parse_ok(&b, &ring);
	n_at = at(&b, ring.keys[0].pub);
	pg_pgp_ring_clear(&ring);
	/* The modulus claims more bits than the packet holds. */
	b.data[n_at] = 0xff;
	b.data[n_at + 1] = 0xff;
	pg_assert_int_eq(parse_result(b.data, b.len), PG_PGP_ERR_FORMAT);
	free(b.data);

	/* The first packet claims more octets than the input has. */
	b = load("rsa-protected.gpg");
	pg_assert_int_eq(b.data[0] & 0xc3, 0x81);   /* old format, two-octet length */
	b.data[1] = 0xff;
	b.data[2] = 0xff;
	pg_assert_int_eq(parse_result(b.data, b.len), PG_PGP_ERR_FORMAT);
	free(b.data);
}

static void
test_framing(void)
{
	/* A partial body length (new format, 0xe1) */
	static const uint8_t partial[] = { 0xc5, 0xe1, 0x04, 0x00 };
	/* Not a packet: bit 7 clear */
	static const uint8_t text[] = { 'h', 'e', 'l', 'l', 'o' };
	/* A User ID packet with no key before it */
	static const uint8_t uid_first[] = { 0xcd, 0x01, 'x' };
	/* A public subkey packet (tag 14) first */
	static const uint8_t sub_first[] = { 0xce, 0x06, 0x04, 0, 0, 0, 0, 1 };
	/* Version 3 and version 7 keys, and a version 5 key cut short */
	static const uint8_t v3[] = { 0xc6, 0x06, 0x03, 0, 0, 0, 0, 1 };
	static const uint8_t v7[] = { 0xc6, 0x06, 0x07, 0, 0, 0, 0, 1 };
	static const uint8_t v5[] = { 0xc6, 0x06, 0x05, 0, 0, 0, 0, 1 };
	/* A version 4 public key of an unknown algorithm: kept, unusable */
	static const uint8_t unknown[] = { 0xc6, 0x08, 0x04, 0, 0, 0, 0, 99, 0xaa, 0xbb };
	/* A version 4 secret key of an unknown algorithm: kept, unusable */
	static const uint8_t unknown_sec[] = { 0xc5, 0x08, 0x04, 0, 0, 0, 0, 99, 0xaa, 0xbb };
	/* A key packet that ends after its version octet */
	static const uint8_t short_key[] = { 0xc6, 0x01, 0x04 };
	pg_pgp_ring ring;
	char why[200];

	pg_assert_int_eq(parse_result(partial, sizeof(partial)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(text, sizeof(text)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(uid_first, sizeof(uid_first)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(sub_first, sizeof(sub_first)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(v3, sizeof(v3)), PG_PGP_ERR_UNSUPPORTED);
	pg_assert_int_eq(parse_result(v7, sizeof(v7)), PG_PGP_ERR_UNSUPPORTED);
	pg_assert_int_eq(parse_result(v5, sizeof(v5)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(short_key, sizeof(short_key)), PG_PGP_ERR_FORMAT);
	pg_assert_int_eq(parse_result(NULL, 0), PG_PGP_ERR_FORMAT);
	pg_pgp_ring_init(&ring);
	pg_assert_int_eq(pg_pgp_parse(unknown, sizeof(unknown), &ring, why, sizeof(why)), PG_PGP_OK);
	pg_assert_int_eq(ring.n, 1);
	pg_assert_null(ring.keys[0].public_key);
	pg_assert_int_eq(ring.keys[0].fpr_len, 20);
	pg_pgp_ring_clear(&ring);
	pg_assert_int_eq(pg_pgp_parse(unknown_sec, sizeof(unknown_sec), &ring, why, sizeof(why)),
	                 PG_PGP_OK);
	pg_assert_int_eq(ring.keys[0].fpr_len, 0);
	assert_refused(&ring.keys[0], PASS, PG_PGP_ERR_UNSUPPORTED);
	pg_pgp_ring_clear(&ring);
}

static void
test_s2k_limit(void)
{
	blob b = load("rsa-protected.gpg");
	p11glue_pin *pin = p11glue_pin_new(PASS, strlen(PASS));
	pg_pgp_ring ring;
	EVP_PKEY *priv = NULL;
	char why[200];

	/* gpg wrote a count of 65536. */
	parse_ok(&b, &ring);
	pg_assert_int_eq(pg_pgp_unlock(&ring.keys[0], pin, 65535, &priv, why, sizeof(why)),
	                 PG_PGP_ERR_UNSUPPORTED);
	pg_assert_null(priv);
	pg_assert_int_eq(pg_pgp_unlock(&ring.keys[0], pin, 65536, &priv, why, sizeof(why)), PG_PGP_OK);
	EVP_PKEY_free(priv);
	pg_pgp_ring_clear(&ring);
	p11glue_pin_free(pin);
	free(b.data);
}

/* ---------------------------------------------------------------------------
 * Secret keys protected here: the Ed25519 key's material re-protected
 */

typedef struct {
	unsigned version;            /* 4 or 6 */
	unsigned usage;              /* 0, 254, 255 */
	unsigned cipher;             /* 7 AES-128, 9 AES-256 */
	unsigned s2k;                /* 0, 1, 3, or 101 (GnuPG's) */
	unsigned hash;               /* 2 SHA-1, 8 SHA-256 */
	unsigned gnu_mode;           /* s2k 101: 1 or 2 */
	const char *pass;
} protection;

/* The S2K of the test: the hash of (salt || pass) repeated, octet by
 * octet, one context per hash output with i zero octets first. */
static void
test_s2k(const protection *p, const uint8_t salt[8], unsigned long count, uint8_t *key,
         size_t key_len)
{
	const EVP_MD *md = p->hash == 2 ? EVP_sha1() : EVP_sha256();
	size_t pass_len = strlen(p->pass), unit = (p->s2k ? 8 : 0) + pass_len, done = 0;
	uint8_t out[64];
	unsigned n;

	if (p->s2k != 3 || count < unit)
		count = unit;
	for (unsigned zeros = 0; done < key_len; zeros++) {
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		EVP_DigestInit_ex(ctx, md, NULL);
		for (unsigned i = 0; i < zeros; i++)
			EVP_DigestUpdate(ctx, "", 1);
		for (unsigned long i = 0; i < count; i++) {
			size_t k = i % unit;
			if (p->s2k == 0)
				EVP_DigestUpdate(ctx, p->pass + k, 1);
			else
				EVP_DigestUpdate(ctx, k < 8 ? salt + k : (const uint8_t *)p->pass + k - 8, 1);
		}
		EVP_DigestFinal_ex(ctx, out, &n);
		EVP_MD_CTX_free(ctx);
		memcpy(key + done, out, key_len - done < n ? key_len - done : n);
		done += key_len - done < n ? key_len - done : n;
	}
}

/* A secret key packet (new format) for the public part pub (version,
 * time, algorithm, material) and the secret material m, protected as p
 * says. */
static size_t
protect(const protection *p, const uint8_t *pub, size_t pub_len, const uint8_t *m, size_t m_len,
        uint8_t *out)
{
	uint8_t body[1024], plain[512], key[32], iv[16], salt[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t n = 0, plain_len = m_len, key_len = p->cipher == 9 ? 32 : 16, fields_at;
	unsigned sum = 0;
	int outl = 0;

	memcpy(body, pub, pub_len);
	n = pub_len;
	body[n++] = (uint8_t)p->usage;
	if (m_len > 0)
		memcpy(plain, m, m_len);
	if (p->usage == 254) {
		EVP_Digest(m, m_len, plain + m_len, NULL, EVP_sha1(), NULL);
		plain_len += 20;
	} else if (p->usage == 255 || (p->usage == 0 && p->version == 4)) {
		for (size_t i = 0; i < m_len; i++)
			sum += m[i];
		plain[plain_len++] = (uint8_t)(sum >> 8);
		plain[plain_len++] = (uint8_t)sum;
	}
	if (p->usage == 0) {
		memcpy(body + n, plain, plain_len);
		n += plain_len;
	} else {
		fields_at = n;
		if (p->version == 6)
			body[n++] = 0;
		body[n++] = (uint8_t)p->cipher;
		if (p->version == 6)
			body[n++] = p->s2k == 0 ? 2 : p->s2k == 1 ? 10 : p->s2k == 3 ? 11 : 6;
		body[n++] = (uint8_t)p->s2k;
		if (p->s2k == 101) {
			body[n++] = 0;
			memcpy(body + n, "GNU", 3);
			n += 3;
			body[n++] = (uint8_t)p->gnu_mode;
		} else {
			body[n++] = (uint8_t)p->hash;
			if (p->s2k != 0) {
				memcpy(body + n, salt, 8);
				n += 8;
			}
			if (p->s2k == 3)
				body[n++] = 0x10;  /* 2048 octets */
			RAND_bytes(iv, 16);
			memcpy(body + n, iv, 16);
			n += 16;
		}
		if (p->version == 6)
			body[fields_at] = (uint8_t)(n - fields_at - 1);
		if (p->s2k != 101) {
			EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
			test_s2k(p, salt, 2048, key, key_len);
			EVP_EncryptInit_ex(ctx, key_len == 32 ? EVP_aes_256_cfb128() : EVP_aes_128_cfb128(),
			                   NULL, key, iv);
			EVP_EncryptUpdate(ctx, body + n, &outl, plain, (int)plain_len);
			EVP_CIPHER_CTX_free(ctx);
			n += (size_t)outl;
		}
	}
	out[0] = 0xc5;
	out[1] = 0xff;  /* five-octet length */
	out[2] = (uint8_t)(n >> 24);
	out[3] = (uint8_t)(n >> 16);
	out[4] = (uint8_t)(n >> 8);
	out[5] = (uint8_t)n;
	memcpy(out + 6, body, n);
	return n + 6;
}

/* The Ed25519 key of the gpg export: its public part and material. */
typedef struct {
	blob b;
	const uint8_t *pub;
	size_t pub_len;
	const uint8_t *m;
	size_t m_len;
	EVP_PKEY *priv;
} ed_source;

static void
ed_source_init(ed_source *s)
{
	pg_pgp_ring ring;
	const pg_pgp_key *k;

	s->b = load("ed25519-cv25519.gpg");
	parse_ok(&s->b, &ring);
	k = &ring.keys[0];
	pg_assert_int_eq(unlock(k, NULL, &s->priv), PG_PGP_OK);
	s->pub = k->pub - 6;
	s->pub_len = k->pub_len + 6;
	s->m = k->sec + 1;
	s->m_len = k->sec_len - 3;
	pg_pgp_ring_clear(&ring);
}

static void
test_protections(void)
{
	static const protection ok[] = {
		{ 4, 254, 9, 3, 8, 0, "aes256 sha256" },
		{ 4, 254, 7, 3, 2, 0, "aes128 sha1" },
		{ 4, 254, 9, 1, 8, 0, "salted" },
		{ 4, 254, 7, 0, 2, 0, "simple" },
		{ 4, 255, 9, 3, 8, 0, "two-octet checksum" },
	};
	ed_source s;
	uint8_t packet[2048];
	pg_pgp_ring ring;
	char why[200];

	ed_source_init(&s);
	for (size_t i = 0; i < PG_N_ELEMENTS(ok); i++) {
		size_t len = protect(&ok[i], s.pub, s.pub_len, s.m, s.m_len, packet);
		EVP_PKEY *priv = NULL;

		pg_pgp_ring_init(&ring);
		pg_assert_int_eq(pg_pgp_parse(packet, len, &ring, why, sizeof(why)), PG_PGP_OK);
		pg_assert(pg_pgp_protected(&ring.keys[0]));
		pg_assert_int_eq(unlock(&ring.keys[0], ok[i].pass, &priv), PG_PGP_OK);
		pg_assert_int_eq(EVP_PKEY_eq(priv, s.priv), 1);
		EVP_PKEY_free(priv);
		/* A wrong passphrase fails the check value (usage 254) or,
		 * almost always, the checksum or the key (usage 255). */
		pg_assert(unlock(&ring.keys[0], "not it", &priv) != PG_PGP_OK);
		pg_assert_null(priv);
		pg_pgp_ring_clear(&ring);
	}
	EVP_PKEY_free(s.priv);
	free(s.b.data);
}

static void
test_gnu_stubs(void)
{
	static const protection stubs[] = {
		{ 4, 254, 7, 101, 0, 1, "x" },   /* gnu-dummy */
		{ 4, 254, 7, 101, 0, 2, "x" },   /* divert-to-card */
	};
	ed_source s;
	uint8_t packet[2048];
	pg_pgp_ring ring;

	ed_source_init(&s);
	for (size_t i = 0; i < PG_N_ELEMENTS(stubs); i++) {
		size_t len = protect(&stubs[i], s.pub, s.pub_len, NULL, 0, packet);
		blob b = { packet, len };
		parse_ok(&b, &ring);
		assert_refused(&ring.keys[0], "x", PG_PGP_ERR_NO_SECRET);
		pg_pgp_ring_clear(&ring);
	}
	EVP_PKEY_free(s.priv);
	free(s.b.data);
}

/* A version 6 Ed25519 key (RFC 9580 5.5.2): made from the test's own
 * key, fingerprinted with SHA-256, unprotected and protected. */
static void
test_v6(void)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	uint8_t pub[42] = { 6, 0x65, 0x00, 0x00, 0x00, PG_PGP_ED25519, 0, 0, 0, 32 };
	uint8_t seed[32], packet[2048], want[32];
	size_t len = 32, n;
	pg_pgp_ring ring;
	char why[200];
	EVP_PKEY *priv = NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const uint8_t head[5] = { 0x9b, 0, 0, 0, 42 };
	protection plain = { 6, 0, 0, 0, 0, 0, NULL }, locked = { 6, 254, 9, 3, 8, 0, "six" };

	pg_assert(EVP_PKEY_get_raw_public_key(key, pub + 10, &len));
	len = 32;
	pg_assert(EVP_PKEY_get_raw_private_key(key, seed, &len));
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, head, 5);
	EVP_DigestUpdate(ctx, pub, 42);
	EVP_DigestFinal_ex(ctx, want, NULL);
	EVP_MD_CTX_free(ctx);

	n = protect(&plain, pub, sizeof(pub), seed, 32, packet);
	pg_pgp_ring_init(&ring);
	pg_assert_int_eq(pg_pgp_parse(packet, n, &ring, why, sizeof(why)), PG_PGP_OK);
	pg_assert_int_eq(ring.keys[0].version, 6);
	pg_assert_mem_eq(ring.keys[0].fpr, ring.keys[0].fpr_len, want, 32);
	pg_assert_int_eq(unlock(&ring.keys[0], NULL, &priv), PG_PGP_OK);
	pg_assert_int_eq(EVP_PKEY_eq(priv, key), 1);
	EVP_PKEY_free(priv);
	pg_pgp_ring_clear(&ring);

	n = protect(&locked, pub, sizeof(pub), seed, 32, packet);
	pg_assert_int_eq(pg_pgp_parse(packet, n, &ring, why, sizeof(why)), PG_PGP_OK);
	pg_assert_int_eq(unlock(&ring.keys[0], "six", &priv), PG_PGP_OK);
	EVP_PKEY_free(priv);
	assert_refused(&ring.keys[0], "seven", PG_PGP_ERR_PASSPHRASE);
	pg_pgp_ring_clear(&ring);

	/* LibrePGP's version 5, framed alike: known by its SHA-256
	 * fingerprint (prefix 0x9a), not read. */
	pub[0] = 5;
	ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, "\x9a\x00\x00\x00\x2a", 5);
	EVP_DigestUpdate(ctx, pub, 42);
	EVP_DigestFinal_ex(ctx, want, NULL);
	EVP_MD_CTX_free(ctx);
	n = protect(&plain, pub, sizeof(pub), seed, 32, packet);
	pg_assert_int_eq(pg_pgp_parse(packet, n, &ring, why, sizeof(why)), PG_PGP_OK);
	pg_assert_mem_eq(ring.keys[0].fpr, ring.keys[0].fpr_len, want, 32);
	pg_assert_null(ring.keys[0].public_key);
	assert_refused(&ring.keys[0], NULL, PG_PGP_ERR_UNSUPPORTED);
	pg_pgp_ring_clear(&ring);
	pub[0] = 6;

	/* The material's length octets must match the material. */
	pub[9] = 33;
	n = protect(&plain, pub, sizeof(pub), seed, 32, packet);
	pg_assert_int_eq(parse_result(packet, n), PG_PGP_ERR_FORMAT);
	EVP_PKEY_free(key);
}

int
main(int argc, char **argv)
{
	pg_test("gpg/rsa", test_rsa);
	pg_test("gpg/rsa-public", test_rsa_public);
	pg_test("gpg/ed25519-cv25519", test_ed25519);
	pg_test("gpg/nistp256", test_nist);
	pg_test("hostile/truncated", test_truncated);
	pg_test("hostile/wrong-checksum", test_wrong_checksum);
	pg_test("hostile/wrong-check-value", test_wrong_check_value);
	pg_test("hostile/bad-lengths", test_bad_lengths);
	pg_test("hostile/framing", test_framing);
	pg_test("hostile/s2k-limit", test_s2k_limit);
	pg_test("protected/other-ways", test_protections);
	pg_test("protected/gnu-stubs", test_gnu_stubs);
	pg_test("v6/ed25519-and-v5", test_v6);
	return pg_test_run(argc, argv);
}
