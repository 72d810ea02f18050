/*
 * Differential test against Debian's libp11-kit: for every valid URI of
 * the corpus (and a few thousand generated ones), p11-kit parses our
 * canonical output to the same attributes we decoded.
 *
 * Intended differences, each asserted below:
 * - Vendor path attributes (any name RFC 7512's grammar allows that is no
 *   standard one): p11glue keeps them and such a URI matches nothing;
 *   p11-kit 0.24 drops them and marks the URI unrecognized (which also
 *   matches nothing).
 * - A value longer than its fixed-size field (a 33-byte token label):
 *   p11glue keeps it (a valid URI that matches nothing); p11-kit drops it
 *   and marks the URI unrecognized.
 * - Lenient parsing removes tabs with the other white space (RFC 3986
 *   Appendix C); p11-kit keeps a tab as a raw byte (test_tab).
 * - Upper-case letters in a vendor query attribute's name: RFC 7512's
 *   ALPHA has them and p11glue takes them; p11-kit 0.24 rejects the URI
 *   (test_upper_case_query_name).
 * - Draft names in the path (pin-value, pin-source, pinfile, object-type,
 *   objecttype): p11-kit always takes them for the attribute; p11glue
 *   does when lenient, and strictly they are vendor path attributes, as
 *   the grammar says (test_draft_names_strict).
 * - Values with a NUL byte cannot be compared for the query attributes and
 *   fixed-size fields, which p11-kit holds as C strings / zero-filled
 *   structures; generated values avoid NUL there.
 * - library-version parts of 255 and slot-id 18446744073709551615: p11-kit
 *   uses (CK_BYTE)-1 and (CK_SLOT_ID)-1 as "not set", so it rejects the
 *   version and drops the slot-id; p11glue keeps both (asserted in
 *   test_sentinels below). Generated values stay below them.
 * - Lenient inputs: p11glue's lenient mode and p11-kit agree on every line
 *   of the lenient corpus (white space anywhere, raw bytes, repeats,
 *   secretkey, draft names), and on which names from drafts of RFC 7512
 *   stand for which attribute (test_draft_names asks p11-kit about each
 *   candidate, in the path and in the query).
 */
#define _GNU_SOURCE
#include "config.h"

#include "harness.h"
#include "uri-p11kit-ref.h"

#include <p11glue/p11glue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)REF_TOKEN == (int)P11GLUE_URI_TOKEN, "field order");
_Static_assert((int)REF_LIBRARY_VERSION == (int)P11GLUE_URI_LIBRARY_VERSION, "field order");
_Static_assert((int)REF_SLOT_ID == (int)P11GLUE_URI_SLOT_ID, "field order");
_Static_assert((int)REF_MODULE_PATH == (int)P11GLUE_URI_MODULE_PATH, "field order");
_Static_assert((int)REF_N_FIELDS == (int)P11GLUE_URI_N_FIELDS, "field order");

static bool
is_padded_field(int f)
{
	switch (f) {
	case P11GLUE_URI_TOKEN: case P11GLUE_URI_MANUFACTURER: case P11GLUE_URI_SERIAL:
	case P11GLUE_URI_MODEL: case P11GLUE_URI_LIBRARY_MANUFACTURER:
	case P11GLUE_URI_LIBRARY_DESCRIPTION: case P11GLUE_URI_SLOT_DESCRIPTION:
	case P11GLUE_URI_SLOT_MANUFACTURER:
		return true;
	default:
		return false;
	}
}

/* The size of a fixed-size PKCS#11 field, or 0. */
static size_t
field_size(int f)
{
	switch (f) {
	case P11GLUE_URI_TOKEN: case P11GLUE_URI_MANUFACTURER: case P11GLUE_URI_LIBRARY_MANUFACTURER:
	case P11GLUE_URI_LIBRARY_DESCRIPTION: case P11GLUE_URI_SLOT_MANUFACTURER:
		return 32;
	case P11GLUE_URI_SERIAL: case P11GLUE_URI_MODEL:
		return 16;
	case P11GLUE_URI_SLOT_DESCRIPTION:
		return 64;
	default:
		return 0;
	}
}

