/*
 * OpenPGP packets and public key material (openpgp.h): the packet
 * framing of RFC 9580 §4.2 (both header formats), key packets of
 * versions 4 and 6 (§5.5.2), the public key material of each algorithm
 * (§5.5.5), fingerprints (§5.5.4) and GnuPG's keygrip of RSA keys.
 */
#include "config.h"

#include "openpgp.h"
#include "be-reader.h"
#include "keys.h"


#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Packet tags (RFC 9580 §5). */
enum { TAG_SECRET_KEY = 5, TAG_PUBLIC_KEY = 6, TAG_SECRET_SUBKEY = 7, TAG_USER_ID = 13,
       TAG_PUBLIC_SUBKEY = 14 };

#define MAX_UID 1024

pg_pgp_result
pg_pgp_fail(char *why, size_t size, pg_pgp_result rv, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return rv;
}

const char *
pg_pgp_algo_name(unsigned algo)
{
	switch (algo) {
	case PG_PGP_RSA:
	case PG_PGP_RSA_E:
	case PG_PGP_RSA_S: return "RSA";
	case PG_PGP_ELGAMAL: return "Elgamal";
	case PG_PGP_DSA: return "DSA";
	case PG_PGP_ECDH: return "ECDH";
	case PG_PGP_ECDSA: return "ECDSA";
	case PG_PGP_EDDSA_LEGACY: return "EdDSA";
	case PG_PGP_X25519: return "X25519";
	case PG_PGP_X448: return "X448";
	case PG_PGP_ED25519: return "Ed25519";
	case PG_PGP_ED448: return "Ed448";
	default: return "unknown";
	}
}

/* ---------------------------------------------------------------------------
 * Curves (RFC 9580 §9.2), by the OID octets a key packet carries
 */

typedef struct {
	unsigned char oid[10];
	size_t len;
	const char *name;            /* libcrypto's */
	bool store;                  /* a curve the key store holds */
} curve_info;

static const curve_info curves[] = {
	{ { 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 }, 8, "prime256v1", true },
	{ { 0x2b, 0x81, 0x04, 0x00, 0x22 }, 5, "secp384r1", true },
	{ { 0x2b, 0x81, 0x04, 0x00, 0x23 }, 5, "secp521r1", true },
	{ { 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01 }, 9, "ED25519", true },
	{ { 0x2b, 0x65, 0x70 }, 3, "ED25519", true },
	{ { 0x2b, 0x65, 0x71 }, 3, "ED448", true },
	{ { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01 }, 10, "X25519", false },
	{ { 0x2b, 0x65, 0x6e }, 3, "X25519", false },
	{ { 0x2b, 0x65, 0x6f }, 3, "X448", false },
	{ { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x07 }, 9, "brainpoolP256r1", false },
	{ { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x0b }, 9, "brainpoolP384r1", false },
	{ { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x0d }, 9, "brainpoolP512r1", false },
};

static const curve_info *
find_curve(const uint8_t *oid, size_t len)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(curves); i++)
		if (curves[i].len == len && memcmp(curves[i].oid, oid, len) == 0)
			return &curves[i];
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Public key material
 */

/* An MPI (RFC 9580 §3.2): its octets, leading zero octets removed. */
static const uint8_t *
read_mpi(pg_be_reader *r, size_t *len)
{
	uint16_t bits = pg_be_u16(r);
	const uint8_t *p = pg_be_bytes(r, ((size_t)bits + 7) / 8);

	*len = ((size_t)bits + 7) / 8;
	while (p != NULL && *len > 0 && p[0] == 0) {
		p++;
		(*len)--;
	}
	return p;
}

/* A curve OID field: one length octet (neither 0 nor 255), the OID. */
static const uint8_t *
read_oid(pg_be_reader *r, size_t *len)
{
	const uint8_t *n = pg_be_bytes(r, 1);

	if (n != NULL && (n[0] == 0 || n[0] == 0xff))
		r->failed = true;
	*len = n != NULL ? n[0] : 0;
	return n != NULL ? pg_be_bytes(r, *len) : NULL;
}

