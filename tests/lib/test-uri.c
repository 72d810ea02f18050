/*
 * Tests of the PKCS#11 URI library (src/lib/uri.c, src/lib/uri-match.c).
 */
#include "config.h"

#include "harness.h"

#include <p11glue/p11glue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Helpers
 */

static p11glue_uri *
parse_ok(const char *text, unsigned flags)
{
	p11glue_uri_error error;
	p11glue_uri *uri = NULL;
	int rv = p11glue_uri_parse(text, flags, &uri, &error);

	if (rv != P11GLUE_OK)
		pg_test_fail(__FILE__, __LINE__, "parse of \"%s\" failed: %s: %s", text,
		             p11glue_strerror(rv), error.detail);
	pg_assert_not_null(uri);
	return uri;
}

static void
assert_field(const p11glue_uri *uri, p11glue_uri_field field,
             const void *want, size_t want_len)
{
	size_t len = 0;
	const unsigned char *value = p11glue_uri_get(uri, field, &len);

	if (want == NULL) {
		pg_assert_null(value);
		return;
	}
	pg_assert_not_null(value);
	pg_assert_mem_eq(value, len, want, want_len);
	pg_assert_int_eq(value[len], 0);
}

#define assert_field_str(uri, field, str) assert_field(uri, field, str, strlen(str))

/* Same standard attributes, vendor attributes and unrecognized mark. */
static bool
uri_equal(const p11glue_uri *a, const p11glue_uri *b)
{
	for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
		size_t la, lb;
		const unsigned char *va = p11glue_uri_get(a, (p11glue_uri_field)f, &la);
		const unsigned char *vb = p11glue_uri_get(b, (p11glue_uri_field)f, &lb);
		if ((va == NULL) != (vb == NULL))
			return false;
		if (va && (la != lb || memcmp(va, vb, la) != 0))
			return false;
	}
	if (p11glue_uri_vendor_count(a) != p11glue_uri_vendor_count(b))
		return false;
	for (size_t i = 0; i < p11glue_uri_vendor_count(a); i++) {
		bool qa, qb;
		const char *na, *nb;
		const unsigned char *va, *vb;
		size_t la, lb;
		p11glue_uri_vendor_get(a, i, &qa, &na, &va, &la);
		p11glue_uri_vendor_get(b, i, &qb, &nb, &vb, &lb);
		if (qa != qb || strcmp(na, nb) != 0 || la != lb || memcmp(va, vb, la) != 0)
			return false;
	}
	return p11glue_uri_is_unrecognized(a) == p11glue_uri_is_unrecognized(b);
}

/* format -> parse gives the same URI, and formatting is a fixed point. */
static void
assert_round_trip(const p11glue_uri *uri)
{
	char *text = p11glue_uri_format(uri), *again;
	p11glue_uri *back;

	pg_assert_not_null(text);
	back = parse_ok(text, 0);
	if (!uri_equal(uri, back))
		pg_test_fail(__FILE__, __LINE__, "round trip changed the URI: %s", text);
	again = p11glue_uri_format(back);
	pg_assert_str_eq(again, text);
	free(again);
	free(text);
	p11glue_uri_free(back);
}

static void
assert_canonical(const char *input, unsigned flags, const char *want)
{
	p11glue_uri *uri = parse_ok(input, flags);
	char *text = p11glue_uri_format(uri);

	pg_assert_str_eq(text, want);
	free(text);
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * RFC 7512 §3 examples, byte for byte as the RFC prints them
 */

static const char *const rfc_examples[] = {
	"pkcs11:",
	"pkcs11:object=my-pubkey;type=public",
	"pkcs11:object=my-key;type=private?pin-source=file:/etc/token",
	"pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;"
	"manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;"
	"type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=?pin-source=file:/etc/token_pin",
	"pkcs11:object=my-sign-key;type=private?module-name=mypkcs11",
	"pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1",
	"pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?"
	"pin-value=the-pin",
	"pkcs11:slot-description=Sun%20Metaslot",
	"pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token%20Library;"
	"library-version=1.23",
	"pkcs11:token=My%20token%25%20created%20by%20Joe;library-version=3;"
	"id=%01%02%03%Ba%dd%Ca%fe%04%05%06",
	"pkcs11:token=A%20name%20with%20a%20substring%20%25%3B;object=my-certificate;type=cert",
	"pkcs11:token=Name%20with%20a%20small%20A%20with%20acute:%20%C3%A1;"
	"object=my-certificate;type=cert",
	"pkcs11:token=my-token;object=my-certificate;type=cert;vendor-aaa=value-a?"
	"pin-source=file:/etc/token_pin&vendor-bbb=value-b",
};

/* One decoded attribute: a standard field, or a vendor one (name set). */
typedef struct {
	int field;             /* -1 for a vendor attribute */
	const char *name;      /* vendor attributes */
	bool in_query;
	const char *value;
	size_t len;            /* 0: strlen(value) */
} rfc_attr;

#define F(f, v) { P11GLUE_URI_##f, NULL, false, v, 0 }
#define FB(f, v, n) { P11GLUE_URI_##f, NULL, false, v, n }
#define V(n, q, v) { -1, n, q, v, 0 }

/* What each example holds, attribute by attribute, and nothing else. */
static const rfc_attr rfc_values[][9] = {
	{ { 0 } },
	{ F(OBJECT, "my-pubkey"), F(TYPE, "public") },
	{ F(OBJECT, "my-key"), F(TYPE, "private"), F(PIN_SOURCE, "file:/etc/token") },
	{ F(TOKEN, "The Software PKCS#11 Softtoken"), F(MANUFACTURER, "Snake Oil, Inc."),
	  F(MODEL, "1.0"), F(OBJECT, "my-certificate"), F(TYPE, "cert"),
	  FB(ID, "\x69\x95\x3e\x5c\xf4\xbd\xec\x91", 8), FB(SERIAL, "", 0),
	  F(PIN_SOURCE, "file:/etc/token_pin") },
	{ F(OBJECT, "my-sign-key"), F(TYPE, "private"), F(MODULE_NAME, "mypkcs11") },
	{ F(OBJECT, "my-sign-key"), F(TYPE, "private"), F(MODULE_PATH, "/mnt/libmypkcs11.so.1") },
	{ F(TOKEN, "Software PKCS#11 softtoken"), F(MANUFACTURER, "Snake Oil, Inc."),
	  F(PIN_VALUE, "the-pin") },
	{ F(SLOT_DESCRIPTION, "Sun Metaslot") },
	{ F(LIBRARY_MANUFACTURER, "Snake Oil, Inc."), F(LIBRARY_DESCRIPTION, "Soft Token Library"),
	  F(LIBRARY_VERSION, "1.23") },
	{ F(TOKEN, "My token% created by Joe"), F(LIBRARY_VERSION, "3.0"),
	  FB(ID, "\x01\x02\x03\xba\xdd\xca\xfe\x04\x05\x06", 10) },
	{ F(TOKEN, "A name with a substring %;"), F(OBJECT, "my-certificate"), F(TYPE, "cert") },
	{ F(TOKEN, "Name with a small A with acute: \xc3\xa1"), F(OBJECT, "my-certificate"),
	  F(TYPE, "cert") },
	{ F(TOKEN, "my-token"), F(OBJECT, "my-certificate"), F(TYPE, "cert"),
	  V("vendor-aaa", false, "value-a"), F(PIN_SOURCE, "file:/etc/token_pin"),
	  V("vendor-bbb", true, "value-b") },
};

#undef F
#undef FB
#undef V

_Static_assert(sizeof(rfc_values) / sizeof(rfc_values[0]) ==
               sizeof(rfc_examples) / sizeof(rfc_examples[0]), "one list of values per example");

static void
test_rfc_examples_parse(void)
{
	for (size_t i = 0; i < sizeof(rfc_examples) / sizeof(rfc_examples[0]); i++) {
		p11glue_uri *uri = parse_ok(rfc_examples[i], 0);
		pg_assert(!p11glue_uri_is_unrecognized(uri));
		assert_round_trip(uri);
		p11glue_uri_free(uri);
	}
}

/* Every example decodes to exactly the attributes the RFC describes. */
static void
test_rfc_example_values(void)
{
	for (size_t i = 0; i < sizeof(rfc_examples) / sizeof(rfc_examples[0]); i++) {
		p11glue_uri *uri = parse_ok(rfc_examples[i], 0);
		bool seen[P11GLUE_URI_N_FIELDS] = { false };
		size_t vendors = 0;
		for (size_t a = 0; a < 9 && rfc_values[i][a].value != NULL; a++) {
			const rfc_attr *want = &rfc_values[i][a];
			size_t want_len = want->len ? want->len : strlen(want->value), len;
			const unsigned char *got;
			if (want->field >= 0) {
				seen[want->field] = true;
				assert_field(uri, (p11glue_uri_field)want->field, want->value, want_len);
				continue;
			}
			vendors++;
			got = p11glue_uri_vendor_find(uri, want->in_query, want->name, &len);
			if (got == NULL)
				pg_test_fail(__FILE__, __LINE__, "example %zu lacks vendor attribute %s", i,
				             want->name);
			pg_assert_mem_eq(got, len, want->value, want_len);
			pg_assert_null(p11glue_uri_vendor_find(uri, !want->in_query, want->name, NULL));
		}
		for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
			if (!seen[f])
				assert_field(uri, (p11glue_uri_field)f, NULL, 0);
		}
		pg_assert_int_eq(p11glue_uri_vendor_count(uri), vendors);
		p11glue_uri_free(uri);
	}
}

