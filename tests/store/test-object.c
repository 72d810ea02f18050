/*
 * object.c and rules.c: creating, reading, changing, copying and
 * destroying objects, with the specification's attribute rules.
 */
#include "store-test.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

static CK_OBJECT_CLASS c_data = CKO_DATA, c_secret = CKO_SECRET_KEY;
static CK_KEY_TYPE k_aes = CKK_AES, k_generic = CKK_GENERIC_SECRET;
static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static CK_BYTE key32[32] = "0123456789abcdef0123456789abcdef";

#define A(t, v) { t, &(v), sizeof(v) }

typedef struct {
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE rw, ro;
} fixture;

static fixture
setup(bool login)
{
	fixture f;

	st_init();
	f.slot = st_token("objects");
	f.rw = st_open(f.slot, true);
	f.ro = st_open(f.slot, false);
	if (login)
		st_login(f.rw);
	return f;
}

static CK_OBJECT_HANDLE
aes_key(CK_SESSION_HANDLE s, bool token, bool sensitive, bool extractable)
{
	CK_BBOOL tok = token, sens = sensitive, ext = extractable;
	CK_ATTRIBUTE t[] = {
		A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_TOKEN, tok),
		A(CKA_SENSITIVE, sens), A(CKA_EXTRACTABLE, ext), A(CKA_VALUE, key32),
		{ CKA_LABEL, "aes", 3 },
	};
	CK_OBJECT_HANDLE h = 0;

	ck_assert_rv(p11->C_CreateObject(s, t, N_ELEMENTS(t), &h), CKR_OK);
	return h;
}

static CK_BBOOL
get_bool(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE h, CK_ATTRIBUTE_TYPE type)
{
	CK_BBOOL b = 0x55;
	CK_ATTRIBUTE a = { type, &b, sizeof(b) };

	ck_assert_rv(p11->C_GetAttributeValue(s, h, &a, 1), CKR_OK);
	pg_assert_int_eq(a.ulValueLen, 1);
	return b;
}

static CK_ULONG
get_ulong(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE h, CK_ATTRIBUTE_TYPE type)
{
	CK_ULONG v = 0;
	CK_ATTRIBUTE a = { type, &v, sizeof(v) };

	ck_assert_rv(p11->C_GetAttributeValue(s, h, &a, 1), CKR_OK);
	return v;
}

static CK_ULONG
get_len(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE h, CK_ATTRIBUTE_TYPE type, CK_RV want)
{
	CK_ATTRIBUTE a = { type, NULL, 0 };

	ck_assert_rv(p11->C_GetAttributeValue(s, h, &a, 1), want);
	return a.ulValueLen;
}

static void
test_data_defaults(void)
{
	fixture f = setup(false);
	CK_OBJECT_HANDLE h = st_data(f.rw, "plain", false, false);
	char label[16];
	CK_ATTRIBUTE a = { CKA_LABEL, label, sizeof(label) };

	pg_assert_int_eq(get_bool(f.rw, h, CKA_TOKEN), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_PRIVATE), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_MODIFIABLE), CK_TRUE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_COPYABLE), CK_TRUE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_DESTROYABLE), CK_TRUE);
	pg_assert_int_eq(get_ulong(f.rw, h, CKA_CLASS), CKO_DATA);
	pg_assert_int_eq(get_len(f.rw, h, CKA_APPLICATION, CKR_OK), 0);
	pg_assert_int_eq(get_len(f.rw, h, CKA_OBJECT_ID, CKR_OK), 0);
	pg_assert_int_eq(get_len(f.rw, h, CKA_UNIQUE_ID, CKR_OK), 32);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &a, 1), CKR_OK);
	pg_assert_mem_eq(label, a.ulValueLen, "plain", 5);
	/* Session objects are visible to every session of the application. */
	pg_assert_int_eq(get_bool(f.ro, h, CKA_TOKEN), CK_FALSE);
	st_fini();
}