static EVP_PKEY *
ec_public(const char *group, const uint8_t *point, size_t len)
{
	/* Only the uncompressed form (0x04 | x | y), as §9.2 requires. */
	return len > 1 && point[0] == 0x04 ? pg_key_ec(group, point, len, NULL) : NULL;
}

/* An Edwards public key: raw octets, or in an MPI with the 0x40 prefix
 * of the native point format (§11.2.1 of RFC 9580's legacy EdDSA). */
static EVP_PKEY *
ed_public(const char *name, const uint8_t *p, size_t len, bool prefixed)
{
	size_t want = strcmp(name, "ED25519") == 0 ? 32 : 57;

	if (prefixed) {
		if (len != want + 1 || p[0] != 0x40)
			return NULL;
		p++;
		len--;
	}
	if (len != want)
		return NULL;
	return EVP_PKEY_new_raw_public_key_ex(NULL, name, NULL, p, len);
}

/* What reading key material found. */
enum { MATERIAL_OK = 0, MATERIAL_BAD = -1, MATERIAL_UNKNOWN = -2 };

/* The material of ECDH, ECDSA and legacy EdDSA keys: a curve OID and a
 * point (and ECDH's KDF parameters). */
static int
read_ec_material(pg_be_reader *r, pg_pgp_key *key)
{
	const uint8_t *a, *oid;
	size_t a_len, oid_len;
	const curve_info *c;

	oid = read_oid(r, &oid_len);
	a = read_mpi(r, &a_len);
	/* ECDH's KDF parameters: a length octet, then reserved 1,
	 * hash, cipher (RFC 9580 5.5.5.6). */
	if (key->algo == PG_PGP_ECDH) {
		const uint8_t *kdf = pg_be_bytes(r, 1);
		if (kdf != NULL && (kdf[0] < 3 || kdf[0] == 0xff))
			r->failed = true;
		pg_be_bytes(r, kdf ? kdf[0] : 0);
	}
	if (r->failed)
		return MATERIAL_BAD;
	c = find_curve(oid, oid_len);
	key->curve = c ? c->name : NULL;
	if (c == NULL || !c->store) {
		key->unsupported = c && strcmp(c->name, "X25519") == 0
		                   ? "the store holds no X25519 (Curve25519 encryption) keys"
		                   : "a curve the store does not hold";
		return MATERIAL_OK;
	}
	/* EdDSA on Edwards curves only, ECDSA and ECDH on the others. */
	if ((strncmp(c->name, "ED", 2) == 0) != (key->algo == PG_PGP_EDDSA_LEGACY))
		return MATERIAL_BAD;
	key->public_key = key->algo == PG_PGP_EDDSA_LEGACY ? ed_public(c->name, a, a_len, true)
	                                                   : ec_public(c->name, a, a_len);
	key->unsupported = key->public_key ? NULL : "a public point libcrypto does not accept";
	return MATERIAL_OK;
}

/*
 * Reads the public key material of key->algo from r, setting the key's
 * curve and public key (or why not). MATERIAL_BAD when it is malformed,
 * MATERIAL_UNKNOWN for an algorithm whose material we cannot delimit.
 */