/*
 * One RFC 7512 example names a token "Name with a small A with acute: á",
 * 34 bytes, which no CK_TOKEN_INFO label (32 bytes) can hold: it is a
 * valid URI (strict and lenient) that matches no token, even one whose
 * label is its first 32 bytes. Its other attributes still match objects.
 */
static void
test_rfc_example_oversized_label(void)
{
	CK_OBJECT_CLASS cert = CKO_CERTIFICATE;
	CK_ATTRIBUTE attrs[] = {
		{ CKA_CLASS, &cert, sizeof(cert) },
		{ CKA_LABEL, "my-certificate", 14 },
	};
	CK_TOKEN_INFO token;
	p11glue_uri *uri;

	memset(&token, ' ', sizeof(token));
	memcpy(token.label, "Name with a small A with acute: \xc3\xa1", 32);
	for (unsigned flags = 0; flags <= P11GLUE_URI_LENIENT; flags += P11GLUE_URI_LENIENT) {
		uri = parse_ok(rfc_examples[11], flags);
		pg_assert(!p11glue_uri_is_unrecognized(uri));
		assert_field_str(uri, P11GLUE_URI_TOKEN, "Name with a small A with acute: \xc3\xa1");
		pg_assert(!p11glue_uri_match_token_info(uri, &token));
		pg_assert(p11glue_uri_match_attributes(uri, attrs, 2));
		p11glue_uri_free(uri);
	}
}

/* The last example's vendor attributes: kept, formatted after the
 * standard ones; the path one makes the URI match nothing, the query one
 * is ignored. */
static void
test_rfc_example_vendor(void)
{
	CK_OBJECT_CLASS cert = CKO_CERTIFICATE;
	CK_ATTRIBUTE attrs[] = {
		{ CKA_CLASS, &cert, sizeof(cert) },
		{ CKA_LABEL, "my-certificate", 14 },
	};
	CK_TOKEN_INFO token;
	p11glue_uri *uri = parse_ok(rfc_examples[12], 0);
	char *text = p11glue_uri_format(uri);

	pg_assert_str_eq(text, "pkcs11:token=my-token;object=my-certificate;type=cert;"
	                       "vendor-aaa=value-a?pin-source=file:/etc/token_pin&vendor-bbb=value-b");
	free(text);
	memset(&token, ' ', sizeof(token));
	memcpy(token.label, "my-token", 8);
	pg_assert(!p11glue_uri_match_token_info(uri, &token));
	pg_assert(!p11glue_uri_match_attributes(uri, attrs, 2));
	/* A consumer that knows vendor-aaa takes it out before matching. */
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "vendor-aaa", NULL, 0), P11GLUE_OK);
	pg_assert(p11glue_uri_match_token_info(uri, &token));
	pg_assert(p11glue_uri_match_attributes(uri, attrs, 2));
	pg_assert_not_null(p11glue_uri_vendor_find(uri, true, "vendor-bbb", NULL));
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * Every attribute
 */

static void
test_every_attribute(void)
{
	static const struct {
		const char *text;
		p11glue_uri_field field;
		const char *value;
	} cases[] = {
		{ "pkcs11:token=t", P11GLUE_URI_TOKEN, "t" },
		{ "pkcs11:manufacturer=m", P11GLUE_URI_MANUFACTURER, "m" },
		{ "pkcs11:serial=0123", P11GLUE_URI_SERIAL, "0123" },
		{ "pkcs11:model=PKCS%2315", P11GLUE_URI_MODEL, "PKCS#15" },
		{ "pkcs11:library-manufacturer=lm", P11GLUE_URI_LIBRARY_MANUFACTURER, "lm" },
		{ "pkcs11:library-description=ld", P11GLUE_URI_LIBRARY_DESCRIPTION, "ld" },
		{ "pkcs11:library-version=2.40", P11GLUE_URI_LIBRARY_VERSION, "2.40" },
		{ "pkcs11:object=o", P11GLUE_URI_OBJECT, "o" },
		{ "pkcs11:type=public", P11GLUE_URI_TYPE, "public" },
		{ "pkcs11:type=private", P11GLUE_URI_TYPE, "private" },
		{ "pkcs11:type=cert", P11GLUE_URI_TYPE, "cert" },
		{ "pkcs11:type=secret-key", P11GLUE_URI_TYPE, "secret-key" },
		{ "pkcs11:type=data", P11GLUE_URI_TYPE, "data" },
		{ "pkcs11:id=%41", P11GLUE_URI_ID, "A" },
		{ "pkcs11:slot-description=sd", P11GLUE_URI_SLOT_DESCRIPTION, "sd" },
		{ "pkcs11:slot-manufacturer=sm", P11GLUE_URI_SLOT_MANUFACTURER, "sm" },
		{ "pkcs11:slot-id=42", P11GLUE_URI_SLOT_ID, "42" },
		{ "pkcs11:?pin-source=file:/p", P11GLUE_URI_PIN_SOURCE, "file:/p" },
		{ "pkcs11:?pin-value=1234", P11GLUE_URI_PIN_VALUE, "1234" },
		{ "pkcs11:?module-name=softhsm2", P11GLUE_URI_MODULE_NAME, "softhsm2" },
		{ "pkcs11:?module-path=/usr/lib/a.so", P11GLUE_URI_MODULE_PATH, "/usr/lib/a.so" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p11glue_uri *uri = parse_ok(cases[i].text, 0);
		char *text;
		for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++)
			assert_field(uri, (p11glue_uri_field)f,
			             f == (int)cases[i].field ? cases[i].value : NULL,
			             strlen(cases[i].value));
		text = p11glue_uri_format(uri);
		pg_assert_str_eq(text, cases[i].text);
		free(text);
		p11glue_uri_free(uri);
	}
}