static void
test_create_errors(void)
{
	fixture f = setup(false);
	CK_OBJECT_HANDLE h;
	CK_ULONG small = 3;
	CK_OBJECT_CLASS bad_class = CKO_HW_FEATURE, c_cert = CKO_CERTIFICATE;
	CK_CERTIFICATE_TYPE wtls = CKC_WTLS;
	CK_ATTRIBUTE no_class[] = { { CKA_LABEL, "x", 1 } };
	CK_ATTRIBUTE short_class[] = { { CKA_CLASS, &small, 1 } };
	CK_ATTRIBUTE hw[] = { A(CKA_CLASS, bad_class) };
	CK_ATTRIBUTE two_classes[] = { A(CKA_CLASS, c_data), A(CKA_CLASS, c_secret) };
	CK_ATTRIBUTE same_twice[] = { A(CKA_CLASS, c_data), A(CKA_CLASS, c_data) };
	CK_ATTRIBUTE bad_bool[] = { A(CKA_CLASS, c_data), { CKA_TOKEN, &small, sizeof(small) } };
	CK_ATTRIBUTE null_value[] = { A(CKA_CLASS, c_data), { CKA_LABEL, NULL, 4 } };
	CK_ATTRIBUTE wrong_type[] = { A(CKA_CLASS, c_data), { CKA_MODULUS, "x", 1 } };
	CK_ATTRIBUTE unique[] = { A(CKA_CLASS, c_data), { CKA_UNIQUE_ID, "x", 1 } };
	CK_ATTRIBUTE token_ro[] = { A(CKA_CLASS, c_data), A(CKA_TOKEN, yes) };
	CK_ATTRIBUTE priv[] = { A(CKA_CLASS, c_data), A(CKA_PRIVATE, yes) };
	CK_ATTRIBUTE no_key_type[] = { A(CKA_CLASS, c_secret), A(CKA_VALUE, key32) };
	CK_ATTRIBUTE no_value[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_PRIVATE, no) };
	CK_ATTRIBUTE short_aes[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes),
	                             A(CKA_PRIVATE, no), { CKA_VALUE, key32, 15 } };
	CK_ATTRIBUTE local[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_PRIVATE, no),
	                         A(CKA_VALUE, key32), A(CKA_LOCAL, yes) };
	CK_ULONG len16 = 16;
	CK_ATTRIBUTE bad_len[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_PRIVATE, no),
	                           A(CKA_VALUE, key32), A(CKA_VALUE_LEN, len16) };
	CK_ATTRIBUTE trusted[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_PRIVATE, no),
	                           A(CKA_VALUE, key32), A(CKA_TRUSTED, yes) };
	CK_ATTRIBUTE no_subject[] = { A(CKA_CLASS, c_cert), A(CKA_CERTIFICATE_TYPE, wtls) };
	CK_ATTRIBUTE bad_date[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_PRIVATE, no),
	                            A(CKA_VALUE, key32), { CKA_START_DATE, "2024-1-1", 8 } };

	ck_assert_rv(p11->C_CreateObject(f.rw + 50, no_class, 1, &h), CKR_SESSION_HANDLE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, NULL, 1, &h), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_CreateObject(f.rw, hw, 1, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_CreateObject(f.rw, NULL, 0, &h), CKR_TEMPLATE_INCOMPLETE);
	ck_assert_rv(p11->C_CreateObject(f.rw, no_class, 1, &h), CKR_TEMPLATE_INCOMPLETE);
	ck_assert_rv(p11->C_CreateObject(f.rw, short_class, 1, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, hw, 1, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, two_classes, 2, &h), CKR_TEMPLATE_INCONSISTENT);
	ck_assert_rv(p11->C_CreateObject(f.rw, same_twice, 2, &h), CKR_OK);
	ck_assert_rv(p11->C_CreateObject(f.rw, bad_bool, 2, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, null_value, 2, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, wrong_type, 2, &h), CKR_ATTRIBUTE_TYPE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, unique, 2, &h), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_CreateObject(f.ro, token_ro, 2, &h), CKR_SESSION_READ_ONLY);
	ck_assert_rv(p11->C_CreateObject(f.rw, priv, 2, &h), CKR_USER_NOT_LOGGED_IN);
	ck_assert_rv(p11->C_CreateObject(f.rw, no_key_type, 2, &h), CKR_TEMPLATE_INCOMPLETE);
	ck_assert_rv(p11->C_CreateObject(f.rw, no_value, 3, &h), CKR_TEMPLATE_INCOMPLETE);
	ck_assert_rv(p11->C_CreateObject(f.rw, short_aes, 4, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, local, 5, &h), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_CreateObject(f.rw, bad_len, 5, &h), CKR_TEMPLATE_INCONSISTENT);
	ck_assert_rv(p11->C_CreateObject(f.rw, trusted, 5, &h), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_CreateObject(f.rw, no_subject, 2, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	ck_assert_rv(p11->C_CreateObject(f.rw, bad_date, 5, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	st_fini();
}

static void
test_secret_key(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE h = aes_key(f.rw, true, true, true);
	CK_BYTE cv[3], buf[32];
	CK_ATTRIBUTE a = { CKA_CHECK_VALUE, cv, sizeof(cv) };
	CK_ATTRIBUTE v = { CKA_VALUE, buf, sizeof(buf) };

	pg_assert_int_eq(get_bool(f.rw, h, CKA_PRIVATE), CK_TRUE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_SENSITIVE), CK_TRUE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_LOCAL), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_ALWAYS_SENSITIVE), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_NEVER_EXTRACTABLE), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_DERIVE), CK_FALSE);
	pg_assert_int_eq(get_ulong(f.rw, h, CKA_VALUE_LEN), 32);
	pg_assert_ulong_eq(get_ulong(f.rw, h, CKA_KEY_GEN_MECHANISM), CK_UNAVAILABLE_INFORMATION);
	pg_assert_int_eq(get_len(f.rw, h, CKA_ALLOWED_MECHANISMS, CKR_OK), 0);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &a, 1), CKR_OK);
	pg_assert_int_eq(a.ulValueLen, 3);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &v, 1), CKR_ATTRIBUTE_SENSITIVE);
	pg_assert_ulong_eq(v.ulValueLen, CK_UNAVAILABLE_INFORMATION);

	/* Not sensitive and extractable: readable. */
	h = aes_key(f.rw, false, false, true);
	v.ulValueLen = sizeof(buf);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &v, 1), CKR_OK);
	pg_assert_mem_eq(buf, v.ulValueLen, key32, 32);
	/* Not extractable: hidden even when not sensitive. */
	h = aes_key(f.rw, false, false, false);
	v.ulValueLen = sizeof(buf);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &v, 1), CKR_ATTRIBUTE_SENSITIVE);
	st_fini();
}

