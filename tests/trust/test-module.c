/*
 * p11glue-trust.so through its PKCS#11 functions: the error codes of the
 * attribute-read path (before C_Initialize, bad and stale handles,
 * buffers), handles refused after a reload, templates with NULL values
 * refused by C_CreateObject, and threads reading and searching at once
 * (run under ThreadSanitizer by CI).
 *
 * Environment: P11GLUE_TEST_TRUST_MODULE (the module), P11GLUE_TEST_DATA
 * (tests/data, for the unit certificates).
 */
#include "config.h"
#include "initargs.h"

#include "harness.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static CK_FUNCTION_LIST *f;

static void
load(void)
{
	const char *path = getenv("P11GLUE_TEST_TRUST_MODULE");
	void *dl;
	CK_C_GetFunctionList get;

	pg_assert_not_null(path);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	pg_assert_not_null(dl);
	get = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	pg_assert_not_null(get);
	pg_assert_ulong_eq(get(&f), CKR_OK);
}

static void
copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[4096];
	size_t n;

	pg_assert(in != NULL && out != NULL);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		pg_assert(fwrite(buf, 1, n, out) == n);
	fclose(in);
	pg_assert(fclose(out) == 0);
}

/* A trust directory: Unit CA in anchors/, the leaf beside it. */
static const char *
make_dir(void)
{
	static char dir[2048];
	char from[4200], to[4200];
	const char *data = getenv("P11GLUE_TEST_DATA");

	pg_assert_not_null(data);
	snprintf(dir, sizeof(dir), "%s/trust", pg_test_tmpdir());
	pg_assert(mkdir(dir, 0755) == 0);
	snprintf(to, sizeof(to), "%s/anchors", dir);
	pg_assert(mkdir(to, 0755) == 0);
	snprintf(from, sizeof(from), "%s/trust/unit-ca.pem", data);
	snprintf(to, sizeof(to), "%s/anchors/unit-ca.pem", dir);
	copy_file(from, to);
	snprintf(from, sizeof(from), "%s/trust/unit-leaf.pem", data);
	snprintf(to, sizeof(to), "%s/unit-leaf.pem", dir);
	copy_file(from, to);
	return dir;
}

static void
init(const char *dir)
{
	char reserved[4200];
	CK_C_INITIALIZE_ARGS args = { 0 };

	snprintf(reserved, sizeof(reserved), "paths=%s", dir);
	args.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	args.pReserved = reserved;
	pg_assert_ulong_eq(f->C_Initialize(&args), CKR_OK);
}

static CK_SESSION_HANDLE
open_session(void)
{
	CK_SLOT_ID slot;
	CK_ULONG n = 1;
	CK_SESSION_HANDLE s;

	pg_assert_ulong_eq(f->C_GetSlotList(CK_TRUE, &slot, &n), CKR_OK);
	pg_assert_ulong_eq(n, 1);
	pg_assert_ulong_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	return s;
}

/* Objects of a class; returns how many (handles in out). */
static CK_ULONG
find_class(CK_SESSION_HANDLE s, CK_OBJECT_CLASS klass, CK_OBJECT_HANDLE *out, CK_ULONG max)
{
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_ULONG n = 0;

	pg_assert_ulong_eq(f->C_FindObjectsInit(s, &t, 1), CKR_OK);
	pg_assert_ulong_eq(f->C_FindObjects(s, out, max, &n), CKR_OK);
	pg_assert_ulong_eq(f->C_FindObjectsFinal(s), CKR_OK);
	return n;
}