static void
test_field_names(void)
{
	pg_assert_str_eq(p11glue_uri_field_name(P11GLUE_URI_TOKEN), "token");
	pg_assert_str_eq(p11glue_uri_field_name(P11GLUE_URI_SLOT_ID), "slot-id");
	pg_assert_str_eq(p11glue_uri_field_name(P11GLUE_URI_MODULE_PATH), "module-path");
	pg_assert_null(p11glue_uri_field_name(P11GLUE_URI_N_FIELDS));
	pg_assert_null(p11glue_uri_field_name((p11glue_uri_field)-1));
}

static void
test_typed_getters(void)
{
	p11glue_uri *uri = parse_ok("pkcs11:library-version=7;slot-id=18446744073709551615;"
	                            "type=secret-key", 0);
	CK_VERSION version;
	CK_SLOT_ID slot;
	CK_OBJECT_CLASS klass;

	pg_assert(p11glue_uri_get_library_version(uri, &version));
	pg_assert_int_eq(version.major, 7);
	pg_assert_int_eq(version.minor, 0);
	pg_assert(p11glue_uri_get_slot_id(uri, &slot));
	pg_assert_ulong_eq(slot, 18446744073709551615UL);
	pg_assert(p11glue_uri_get_class(uri, &klass));
	pg_assert_ulong_eq(klass, CKO_SECRET_KEY);
	p11glue_uri_free(uri);

	uri = parse_ok("pkcs11:", 0);
	pg_assert(!p11glue_uri_get_library_version(uri, &version));
	pg_assert(!p11glue_uri_get_slot_id(uri, &slot));
	pg_assert(!p11glue_uri_get_class(uri, &klass));
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * Errors: every class, with its offset
 */

typedef struct {
	const char *text;
	int result;
	size_t offset;
	const char *detail_part;
} bad_case;

static const bad_case bad_cases[] = {
	/* scheme */
	{ "", P11GLUE_ERR_URI_SCHEME, 0, "pkcs11:" },
	{ "pkcs11", P11GLUE_ERR_URI_SCHEME, 0, "pkcs11:" },
	{ "http://example.org/", P11GLUE_ERR_URI_SCHEME, 0, "pkcs11:" },
	{ "pkcs12:token=a", P11GLUE_ERR_URI_SCHEME, 0, NULL },
	{ " pkcs11:", P11GLUE_ERR_URI_SCHEME, 0, NULL },
	/* syntax */
	{ "pkcs11:token", P11GLUE_ERR_URI_SYNTAX, 7, "no '='" },
	{ "pkcs11:token=a;object", P11GLUE_ERR_URI_SYNTAX, 15, "'object'" },
	{ "pkcs11:token=SSH Keys", P11GLUE_ERR_URI_SYNTAX, 16, "0x20" },
	{ "pkcs11:token=a/b", P11GLUE_ERR_URI_SYNTAX, 14, "0x2F" },
	{ "pkcs11:token=a#b", P11GLUE_ERR_URI_SYNTAX, 14, "0x23" },
	{ "pkcs11:token=a\"b", P11GLUE_ERR_URI_SYNTAX, 14, NULL },
	{ "pkcs11:token=\xc3\xa9", P11GLUE_ERR_URI_SYNTAX, 13, "0xC3" },
	{ "pkcs11:token=a;;object=b", P11GLUE_ERR_URI_SYNTAX, 15, "empty" },
	{ "pkcs11:token=a;", P11GLUE_ERR_URI_SYNTAX, 15, "empty" },
	{ "pkcs11:;token=a", P11GLUE_ERR_URI_SYNTAX, 7, "empty" },
	{ "pkcs11:?pin-value=1&&module-name=m", P11GLUE_ERR_URI_SYNTAX, 20, "empty" },
	{ "pkcs11:?module-path=/a b", P11GLUE_ERR_URI_SYNTAX, 22, NULL },
	{ "pkcs11:?module-name=a;b", P11GLUE_ERR_URI_SYNTAX, 21, "0x3B" },
	/* names the grammar does not allow (RFC 7512 §2.3: ALPHA DIGIT - _) */
	{ "pkcs11:x-a.b=a", P11GLUE_ERR_URI_NAME, 7, "'x-a.b'" },
	{ "pkcs11:=a", P11GLUE_ERR_URI_NAME, 7, NULL },
	{ "pkcs11:token=a;fo~o=1", P11GLUE_ERR_URI_NAME, 15, "'fo~o'" },
	{ "pkcs11:?a:b=1", P11GLUE_ERR_URI_NAME, 8, NULL },
	{ "pkcs11:?pin-value=1&%41=1", P11GLUE_ERR_URI_NAME, 20, NULL },
	/* bad values */
	{ "pkcs11:type=foo", P11GLUE_ERR_URI_VALUE, 12, "'type'" },
	{ "pkcs11:type=Cert", P11GLUE_ERR_URI_VALUE, 12, "'type'" },
	{ "pkcs11:type=", P11GLUE_ERR_URI_VALUE, 12, "'type'" },
	{ "pkcs11:library-version=1.x", P11GLUE_ERR_URI_VALUE, 23, "library-version" },
	{ "pkcs11:library-version=", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=1.", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=.1", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=1.2.3", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=256.0", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=1.256", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:library-version=-1", P11GLUE_ERR_URI_VALUE, 23, NULL },
	{ "pkcs11:slot-id=x", P11GLUE_ERR_URI_VALUE, 15, "slot-id" },
	{ "pkcs11:slot-id=", P11GLUE_ERR_URI_VALUE, 15, NULL },
	{ "pkcs11:slot-id=-1", P11GLUE_ERR_URI_VALUE, 15, NULL },
	{ "pkcs11:slot-id=18446744073709551616", P11GLUE_ERR_URI_VALUE, 15, NULL },
	/* percent-encoding */
	{ "pkcs11:token=%zz", P11GLUE_ERR_URI_ENCODING, 13, "hex" },
	{ "pkcs11:token=%2", P11GLUE_ERR_URI_ENCODING, 13, NULL },
	{ "pkcs11:token=%", P11GLUE_ERR_URI_ENCODING, 13, NULL },
	{ "pkcs11:token=a%g0", P11GLUE_ERR_URI_ENCODING, 14, NULL },
	{ "pkcs11:id=%0;token=a", P11GLUE_ERR_URI_ENCODING, 10, NULL },
	{ "pkcs11:?pin-value=%", P11GLUE_ERR_URI_ENCODING, 18, NULL },
	/* duplicates */
	{ "pkcs11:id=%01;id=%02", P11GLUE_ERR_URI_DUPLICATE, 14, "'id'" },
	{ "pkcs11:token=a;object=b;token=a", P11GLUE_ERR_URI_DUPLICATE, 24, "'token'" },
	{ "pkcs11:?pin-value=1&pin-value=2", P11GLUE_ERR_URI_DUPLICATE, 20, "'pin-value'" },
	{ "pkcs11:x-a=1;x-a=2", P11GLUE_ERR_URI_DUPLICATE, 13, "'x-a'" },
	{ "pkcs11:?x-a=1&x-a=1", P11GLUE_ERR_URI_DUPLICATE, 14, NULL },
	{ "pkcs11:vendor-aaa=1;vendor-aaa=1", P11GLUE_ERR_URI_DUPLICATE, 20, "'vendor-aaa'" },
};

static void
test_bad(const void *data)
{
	const bad_case *c = data;
	p11glue_uri_error error;
	p11glue_uri *uri = (p11glue_uri *)1;
	int rv = p11glue_uri_parse(c->text, 0, &uri, &error);

	pg_assert_null(uri);
	if (rv != c->result)
		pg_test_fail(__FILE__, __LINE__, "\"%s\": got %s (%s), want %s", c->text,
		             p11glue_strerror(rv), error.detail, p11glue_strerror(c->result));
	pg_assert_int_eq(error.result, c->result);
	pg_assert_int_eq(error.offset, c->offset);
	pg_assert(error.detail[0] != 0);
	if (c->detail_part && strstr(error.detail, c->detail_part) == NULL)
		pg_test_fail(__FILE__, __LINE__, "detail \"%s\" lacks \"%s\"", error.detail,
		             c->detail_part);
}

static void
test_error_never_shows_pin(void)
{
	p11glue_uri_error error;
	p11glue_uri *uri;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:?pin-value=s3cret%zz", 0, &uri, &error),
	                 P11GLUE_ERR_URI_ENCODING);
	pg_assert_null(strstr(error.detail, "s3cret"));
}