static void
test_get_rules(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE h = aes_key(f.rw, false, true, true);
	CK_BYTE small[1], value[32], label[8];
	CK_ULONG cls = 0;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_VALUE, value, sizeof(value) },
		{ CKA_MODULUS, label, sizeof(label) },
		{ CKA_LABEL, small, sizeof(small) },
		{ CKA_ID, NULL, 0 },
		{ CKA_LABEL, label, sizeof(label) },
	};
	CK_ATTRIBUTE only_short[] = { { CKA_LABEL, small, sizeof(small) } };
	CK_ATTRIBUTE only_invalid[] = { { CKA_MODULUS, NULL, 0 }, { CKA_LABEL, NULL, 0 } };

	/* Every attribute is processed; the code is one of the failures. */
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, t, 6), CKR_ATTRIBUTE_SENSITIVE);
	pg_assert_int_eq(cls, CKO_SECRET_KEY);
	pg_assert_int_eq(t[0].ulValueLen, sizeof(CK_ULONG));
	pg_assert_ulong_eq(t[1].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_ulong_eq(t[2].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_ulong_eq(t[3].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_int_eq(t[4].ulValueLen, 0);
	pg_assert_mem_eq(label, t[5].ulValueLen, "aes", 3);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, only_short, 1), CKR_BUFFER_TOO_SMALL);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, only_invalid, 2), CKR_ATTRIBUTE_TYPE_INVALID);
	pg_assert_int_eq(only_invalid[1].ulValueLen, 3);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, NULL, 1), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, NULL, 0), CKR_OK);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h + 1000, t, 1), CKR_OBJECT_HANDLE_INVALID);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw + 9, h, t, 1), CKR_SESSION_HANDLE_INVALID);
	st_fini();
}