static int
read_material(pg_be_reader *r, pg_pgp_key *key)
{
	const uint8_t *a, *b;
	size_t a_len, b_len;

	switch (key->algo) {
	case PG_PGP_RSA:
	case PG_PGP_RSA_E:
	case PG_PGP_RSA_S:
		a = read_mpi(r, &a_len);
		b = read_mpi(r, &b_len);
		if (r->failed)
			return MATERIAL_BAD;
		key->public_key = a_len > 0 && b_len > 0 ? pg_key_rsa_public(a, a_len, b, b_len) : NULL;
		key->unsupported = key->public_key ? NULL : "an RSA key libcrypto does not accept";
		return MATERIAL_OK;
	case PG_PGP_ELGAMAL:
	case PG_PGP_DSA:
		for (int i = key->algo == PG_PGP_DSA ? 4 : 3; i > 0; i--)
			read_mpi(r, &a_len);
		key->unsupported = "the store holds RSA, EC and Edwards keys only";
		return r->failed ? MATERIAL_BAD : MATERIAL_OK;
	case PG_PGP_ECDH:
	case PG_PGP_ECDSA:
	case PG_PGP_EDDSA_LEGACY:
		return read_ec_material(r, key);
	case PG_PGP_X25519:
	case PG_PGP_X448:
		pg_be_bytes(r, key->algo == PG_PGP_X25519 ? 32 : 56);
		key->curve = key->algo == PG_PGP_X25519 ? "X25519" : "X448";
		key->unsupported = "the store holds no X25519 or X448 (encryption) keys";
		return r->failed ? MATERIAL_BAD : MATERIAL_OK;
	case PG_PGP_ED25519:
	case PG_PGP_ED448:
		key->curve = key->algo == PG_PGP_ED25519 ? "ED25519" : "ED448";
		a_len = key->algo == PG_PGP_ED25519 ? 32 : 57;
		a = pg_be_bytes(r, a_len);
		if (a == NULL)
			return MATERIAL_BAD;
		key->public_key = ed_public(key->curve, a, a_len, false);
		key->unsupported = key->public_key ? NULL : "a public key libcrypto does not accept";
		return MATERIAL_OK;
	default:
		key->unsupported = "an unknown public key algorithm";
		return MATERIAL_UNKNOWN;
	}
}

/* ---------------------------------------------------------------------------
 * Key packets
 */

/* The fingerprint of the public part body[0 .. len) (§5.5.4; version 5
 * as LibrePGP defines it). */
static bool
fingerprint(pg_pgp_key *key, const uint8_t *body, size_t len)
{
	uint8_t head[5];
	size_t head_len;
	unsigned int n = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool v6 = key->version >= 5;
	bool ok;

	if (v6) {
		head[0] = key->version == 5 ? 0x9a : 0x9b;
		head[1] = (uint8_t)(len >> 24);
		head[2] = (uint8_t)(len >> 16);
		head[3] = (uint8_t)(len >> 8);
		head[4] = (uint8_t)len;
		head_len = 5;
	} else {
		head[0] = 0x99;
		head[1] = (uint8_t)(len >> 8);
		head[2] = (uint8_t)len;
		head_len = 3;
	}
	ok = ctx != NULL && (v6 || len <= 0xffff) &&
	     EVP_DigestInit_ex(ctx, v6 ? EVP_sha256() : EVP_sha1(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, head, head_len) == 1 && EVP_DigestUpdate(ctx, body, len) == 1 &&
	     EVP_DigestFinal_ex(ctx, key->fpr, &n) == 1;
	EVP_MD_CTX_free(ctx);
	key->fpr_len = ok ? n : 0;
	return ok;
}

/* A key packet's body into key; the result says why it was refused. */
static pg_pgp_result
read_key(const uint8_t *body, size_t len, pg_pgp_key *key, char *why, size_t size)
{
	pg_be_reader r = { body, len, 0, false };
	const uint8_t *v = pg_be_bytes(&r, 1);
	uint32_t material = 0;
	size_t start;
	int got;

	key->version = v ? v[0] : 0;
	if (v == NULL)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "an empty key packet");
	if (key->version < 4 || key->version > 6)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED,
		                   "a version %u key packet (4 and 6 are read)", key->version);
	key->created = pg_be_u32(&r);
	v = pg_be_bytes(&r, 1);
	key->algo = v ? v[0] : 0;
	if (key->version >= 5)
		material = pg_be_u32(&r);
	start = r.off;
	if (r.failed)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated key packet");
	got = read_material(&r, key);
	if (got == MATERIAL_BAD)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "truncated or malformed %s key material",
		                   pg_pgp_algo_name(key->algo));
	if (got == MATERIAL_UNKNOWN) {
		/* Kept, unusable: its length is known for version 6 keys and
		 * public packets, which gives the fingerprint. */
		if (key->version >= 5 && pg_be_bytes(&r, material) == NULL)
			return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a truncated key packet");
		if (key->version == 4 && !key->secret)
			r.off = len;
		if (key->version == 4 && key->secret)
			return PG_PGP_OK;
	}
	if (key->version >= 5 && r.off - start != material)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "the key material's length is wrong");
	/* LibrePGP's version 5 (GnuPG 2.4): framed as version 6, its secret
	 * part another way; known by its fingerprint, not read. */
	if (key->version == 5) {
		EVP_PKEY_free(key->public_key);
		key->public_key = NULL;
		key->unsupported = "a version 5 (LibrePGP) key, which is not read";
	}
	key->pub = body + start;
	key->pub_len = r.off - start;
	if (!fingerprint(key, body, r.off))
		return pg_pgp_fail(why, size, PG_PGP_ERR_NOMEM, "cannot compute a fingerprint");
	if (key->secret) {
		key->sec = body + r.off;
		key->sec_len = len - r.off;
		if (key->sec_len == 0)
			return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a secret key packet without secrets");
	} else if (r.off != len) {
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "data after a public key");
	}
	return PG_PGP_OK;
}