/* Compares our decoded URI with p11-kit's view; fails the case on a difference. */
static void
compare(const char *what, const p11glue_uri *ours, const ref_uri *ref)
{
	bool has_path_vendor = false, oversized = false;

	if (ref->result != 0)
		pg_test_fail(__FILE__, __LINE__, "p11-kit rejects %s (%d)", what, ref->result);
	for (size_t i = 0; i < p11glue_uri_vendor_count(ours); i++) {
		bool q;
		const char *name;
		p11glue_uri_vendor_get(ours, i, &q, &name, NULL, NULL);
		has_path_vendor |= !q;
	}
	for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
		size_t len;
		if (p11glue_uri_get(ours, (p11glue_uri_field)f, &len) && field_size(f) &&
		    len > field_size(f))
			oversized = true;
	}
	/* Intended differences: p11-kit does not keep vendor path attributes
	 * or values longer than their field; it marks the URI unrecognized. */
	if (has_path_vendor || oversized) {
		if (!ref->unrecognized)
			pg_test_fail(__FILE__, __LINE__, "%s: p11-kit does not mark it unrecognized",
			             what);
		return;
	}
	pg_assert_int_eq(ref->unrecognized, p11glue_uri_is_unrecognized(ours));
	for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
		size_t len;
		const unsigned char *value = p11glue_uri_get(ours, (p11glue_uri_field)f, &len);
		if ((value != NULL) != ref->has[f])
			pg_test_fail(__FILE__, __LINE__, "%s: '%s' is %s by p11glue, %s by p11-kit",
			             what, p11glue_uri_field_name((p11glue_uri_field)f),
			             value ? "set" : "unset", ref->has[f] ? "set" : "unset");
		if (value == NULL)
			continue;
		if (is_padded_field(f))
			while (len > 0 && value[len - 1] == ' ')
				len--;
		if (len != ref->len[f] || memcmp(value, ref->value[f], len) != 0)
			pg_test_fail(__FILE__, __LINE__, "%s: '%s' differs: p11glue \"%.*s\", p11-kit \"%.*s\"",
			             what, p11glue_uri_field_name((p11glue_uri_field)f), (int)len,
			             value, (int)ref->len[f], ref->value[f]);
	}
}

/* Vendor query attributes must come back from p11-kit by name. */
static void
compare_vendor_query(const char *text, const p11glue_uri *ours)
{
	const char *names[REF_MAX_VENDOR];
	const unsigned char *values[REF_MAX_VENDOR];
	size_t lens[REF_MAX_VENDOR], n = 0;
	ref_uri ref;

	for (size_t i = 0; i < p11glue_uri_vendor_count(ours) && n < REF_MAX_VENDOR; i++) {
		bool q;
		p11glue_uri_vendor_get(ours, i, &q, &names[n], &values[n], &lens[n]);
		if (q)
			n++;
	}
	if (n == 0)
		return;
	ref_p11kit_parse(text, names, n, &ref);
	for (size_t i = 0; i < n; i++) {
		pg_assert(ref.has_vendor[i]);
		pg_assert_mem_eq(ref.vendor[i], strlen(ref.vendor[i]), values[i], lens[i]);
	}
}

static void
check_canonical(const char *text)
{
	p11glue_uri_error error;
	p11glue_uri *uri;
	ref_uri ref;
	char *canonical;
	int rv = p11glue_uri_parse(text, 0, &uri, &error);

	if (rv != P11GLUE_OK)
		pg_test_fail(__FILE__, __LINE__, "corpus URI %s does not parse: %s", text,
		             error.detail);
	canonical = p11glue_uri_format(uri);
	pg_assert_not_null(canonical);
	ref_p11kit_parse(canonical, NULL, 0, &ref);
	compare(canonical, uri, &ref);
	compare_vendor_query(canonical, uri);
	free(canonical);
	p11glue_uri_free(uri);
}

static void
test_corpus_line(const void *data)
{
	check_canonical(data);
}

static void
test_lenient_line(const void *data)
{
	const char *text = data;
	p11glue_uri_error error;
	p11glue_uri *uri;
	ref_uri ref;

	ref_p11kit_parse(text, NULL, 0, &ref);
	if (p11glue_uri_parse(text, P11GLUE_URI_LENIENT, &uri, &error) != P11GLUE_OK)
		pg_test_fail(__FILE__, __LINE__, "lenient parse of %s failed: %s", text, error.detail);
	compare(text, uri, &ref);
	p11glue_uri_free(uri);
}

static unsigned long long rng_state = 12345;

static unsigned
rng(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng_state >> 33) % n);
}