static void
test_set_rules(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE h = aes_key(f.rw, true, false, true);
	CK_OBJECT_HANDLE d = st_data(f.rw, "data", true, false);
	CK_OBJECT_HANDLE sd = st_data(f.rw, "session data", false, false);
	CK_ATTRIBUTE label = { CKA_LABEL, "renamed", 7 };
	CK_ATTRIBUTE sens_on = A(CKA_SENSITIVE, yes), sens_off = A(CKA_SENSITIVE, no);
	CK_ATTRIBUTE ext_on = A(CKA_EXTRACTABLE, yes), ext_off = A(CKA_EXTRACTABLE, no);
	CK_ATTRIBUTE cls = A(CKA_CLASS, c_data), token = A(CKA_TOKEN, no);
	CK_ATTRIBUTE modulus = { CKA_MODULUS, "x", 1 }, trusted = A(CKA_TRUSTED, yes);
	CK_ATTRIBUTE mod_off = A(CKA_MODIFIABLE, no), copy_off = A(CKA_COPYABLE, no);
	CK_ATTRIBUTE copy_on = A(CKA_COPYABLE, yes);
	CK_ATTRIBUTE bad_len = { CKA_ENCRYPT, &yes, 2 };
	CK_ATTRIBUTE two[] = { { CKA_LABEL, "both", 4 }, A(CKA_CLASS, c_data) };

	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, NULL, 1), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &label, 1), CKR_OK);
	pg_assert_int_eq(st_count_label(f.rw, "renamed"), 1);
	pg_assert_int_eq(st_count_label(f.rw, "aes"), 0);
	ck_assert_rv(p11->C_SetAttributeValue(f.ro, h, &label, 1), CKR_SESSION_READ_ONLY);
	/* CKA_SENSITIVE only false -> true, CKA_EXTRACTABLE only true -> false. */
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &ext_on, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &sens_on, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &sens_off, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &ext_off, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &ext_on, 1), CKR_ATTRIBUTE_READ_ONLY);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_ALWAYS_SENSITIVE), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_NEVER_EXTRACTABLE), CK_FALSE);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &cls, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &token, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &modulus, 1), CKR_ATTRIBUTE_TYPE_INVALID);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &trusted, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, &bad_len, 1), CKR_ATTRIBUTE_VALUE_INVALID);
	/* The same value is no change; all or nothing otherwise. */
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, d, two, 2), CKR_OK);
	pg_assert_int_eq(st_count_label(f.rw, "both"), 1);
	two[0].pValue = "nope";
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, h, two, 2), CKR_ATTRIBUTE_READ_ONLY);
	pg_assert_int_eq(st_count_label(f.rw, "nope"), 0);
	pg_assert_int_eq(st_count_label(f.rw, "renamed"), 1);
	/* CKA_COPYABLE only true -> false. */
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, d, &copy_off, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, d, &copy_on, 1), CKR_ATTRIBUTE_READ_ONLY);
	/* A session object may be changed in a read-only session. */
	ck_assert_rv(p11->C_SetAttributeValue(f.ro, sd, &label, 1), CKR_OK);
	/* Not modifiable: the object is frozen. */
	{
		CK_ATTRIBUTE t[] = { A(CKA_CLASS, c_data), A(CKA_MODIFIABLE, no) };
		CK_OBJECT_HANDLE frozen;
		ck_assert_rv(p11->C_CreateObject(f.rw, t, 2, &frozen), CKR_OK);
		ck_assert_rv(p11->C_SetAttributeValue(f.rw, frozen, &label, 1), CKR_ACTION_PROHIBITED);
		ck_assert_rv(p11->C_SetAttributeValue(f.rw, frozen, &mod_off, 1), CKR_ACTION_PROHIBITED);
	}
	st_fini();
}

