/*
 * db.c, seal.c, find.c: persistence, sealing at rest, several instances
 * on one token, finding, damaged databases.
 */
#define _GNU_SOURCE
#include "store-test.h"

#include "core.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static CK_OBJECT_CLASS c_data = CKO_DATA, c_secret = CKO_SECRET_KEY;
static CK_KEY_TYPE k_generic = CKK_GENERIC_SECRET;
static CK_BBOOL yes = CK_TRUE;

#define A(t, v) { t, &(v), sizeof(v) }

/* Reads a whole file (caller frees); *len its size. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	long size;

	pg_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)size + 1);
	pg_assert_not_null(data);
	pg_assert_int_eq(fread(data, 1, (size_t)size, f), size);
	fclose(f);
	*len = (size_t)size;
	return data;
}

static bool
file_contains(const char *path, const char *needle)
{
	size_t len;
	unsigned char *data;
	bool found;

	if (access(path, F_OK) != 0)
		return false;
	data = slurp(path, &len);
	found = memmem(data, len, needle, strlen(needle)) != NULL;
	free(data);
	return found;
}

static CK_OBJECT_HANDLE
secret(CK_SESSION_HANDLE s, const char *label, const char *value)
{
	CK_ATTRIBUTE t[] = {
		A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_generic), A(CKA_TOKEN, yes),
		{ CKA_LABEL, (void *)label, strlen(label) }, { CKA_VALUE, (void *)value, strlen(value) },
	};
	CK_OBJECT_HANDLE h = 0;

	ck_assert_rv(p11->C_CreateObject(s, t, N_ELEMENTS(t), &h), CKR_OK);
	return h;
}

static void
test_persistence(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h;
	CK_ULONG len = 0;
	CK_ATTRIBUTE vl = { CKA_VALUE_LEN, &len, sizeof(len) };
	CK_ATTRIBUTE cls = A(CKA_CLASS, c_secret);

	st_init();
	slot = st_token("persist");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "public", true, false);
	st_data(s, "private", true, true);
	st_data(s, "session only", false, false);
	secret(s, "key", "0123456789");
	st_fini();

	st_init();
	s = st_open(slot, false);
	pg_assert_int_eq(st_count_label(s, "public"), 1);
	pg_assert_int_eq(st_count_label(s, "private"), 0);
	pg_assert_int_eq(st_count_label(s, "key"), 0);
	pg_assert_int_eq(st_count_label(s, "session only"), 0);
	st_login(s);
	pg_assert_int_eq(st_count_label(s, "private"), 1);
	pg_assert_int_eq(st_count(s, &cls, 1), 1);
	{
		CK_OBJECT_HANDLE found[2];
		CK_ULONG n = 0;
		ck_assert_rv(p11->C_FindObjectsInit(s, &cls, 1), CKR_OK);
		ck_assert_rv(p11->C_FindObjects(s, found, 2, &n), CKR_OK);
		ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
		pg_assert_int_eq(n, 1);
		h = found[0];
	}
	ck_assert_rv(p11->C_GetAttributeValue(s, h, &vl, 1), CKR_OK);
	pg_assert_int_eq(len, 10);
	st_fini();
	pg_assert(pg_db_check(st_token_path(slot)));
}

static void
test_sealed_at_rest(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	char wal[700];

	st_init();
	slot = st_token("sealed");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "PUBLIC-VALUE-0042", true, false);
	st_data(s, "PRIVATE-NOTE-0042", true, true);
	secret(s, "key label", "SECRET-KEY-VALUE-0042");
	snprintf(wal, sizeof(wal), "%s-wal", st_token_path(slot));
	pg_assert(file_contains(wal, "PUBLIC-VALUE-0042"));
	pg_assert(!file_contains(wal, "PRIVATE-NOTE-0042"));
	pg_assert(!file_contains(wal, "SECRET-KEY-VALUE-0042"));
	pg_assert(!file_contains(wal, "key label"));
	st_fini();
	pg_assert(file_contains(st_token_path(slot), "PUBLIC-VALUE-0042"));
	pg_assert(!file_contains(st_token_path(slot), "PRIVATE-NOTE-0042"));
	pg_assert(!file_contains(st_token_path(slot), "SECRET-KEY-VALUE-0042"));
}

static void
test_find_templates(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_BYTE id1[] = { 1, 2 }, id2[] = { 3 };
	CK_ATTRIBUTE with_id[] = { A(CKA_CLASS, c_secret), A(CKA_KEY_TYPE, k_generic),
	                           { CKA_VALUE, "k", 1 }, { CKA_ID, id1, 2 } };
	CK_ATTRIBUTE by_id = { CKA_ID, id1, 2 }, by_other_id = { CKA_ID, id2, 1 };
	CK_ATTRIBUTE by_class = A(CKA_CLASS, c_data), by_secret = A(CKA_CLASS, c_secret);
	CK_ATTRIBUTE label_class[] = { { CKA_LABEL, "n5", 2 }, A(CKA_CLASS, c_data) };
	CK_ATTRIBUTE label_secret[] = { { CKA_LABEL, "n5", 2 }, A(CKA_CLASS, c_secret) };
	CK_ATTRIBUTE empty_label = { CKA_LABEL, "", 0 };
	CK_ATTRIBUTE by_value = { CKA_VALUE, "VALUE-FOR-KEY", 13 };
	CK_OBJECT_HANDLE h, found[4];
	CK_ULONG n;
	char label[16];

	st_init();
	slot = st_token("find");
	s = st_open(slot, true);
	st_login(s);
	for (int i = 0; i < 40; i++) {
		snprintf(label, sizeof(label), "n%d", i % 10);
		st_data(s, label, i % 2 == 0, i % 4 == 1);
	}
	ck_assert_rv(p11->C_CreateObject(s, with_id, 4, &h), CKR_OK);
	secret(s, "n5", "VALUE-FOR-KEY");
	pg_assert_int_eq(st_count(s, NULL, 0), 42);
	pg_assert_int_eq(st_count(s, &by_class, 1), 40);
	pg_assert_int_eq(st_count(s, &by_secret, 1), 2);
	pg_assert_int_eq(st_count_label(s, "n3"), 4);
	pg_assert_int_eq(st_count(s, label_class, 2), 4);
	pg_assert_int_eq(st_count(s, label_secret, 2), 1);
	pg_assert_int_eq(st_count(s, &by_id, 1), 1);
	pg_assert_int_eq(st_count(s, &by_other_id, 1), 0);
	pg_assert_int_eq(st_count(s, &empty_label, 1), 1);   /* the keyed secret */
	/* A sensitive value is not matched (that would reveal it). */
	pg_assert_int_eq(st_count(s, &by_value, 1), 0);
	/* Private objects only while logged in. */
	ck_assert_rv(p11->C_Logout(s), CKR_OK);
	pg_assert_int_eq(st_count(s, &by_class, 1), 30);
	pg_assert_int_eq(st_count_label(s, "n1"), 2);
	/* Paging and errors. */
	ck_assert_rv(p11->C_FindObjects(s, found, 4, &n), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 1), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_FindObjectsInit(s, &by_class, 1), CKR_OK);
	ck_assert_rv(p11->C_FindObjectsInit(s, &by_class, 1), CKR_OPERATION_ACTIVE);
	ck_assert_rv(p11->C_FindObjects(s, NULL, 4, &n), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_FindObjects(s, found, 4, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_FindObjects(s, found, 4, &n), CKR_OK);
	pg_assert_int_eq(n, 4);
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
	st_fini();
}

