/*
 * The trust module's base64 decoder (RFC 4648 §10 vectors, white space,
 * padding and bad characters, round trips with the encoder at every
 * length) and CK_DATE text from certificate times.
 */
#include "config.h"

#include "der.h"
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
check(const char *in, const char *want)
{
	unsigned char out[256];
	size_t n = pg_base64_decode_to((const unsigned char *)in, strlen(in), out);

	pg_assert(n != SIZE_MAX);
	pg_assert_mem_eq(out, n, want, strlen(want));
}

static void
bad(const char *in)
{
	unsigned char out[256];

	if (pg_base64_decode_to((const unsigned char *)in, strlen(in), out) != SIZE_MAX)
		pg_test_fail(__FILE__, __LINE__, "accepted \"%s\"", in);
}

static void
test_vectors(void)
{
	check("", "");
	check("Zg==", "f");
	check("Zm8=", "fo");
	check("Zm9v", "foo");
	check("Zm9vYg==", "foob");
	check("Zm9vYmE=", "fooba");
	check("Zm9vYmFy", "foobar");
}

static void
test_spaces(void)
{
	/* Line ends anywhere, also inside a quantum and before padding. */
	check("Zm9v\nYmFy\n", "foobar");
	check("Zm\r\n9vY mF\ty", "foobar");
	check("Zm9vYg\n==\n", "foob");
	check("  Zm9vYmE=  ", "fooba");
}

static void
test_bad(void)
{
	bad("Zm9v!mFy");
	bad("Zm9vY");          /* one digit left over */
	bad("Zm9vYg=");        /* padding short */
	bad("Zm9vYg===");      /* padding long */
	bad("Zg==Zg==");       /* digits after padding */
	bad("=Zm9v");
	bad("Zm9\x80vYmFy");
	bad("Zm-v");           /* base64url is not PEM */
}

/* Every length up to 300 and every alignment of line breaks. */
static void
test_round_trip(void)
{
	unsigned char data[300], out[400];
	uint32_t x = 88172645u;

	for (size_t i = 0; i < sizeof(data); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (unsigned char)x;
	}
	for (size_t len = 0; len <= sizeof(data); len++) {
		pg_buf b;
		size_t n;
		pg_buf_init(&b);
		pg_base64_encode_lines(&b, data, len);
		pg_assert(!b.failed);
		pg_assert(pg_base64_max(b.len) <= sizeof(out));
		n = pg_base64_decode_to(b.data, b.len, out);
		pg_assert_mem_eq(out, n, data, len);
		pg_buf_clear(&b);
	}
}

static void
test_dates(void)
{
	char out[8];
	pg_span utc = { (const unsigned char *)"700101000000Z", 13 };
	pg_span utc2 = { (const unsigned char *)"491231235959Z", 13 };
	pg_span gen = { (const unsigned char *)"21260101000000Z", 15 };
	pg_span junk = { (const unsigned char *)"7001x1000000Z", 13 };

	/* RFC 5280 §4.1.2.5.1: UTCTime 50-99 is 19xx, 00-49 is 20xx. */
	pg_assert(pg_der_time_date(&utc, 0x17, out));
	pg_assert_mem_eq(out, 8, "19700101", 8);
	pg_assert(pg_der_time_date(&utc2, 0x17, out));
	pg_assert_mem_eq(out, 8, "20491231", 8);
	pg_assert(pg_der_time_date(&gen, 0x18, out));
	pg_assert_mem_eq(out, 8, "21260101", 8);
	pg_assert(!pg_der_time_date(&junk, 0x17, out));
}

int
main(int argc, char **argv)
{
	pg_test("base64/rfc4648", test_vectors);
	pg_test("base64/spaces", test_spaces);
	pg_test("base64/bad", test_bad);
	pg_test("base64/round-trip", test_round_trip);
	pg_test("der/dates", test_dates);
	return pg_test_run(argc, argv);
}