static void
test_so_trusted(void)
{
	fixture f = setup(false);
	CK_OBJECT_HANDLE h;
	CK_ATTRIBUTE t[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_generic), A(CKA_PRIVATE, no),
	                     A(CKA_VALUE, key32), A(CKA_TRUSTED, yes), A(CKA_TOKEN, yes) };

	ck_assert_rv(p11->C_CloseSession(f.ro), CKR_OK);
	ck_assert_rv(p11->C_Login(f.rw, CKU_SO, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN)), CKR_OK);
	/* The SO may mark keys trusted (a public key, sealed with the token key). */
	ck_assert_rv(p11->C_CreateObject(f.rw, t, N_ELEMENTS(t), &h), CKR_OK);
	pg_assert_int_eq(get_bool(f.rw, h, CKA_TRUSTED), CK_TRUE);
	st_fini();
}

static void
test_copy(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE d = st_data(f.rw, "original", false, false), c;
	CK_OBJECT_HANDLE k = aes_key(f.rw, false, true, true), kc;
	CK_BYTE u1[32], u2[32];
	CK_ATTRIBUTE uid1 = { CKA_UNIQUE_ID, u1, 32 }, uid2 = { CKA_UNIQUE_ID, u2, 32 };
	CK_ATTRIBUTE to_token[] = { A(CKA_TOKEN, yes), { CKA_LABEL, "copied", 6 } };
	CK_ATTRIBUTE cls = A(CKA_CLASS, c_secret), copy_off = A(CKA_COPYABLE, no);
	CK_ATTRIBUTE ext_off = A(CKA_EXTRACTABLE, no);

	/* NSS's TLS server copies with an empty template. */
	ck_assert_rv(p11->C_CopyObject(f.rw, d, NULL, 0, &c), CKR_OK);
	pg_assert(c != d);
	pg_assert_int_eq(st_count_label(f.rw, "original"), 2);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, d, &uid1, 1), CKR_OK);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, c, &uid2, 1), CKR_OK);
	pg_assert(memcmp(u1, u2, 32) != 0);
	ck_assert_rv(p11->C_CopyObject(f.rw, d, NULL, 0, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_CopyObject(f.rw, d + 999, NULL, 0, &c), CKR_OBJECT_HANDLE_INVALID);
	ck_assert_rv(p11->C_CopyObject(f.rw, d, &cls, 1, &c), CKR_ATTRIBUTE_READ_ONLY);
	/* A session object copied to the token. */
	ck_assert_rv(p11->C_CopyObject(f.rw, d, to_token, 2, &c), CKR_OK);
	pg_assert_int_eq(get_bool(f.rw, c, CKA_TOKEN), CK_TRUE);
	ck_assert_rv(p11->C_CopyObject(f.ro, d, to_token, 2, &c), CKR_SESSION_READ_ONLY);
	/* A key: attributes follow, EXTRACTABLE may go to false. */
	ck_assert_rv(p11->C_CopyObject(f.rw, k, &ext_off, 1, &kc), CKR_OK);
	pg_assert_int_eq(get_bool(f.rw, kc, CKA_EXTRACTABLE), CK_FALSE);
	pg_assert_int_eq(get_bool(f.rw, kc, CKA_SENSITIVE), CK_TRUE);
	pg_assert_int_eq(get_ulong(f.rw, kc, CKA_VALUE_LEN), 32);
	ck_assert_rv(p11->C_SetAttributeValue(f.rw, d, &copy_off, 1), CKR_OK);
	ck_assert_rv(p11->C_CopyObject(f.rw, d, NULL, 0, &c), CKR_ACTION_PROHIBITED);
	st_fini();
}