static void
test_not_initialized(void)
{
	CK_ATTRIBUTE a = { CKA_CLASS, NULL, 0 };

	load();
	pg_assert_ulong_eq(f->C_GetAttributeValue(1, 1, &a, 1), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_ulong_eq(f->C_FindObjectsInit(1, NULL, 0), CKR_CRYPTOKI_NOT_INITIALIZED);
	init(make_dir());
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
	/* After C_Finalize too, and the session table is gone. */
	pg_assert_ulong_eq(f->C_GetAttributeValue(1, 1, &a, 1), CKR_CRYPTOKI_NOT_INITIALIZED);
}

/* pReserved is read as a string only from a caller known to pass one
 * (PKCS#11 v3.0 §5.4: it should be NULL); anything else is refused, not
 * dereferenced. */
static void
test_reserved_pointer(void)
{
	static void *const junk[] = { (void *)1, (void *)0x10, (void *)0x1001 };
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	char paths[64] = "paths=/nonexistent";

	load();
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		args.pReserved = junk[i];
		pg_assert_ulong_eq(f->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	}
	/* A string, but from a caller that does not say it passes one. */
	args.pReserved = paths;
	pg_assert_ulong_eq(f->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = NULL;
	pg_assert_ulong_eq(f->C_Initialize(&args), CKR_OK);
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

static void
test_template(void)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE certs[4];
	CK_OBJECT_CLASS klass = 0;
	CK_BBOOL trusted = CK_FALSE;
	char label[3];
	CK_ULONG n;

	load();
	init(make_dir());
	s = open_session();
	n = find_class(s, CKO_CERTIFICATE, certs, 4);
	pg_assert_ulong_eq(n, 2);
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &klass, sizeof(klass) },
			{ CKA_VALUE, NULL, 0 },
			{ CKA_LABEL, label, sizeof(label) },
			{ CKA_KEY_TYPE, NULL, 0 },
			{ CKA_TRUSTED, &trusted, 1 },
		};
		/* Every attribute is answered; the first failure is returned. */
		pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], t, 5), CKR_BUFFER_TOO_SMALL);
		pg_assert_ulong_eq(klass, CKO_CERTIFICATE);
		pg_assert(t[1].ulValueLen > 100 && t[1].ulValueLen != CK_UNAVAILABLE_INFORMATION);
		pg_assert_ulong_eq(t[2].ulValueLen, CK_UNAVAILABLE_INFORMATION);
		pg_assert_ulong_eq(t[3].ulValueLen, CK_UNAVAILABLE_INFORMATION);
		pg_assert_ulong_eq(t[4].ulValueLen, 1);
	}
	{
		CK_ATTRIBUTE t[] = { { CKA_KEY_TYPE, NULL, 0 }, { CKA_LABEL, label, sizeof(label) } };
		pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], t, 2), CKR_ATTRIBUTE_TYPE_INVALID);
	}
	{
		CK_ATTRIBUTE one = { CKA_CLASS, &klass, sizeof(klass) - 1 };
		pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], &one, 1), CKR_BUFFER_TOO_SMALL);
		pg_assert_ulong_eq(one.ulValueLen, CK_UNAVAILABLE_INFORMATION);
		pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], NULL, 1), CKR_ARGUMENTS_BAD);
		pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], NULL, 0), CKR_OK);
	}
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

static void
test_handles(void)
{
	CK_SESSION_HANDLE s, closed;
	CK_OBJECT_HANDLE certs[4];
	CK_OBJECT_CLASS klass;
	CK_ATTRIBUTE a = { CKA_CLASS, &klass, sizeof(klass) };

	load();
	init(make_dir());
	closed = open_session();
	pg_assert_ulong_eq(f->C_CloseSession(closed), CKR_OK);
	s = open_session();
	/* The table slot is reused; the old handle is not. */
	pg_assert(s != closed);
	pg_assert_ulong_eq(find_class(s, CKO_CERTIFICATE, certs, 4), 2);
	pg_assert_ulong_eq(f->C_GetAttributeValue(closed, certs[0], &a, 1), CKR_SESSION_HANDLE_INVALID);
	pg_assert_ulong_eq(f->C_GetAttributeValue(0, certs[0], &a, 1), CKR_SESSION_HANDLE_INVALID);
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, 0, &a, 1), CKR_OBJECT_HANDLE_INVALID);
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0] + 100000, &a, 1),
	                   CKR_OBJECT_HANDLE_INVALID);
	/* Another token's bits. */
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0] + (1UL << 24), &a, 1),
	                   CKR_OBJECT_HANDLE_INVALID);
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, certs[0], &a, 1), CKR_OK);
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

/* Handles from before a reload are refused (where CK_ULONG has room for
 * the generation), not taken for whatever object now has that index. */
static void
test_stale_handles(void)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE before[4], after[4];
	CK_OBJECT_CLASS klass;
	CK_ATTRIBUTE a = { CKA_CLASS, &klass, sizeof(klass) };
	const char *dir;
	char from[4200], to[4200];

	if (sizeof(CK_ULONG) < 8)
		pg_test_skip("32-bit CK_ULONG: no room for a generation in handles");
	load();
	dir = make_dir();
	init(dir);
	s = open_session();
	pg_assert_ulong_eq(find_class(s, CKO_CERTIFICATE, before, 4), 2);
	snprintf(from, sizeof(from), "%s/trust/unit-leaf.pem", getenv("P11GLUE_TEST_DATA"));
	snprintf(to, sizeof(to), "%s/second.pem", dir);
	copy_file(from, to);
	pg_assert_ulong_eq(find_class(s, CKO_CERTIFICATE, after, 4), 3);
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, before[0], &a, 1), CKR_OBJECT_HANDLE_INVALID);
	pg_assert_ulong_eq(f->C_GetAttributeValue(s, after[0], &a, 1), CKR_OK);
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

/* C_CreateObject on a writable token with a NULL value whose length is
 * given: refused as an invalid value, never read. */