static void
test_error_optional(void)
{
	p11glue_uri *uri;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:type=x", 0, &uri, NULL),
	                 P11GLUE_ERR_URI_VALUE);
	pg_assert_null(uri);
	pg_assert_int_eq(p11glue_uri_parse(NULL, 0, &uri, NULL), P11GLUE_ERR_ARGS);
	pg_assert_int_eq(p11glue_uri_parse("pkcs11:", 0, NULL, NULL), P11GLUE_ERR_ARGS);
}

static void
test_strerror(void)
{
	static const int codes[] = {
		P11GLUE_OK, P11GLUE_ERR_NOMEM, P11GLUE_ERR_ARGS, P11GLUE_ERR_URI_SCHEME,
		P11GLUE_ERR_URI_SYNTAX, P11GLUE_ERR_URI_NAME, P11GLUE_ERR_URI_VALUE,
		P11GLUE_ERR_URI_ENCODING, P11GLUE_ERR_URI_DUPLICATE,
	};

	/* Each code has its own text. */
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		for (size_t j = 0; j < i; j++)
			pg_assert(strcmp(p11glue_strerror(codes[i]), p11glue_strerror(codes[j])) != 0);
	}
	pg_assert_str_eq(p11glue_strerror(-999), "unknown error");
}

/* ---------------------------------------------------------------------------
 * Bytes: NUL, non-ASCII
 */

static void
test_binary_values(void)
{
	static const unsigned char id[] = { 0x00, 0xff, 0x00, 0x80 };
	static const unsigned char label[] = { 'a', 0x00, 'b' };
	static const unsigned char utf8[] = { 0xc3, 0xa9, 0xfe };
	p11glue_uri *uri = parse_ok("pkcs11:token=a%00b;object=%C3%A9%fe;id=%00%FF%00%80"
	                            "?pin-value=%00", 0);
	char *text;

	assert_field(uri, P11GLUE_URI_ID, id, sizeof(id));
	assert_field(uri, P11GLUE_URI_TOKEN, label, sizeof(label));
	assert_field(uri, P11GLUE_URI_OBJECT, utf8, sizeof(utf8));
	assert_field(uri, P11GLUE_URI_PIN_VALUE, "", 1);
	text = p11glue_uri_format(uri);
	pg_assert_str_eq(text, "pkcs11:token=a%00b;object=%C3%A9%FE;id=%00%FF%00%80?pin-value=%00");
	free(text);
	assert_round_trip(uri);
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * Canonical form
 */

static void
test_canonical(void)
{
	/* Attribute order is fixed whatever the input order. */
	assert_canonical("pkcs11:slot-id=1;id=%01;type=cert;object=o;library-version=1.2;"
	                 "library-description=d;library-manufacturer=lm;model=m;serial=s;"
	                 "manufacturer=mf;token=t;slot-manufacturer=sm;slot-description=sd"
	                 "?module-path=/p&module-name=n&pin-value=v&pin-source=s",
	                 0,
	                 "pkcs11:token=t;manufacturer=mf;serial=s;model=m;library-manufacturer=lm;"
	                 "library-description=d;library-version=1.2;object=o;type=cert;id=%01;"
	                 "slot-description=sd;slot-manufacturer=sm;slot-id=1"
	                 "?pin-source=s&pin-value=v&module-name=n&module-path=/p");
	/* Unreserved characters are never escaped; escapes are upper case. */
	assert_canonical("pkcs11:object=%41%7a%30%2D%2e%5F%7E%3b%2f", 0,
	                 "pkcs11:object=Az0-._~%3B%2F");
	/* Everything else is escaped in the path ... */
	assert_canonical("pkcs11:object=a:b@c!$'()*+,=&[]", 0,
	                 "pkcs11:object=a%3Ab%40c%21%24%27%28%29%2A%2B%2C%3D%26%5B%5D");
	/* ... while the query keeps '/' and ':' readable. */
	assert_canonical("pkcs11:?pin-source=file:%2Fetc%2Fpin?x|y", 0,
	                 "pkcs11:?pin-source=file:/etc/pin%3Fx%7Cy");
	/* id is always fully encoded. */
	assert_canonical("pkcs11:id=ab", 0, "pkcs11:id=%61%62");
	/* Numbers in their canonical spelling. */
	assert_canonical("pkcs11:library-version=3", 0, "pkcs11:library-version=3.0");
	assert_canonical("pkcs11:library-version=003.010", 0, "pkcs11:library-version=3.10");
	assert_canonical("pkcs11:slot-id=007", 0, "pkcs11:slot-id=7");
	/* Vendor attributes sorted by name, path ones in the path. */
	assert_canonical("pkcs11:x-b=2;x-a=1;token=t?x-d=4&x-c=3&pin-value=p", 0,
	                 "pkcs11:token=t;x-a=1;x-b=2?pin-value=p&x-c=3&x-d=4");
	assert_canonical("pkcs11:zz=1;type=cert;aa=%2F?b=%2F&a=1", 0,
	                 "pkcs11:type=cert;aa=%2F;zz=1?a=1&b=/");
	/* Empty values stay. */
	assert_canonical("pkcs11:token=;object=", 0, "pkcs11:token=;object=");
	assert_canonical("PKCS11:token=t", 0, "pkcs11:token=t");
	assert_canonical("pkcs11:?", 0, "pkcs11:");
}

/* Deterministic pseudo-random attribute values, formatted and parsed back. */
static unsigned long rng_state = 0x9e3779b9UL;

static unsigned
rng(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng_state >> 33) % n);
}