static void
test_destroy(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE d = st_data(f.rw, "gone", true, false), u;
	CK_ATTRIBUTE t[] = { A(CKA_CLASS, c_data), A(CKA_DESTROYABLE, no) };
	CK_ULONG size = 0;

	ck_assert_rv(p11->C_GetObjectSize(f.rw, d, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetObjectSize(f.rw, d, &size), CKR_OK);
	pg_assert(size > 8);
	ck_assert_rv(p11->C_DestroyObject(f.ro, d), CKR_SESSION_READ_ONLY);
	ck_assert_rv(p11->C_DestroyObject(f.rw, d), CKR_OK);
	ck_assert_rv(p11->C_DestroyObject(f.rw, d), CKR_OBJECT_HANDLE_INVALID);
	ck_assert_rv(p11->C_GetObjectSize(f.rw, d, &size), CKR_OBJECT_HANDLE_INVALID);
	pg_assert_int_eq(st_count_label(f.rw, "gone"), 0);
	ck_assert_rv(p11->C_CreateObject(f.rw, t, 2, &u), CKR_OK);
	ck_assert_rv(p11->C_DestroyObject(f.rw, u), CKR_ACTION_PROHIBITED);
	/* A session object goes with a read-only session too. */
	d = st_data(f.ro, "session", false, false);
	ck_assert_rv(p11->C_DestroyObject(f.ro, d), CKR_OK);
	st_fini();
}

static void
test_session_objects_go(void)
{
	fixture f = setup(false);
	CK_SESSION_HANDLE other = st_open(f.slot, false);
	CK_OBJECT_HANDLE h = st_data(other, "short-lived", false, false);

	pg_assert_int_eq(st_count_label(f.rw, "short-lived"), 1);
	ck_assert_rv(p11->C_CloseSession(other), CKR_OK);
	pg_assert_int_eq(st_count_label(f.rw, "short-lived"), 0);
	pg_assert_int_eq(get_len(f.rw, h, CKA_LABEL, CKR_OBJECT_HANDLE_INVALID), 0);
	st_fini();
}

static void
test_private_visibility(void)
{
	fixture f = setup(true);
	CK_OBJECT_HANDLE p = st_data(f.rw, "secret note", true, true);

	pg_assert_int_eq(st_count_label(f.ro, "secret note"), 1);
	ck_assert_rv(p11->C_Logout(f.rw), CKR_OK);
	pg_assert_int_eq(st_count_label(f.ro, "secret note"), 0);
	pg_assert_int_eq(get_len(f.ro, p, CKA_LABEL, CKR_OBJECT_HANDLE_INVALID), 0);
	ck_assert_rv(p11->C_DestroyObject(f.rw, p), CKR_OBJECT_HANDLE_INVALID);
	st_login(f.ro);
	pg_assert_int_eq(get_len(f.ro, p, CKA_LABEL, CKR_OK), 11);
	/* The SO sees no private objects. */
	ck_assert_rv(p11->C_Logout(f.ro), CKR_OK);
	ck_assert_rv(p11->C_CloseSession(f.ro), CKR_OK);
	ck_assert_rv(p11->C_Login(f.rw, CKU_SO, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN)), CKR_OK);
	pg_assert_int_eq(st_count_label(f.rw, "secret note"), 0);
	st_fini();
}

static void
test_templates(void)
{
	fixture f = setup(true);
	CK_KEY_TYPE gen = CKK_GENERIC_SECRET;
	CK_ATTRIBUTE inner[] = { A(CKA_KEY_TYPE, gen), { CKA_LABEL, "wrapped", 7 } };
	CK_MECHANISM_TYPE mechs[2] = { CKM_AES_KEY_WRAP, CKM_AES_GCM };
	CK_ATTRIBUTE t[] = {
		A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_aes), A(CKA_VALUE, key32),
		{ CKA_UNWRAP_TEMPLATE, inner, sizeof(inner) },
		{ CKA_ALLOWED_MECHANISMS, mechs, sizeof(mechs) },
	};
	CK_ATTRIBUTE out[2], get = { CKA_UNWRAP_TEMPLATE, NULL, 0 };
	CK_MECHANISM_TYPE got_mechs[2];
	CK_ATTRIBUTE am = { CKA_ALLOWED_MECHANISMS, got_mechs, sizeof(got_mechs) };
	CK_KEY_TYPE kt = 0;
	char label[16];
	CK_OBJECT_HANDLE h;

	ck_assert_rv(p11->C_CreateObject(f.rw, t, N_ELEMENTS(t), &h), CKR_OK);
	/* Three steps: the array size, the sizes of its values, the values. */
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &get, 1), CKR_OK);
	pg_assert_int_eq(get.ulValueLen, 2 * sizeof(CK_ATTRIBUTE));
	memset(out, 0, sizeof(out));
	get.pValue = out;
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &get, 1), CKR_OK);
	pg_assert_int_eq(out[0].type, CKA_KEY_TYPE);
	pg_assert_int_eq(out[0].ulValueLen, sizeof(CK_KEY_TYPE));
	pg_assert_int_eq(out[1].ulValueLen, 7);
	out[0].pValue = &kt;
	out[1].pValue = label;
	out[1].ulValueLen = sizeof(label);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &get, 1), CKR_OK);
	pg_assert_int_eq(kt, CKK_GENERIC_SECRET);
	pg_assert_mem_eq(label, out[1].ulValueLen, "wrapped", 7);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, &am, 1), CKR_OK);
	pg_assert_mem_eq(got_mechs, am.ulValueLen, mechs, sizeof(mechs));
	/* Finding by a template value. */
	pg_assert_int_eq(st_count(f.rw, &t[3], 1), 1);
	st_fini();
}

