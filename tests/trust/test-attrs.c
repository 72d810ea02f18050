/*
 * The attribute lookup's shortcut: for every kind of object and every
 * attribute type with a name (and the vendor types objects compute), a
 * type the kind's code mask excludes must have no value on the slow path
 * either; and every type gets the code of its own slot.
 */
#include "config.h"

#include "trust-attrs.h"
#include "harness.h"
#include "nicks.h"

#include <string.h>

static const CK_ATTRIBUTE_TYPE extra[] = {
	CKA_X_GENERATED, CKA_X_ORIGIN, CKA_X_CRITICAL, CKA_NSS_MOZILLA_CA_POLICY, 0x12345678UL,
	CKA_TRUST_STEP_UP_APPROVED, CKA_CERT_SHA1_HASH, CKA_CERT_MD5_HASH,
};

static void
check_kind(int kind, CK_OBJECT_CLASS klass)
{
	pg_entry e;
	pg_object o = { (uint8_t)kind, PG_LIST_STD, 0, false, &e };
	size_t n = pg_nick_count() + PG_N_ELEMENTS(extra);

	memset(&e, 0, sizeof(e));
	e.kind = kind == PG_OBJ_STORED ? PG_ENTRY_STORED : PG_ENTRY_CERT;
	e.klass = klass;
	e.origin = "origin";
	e.label.p = (const unsigned char *)"";
	if (kind == PG_OBJ_ROOT_LIST)
		o.entry = NULL;
	for (size_t i = 0; i < n; i++) {
		CK_ATTRIBUTE_TYPE t = i < pg_nick_count() ? pg_nick_type_at(i)
		                                          : extra[i - pg_nick_count()];
		unsigned code = pg_attr_code(t);
		pg_value slow = pg_object_value_code(&o, code, t);
		pg_value fast = pg_object_value_fast(&o, t);
		if (slow.len != fast.len || slow.p != fast.p)
			pg_test_fail(__FILE__, __LINE__, "kind %d, type 0x%lx: slow %lu, fast %lu", kind,
			             (unsigned long)t, (unsigned long)slow.len, (unsigned long)fast.len);
	}
}

static void
test_masks(void)
{
	for (int kind = PG_OBJ_CERT; kind <= PG_OBJ_STORED; kind++)
		check_kind(kind, CKO_CERTIFICATE);
	check_kind(PG_OBJ_STORED, CKO_DATA);
	check_kind(PG_OBJ_STORED, CKO_NSS_TRUST);
}

static void
test_codes(void)
{
	/* Distinct types get distinct codes, unless the type has none. */
	unsigned seen[64] = { 0 };
	CK_ATTRIBUTE_TYPE by_code[64];

	for (size_t i = 0; i < pg_nick_count() + PG_N_ELEMENTS(extra); i++) {
		CK_ATTRIBUTE_TYPE t = i < pg_nick_count() ? pg_nick_type_at(i)
		                                          : extra[i - pg_nick_count()];
		unsigned code = pg_attr_code(t);
		pg_assert(code < 64);
		if (code == PG_A_OTHER)
			continue;
		if (seen[code])
			pg_assert_ulong_eq(by_code[code], t);
		seen[code] = 1;
		by_code[code] = t;
	}
	pg_assert_int_eq(pg_attr_code(CKA_TRUST_SERVER_AUTH), PG_A_TRUST_FIRST + 7);
	pg_assert_int_eq(pg_attr_code(CKA_X_PURPOSE), PG_A_PURPOSE);
	pg_assert_int_eq(pg_attr_code(CKA_X_CRITICAL), PG_A_OTHER);
	pg_assert_int_eq(pg_attr_code((CK_ATTRIBUTE_TYPE)CKA_X_PURPOSE + 0x100000000ULL), PG_A_OTHER);
}

/* The names table is ascending (pg_nick_attr searches it in halves). */
static void
test_nicks_sorted(void)
{
	for (size_t i = 1; i < pg_nick_count(); i++)
		pg_assert(pg_nick_type_at(i - 1) < pg_nick_type_at(i));
	pg_assert_str_eq(pg_nick_attr(CKA_TRUST_SERVER_AUTH), "trust-server-auth");
	pg_assert_str_eq(pg_nick_attr(CKA_VERIFY_RECOVER), "recover");
	pg_assert_str_eq(pg_nick_value(CKA_CLASS, CKO_NSS_TRUST), "nss-trust");
	pg_assert_str_eq(pg_nick_value(CKA_CERTIFICATE_CATEGORY, 3), "other-entry");
	pg_assert_null(pg_nick_value(CKA_LABEL, 0));
}

int
main(int argc, char **argv)
{
	pg_test("attrs/masks", test_masks);
	pg_test("attrs/codes", test_codes);
	pg_test("attrs/nicks-sorted", test_nicks_sorted);
	return pg_test_run(argc, argv);
}