static void
test_round_trip_random(void)
{
	static const size_t max_len[P11GLUE_URI_N_FIELDS] = {
		[P11GLUE_URI_TOKEN] = 32, [P11GLUE_URI_MANUFACTURER] = 32,
		[P11GLUE_URI_SERIAL] = 16, [P11GLUE_URI_MODEL] = 16,
		[P11GLUE_URI_LIBRARY_MANUFACTURER] = 32, [P11GLUE_URI_LIBRARY_DESCRIPTION] = 32,
		[P11GLUE_URI_SLOT_DESCRIPTION] = 64, [P11GLUE_URI_SLOT_MANUFACTURER] = 32,
		[P11GLUE_URI_OBJECT] = 80, [P11GLUE_URI_ID] = 40, [P11GLUE_URI_PIN_SOURCE] = 80,
		[P11GLUE_URI_PIN_VALUE] = 80, [P11GLUE_URI_MODULE_NAME] = 80,
		[P11GLUE_URI_MODULE_PATH] = 80,
	};
	static const char *const types[] = { "public", "private", "cert", "secret-key", "data" };
	unsigned char value[100];
	char num[32];

	for (int round = 0; round < 2000; round++) {
		p11glue_uri *uri = p11glue_uri_new();
		pg_assert_not_null(uri);
		for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
			if (rng(3) == 0)
				continue;
			if (f == P11GLUE_URI_TYPE) {
				const char *t = types[rng(5)];
				pg_assert_int_eq(p11glue_uri_set(uri, f, t, strlen(t), NULL), P11GLUE_OK);
			} else if (f == P11GLUE_URI_LIBRARY_VERSION) {
				snprintf(num, sizeof(num), "%u.%u", rng(256), rng(256));
				pg_assert_int_eq(p11glue_uri_set(uri, f, num, strlen(num), NULL), P11GLUE_OK);
			} else if (f == P11GLUE_URI_SLOT_ID) {
				snprintf(num, sizeof(num), "%u", rng(1000000));
				pg_assert_int_eq(p11glue_uri_set(uri, f, num, strlen(num), NULL), P11GLUE_OK);
			} else {
				size_t len = rng((unsigned)max_len[f] + 1);
				for (size_t i = 0; i < len; i++)
					value[i] = (unsigned char)(rng(4) ? 0x20 + rng(0x5f) : rng(256));
				pg_assert_int_eq(p11glue_uri_set(uri, f, value, len, NULL), P11GLUE_OK);
			}
		}
		if (rng(4) == 0)
			pg_assert_int_eq(p11glue_uri_set_vendor(uri, rng(2), "x-v", "a;b&c", 5), 0);
		assert_round_trip(uri);
		p11glue_uri_free(uri);
	}
}

/* ---------------------------------------------------------------------------
 * Lenient parsing
 */

static void
test_lenient(void)
{
	p11glue_uri *uri;
	p11glue_uri_error error;

	/* White space removed anywhere, tabs too (RFC 3986 Appendix C). */
	uri = parse_ok(" pk cs11:to\tken=SSH Keys;\n object=a\r\n\v\fb\t;id=%0 1?pin-\nvalue=1 2",
	               P11GLUE_URI_LENIENT);
	assert_field_str(uri, P11GLUE_URI_TOKEN, "SSHKeys");
	assert_field_str(uri, P11GLUE_URI_OBJECT, "ab");
	assert_field(uri, P11GLUE_URI_ID, "\x01", 1);
	assert_field_str(uri, P11GLUE_URI_PIN_VALUE, "12");
	pg_assert(!p11glue_uri_is_unrecognized(uri));
	p11glue_uri_free(uri);
	/* Error offsets count in the text as given. */
	pg_assert_int_eq(p11glue_uri_parse("pkcs11: token = %z z", P11GLUE_URI_LENIENT, &uri,
	                                   &error), P11GLUE_ERR_URI_ENCODING);
	pg_assert_int_eq(error.offset, 16);
	pg_assert_int_eq(p11glue_uri_parse(" \t\n", P11GLUE_URI_LENIENT, &uri, &error),
	                 P11GLUE_ERR_URI_SCHEME);
	pg_assert_int_eq(error.offset, 3);

	/* Raw non-ASCII and unescaped reserved characters taken as they are. */
	uri = parse_ok("pkcs11:token=\xc3\xa9/#\"", P11GLUE_URI_LENIENT);
	assert_field_str(uri, P11GLUE_URI_TOKEN, "\xc3\xa9/#\"");
	p11glue_uri_free(uri);

	/* Empty attributes skipped; repeats replace. */
	uri = parse_ok("pkcs11:;token=a;;token=b;?&pin-value=1&pin-value=2&", P11GLUE_URI_LENIENT);
	assert_field_str(uri, P11GLUE_URI_TOKEN, "b");
	assert_field_str(uri, P11GLUE_URI_PIN_VALUE, "2");
	p11glue_uri_free(uri);

	/* "secretkey" is secret-key. */
	uri = parse_ok("pkcs11:type=secretkey", P11GLUE_URI_LENIENT);
	assert_field_str(uri, P11GLUE_URI_TYPE, "secret-key");
	p11glue_uri_free(uri);

	/* Names from drafts that p11-kit 0.24 still accepts. */
	static const struct {
		const char *text;
		p11glue_uri_field field;
		const char *value;
	} drafts[] = {
		{ "pkcs11:object-type=cert", P11GLUE_URI_TYPE, "cert" },
		{ "pkcs11:objecttype=private", P11GLUE_URI_TYPE, "private" },
		{ "pkcs11:object-type=secretkey", P11GLUE_URI_TYPE, "secret-key" },
		{ "pkcs11:pin-source=file:/p", P11GLUE_URI_PIN_SOURCE, "file:/p" },
		{ "pkcs11:pinfile=/p", P11GLUE_URI_PIN_SOURCE, "/p" },
		{ "pkcs11:?pinfile=/p", P11GLUE_URI_PIN_SOURCE, "/p" },
		{ "pkcs11:pin-value=1234", P11GLUE_URI_PIN_VALUE, "1234" },
		{ "pkcs11:library-version=7", P11GLUE_URI_LIBRARY_VERSION, "7.0" },
	};
	for (size_t i = 0; i < sizeof(drafts) / sizeof(drafts[0]); i++) {
		uri = parse_ok(drafts[i].text, P11GLUE_URI_LENIENT);
		pg_assert(!p11glue_uri_is_unrecognized(uri));
		pg_assert_int_eq(p11glue_uri_vendor_count(uri), 0);
		assert_field_str(uri, drafts[i].field, drafts[i].value);
		p11glue_uri_free(uri);
	}
	/* Strictly, they are vendor path attributes: valid, matching nothing. */
	uri = parse_ok("pkcs11:object-type=cert;pin-source=p", 0);
	pg_assert_int_eq(p11glue_uri_vendor_count(uri), 2);
	assert_field(uri, P11GLUE_URI_TYPE, NULL, 0);
	assert_field(uri, P11GLUE_URI_PIN_SOURCE, NULL, 0);
	p11glue_uri_free(uri);

	/* Unknown query attributes are ignored; the URI still matches. */
	uri = parse_ok("pkcs11:token=a?foo=bar&f.o=1", P11GLUE_URI_LENIENT);
	pg_assert(!p11glue_uri_is_unrecognized(uri));
	p11glue_uri_free(uri);

	/* A path name outside the grammar and a type naming no class:
	 * unrecognized, matching nothing. */
	static const char *const unrecognized[] = { "pkcs11:f.o=bar", "pkcs11:type=foo" };
	for (size_t i = 0; i < sizeof(unrecognized) / sizeof(unrecognized[0]); i++) {
		uri = parse_ok(unrecognized[i], P11GLUE_URI_LENIENT);
		pg_assert(p11glue_uri_is_unrecognized(uri));
		assert_field(uri, P11GLUE_URI_TYPE, NULL, 0);
		p11glue_uri_free(uri);
	}

	/* Still errors when lenient. */
	static const struct { const char *text; int result; } still_bad[] = {
		{ "file:x", P11GLUE_ERR_URI_SCHEME },
		{ "pkcs11:token=%zz", P11GLUE_ERR_URI_ENCODING },
		{ "pkcs11:token", P11GLUE_ERR_URI_SYNTAX },
		{ "pkcs11:library-version=1.x", P11GLUE_ERR_URI_VALUE },
		{ "pkcs11:slot-id=z", P11GLUE_ERR_URI_VALUE },
	};
	for (size_t i = 0; i < sizeof(still_bad) / sizeof(still_bad[0]); i++) {
		pg_assert_int_eq(p11glue_uri_parse(still_bad[i].text, P11GLUE_URI_LENIENT, &uri, &error),
		                 still_bad[i].result);
		pg_assert_null(uri);
	}
}