static void
test_create_null_value(void)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_ATTRIBUTE no_class[] = { { CKA_CLASS, NULL, sizeof(klass) } };
	CK_ATTRIBUTE no_token[] = { { CKA_CLASS, &klass, sizeof(klass) }, { CKA_TOKEN, NULL, 1 } };
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h;
	CK_SLOT_ID slot;
	CK_ULONG n = 1;

	load();
	init(make_dir());
	pg_assert_ulong_eq(f->C_GetSlotList(CK_TRUE, &slot, &n), CKR_OK);
	pg_assert_ulong_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s),
	                   CKR_OK);
	pg_assert_ulong_eq(f->C_CreateObject(s, no_class, 1, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	pg_assert_ulong_eq(f->C_CreateObject(s, no_token, 2, &h), CKR_ATTRIBUTE_VALUE_INVALID);
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

/*
 * Threads enumerating and reading at once while another keeps changing
 * a file of the token, so that the objects are rebuilt under them: a
 * read answers or refuses a handle from before a rebuild, never
 * anything else (and ThreadSanitizer sees the locking).
 */
static const char *thread_dir;
static atomic_int writer_done;

static void *
reader(void *arg)
{
	long failures = 0;

	(void)arg;
	for (int round = 0; round < 40 || !atomic_load(&writer_done); round++) {
		CK_SESSION_HANDLE s = open_session();
		CK_OBJECT_HANDLE objs[64];
		CK_ULONG n = 0;
		if (f->C_FindObjectsInit(s, NULL, 0) != CKR_OK ||
		    f->C_FindObjects(s, objs, 64, &n) != CKR_OK || f->C_FindObjectsFinal(s) != CKR_OK)
			failures++;
		for (CK_ULONG i = 0; i < n; i++) {
			CK_OBJECT_CLASS klass = 0;
			unsigned char value[4096];
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
			                     { CKA_LABEL, value, sizeof(value) } };
			/* Digests computed on first use: written under the lock. */
			CK_ATTRIBUTE d[] = { { CKA_HASH_OF_SUBJECT_PUBLIC_KEY, value, sizeof(value) },
			                     { CKA_CERT_SHA1_HASH, value, sizeof(value) },
			                     { CKA_CERT_MD5_HASH, value, sizeof(value) },
			                     { CKA_CHECK_VALUE, value, sizeof(value) } };
			CK_RV rv = f->C_GetAttributeValue(s, objs[i], t, 2);
			if (rv == CKR_OBJECT_HANDLE_INVALID)
				continue;
			if (rv != CKR_OK || klass == 0)
				failures++;
			for (size_t k = 0; k < 4; k++)
				f->C_GetAttributeValue(s, objs[i], &d[k], 1);
		}
		if (n < 10 || f->C_CloseSession(s) != CKR_OK)
			failures++;
	}
	return (void *)failures;
}

static void *
writer(void *arg)
{
	char from[4200], to[4200];
	CK_SESSION_HANDLE s = open_session();

	(void)arg;
	snprintf(from, sizeof(from), "%s/trust/unit-leaf.pem", getenv("P11GLUE_TEST_DATA"));
	snprintf(to, sizeof(to), "%s/second.pem", thread_dir);
	for (int round = 0; round < 40; round++) {
		if (round % 2 == 0)
			copy_file(from, to);
		else
			unlink(to);
		/* A search reloads the token. */
		f->C_FindObjectsInit(s, NULL, 0);
		f->C_FindObjectsFinal(s);
	}
	f->C_CloseSession(s);
	atomic_store(&writer_done, 1);
	return NULL;
}

static void
test_threads(void)
{
	pthread_t threads[7];

	load();
	thread_dir = make_dir();
	init(thread_dir);
	for (int i = 0; i < 6; i++)
		pg_assert_int_eq(pthread_create(&threads[i], NULL, reader, NULL), 0);
	pg_assert_int_eq(pthread_create(&threads[6], NULL, writer, NULL), 0);
	for (int i = 0; i < 7; i++) {
		void *failures;
		pg_assert_int_eq(pthread_join(threads[i], &failures), 0);
		pg_assert_int_eq((long)failures, 0);
	}
	pg_assert_ulong_eq(f->C_Finalize(NULL), CKR_OK);
}

int
main(int argc, char **argv)
{
	/* The module keeps process-wide state: one process per case. */
	pg_test_fork_cases(true);
	pg_test("module/not-initialized", test_not_initialized);
	pg_test("module/reserved-pointer", test_reserved_pointer);
	pg_test("module/template", test_template);
	pg_test("module/handles", test_handles);
	pg_test("module/stale-handles", test_stale_handles);
	pg_test("module/create-null-value", test_create_null_value);
	pg_test("module/threads", test_threads);
	return pg_test_run(argc, argv);
}