/* Runs body(slot) in a child process; returns its exit status. */
static int
in_child(int (*body)(CK_SLOT_ID), CK_SLOT_ID slot)
{
	int status = -1;
	pid_t pid = fork();

	pg_assert(pid >= 0);
	if (pid == 0)
		_exit(body(slot));
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static int
child_writes(CK_SLOT_ID slot)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE found[4];
	CK_ULONG n = 0;
	CK_ATTRIBUTE label = { CKA_LABEL, "victim", 6 }, rename = { CKA_LABEL, "renamed", 7 };
	CK_ATTRIBUTE by_label = { CKA_LABEL, "to change", 9 };

	if (st_initialize(NULL) != CKR_OK ||
	    p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK ||
	    p11->C_Login(s, CKU_USER, (CK_UTF8CHAR *)USER_PIN, 4) != CKR_OK)
		return 1;
	st_data(s, "from the other process", true, false);
	st_data(s, "private from the other", true, true);
	if (p11->C_FindObjectsInit(s, &label, 1) != CKR_OK ||
	    p11->C_FindObjects(s, found, 4, &n) != CKR_OK || n != 1 ||
	    p11->C_FindObjectsFinal(s) != CKR_OK || p11->C_DestroyObject(s, found[0]) != CKR_OK)
		return 2;
	if (p11->C_FindObjectsInit(s, &by_label, 1) != CKR_OK ||
	    p11->C_FindObjects(s, found, 4, &n) != CKR_OK || n != 1 ||
	    p11->C_FindObjectsFinal(s) != CKR_OK ||
	    p11->C_SetAttributeValue(s, found[0], &rename, 1) != CKR_OK)
		return 3;
	return p11->C_Finalize(NULL) == CKR_OK ? 0 : 4;
}

