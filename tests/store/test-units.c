/*
 * Units of the store core: map.c, attrs.c, record.c, and the rules the
 * mech layer relies on through pg_object_create[_pair].
 */
#include "store-test.h"

#include "core.h"

#include <stdlib.h>

static void
test_map(void)
{
	pg_map map;
	int values[2000];
	size_t pos;
	int seen;

	pg_map_init(&map);
	pg_assert_null(pg_map_get(&map, 1));
	for (int i = 0; i < 2000; i++) {
		values[i] = i;
		pg_assert(pg_map_add(&map, (uint64_t)(i % 500), &values[i]));
	}
	pg_assert_int_eq(map.n, 2000);
	/* Four values per key. */
	pos = 0;
	seen = 0;
	while (pg_map_next(&map, 7, &pos) != NULL)
		seen++;
	pg_assert_int_eq(seen, 4);
	/* Removing keeps every other pair reachable (backward shift). */
	for (int i = 0; i < 2000; i += 3)
		pg_assert(pg_map_remove(&map, (uint64_t)(i % 500), &values[i]));
	pg_assert(!pg_map_remove(&map, 0, &values[0]));
	for (int i = 0; i < 2000; i++) {
		bool found = false;
		int *v;
		pos = 0;
		while ((v = pg_map_next(&map, (uint64_t)(i % 500), &pos)) != NULL)
			found = found || v == &values[i];
		pg_assert_int_eq(found, i % 3 != 0);
	}
	pos = 0;
	seen = 0;
	while (pg_map_each(&map, &pos) != NULL)
		seen++;
	pg_assert_int_eq(seen, (int)map.n);
	pg_map_clear(&map);
	pg_map_clear(&map);
}

static void
test_attrs(void)
{
	pg_attrs a = { 0 }, b = { 0 };
	const CK_ATTRIBUTE *x;
	char big[300];

	pg_assert(pg_attrs_set_ulong(&a, CKA_CLASS, CKO_DATA));
	pg_assert(pg_attrs_set_bool(&a, CKA_TOKEN, true));
	pg_assert(pg_attrs_set(&a, CKA_LABEL, "short", 5));
	pg_assert(pg_attrs_set(&a, CKA_VALUE, NULL, 0));
	pg_assert_int_eq(pg_attrs_ulong(&a, CKA_CLASS, 99), CKO_DATA);
	pg_assert_int_eq(pg_attrs_ulong(&a, CKA_TOKEN, 99), 99);   /* wrong size */
	pg_assert(pg_attrs_bool(&a, CKA_TOKEN, false));
	pg_assert(pg_attrs_bool(&a, CKA_PRIVATE, true));
	x = pg_attrs_find(&a, CKA_VALUE);
	pg_assert(x != NULL && x->pValue == NULL && x->ulValueLen == 0);
	/* Growing values move the pool; every pointer follows. */
	memset(big, 'x', sizeof(big));
	for (int i = 0; i < 20; i++)
		pg_assert(pg_attrs_set(&a, CKA_VENDOR_DEFINED + (CK_ULONG)i, big, (CK_ULONG)(10 * i + 1)));
	pg_assert(pg_attrs_set(&a, CKA_LABEL, big, sizeof(big)));
	pg_assert_int_eq(pg_attrs_ulong(&a, CKA_CLASS, 99), CKO_DATA);
	/* A value from the list itself. */
	x = pg_attrs_find(&a, CKA_LABEL);
	pg_assert(pg_attrs_set(&a, CKA_ID, x->pValue, x->ulValueLen));
	pg_assert(pg_attrs_set(&a, CKA_LABEL, "back", 4));
	x = pg_attrs_find(&a, CKA_ID);
	pg_assert_mem_eq(x->pValue, x->ulValueLen, big, sizeof(big));
	pg_assert(pg_attrs_copy(&b, &a));
	pg_attrs_compact(&b);
	pg_attrs_remove(&b, CKA_ID);
	pg_assert_null(pg_attrs_find(&b, CKA_ID));
	pg_assert_int_eq(b.n, a.n - 1);
	x = pg_attrs_find(&b, CKA_LABEL);
	pg_assert_mem_eq(x->pValue, x->ulValueLen, "back", 4);
	pg_attrs_clear(&a);
	pg_attrs_clear(&b);
	pg_attrs_clear(NULL);
}

static bool
count_entry(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
            size_t len)
{
	(void)type; (void)flags; (void)value; (void)len;
	(*(int *)ctx)++;
	return true;
}