/* A User ID for messages: control characters become '?'. */
static char *
uid_text(const uint8_t *p, size_t len)
{
	char *text = (char *)pg_memdup0(p, len > MAX_UID ? MAX_UID : len);

	for (char *c = text; c != NULL && *c != 0; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return text;
}

/* ---------------------------------------------------------------------------
 * Packets
 */

/*
 * The next packet's header (§4.2): *tag and its body. Partial body
 * lengths are refused: key and User ID packets may not use them, and
 * gpg writes none in keys.
 */
static bool
next_packet(pg_be_reader *r, unsigned *tag, const uint8_t **body, size_t *len)
{
	const uint8_t *h = pg_be_bytes(r, 1), *o;
	size_t n = 0;

	if (h == NULL || !(h[0] & 0x80))
		return false;
	if (h[0] & 0x40) {
		*tag = h[0] & 0x3f;
		o = pg_be_bytes(r, 1);
		if (o == NULL || (o[0] >= 224 && o[0] < 255))
			return false;
		if (o[0] < 192)
			n = o[0];
		else if (o[0] < 224) {
			const uint8_t *o2 = pg_be_bytes(r, 1);
			n = o2 ? ((size_t)(o[0] - 192) << 8) + o2[0] + 192 : 0;
		} else
			n = pg_be_u32(r);
	} else {
		*tag = (h[0] >> 2) & 0x0f;
		switch (h[0] & 3) {
		case 0: o = pg_be_bytes(r, 1); n = o ? o[0] : 0; break;
		case 1: n = pg_be_u16(r); break;
		case 2: n = pg_be_u32(r); break;
		default: n = r->len - r->off; break;
		}
	}
	*len = n;
	*body = pg_be_bytes(r, n);
	return !r->failed;
}

void
pg_pgp_ring_init(pg_pgp_ring *ring)
{
	memset(ring, 0, sizeof(*ring));
}

void
pg_pgp_ring_clear(pg_pgp_ring *ring)
{
	if (ring == NULL)
		return;
	for (size_t i = 0; i < ring->n; i++) {
		EVP_PKEY_free(ring->keys[i].public_key);
		free(ring->keys[i].uid);
	}
	free(ring->keys);
	memset(ring, 0, sizeof(*ring));
}

/* One packet of a transferable key into ring. */
static pg_pgp_result
add_packet(pg_pgp_ring *ring, unsigned tag, const uint8_t *body, size_t len, char *why,
           size_t size)
{
	bool subkey = tag == TAG_SECRET_SUBKEY || tag == TAG_PUBLIC_SUBKEY;
	pg_pgp_key *key;
	pg_pgp_result rv;

	if (tag == TAG_USER_ID) {
		if (ring->n == 0)
			return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a User ID before any key");
		key = &ring->keys[ring->keys[ring->n - 1].primary];
		if (key->uid == NULL && (key->uid = uid_text(body, len)) == NULL)
			return pg_pgp_fail(why, size, PG_PGP_ERR_NOMEM, "out of memory");
		return PG_PGP_OK;
	}
	if (tag != TAG_SECRET_KEY && tag != TAG_PUBLIC_KEY && !subkey)
		return PG_PGP_OK;
	if (subkey && ring->n == 0)
		return pg_pgp_fail(why, size, PG_PGP_ERR_FORMAT, "a subkey before any primary key");
	if (ring->n == PG_PGP_MAX_KEYS)
		return pg_pgp_fail(why, size, PG_PGP_ERR_UNSUPPORTED, "more than %d keys", PG_PGP_MAX_KEYS);
	if (!pg_array_grow(&ring->keys, &ring->cap, ring->n, sizeof(*ring->keys), 8))
		return pg_pgp_fail(why, size, PG_PGP_ERR_NOMEM, "out of memory");
	key = &ring->keys[ring->n];
	memset(key, 0, sizeof(*key));
	key->secret = tag == TAG_SECRET_KEY || tag == TAG_SECRET_SUBKEY;
	key->subkey = subkey;
	key->primary = subkey ? ring->keys[ring->n - 1].primary : ring->n;
	ring->n++;
	rv = read_key(body, len, key, why, size);
	return rv;
}

pg_pgp_result
pg_pgp_parse(const uint8_t *data, size_t len, pg_pgp_ring *ring, char *why, size_t why_size)
{
	pg_be_reader r = { data, len, 0, false };
	const uint8_t *body;
	size_t body_len;
	unsigned tag;
	pg_pgp_result rv = PG_PGP_OK;

	if (why != NULL && why_size > 0)
		why[0] = 0;
	while (rv == PG_PGP_OK && r.off < r.len) {
		if (!next_packet(&r, &tag, &body, &body_len))
			rv = pg_pgp_fail(why, why_size, PG_PGP_ERR_FORMAT,
			                 "not OpenPGP packets, or truncated (at octet %zu)", r.off);
		else
			rv = add_packet(ring, tag, body, body_len, why, why_size);
	}
	if (rv == PG_PGP_OK && ring->n == 0)
		rv = pg_pgp_fail(why, why_size, PG_PGP_ERR_FORMAT, "no key packets");
	if (rv != PG_PGP_OK)
		pg_pgp_ring_clear(ring);
	return rv;
}

const char *
pg_pgp_uid(const pg_pgp_ring *ring, const pg_pgp_key *key)
{
	return key->primary < ring->n ? ring->keys[key->primary].uid : NULL;
}

bool
pg_pgp_protected(const pg_pgp_key *key)
{
	return key->secret && key->sec_len > 0 && key->sec[0] != 0;
}

bool
pg_pgp_keygrip(const pg_pgp_key *key, unsigned char grip[20])
{
	pg_be_reader r = { key->pub, key->pub_len, 0, false };
	const uint8_t zero = 0;
	const uint8_t *n;
	size_t n_len;
	unsigned int out = 0;
	EVP_MD_CTX *ctx;
	bool ok;

	if (key->algo != PG_PGP_RSA && key->algo != PG_PGP_RSA_E && key->algo != PG_PGP_RSA_S)
		return false;
	n = read_mpi(&r, &n_len);
	if (n == NULL || n_len == 0 || (ctx = EVP_MD_CTX_new()) == NULL)
		return false;
	ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
	     ((n[0] & 0x80) == 0 || EVP_DigestUpdate(ctx, &zero, 1) == 1) &&
	     EVP_DigestUpdate(ctx, n, n_len) == 1 && EVP_DigestFinal_ex(ctx, grip, &out) == 1 &&
	     out == 20;
	EVP_MD_CTX_free(ctx);
	return ok;
}
