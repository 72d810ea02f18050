/*
 * SHA-1 and MD5 of the trust module: the published test vectors (FIPS
 * 180-4 examples, RFC 1321 §A.5), then every length across the padding
 * boundaries compared with libcrypto.
 */
#include "config.h"

#include "digest.h"
#include "harness.h"

#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void
check_sha1(const char *msg, size_t len, const char *want)
{
	unsigned char d[PG_SHA1_LEN];
	char got[2 * PG_SHA1_LEN + 1];

	pg_sha1(msg, len, d);
	hex(d, sizeof(d), got);
	pg_assert_str_eq(got, want);
}

static void
check_md5(const char *msg, const char *want)
{
	unsigned char d[PG_MD5_LEN];
	char got[2 * PG_MD5_LEN + 1];

	pg_md5(msg, strlen(msg), d);
	hex(d, sizeof(d), got);
	pg_assert_str_eq(got, want);
}

static void
test_sha1_vectors(void)
{
	check_sha1("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	check_sha1("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
	check_sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	           "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	check_sha1(NULL, 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

static void
test_sha1_million(void)
{
	char *a = malloc(1000000);

	pg_assert(a != NULL);
	memset(a, 'a', 1000000);
	check_sha1(a, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	free(a);
}

static void
test_md5_vectors(void)
{
	check_md5("", "d41d8cd98f00b204e9800998ecf8427e");
	check_md5("a", "0cc175b9c0f1b6a831c399e269772661");
	check_md5("abc", "900150983cd24fb0d6963f7d28e17f72");
	check_md5("message digest", "f96b697d7cb7938d525a2f31aaf161d0");
	check_md5("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b");
	check_md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	          "d174ab98d277d9f5a5611c2c9f419d9f");
	check_md5("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
	          "57edf4a22be3c955ac49da2e2107b67a");
}

/* Every length 0..1100 (all paddings, one and two tail blocks) and a few
 * large inputs, against libcrypto's implementations. */
static void
test_against_libcrypto(void)
{
	size_t max = 70000;
	unsigned char *buf = malloc(max), ours[PG_SHA1_LEN], theirs[EVP_MAX_MD_SIZE];
	unsigned int n;
	uint32_t x = 2463534242u;

	pg_assert(buf != NULL);
	for (size_t i = 0; i < max; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
	for (size_t len = 0; len <= max; len = len < 1100 ? len + 1 : len * 3 + 7) {
		pg_sha1(buf, len, ours);
		pg_assert(EVP_Digest(buf, len, theirs, &n, EVP_sha1(), NULL) == 1);
		pg_assert_mem_eq(ours, PG_SHA1_LEN, theirs, n);
		pg_md5(buf, len, ours);
		pg_assert(EVP_Digest(buf, len, theirs, &n, EVP_md5(), NULL) == 1);
		pg_assert_mem_eq(ours, PG_MD5_LEN, theirs, n);
	}
	free(buf);
}

int
main(int argc, char **argv)
{
	pg_test("digest/sha1-vectors", test_sha1_vectors);
	pg_test("digest/sha1-million-a", test_sha1_million);
	pg_test("digest/md5-rfc1321", test_md5_vectors);
	pg_test("digest/against-libcrypto", test_against_libcrypto);
	return pg_test_run(argc, argv);
}