static void
test_generated(void)
{
	static const size_t max_len[P11GLUE_URI_N_FIELDS] = {
		[P11GLUE_URI_TOKEN] = 32, [P11GLUE_URI_MANUFACTURER] = 32,
		[P11GLUE_URI_SERIAL] = 16, [P11GLUE_URI_MODEL] = 16,
		[P11GLUE_URI_LIBRARY_MANUFACTURER] = 32, [P11GLUE_URI_LIBRARY_DESCRIPTION] = 32,
		[P11GLUE_URI_SLOT_DESCRIPTION] = 64, [P11GLUE_URI_SLOT_MANUFACTURER] = 32,
		[P11GLUE_URI_OBJECT] = 60, [P11GLUE_URI_ID] = 40, [P11GLUE_URI_PIN_SOURCE] = 60,
		[P11GLUE_URI_PIN_VALUE] = 60, [P11GLUE_URI_MODULE_NAME] = 60,
		[P11GLUE_URI_MODULE_PATH] = 60,
	};
	static const char *const types[] = { "public", "private", "cert", "secret-key", "data" };
	unsigned char value[100];
	char num[32];

	for (int round = 0; round < 3000; round++) {
		p11glue_uri *uri = p11glue_uri_new();
		char *text;
		for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
			const char *t;
			size_t len;
			if (rng(3) == 0)
				continue;
			switch (f) {
			case P11GLUE_URI_TYPE:
				t = types[rng(5)];
				pg_assert_int_eq(p11glue_uri_set(uri, f, t, strlen(t), NULL), 0);
				continue;
			case P11GLUE_URI_LIBRARY_VERSION:
				/* 255 is p11-kit's "unset"; stay below. */
				snprintf(num, sizeof(num), "%u.%u", rng(255), rng(255));
				break;
			case P11GLUE_URI_SLOT_ID:
				snprintf(num, sizeof(num), "%u", rng(4000000000u));
				break;
			default:
				/* Fixed-size fields now and then longer than the field. */
				len = rng((unsigned)max_len[f] + (field_size(f) ? 4 : 1));
				/* No NUL: p11-kit holds these as C strings or zero-filled fields. */
				for (size_t i = 0; i < len; i++)
					value[i] = (unsigned char)(rng(3) ? 0x20 + rng(0x5f) : 1 + rng(255));
				if (f == P11GLUE_URI_ID || f == P11GLUE_URI_OBJECT)
					for (size_t i = 0; i < len; i++)
						value[i] = (unsigned char)rng(256);
				pg_assert_int_eq(p11glue_uri_set(uri, f, value, len, NULL), 0);
				continue;
			}
			pg_assert_int_eq(p11glue_uri_set(uri, f, num, strlen(num), NULL), 0);
		}
		if (rng(3) == 0)
			pg_assert_int_eq(p11glue_uri_set_vendor(uri, true, rng(2) ? "x-q" : "vendor_q9",
			                                        "a/b:c=d", 7), 0);
		if (rng(8) == 0)
			pg_assert_int_eq(p11glue_uri_set_vendor(uri, false, "vendor-aaa", "v", 1), 0);
		text = p11glue_uri_format(uri);
		pg_assert_not_null(text);
		check_canonical(text);
		free(text);
		p11glue_uri_free(uri);
	}
}

/* The intended differences on p11-kit's "not set" values. */
static void
test_sentinels(void)
{
	p11glue_uri *uri;
	ref_uri ref;
	CK_SLOT_ID slot;
	CK_VERSION version;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:library-version=255.255;slot-id=18446744073709551615",
	                                   0, &uri, NULL), P11GLUE_OK);
	pg_assert(p11glue_uri_get_library_version(uri, &version));
	pg_assert_int_eq(version.major, 255);
	pg_assert(p11glue_uri_get_slot_id(uri, &slot));
	pg_assert_ulong_eq(slot, (CK_SLOT_ID)-1);
	p11glue_uri_free(uri);
	ref_p11kit_parse("pkcs11:library-version=1.255", NULL, 0, &ref);
	pg_assert(ref.result != 0);
	ref_p11kit_parse("pkcs11:slot-id=18446744073709551615", NULL, 0, &ref);
	pg_assert_int_eq(ref.result, 0);
	pg_assert(!ref.has[REF_SLOT_ID]);
}

