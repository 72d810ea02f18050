/*
 * Helpers for the key store tests.
 */
#include "store-test.h"
#include "initargs.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

CK_FUNCTION_LIST_3_0 *p11;

void
st_load(void)
{
	CK_INTERFACE *iface = NULL;
	CK_VERSION v = { 3, 0 };

	if (p11 != NULL)
		return;
	if (C_GetInterface((CK_UTF8CHAR *)"PKCS 11", &v, &iface, 0) != CKR_OK || iface == NULL)
		abort();
	p11 = iface->pFunctionList;
}

const char *
st_dir(void)
{
	static char dir[512];

	snprintf(dir, sizeof(dir), "%s/store", pg_test_tmpdir());
	return dir;
}

const char *
st_options(const char *extra)
{
	static char text[1024];

	snprintf(text, sizeof(text), "store=%s scrypt-log2n=10 %s", st_dir(), extra ? extra : "");
	return text;
}

CK_RV
st_initialize(const char *extra)
{
	CK_C_INITIALIZE_ARGS args;

	st_load();
	memset(&args, 0, sizeof(args));
	args.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	args.pReserved = (void *)st_options(extra);
	return p11->C_Initialize(&args);
}

void
st_init(void)
{
	ck_assert_rv(st_initialize(NULL), CKR_OK);
}

void
st_fini(void)
{
	ck_assert_rv(p11->C_Finalize(NULL), CKR_OK);
}

void
st_teardown(void)
{
	if (p11 != NULL)
		(void)p11->C_Finalize(NULL);
}

CK_SLOT_ID
st_free_slot(void)
{
	CK_SLOT_ID slots[64];
	CK_ULONG n = 64;
	CK_TOKEN_INFO info;
	CK_SLOT_ID found = (CK_SLOT_ID)-1;
	int free_slots = 0;

	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, NULL, &n), CKR_OK);
	n = 64;
	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	for (CK_ULONG i = 0; i < n; i++) {
		ck_assert_rv(p11->C_GetTokenInfo(slots[i], &info), CKR_OK);
		if (!(info.flags & CKF_TOKEN_INITIALIZED)) {
			found = slots[i];
			free_slots++;
		}
	}
	pg_assert_int_eq(free_slots, 1);
	return found;
}

CK_SLOT_ID
st_token(const char *label)
{
	CK_UTF8CHAR padded[32];
	CK_SLOT_ID slot = st_free_slot();
	CK_SESSION_HANDLE s;
	size_t len = strlen(label);

	memset(padded, ' ', sizeof(padded));
	memcpy(padded, label, len > 32 ? 32 : len);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN), padded), CKR_OK);
	ck_assert_rv(p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s),
	             CKR_OK);
	ck_assert_rv(p11->C_Login(s, CKU_SO, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN)), CKR_OK);
	ck_assert_rv(p11->C_InitPIN(s, (CK_UTF8CHAR *)USER_PIN, strlen(USER_PIN)), CKR_OK);
	ck_assert_rv(p11->C_Logout(s), CKR_OK);
	ck_assert_rv(p11->C_CloseSession(s), CKR_OK);
	return slot;
}

CK_SESSION_HANDLE
st_open(CK_SLOT_ID slot, bool rw)
{
	CK_SESSION_HANDLE s = 0;
	CK_FLAGS flags = CKF_SERIAL_SESSION | (rw ? CKF_RW_SESSION : 0);

	ck_assert_rv(p11->C_OpenSession(slot, flags, NULL, NULL, &s), CKR_OK);
	return s;
}

void
st_login(CK_SESSION_HANDLE session)
{
	ck_assert_rv(p11->C_Login(session, CKU_USER, (CK_UTF8CHAR *)USER_PIN, strlen(USER_PIN)),
	             CKR_OK);
}

CK_OBJECT_HANDLE
st_data(CK_SESSION_HANDLE session, const char *label, bool token, bool priv)
{
	CK_OBJECT_CLASS cls = CKO_DATA;
	CK_BBOOL tok = token, pr = priv;
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_TOKEN, &tok, sizeof(tok) },
		{ CKA_PRIVATE, &pr, sizeof(pr) },
		{ CKA_LABEL, (void *)label, strlen(label) },
		{ CKA_VALUE, (void *)label, strlen(label) },
	};
	CK_OBJECT_HANDLE h = 0;

	ck_assert_rv(p11->C_CreateObject(session, tmpl, 5, &h), CKR_OK);
	pg_assert(h != 0);
	return h;
}

CK_ULONG
st_count(CK_SESSION_HANDLE session, CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	CK_OBJECT_HANDLE found[64];
	CK_ULONG got = 0, total = 0;

	ck_assert_rv(p11->C_FindObjectsInit(session, tmpl, n), CKR_OK);
	do {
		ck_assert_rv(p11->C_FindObjects(session, found, 64, &got), CKR_OK);
		total += got;
	} while (got > 0);
	ck_assert_rv(p11->C_FindObjectsFinal(session), CKR_OK);
	return total;
}

CK_ULONG
st_count_label(CK_SESSION_HANDLE session, const char *label)
{
	CK_ATTRIBUTE tmpl = { CKA_LABEL, (void *)label, strlen(label) };

	return st_count(session, &tmpl, 1);
}

const char *
st_token_path(CK_SLOT_ID slot)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/token-%lu.sqlite", st_dir(), slot);
	return path;
}
