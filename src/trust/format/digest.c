/*
 * SHA-1 (FIPS 180-4 §5.1.1 padding, §6.1 computation) and MD5 (RFC 1321
 * §3). Both work on 64-byte blocks and pad the same way (a 1 bit, zeros,
 * the message length in bits as 64 bits); SHA-1 is big-endian, MD5
 * little-endian.
 */
#include "digest.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t
rol32(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

/* Word loads; on a little-endian machine memcpy plus a byte swap, which
 * compilers turn into one load and one bswap. */
static inline uint32_t
load_be32(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;
	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
#else
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
#endif
}

static inline uint32_t
load_le32(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
#else
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
#endif
}

/*
 * One SHA-1 block (§6.1.2), unrolled: instead of moving a..e down after
 * each round, each round names them in rotated order, so every round is
 * "e += ROTL5(a) + f(b, c, d) + K + W; b = ROTL30(b)". The schedule W is
 * a ring of 16 words (§6.1.3): W[t] replaces W[t-16] in place.
 * (Computing the schedule four words at a time with SSE2 was tried: more
 * instructions, not fewer.)
 */
#define SHA1_W(t)                                                          \
	((t) < 16 ? w[(t) & 15]                                                \
	          : (w[(t) & 15] = rol32(w[((t) + 13) & 15] ^ w[((t) + 8) & 15] ^ \
	                                 w[((t) + 2) & 15] ^ w[(t) & 15], 1)))
/* Ch, Parity and Maj of §4.1.1, Ch and Maj with one operation fewer. */
#define SHA1_CH(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define SHA1_PARITY(b, c, d) ((b) ^ (c) ^ (d))
#define SHA1_MAJ(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))
#define SHA1_ROUND(f, k, t, a, b, c, d, e)                                 \
	do {                                                                   \
		e += rol32(a, 5) + f(b, c, d) + (uint32_t)(k) + SHA1_W(t);         \
		b = rol32(b, 30);                                                  \
	} while (0)
#define SHA1_FIVE(f, k, t)                                                 \
	do {                                                                   \
		SHA1_ROUND(f, k, (t), a, b, c, d, e);                              \
		SHA1_ROUND(f, k, (t) + 1, e, a, b, c, d);                          \
		SHA1_ROUND(f, k, (t) + 2, d, e, a, b, c);                          \
		SHA1_ROUND(f, k, (t) + 3, c, d, e, a, b);                          \
		SHA1_ROUND(f, k, (t) + 4, b, c, d, e, a);                          \
	} while (0)
#define SHA1_TWENTY(f, k, t)                                               \
	do {                                                                   \
		SHA1_FIVE(f, k, (t));                                              \
		SHA1_FIVE(f, k, (t) + 5);                                          \
		SHA1_FIVE(f, k, (t) + 10);                                         \
		SHA1_FIVE(f, k, (t) + 15);                                         \
	} while (0)

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++)
		w[i] = load_be32(p + 4 * i);
	/* The constants K of §4.2.1, one per twenty rounds. */
	SHA1_TWENTY(SHA1_CH, 0x5a827999, 0);
	SHA1_TWENTY(SHA1_PARITY, 0x6ed9eba1, 20);
	SHA1_TWENTY(SHA1_MAJ, 0x8f1bbcdc, 40);
	SHA1_TWENTY(SHA1_PARITY, 0xca62c1d6, 60);
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* RFC 1321 §3.4: T[i] is the integer part of 2^32 * |sin(i + 1)|. */
static const uint32_t md5_t[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
	0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
	0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
	0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
	0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/*
 * One MD5 block: four rounds of sixteen steps (§3.4), unrolled like
 * SHA-1: each step is "a = b + ROTL_s(a + f(b, c, d) + X[k] + T[i])"
 * with a, b, c, d named in rotated order.
 */
#define MD5_F(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define MD5_G(b, c, d) ((c) ^ ((d) & ((b) ^ (c))))
#define MD5_H(b, c, d) ((b) ^ (c) ^ (d))
#define MD5_I(b, c, d) ((c) ^ ((b) | ~(d)))
#define MD5_STEP(f, a, b, c, d, k, s, i) \
	(a = (b) + rol32((a) + f(b, c, d) + x[k] + md5_t[i], (s)))
#define MD5_FOUR(f, k0, k1, k2, k3, s0, s1, s2, s3, i)                     \
	do {                                                                   \
		MD5_STEP(f, a, b, c, d, k0, s0, (i));                              \
		MD5_STEP(f, d, a, b, c, k1, s1, (i) + 1);                          \
		MD5_STEP(f, c, d, a, b, k2, s2, (i) + 2);                          \
		MD5_STEP(f, b, c, d, a, k3, s3, (i) + 3);                          \
	} while (0)

static void
md5_block(uint32_t h[4], const unsigned char *p)
{
	uint32_t x[16], a = h[0], b = h[1], c = h[2], d = h[3];

	for (int i = 0; i < 16; i++)
		x[i] = load_le32(p + 4 * i);
	/* Round 1: X[i]; round 2: X[(5i + 1) mod 16]; round 3: X[(3i + 5)
	 * mod 16]; round 4: X[7i mod 16]. */
	MD5_FOUR(MD5_F, 0, 1, 2, 3, 7, 12, 17, 22, 0);
	MD5_FOUR(MD5_F, 4, 5, 6, 7, 7, 12, 17, 22, 4);
	MD5_FOUR(MD5_F, 8, 9, 10, 11, 7, 12, 17, 22, 8);
	MD5_FOUR(MD5_F, 12, 13, 14, 15, 7, 12, 17, 22, 12);
	MD5_FOUR(MD5_G, 1, 6, 11, 0, 5, 9, 14, 20, 16);
	MD5_FOUR(MD5_G, 5, 10, 15, 4, 5, 9, 14, 20, 20);
	MD5_FOUR(MD5_G, 9, 14, 3, 8, 5, 9, 14, 20, 24);
	MD5_FOUR(MD5_G, 13, 2, 7, 12, 5, 9, 14, 20, 28);
	MD5_FOUR(MD5_H, 5, 8, 11, 14, 4, 11, 16, 23, 32);
	MD5_FOUR(MD5_H, 1, 4, 7, 10, 4, 11, 16, 23, 36);
	MD5_FOUR(MD5_H, 13, 0, 3, 6, 4, 11, 16, 23, 40);
	MD5_FOUR(MD5_H, 9, 12, 15, 2, 4, 11, 16, 23, 44);
	MD5_FOUR(MD5_I, 0, 7, 14, 5, 6, 10, 15, 21, 48);
	MD5_FOUR(MD5_I, 12, 3, 10, 1, 6, 10, 15, 21, 52);
	MD5_FOUR(MD5_I, 8, 15, 6, 13, 6, 10, 15, 21, 56);
	MD5_FOUR(MD5_I, 4, 11, 2, 9, 6, 10, 15, 21, 60);
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

/*
 * Feeds every whole block of the message, then the padded tail: the
 * rest, a 0x80 byte, zeros up to 8 bytes before a block end, and the
 * length in bits (§5.1.1; RFC 1321 §3.1-3.2).
 */
static inline void
run(uint32_t *h, void (*block)(uint32_t *, const unsigned char *),
    const unsigned char *p, size_t len, bool big_endian)
{
	unsigned char tail[128];
	size_t whole = len & ~(size_t)63, rest = len - whole, n;
	uint64_t bits = (uint64_t)len << 3;

	for (size_t off = 0; off < whole; off += 64)
		block(h, p + off);
	if (rest)
		memcpy(tail, p + whole, rest);
	tail[rest] = 0x80;
	n = rest < 56 ? 64 : 128;
	memset(tail + rest + 1, 0, n - rest - 1 - 8);
	for (int i = 0; i < 8; i++)
		tail[n - 8 + i] = (unsigned char)(big_endian ? bits >> (56 - 8 * i) : bits >> (8 * i));
	block(h, tail);
	if (n == 128)
		block(h, tail + 64);
}

void
pg_sha1(const void *data, size_t len, unsigned char out[static PG_SHA1_LEN])
{
	uint32_t h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };

	run(h, sha1_block, data, len, true);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}

void
pg_md5(const void *data, size_t len, unsigned char out[static PG_MD5_LEN])
{
	uint32_t h[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };

	run(h, md5_block, data, len, false);
	for (int i = 0; i < 4; i++) {
		out[4 * i] = (unsigned char)h[i];
		out[4 * i + 1] = (unsigned char)(h[i] >> 8);
		out[4 * i + 2] = (unsigned char)(h[i] >> 16);
		out[4 * i + 3] = (unsigned char)(h[i] >> 24);
	}
}