/* Lenient parsing removes tabs; p11-kit keeps them as raw bytes. */
static void
test_tab(void)
{
	p11glue_uri *uri;
	ref_uri ref;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:object=x%20y\tz", P11GLUE_URI_LENIENT, &uri, NULL),
	                 P11GLUE_OK);
	pg_assert_mem_eq(p11glue_uri_get(uri, P11GLUE_URI_OBJECT, NULL), 4, "x yz", 4);
	p11glue_uri_free(uri);
	ref_p11kit_parse("pkcs11:object=x%20y\tz", NULL, 0, &ref);
	pg_assert_int_eq(ref.result, 0);
	pg_assert_mem_eq(ref.value[REF_OBJECT], ref.len[REF_OBJECT], "x y\tz", 5);
}

static void
test_upper_case_query_name(void)
{
	p11glue_uri *uri;
	ref_uri ref;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:?vendor_Q9=1", 0, &uri, NULL), P11GLUE_OK);
	pg_assert_not_null(p11glue_uri_vendor_find(uri, true, "vendor_Q9", NULL));
	p11glue_uri_free(uri);
	ref_p11kit_parse("pkcs11:?vendor_Q9=1", NULL, 0, &ref);
	pg_assert(ref.result != 0);
}

static void
test_draft_names_strict(void)
{
	p11glue_uri *uri;
	ref_uri ref;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:token=a;pin-value=1", 0, &uri, NULL), P11GLUE_OK);
	pg_assert_null(p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, NULL));
	pg_assert_not_null(p11glue_uri_vendor_find(uri, false, "pin-value", NULL));
	p11glue_uri_free(uri);
	ref_p11kit_parse("pkcs11:token=a;pin-value=1", NULL, 0, &ref);
	pg_assert_int_eq(ref.result, 0);
	pg_assert(ref.has[REF_PIN_VALUE]);
}

/*
 * Which names stand for an attribute when parsing leniently is decided by
 * p11-kit: each candidate (names from drafts of RFC 7512, from p11-kit's
 * history, and near misses), in the path and in the query, with a value
 * each kind of attribute takes, must decode as p11-kit decodes it.
 */
static void
test_draft_names(void)
{
	static const char *const names[] = {
		"object-type", "objecttype", "object_type", "type", "class", "object-class",
		"label", "object-label", "object", "pin-source", "pinfile", "pin-file", "pin",
		"pin-value", "pinvalue", "module-name", "module-path", "library-version",
		"libraryversion", "slot-id", "slotid", "slot-description", "token-label",
		"serial-number", "manufacturer-id", "id", "object-id", "token", "model",
	};
	static const char *const values[] = { "cert", "1", "secretkey" };
	char text[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (int query = 0; query < 2; query++) {
			for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
				p11glue_uri *uri;
				ref_uri ref;
				snprintf(text, sizeof(text), "pkcs11:%s%s=%s", query ? "?" : "", names[i],
				         values[v]);
				ref_p11kit_parse(text, NULL, 0, &ref);
				/* Values an attribute cannot hold fail both, or neither. */
				if (p11glue_uri_parse(text, P11GLUE_URI_LENIENT, &uri, NULL) != P11GLUE_OK) {
					if (ref.result == 0)
						pg_test_fail(__FILE__, __LINE__, "%s: p11-kit takes it, p11glue not",
						             text);
					continue;
				}
				compare(text, uri, &ref);
				p11glue_uri_free(uri);
			}
		}
	}
}

/* Reads non-empty, non-comment lines; the strings live for the whole run. */
static void
add_lines(const char *path, const char *prefix, pg_test_data_func func)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *copy;
	size_t cap = 0;
	ssize_t n;

	if (f == NULL) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(99);
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (n == 0 || line[0] == '#')
			continue;
		copy = strdup(line);
		if (copy == NULL)
			exit(99);
		pg_test_dataf(func, copy, free, "%s %s", prefix, line);
	}
	free(line);
	fclose(f);
}

int
main(int argc, char **argv)
{
	char lenient[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: %s tests/data/uri-valid.txt\n", argv[0]);
		return 99;
	}
	add_lines(argv[1], "canonical", test_corpus_line);
	snprintf(lenient, sizeof(lenient), "%.*s/uri-lenient.txt",
	         (int)(strrchr(argv[1], '/') - argv[1]), argv[1]);
	add_lines(lenient, "lenient", test_lenient_line);
	pg_test("generated/3000-uris", test_generated);
	pg_test("intended/not-set-sentinels", test_sentinels);
	pg_test("intended/tab", test_tab);
	pg_test("intended/upper-case-query-name", test_upper_case_query_name);
	pg_test("intended/draft-names-strict", test_draft_names_strict);
	pg_test("lenient/draft-names", test_draft_names);
	return pg_test_run(1, argv);
}