/* A self-signed certificate, DER-encoded (free with OPENSSL_free). */
static int
make_cert(unsigned char **der, unsigned char **subject, int *subject_len)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = X509_new();
	X509_NAME *name = X509_NAME_new();
	int len;

	pg_assert_not_null(key);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"store test", -1, -1, 0);
	X509_set_version(cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(cert), 4242);
	X509_set_subject_name(cert, name);
	X509_set_issuer_name(cert, name);
	X509_gmtime_adj(X509_getm_notBefore(cert), 0);
	X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
	X509_set_pubkey(cert, key);
	pg_assert(X509_sign(cert, key, EVP_sha256()) > 0);
	*der = NULL;
	len = i2d_X509(cert, der);
	*subject = NULL;
	*subject_len = i2d_X509_NAME(name, subject);
	X509_NAME_free(name);
	X509_free(cert);
	EVP_PKEY_free(key);
	return len;
}

/* A certificate given as its DER only gets subject, issuer, serial and
 * public key info from it (what pkcs11-tool --write-object and NSS send). */
static void
test_certificate_from_der(void)
{
	static CK_OBJECT_CLASS c_cert = CKO_CERTIFICATE;
	static CK_CERTIFICATE_TYPE x509 = CKC_X_509;
	unsigned char *der, *subject, buf[512];
	int subject_len, len = make_cert(&der, &subject, &subject_len);
	fixture f = setup(true);
	CK_ATTRIBUTE t[] = {
		A(CKA_CLASS, c_cert), A(CKA_CERTIFICATE_TYPE, x509), A(CKA_TOKEN, yes),
		{ CKA_VALUE, der, (CK_ULONG)len },
	};
	CK_ATTRIBUTE get[] = {
		{ CKA_SUBJECT, buf, sizeof(buf) },
		{ CKA_ISSUER, NULL, 0 }, { CKA_SERIAL_NUMBER, NULL, 0 }, { CKA_PUBLIC_KEY_INFO, NULL, 0 },
	};
	CK_OBJECT_HANDLE h;

	ck_assert_rv(p11->C_CreateObject(f.rw, t, N_ELEMENTS(t), &h), CKR_OK);
	ck_assert_rv(p11->C_GetAttributeValue(f.rw, h, get, N_ELEMENTS(get)), CKR_OK);
	pg_assert_mem_eq(buf, get[0].ulValueLen, subject, (size_t)subject_len);
	pg_assert_int_eq(get[1].ulValueLen, subject_len);
	pg_assert(get[2].ulValueLen > 0);
	pg_assert(get[3].ulValueLen > 0);
	OPENSSL_free(der);
	OPENSSL_free(subject);
	st_fini();
}

int
main(int argc, char **argv)
{
	pg_test_fixture(NULL, st_teardown);
	pg_test("object/data-defaults", test_data_defaults);
	pg_test("object/create-errors", test_create_errors);
	pg_test("object/secret-key", test_secret_key);
	pg_test("object/get-rules", test_get_rules);
	pg_test("object/set-rules", test_set_rules);
	pg_test("object/so-trusted", test_so_trusted);
	pg_test("object/copy", test_copy);
	pg_test("object/destroy", test_destroy);
	pg_test("object/session-objects-go", test_session_objects_go);
	pg_test("object/private-visibility", test_private_visibility);
	pg_test("object/templates", test_templates);
	pg_test("object/certificate-from-der", test_certificate_from_der);
	return pg_test_run(argc, argv);
}