/* ---------------------------------------------------------------------------
 * Vendor attributes: any name the grammar allows
 */

static void
test_vendor_any_name(void)
{
	CK_TOKEN_INFO token;
	p11glue_uri *uri = parse_ok("pkcs11:x-=b;foo=bar;token=t;Token=a;vendor-aaa=1;9_-=2"
	                            "?token=q&pin-value=p&vendor-bbb=2&module_name=m", 0);
	char *text = p11glue_uri_format(uri);

	/* Standard attributes first, then the vendor ones by name (bytes). */
	pg_assert_str_eq(text, "pkcs11:token=t;9_-=2;Token=a;foo=bar;vendor-aaa=1;x-=b"
	                       "?pin-value=p&module_name=m&token=q&vendor-bbb=2");
	free(text);
	assert_field_str(uri, P11GLUE_URI_TOKEN, "t");
	pg_assert_int_eq(p11glue_uri_vendor_count(uri), 8);
	pg_assert_mem_eq(p11glue_uri_vendor_find(uri, true, "token", NULL), 1, "q", 1);
	assert_round_trip(uri);
	memset(&token, ' ', sizeof(token));
	token.label[0] = 't';
	pg_assert(!p11glue_uri_match_token_info(uri, &token));
	p11glue_uri_free(uri);

	/* A standard name in the other component is a vendor attribute there. */
	uri = parse_ok("pkcs11:token=a;pin-value=1", 0);
	assert_field(uri, P11GLUE_URI_PIN_VALUE, NULL, 0);
	pg_assert_mem_eq(p11glue_uri_vendor_find(uri, false, "pin-value", NULL), 1, "1", 1);
	p11glue_uri_free(uri);

	/* Query vendor attributes alone do not stop a match. */
	uri = parse_ok("pkcs11:token=t?vendor-bbb=2", 0);
	pg_assert(p11glue_uri_match_token_info(uri, &token));
	p11glue_uri_free(uri);

	/* Lenient parsing keeps them the same way. */
	uri = parse_ok("pkcs11:token=t;vendor-aaa=1?vendor-bbb=2", P11GLUE_URI_LENIENT);
	pg_assert(!p11glue_uri_is_unrecognized(uri));
	pg_assert_int_eq(p11glue_uri_vendor_count(uri), 2);
	pg_assert(!p11glue_uri_match_token_info(uri, &token));
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * Values longer than their PKCS#11 field: valid, matching nothing
 */

static void
test_longer_than_field(void)
{
	static const struct {
		p11glue_uri_field field;
		size_t size;
	} fields[] = {
		{ P11GLUE_URI_TOKEN, 32 }, { P11GLUE_URI_MANUFACTURER, 32 },
		{ P11GLUE_URI_MODEL, 16 }, { P11GLUE_URI_SERIAL, 16 },
		{ P11GLUE_URI_SLOT_DESCRIPTION, 64 }, { P11GLUE_URI_SLOT_MANUFACTURER, 32 },
		{ P11GLUE_URI_LIBRARY_MANUFACTURER, 32 }, { P11GLUE_URI_LIBRARY_DESCRIPTION, 32 },
	};
	char value[80], text[200];
	CK_TOKEN_INFO token;
	CK_SLOT_INFO slot;
	CK_INFO info;

	memset(value, 'a', sizeof(value));
	/* Structures whose fields hold as many 'a's as they can. */
	memset(&token, 'a', sizeof(token));
	memset(&slot, 'a', sizeof(slot));
	memset(&info, 'a', sizeof(info));
	info.libraryVersion = (CK_VERSION){ 1, 0 };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		for (size_t len = fields[i].size; len <= fields[i].size + 1; len++) {
			const char *name = p11glue_uri_field_name(fields[i].field);
			bool fits = len <= fields[i].size, matched;
			p11glue_uri *uri;
			snprintf(text, sizeof(text), "pkcs11:%s=%.*s", name, (int)len, value);
			for (unsigned flags = 0; flags <= P11GLUE_URI_LENIENT; flags += P11GLUE_URI_LENIENT) {
				uri = parse_ok(text, flags);
				pg_assert(!p11glue_uri_is_unrecognized(uri));
				assert_field(uri, fields[i].field, value, len);
				assert_round_trip(uri);
				matched = p11glue_uri_match_token_info(uri, &token) &&
				          p11glue_uri_match_slot_info(uri, 0, &slot) &&
				          p11glue_uri_match_module_info(uri, &info);
				if (matched != fits)
					pg_test_fail(__FILE__, __LINE__, "%s: match %d, want %d", text, matched,
					             fits);
				p11glue_uri_free(uri);
			}
			/* The setter takes what the parser takes. */
			uri = p11glue_uri_new();
			pg_assert_int_eq(p11glue_uri_set(uri, fields[i].field, value, len, NULL), P11GLUE_OK);
			p11glue_uri_free(uri);
		}
	}
}

/* ---------------------------------------------------------------------------
 * Matching
 */

static void
fill_padded(CK_UTF8CHAR *field, size_t size, const char *text, char pad)
{
	memset(field, pad, size);
	memcpy(field, text, strlen(text));
}