static void
test_two_instances(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE changed;
	char label[16];
	CK_ATTRIBUTE get = { CKA_LABEL, label, sizeof(label) };

	st_init();
	slot = st_token("shared");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "victim", true, false);
	changed = st_data(s, "to change", true, false);
	/* Another process changes the token while we hold it open. */
	pg_assert_int_eq(in_child(child_writes, slot), 0);
	pg_assert_int_eq(st_count_label(s, "from the other process"), 1);
	pg_assert_int_eq(st_count_label(s, "private from the other"), 1);
	pg_assert_int_eq(st_count_label(s, "victim"), 0);
	pg_assert_int_eq(st_count_label(s, "to change"), 0);
	/* The same handle, the new value. */
	ck_assert_rv(p11->C_GetAttributeValue(s, changed, &get, 1), CKR_OK);
	pg_assert_mem_eq(label, get.ulValueLen, "renamed", 7);
	st_fini();
}

/* Copies the database from over to with SQLite's backup API, in one
 * transaction on to, as `p11glue restore --replace` does. */
static void
copy_db(const char *from, const char *to)
{
	sqlite3 *src = NULL, *dst = NULL;
	sqlite3_backup *b;

	pg_assert_int_eq(sqlite3_open(from, &src), SQLITE_OK);
	pg_assert_int_eq(sqlite3_open(to, &dst), SQLITE_OK);
	b = sqlite3_backup_init(dst, "main", src, "main");
	pg_assert_not_null(b);
	pg_assert_int_eq(sqlite3_backup_step(b, -1), SQLITE_DONE);
	pg_assert_int_eq(sqlite3_backup_finish(b), SQLITE_OK);
	sqlite3_close(dst);
	sqlite3_close(src);
}

static void
test_replaced_whole(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	char copy[4096];

	st_init();
	slot = st_token("replaced");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "before", true, false);
	snprintf(copy, sizeof(copy), "%s/copy.sqlite", st_dir());
	copy_db(st_token_path(slot), copy);
	st_data(s, "after", true, false);
	st_data(s, "after, private", true, true);
	pg_assert_int_eq(st_count_label(s, "after"), 1);
	/* The older copy put back over the token while it is in use: its
	 * change counter is lower than the one this process saw. */
	copy_db(copy, st_token_path(slot));
	pg_assert_int_eq(st_count_label(s, "after"), 0);
	pg_assert_int_eq(st_count_label(s, "before"), 1);
	st_login(s);
	pg_assert_int_eq(st_count_label(s, "after, private"), 0);
	st_data(s, "written after", true, false);
	st_fini();
	st_init();
	s = st_open(slot, false);
	pg_assert_int_eq(st_count_label(s, "before"), 1);
	pg_assert_int_eq(st_count_label(s, "written after"), 1);
	pg_assert_int_eq(st_count_label(s, "after"), 0);
	st_fini();
}

/* Makes a token with some objects and returns its slot (finalized). */
static CK_SLOT_ID
populated(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	char label[16];

	st_init();
	slot = st_token("damaged");
	s = st_open(slot, true);
	st_login(s);
	for (int i = 0; i < 60; i++) {
		snprintf(label, sizeof(label), "object %d", i);
		st_data(s, label, true, i % 2 == 0);
	}
	secret(s, "sealed key", "0123456789abcdef");
	st_fini();
	return slot;
}

/* Every call must return, with OK or a device/recognition error. */
static void
exercise(CK_SLOT_ID slot)
{
	CK_SLOT_ID slots[8];
	CK_ULONG n = 8;
	CK_TOKEN_INFO ti;
	CK_SESSION_HANDLE s;
	CK_RV rv;

	st_init();
	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, NULL, &n), CKR_OK);
	n = 8;
	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	rv = p11->C_GetTokenInfo(slot, &ti);
	pg_assert(rv == CKR_OK || rv == CKR_SLOT_ID_INVALID || rv == CKR_DEVICE_ERROR);
	if (rv == CKR_OK)
		pg_assert(ti.flags & CKF_TOKEN_INITIALIZED);   /* never offered as a free slot */
	rv = p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s);
	pg_assert(rv == CKR_OK || rv == CKR_SLOT_ID_INVALID || rv == CKR_DEVICE_ERROR);
	if (rv == CKR_OK) {
		rv = p11->C_Login(s, CKU_USER, (CK_UTF8CHAR *)USER_PIN, 4);
		pg_assert(rv == CKR_OK || rv == CKR_DEVICE_ERROR || rv == CKR_USER_PIN_NOT_INITIALIZED);
		(void)st_count_label(s, "object 3");
		n = 0;
		rv = p11->C_FindObjectsInit(s, NULL, 0);
		pg_assert(rv == CKR_OK || rv == CKR_DEVICE_ERROR);
		if (rv == CKR_OK)
			ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
		st_data(s, "probe", false, false);
	}
	st_fini();
}