static void
test_record(void)
{
	pg_buf buf;
	int n = 0;
	char *data;
	size_t len;

	pg_buf_init(&buf);
	pg_record_begin(&buf);
	pg_record_add(&buf, CKA_LABEL, 0, "abc", 3);
	pg_record_add(&buf, CKA_VALUE, PG_RECORD_SEALED, "0123456789abcdef0123456789ab", 28);
	pg_record_add(&buf, CKA_ID, 0, NULL, 0);
	data = pg_buf_steal(&buf, &len);
	pg_assert(pg_record_parse((unsigned char *)data, len, count_entry, &n));
	pg_assert_int_eq(n, 3);
	/* Every truncation and every extension is refused. */
	for (size_t cut = 0; cut < len; cut++)
		pg_assert(!pg_record_parse((unsigned char *)data, cut, NULL, NULL));
	data[len - 1] ^= 0;
	data[3] = 9;
	pg_assert(!pg_record_parse((unsigned char *)data, len, NULL, NULL));
	free(data);
}

/* Through the mech layer's door: generated keys and key pairs. */
static void
test_object_create(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE aes = CKK_AES;
	CK_ULONG len = 16, mech = CKM_AES_KEY_GEN;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE, b = 0;
	CK_ATTRIBUTE tmpl[] = { { CKA_VALUE_LEN, &len, sizeof(len) }, { CKA_TOKEN, &yes, 1 },
	                        { CKA_EXTRACTABLE, &no, 1 } };
	CK_ATTRIBUTE bad[] = { { CKA_VALUE, "0123456789abcdef", 16 } };
	CK_ATTRIBUTE get = { CKA_ALWAYS_SENSITIVE, &b, 1 };
	pg_attrs gen = { 0 };
	CK_OBJECT_HANDLE h = 0;

	st_init();
	slot = st_token("units");
	s = st_open(slot, true);
	st_login(s);
	pg_assert(pg_attrs_set_ulong(&gen, CKA_CLASS, cls));
	pg_assert(pg_attrs_set_ulong(&gen, CKA_KEY_TYPE, aes));
	pg_assert(pg_attrs_set(&gen, CKA_VALUE, "0123456789abcdef", 16));
	pg_assert(pg_attrs_set_bool(&gen, CKA_LOCAL, true));
	pg_assert(pg_attrs_set_ulong(&gen, CKA_KEY_GEN_MECHANISM, mech));
	ck_assert_rv(pg_object_create(s, tmpl, 3, &gen, &h), CKR_OK);
	pg_assert_int_eq(gen.n, 0);   /* consumed */
	/* Generated: always sensitive, never extractable. */
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &get, 1), CKR_OK);
	pg_assert_int_eq(b, CK_TRUE);
	get.type = CKA_NEVER_EXTRACTABLE;
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &get, 1), CKR_OK);
	pg_assert_int_eq(b, CK_TRUE);
	get.type = CKA_LOCAL;
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &get, 1), CKR_OK);
	pg_assert_int_eq(b, CK_TRUE);
	/* A value in a key generation template is refused. */
	pg_assert(pg_attrs_set_ulong(&gen, CKA_CLASS, cls));
	pg_assert(pg_attrs_set_ulong(&gen, CKA_KEY_TYPE, aes));
	pg_assert(pg_attrs_set(&gen, CKA_VALUE, "0123456789abcdef", 16));
	pg_assert(pg_attrs_set_bool(&gen, CKA_LOCAL, true));
	ck_assert_rv(pg_object_create(s, bad, 1, &gen, &h), CKR_ATTRIBUTE_READ_ONLY);
	/* Derived: the base key's history AND the new key's state. */
	pg_assert(pg_attrs_set_ulong(&gen, CKA_CLASS, cls));
	pg_assert(pg_attrs_set_ulong(&gen, CKA_KEY_TYPE, aes));
	pg_assert(pg_attrs_set(&gen, CKA_VALUE, "0123456789abcdef", 16));
	pg_assert(pg_attrs_set_bool(&gen, CKA_ALWAYS_SENSITIVE, true));
	pg_assert(pg_attrs_set_bool(&gen, CKA_NEVER_EXTRACTABLE, true));
	ck_assert_rv(pg_object_create(s, NULL, 0, &gen, &h), CKR_OK);
	get.type = CKA_NEVER_EXTRACTABLE;
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &get, 1), CKR_OK);
	pg_assert_int_eq(b, CK_FALSE);   /* secret keys default to extractable */
	get.type = CKA_ALWAYS_SENSITIVE;
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &get, 1), CKR_OK);
	pg_assert_int_eq(b, CK_TRUE);
	st_fini();
}

int
main(int argc, char **argv)
{
	pg_test_fixture(NULL, st_teardown);
	pg_test("units/map", test_map);
	pg_test("units/attrs", test_attrs);
	pg_test("units/record", test_record);
	pg_test("units/object-create", test_object_create);
	return pg_test_run(argc, argv);
}