static void
test_match_token(void)
{
	CK_TOKEN_INFO info;
	p11glue_uri *uri;

	memset(&info, 0, sizeof(info));
	fill_padded(info.label, sizeof(info.label), "My Token", ' ');
	fill_padded(info.manufacturerID, sizeof(info.manufacturerID), "Snake Oil, Inc.", ' ');
	fill_padded(info.model, sizeof(info.model), "m1", ' ');
	fill_padded(info.serialNumber, sizeof(info.serialNumber), "0123456789abcdef", ' ');

	static const struct { const char *text; bool match; } cases[] = {
		{ "pkcs11:", true },
		{ "pkcs11:token=My%20Token", true },
		{ "pkcs11:token=My%20Token%20%20", true },    /* trailing blanks are padding */
		{ "pkcs11:token=My%20Tok", false },           /* a prefix is not a match */
		{ "pkcs11:token=My%20Token%20x", false },
		{ "pkcs11:token=my%20token", false },         /* case matters */
		{ "pkcs11:token=", false },                   /* empty matches a blank label only */
		{ "pkcs11:token=My%20Token;manufacturer=Snake%20Oil,%20Inc.;model=m1;"
		  "serial=0123456789abcdef", true },
		{ "pkcs11:serial=0123456789abcde", false },
		{ "pkcs11:model=m2", false },
		{ "pkcs11:token=My%20Token;object=anything;library-version=9", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uri = parse_ok(cases[i].text, 0);
		if (p11glue_uri_match_token_info(uri, &info) != cases[i].match)
			pg_test_fail(__FILE__, __LINE__, "match of %s should be %d", cases[i].text,
			             cases[i].match);
		p11glue_uri_free(uri);
	}

	/* NUL padding, as some modules write it, is padding too. */
	fill_padded(info.label, sizeof(info.label), "My Token", '\0');
	uri = parse_ok("pkcs11:token=My%20Token", 0);
	pg_assert(p11glue_uri_match_token_info(uri, &info));
	p11glue_uri_free(uri);

	/* A full-width label with no padding at all. */
	fill_padded(info.label, sizeof(info.label), "0123456789abcdef0123456789abcdef", ' ');
	uri = parse_ok("pkcs11:token=0123456789abcdef0123456789abcdef", 0);
	pg_assert(p11glue_uri_match_token_info(uri, &info));
	p11glue_uri_free(uri);

	fill_padded(info.label, sizeof(info.label), "", ' ');
	uri = parse_ok("pkcs11:token=", 0);
	pg_assert(p11glue_uri_match_token_info(uri, &info));
	p11glue_uri_free(uri);
}

static void
test_match_module_and_slot(void)
{
	CK_INFO info;
	CK_SLOT_INFO slot;
	p11glue_uri *uri;

	memset(&info, 0, sizeof(info));
	fill_padded(info.manufacturerID, sizeof(info.manufacturerID), "OpenSC Project", ' ');
	fill_padded(info.libraryDescription, sizeof(info.libraryDescription), "OpenSC smartcard framework", ' ');
	info.libraryVersion.major = 0;
	info.libraryVersion.minor = 23;

	uri = parse_ok("pkcs11:library-manufacturer=OpenSC%20Project;library-version=0.23", 0);
	pg_assert(p11glue_uri_match_module_info(uri, &info));
	p11glue_uri_free(uri);
	uri = parse_ok("pkcs11:library-version=0", 0);
	pg_assert(!p11glue_uri_match_module_info(uri, &info));
	p11glue_uri_free(uri);
	uri = parse_ok("pkcs11:library-description=OpenSC%20smartcard%20framework", 0);
	pg_assert(p11glue_uri_match_module_info(uri, &info));
	p11glue_uri_free(uri);
	uri = parse_ok("pkcs11:library-description=OpenSC", 0);
	pg_assert(!p11glue_uri_match_module_info(uri, &info));
	p11glue_uri_free(uri);

	memset(&slot, 0, sizeof(slot));
	fill_padded(slot.slotDescription, sizeof(slot.slotDescription),
	            "SoftHSM slot ID 0x1b2c3d4e", ' ');
	fill_padded(slot.manufacturerID, sizeof(slot.manufacturerID), "SoftHSM project", ' ');
	uri = parse_ok("pkcs11:slot-description=SoftHSM%20slot%20ID%200x1b2c3d4e;"
	               "slot-manufacturer=SoftHSM%20project;slot-id=5", 0);
	pg_assert(p11glue_uri_match_slot_info(uri, 5, &slot));
	pg_assert(!p11glue_uri_match_slot_info(uri, 6, &slot));
	p11glue_uri_free(uri);
	uri = parse_ok("pkcs11:slot-manufacturer=SoftHSM", 0);
	pg_assert(!p11glue_uri_match_slot_info(uri, 5, &slot));
	p11glue_uri_free(uri);
}

static void
test_match_attributes(void)
{
	CK_OBJECT_CLASS cert = CKO_CERTIFICATE;
	unsigned char id[] = { 0x01, 0x00, 0x02 };
	CK_ATTRIBUTE attrs[] = {
		{ CKA_CLASS, &cert, sizeof(cert) },
		{ CKA_LABEL, "my cert", 7 },
		{ CKA_ID, id, sizeof(id) },
	};
	p11glue_uri *uri;

	static const struct { const char *text; bool match; } cases[] = {
		{ "pkcs11:", true },
		{ "pkcs11:type=cert", true },
		{ "pkcs11:type=private", false },
		{ "pkcs11:object=my%20cert", true },
		{ "pkcs11:object=my%20cert%20", false },  /* labels are not padded */
		{ "pkcs11:object=my", false },
		{ "pkcs11:id=%01%00%02", true },
		{ "pkcs11:id=%01%00", false },
		{ "pkcs11:id=%01%00%02;object=my%20cert;type=cert;token=whatever", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uri = parse_ok(cases[i].text, 0);
		if (p11glue_uri_match_attributes(uri, attrs, 3) != cases[i].match)
			pg_test_fail(__FILE__, __LINE__, "match of %s should be %d", cases[i].text,
			             cases[i].match);
		p11glue_uri_free(uri);
	}

	/* A named attribute missing from, or unavailable in, the template. */
	uri = parse_ok("pkcs11:id=%01%00%02", 0);
	pg_assert(!p11glue_uri_match_attributes(uri, attrs, 2));
	attrs[2].ulValueLen = CK_UNAVAILABLE_INFORMATION;
	pg_assert(!p11glue_uri_match_attributes(uri, attrs, 3));
	p11glue_uri_free(uri);
	uri = parse_ok("pkcs11:type=cert", 0);
	attrs[0].ulValueLen = 1;
	pg_assert(!p11glue_uri_match_attributes(uri, attrs, 3));
	p11glue_uri_free(uri);
}

static void
test_unrecognized_matches_nothing(void)
{
	CK_INFO info;
	CK_SLOT_INFO slot;
	CK_TOKEN_INFO token;
	static const struct { const char *text; unsigned flags; } cases[] = {
		{ "pkcs11:f.o=1", P11GLUE_URI_LENIENT },            /* unrecognized */
		{ "pkcs11:x-unknown-to-us=1;vendor-thing=2", 0 },   /* vendor path attributes */
		{ "pkcs11:vendor-thing=2", P11GLUE_URI_LENIENT },
	};

	memset(&info, ' ', sizeof(info));
	memset(&slot, ' ', sizeof(slot));
	memset(&token, ' ', sizeof(token));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p11glue_uri *uri = parse_ok(cases[i].text, cases[i].flags);
		pg_assert(!p11glue_uri_match_module_info(uri, &info));
		pg_assert(!p11glue_uri_match_slot_info(uri, 0, &slot));
		pg_assert(!p11glue_uri_match_token_info(uri, &token));
		pg_assert(!p11glue_uri_match_attributes(uri, NULL, 0));
		pg_assert(!p11glue_uri_match_module(uri, NULL, NULL));
		p11glue_uri_free(uri);
	}
}

static void
test_template(void)
{
	CK_ATTRIBUTE attrs[3];
	CK_OBJECT_CLASS klass = 0;
	p11glue_uri *uri = parse_ok("pkcs11:token=t;object=k;type=private;id=%aa", 0);

	pg_assert_int_eq(p11glue_uri_get_template(uri, attrs, &klass), 3);
	pg_assert_ulong_eq(attrs[0].type, CKA_LABEL);
	pg_assert_mem_eq(attrs[0].pValue, attrs[0].ulValueLen, "k", 1);
	pg_assert_ulong_eq(attrs[1].type, CKA_CLASS);
	pg_assert_ulong_eq(klass, CKO_PRIVATE_KEY);
	pg_assert(attrs[1].pValue == &klass);
	pg_assert_ulong_eq(attrs[2].type, CKA_ID);
	pg_assert_mem_eq(attrs[2].pValue, attrs[2].ulValueLen, "\xaa", 1);
	/* What the template selects, the URI matches. */
	pg_assert(p11glue_uri_match_attributes(uri, attrs, 3));
	p11glue_uri_free(uri);

	uri = parse_ok("pkcs11:token=t", 0);
	pg_assert_int_eq(p11glue_uri_get_template(uri, attrs, &klass), 0);
	p11glue_uri_free(uri);
}

/* ---------------------------------------------------------------------------
 * Building and the object API
 */

static void
test_set_checks(void)
{
	p11glue_uri *uri = p11glue_uri_new();
	p11glue_uri_error error;

	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_TYPE, "foo", 3, &error),
	                 P11GLUE_ERR_URI_VALUE);
	pg_assert(strstr(error.detail, "type") != NULL);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_SERIAL, "1234567890123456", 16, NULL),
	                 P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_LIBRARY_VERSION, "1", 1, NULL),
	                 P11GLUE_OK);
	assert_field_str(uri, P11GLUE_URI_LIBRARY_VERSION, "1.0");
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_SLOT_ID, "1x", 2, &error),
	                 P11GLUE_ERR_URI_VALUE);
	pg_assert_int_eq(error.result, P11GLUE_ERR_URI_VALUE);
	/* A rejected value leaves the old one alone. */
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_TYPE, "private", 7, NULL), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_TYPE, "cert ", 5, NULL),
	                 P11GLUE_ERR_URI_VALUE);
	assert_field_str(uri, P11GLUE_URI_TYPE, "private");
	p11glue_uri_unset(uri, P11GLUE_URI_SERIAL);
	assert_field(uri, P11GLUE_URI_SERIAL, NULL, 0);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_N_FIELDS, "a", 1, NULL), P11GLUE_ERR_ARGS);
	pg_assert_int_eq(p11glue_uri_set(NULL, P11GLUE_URI_TOKEN, "a", 1, NULL), P11GLUE_ERR_ARGS);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_TOKEN, NULL, 1, NULL), P11GLUE_ERR_ARGS);
	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_TOKEN, NULL, 0, NULL), P11GLUE_OK);
	assert_field_str(uri, P11GLUE_URI_TOKEN, "");
	p11glue_uri_free(uri);
	p11glue_uri_free(NULL);
}