static void
damage_and_check(CK_SLOT_ID slot, off_t at, const char *bytes, size_t len, off_t truncate_to)
{
	const char *path = st_token_path(slot);
	unsigned char *before, *after;
	size_t blen, alen;
	int fd = open(path, O_RDWR);

	pg_assert(fd >= 0);
	if (bytes != NULL)
		pg_assert_int_eq(pwrite(fd, bytes, len, at), (ssize_t)len);
	if (truncate_to >= 0)
		pg_assert_int_eq(ftruncate(fd, truncate_to), 0);
	close(fd);
	before = slurp(path, &blen);
	exercise(slot);
	/* Nothing rewrote the damaged file. */
	after = slurp(path, &alen);
	pg_assert_mem_eq(after, alen, before, blen);
	free(before);
	free(after);
}

static void
test_damaged_header(void)
{
	CK_SLOT_ID slot = populated();

	damage_and_check(slot, 0, "this is no database at all", 26, -1);
	/* Its slot number is not reused for the free slot. */
	st_init();
	pg_assert(st_free_slot() != slot);
	st_fini();
}

static void
test_damaged_truncated(void)
{
	CK_SLOT_ID slot = populated();
	struct stat st;

	pg_assert_int_eq(stat(st_token_path(slot), &st), 0);
	damage_and_check(slot, 0, NULL, 0, st.st_size / 2);
}

static void
test_damaged_empty(void)
{
	CK_SLOT_ID slot = populated();

	damage_and_check(slot, 0, NULL, 0, 0);
}

static void
test_damaged_pages(void)
{
	CK_SLOT_ID slot = populated();
	char junk[512];

	memset(junk, 0xa5, sizeof(junk));
	damage_and_check(slot, 4096 + 100, junk, sizeof(junk), -1);
	damage_and_check(slot, 3 * 4096 + 7, junk, sizeof(junk), -1);
}

/* Rewrites rows through SQLite, as a buggy or hostile writer would. */
static void
sql(CK_SLOT_ID slot, const char *stmt)
{
	sqlite3 *db = NULL;

	pg_assert_int_eq(sqlite3_open(st_token_path(slot), &db), SQLITE_OK);
	pg_assert_int_eq(sqlite3_exec(db, stmt, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void
test_damaged_records(void)
{
	CK_SLOT_ID slot = populated();
	CK_SESSION_HANDLE s;
	CK_ATTRIBUTE by_class = A(CKA_CLASS, c_data);

	/* Rows alternate private (odd ids) and public (even ids). A malformed
	 * record, a short one, one with trailing bytes, and a sealed value
	 * that no longer opens. */
	sql(slot, "UPDATE object SET attrs = x'00' WHERE id = 2;"
	          "UPDATE object SET attrs = substr(attrs, 1, 20) WHERE id = 4;"
	          "UPDATE object SET attrs = attrs || x'00' WHERE id = 6;"
	          "UPDATE object SET attrs = substr(attrs, 1, length(attrs) - 1) ||"
	          " x'ff' WHERE private = 1 AND id = 3;");
	st_init();
	s = st_open(slot, false);
	pg_assert_int_eq(st_count(s, &by_class, 1), 30 - 3);
	st_login(s);
	pg_assert_int_eq(st_count(s, &by_class, 1), 60 - 4);
	pg_assert_int_eq(st_count_label(s, "sealed key"), 1);
	st_fini();
	pg_assert(pg_db_check(st_token_path(slot)));
}

int
main(int argc, char **argv)
{
	pg_test_fixture(NULL, st_teardown);
	pg_test("db/persistence", test_persistence);
	pg_test("db/sealed-at-rest", test_sealed_at_rest);
	pg_test("db/find-templates", test_find_templates);
	pg_test("db/two-instances", test_two_instances);
	pg_test("db/replaced-whole", test_replaced_whole);
	pg_test("db/damaged-header", test_damaged_header);
	pg_test("db/damaged-truncated", test_damaged_truncated);
	pg_test("db/damaged-empty", test_damaged_empty);
	pg_test("db/damaged-pages", test_damaged_pages);
	pg_test("db/damaged-records", test_damaged_records);
	return pg_test_run(argc, argv);
}