static void
test_vendor_api(void)
{
	p11glue_uri *uri = p11glue_uri_new();
	const char *name;
	const unsigned char *value;
	size_t len;
	bool q;
	char *text;

	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-zz", "1", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, true, "x-aa", "2", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-Ab_9", "3", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-zz", "4", 1), P11GLUE_OK);
	/* A standard name of the component is no vendor name; bytes outside
	 * ALPHA, DIGIT, '-' and '_' are none either. */
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "token", "t", 1), P11GLUE_ERR_URI_NAME);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, true, "pin-value", "t", 1), P11GLUE_ERR_URI_NAME);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-a b", "t", 1), P11GLUE_ERR_URI_NAME);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "", "t", 1), P11GLUE_ERR_URI_NAME);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "a.b", "t", 1), P11GLUE_ERR_URI_NAME);
	pg_assert_int_eq(p11glue_uri_vendor_count(uri), 3);
	pg_assert(p11glue_uri_vendor_get(uri, 0, &q, &name, &value, &len));
	pg_assert_str_eq(name, "x-Ab_9");
	pg_assert(!q);
	pg_assert(p11glue_uri_vendor_get(uri, 1, &q, &name, &value, &len));
	pg_assert_str_eq(name, "x-zz");
	pg_assert_mem_eq(value, len, "4", 1);
	pg_assert(p11glue_uri_vendor_get(uri, 2, &q, &name, &value, &len));
	pg_assert_str_eq(name, "x-aa");
	pg_assert(q);
	pg_assert(!p11glue_uri_vendor_get(uri, 3, &q, &name, &value, &len));
	text = p11glue_uri_format(uri);
	pg_assert_str_eq(text, "pkcs11:x-Ab_9=3;x-zz=4?x-aa=2");
	free(text);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-zz", NULL, 0), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_vendor_count(uri), 2);
	pg_assert_null(p11glue_uri_vendor_find(uri, false, "x-zz", NULL));
	assert_round_trip(uri);
	/* Any other name, and a standard one of the other component. */
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "x-", "5", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "vendor-aaa", "6", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, true, "token", "7", 1), P11GLUE_OK);
	pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "pin-value", "8", 1), P11GLUE_OK);
	text = p11glue_uri_format(uri);
	pg_assert_str_eq(text, "pkcs11:pin-value=8;vendor-aaa=6;x-=5;x-Ab_9=3?token=7&x-aa=2");
	free(text);
	assert_round_trip(uri);
	p11glue_uri_free(uri);
}

static void
test_dup(void)
{
	p11glue_uri *uri = parse_ok(rfc_examples[11], 0);
	p11glue_uri *copy = p11glue_uri_dup(uri);

	pg_assert_not_null(copy);
	pg_assert(uri_equal(uri, copy));
	p11glue_uri_free(uri);
	p11glue_uri_free(copy);

	uri = parse_ok("pkcs11:f.o=1", P11GLUE_URI_LENIENT);
	copy = p11glue_uri_dup(uri);
	pg_assert(p11glue_uri_is_unrecognized(copy));
	p11glue_uri_free(uri);
	p11glue_uri_free(copy);
}

int
main(int argc, char **argv)
{
	pg_test("rfc/examples-parse-and-round-trip", test_rfc_examples_parse);
	pg_test("rfc/example-values", test_rfc_example_values);
	pg_test("rfc/example-oversized-label", test_rfc_example_oversized_label);
	pg_test("rfc/example-vendor", test_rfc_example_vendor);
	pg_test("attr/every-attribute", test_every_attribute);
	pg_test("attr/field-names", test_field_names);
	pg_test("attr/typed-getters", test_typed_getters);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		pg_test_dataf(test_bad, (void *)&bad_cases[i], NULL, "error/%s", bad_cases[i].text);
	pg_test("error/never-shows-pin", test_error_never_shows_pin);
	pg_test("error/optional-and-args", test_error_optional);
	pg_test("error/strerror", test_strerror);
	pg_test("bytes/nul-and-non-ascii", test_binary_values);
	pg_test("format/canonical", test_canonical);
	pg_test("format/round-trip-random", test_round_trip_random);
	pg_test("lenient/p11-kit-compatible", test_lenient);
	pg_test("vendor/any-name", test_vendor_any_name);
	pg_test("values/longer-than-field", test_longer_than_field);
	pg_test("match/token-padded", test_match_token);
	pg_test("match/module-and-slot", test_match_module_and_slot);
	pg_test("match/attributes", test_match_attributes);
	pg_test("match/unrecognized", test_unrecognized_matches_nothing);
	pg_test("match/template", test_template);
	pg_test("api/set-checks", test_set_checks);
	pg_test("api/vendor", test_vendor_api);
	pg_test("api/dup", test_dup);
	return pg_test_run(argc, argv);
}
