/*
 * The crash test's program (test-crash.sh drives it):
 *
 *   store-crash init DIR          make a token in DIR
 *   store-crash child DIR LOG     loop for ever: C_Initialize, C_Login,
 *                                 C_CreateObject, C_GenerateKeyPair (or a
 *                                 key pair through pg_object_create_pair
 *                                 when the mech layer cannot generate),
 *                                 C_Finalize; after each CKR_OK append
 *                                 "d LABEL" or "k LABEL" to LOG, fsync'd
 *   store-crash verify DIR LOG    TAP: everything logged is there and
 *                                 usable, nothing is half-written, pairs
 *                                 are whole, the database checks out
 */
#include "store-test.h"

#include "core.h"
#include "initargs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const CK_BYTE p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
static const char *dir_arg;
static char options[1024];

static CK_RV
init(void)
{
	CK_C_INITIALIZE_ARGS args;

	st_load();
	memset(&args, 0, sizeof(args));
	snprintf(options, sizeof(options), "store=%s scrypt-log2n=12", dir_arg);
	args.flags = PG_CKF_RESERVED_STRING;
	args.pReserved = options;
	return p11->C_Initialize(&args);
}

static void
record(int fd, char kind, const char *label)
{
	char line[128];
	int len = snprintf(line, sizeof(line), "%c %s\n", kind, label);

	if (write(fd, line, (size_t)len) != len || fsync(fd) != 0)
		_exit(3);
}

/* An EC key pair made of fixed values (the mech layer not needed). */
static CK_RV
imported_pair(CK_SESSION_HANDLE s, const char *label)
{
	static const CK_BYTE point[] = { 0x04, 0x41, 0x04, 1, 2, 3 };
	static const CK_BYTE value[32] = { 9, 8, 7 };
	CK_OBJECT_CLASS pub_class = CKO_PUBLIC_KEY, priv_class = CKO_PRIVATE_KEY;
	CK_KEY_TYPE ec = CKK_EC;
	CK_BBOOL yes = CK_TRUE;
	CK_ULONG len = strlen(label);
	CK_ATTRIBUTE pub[] = {
		{ CKA_CLASS, &pub_class, sizeof(pub_class) }, { CKA_KEY_TYPE, &ec, sizeof(ec) },
		{ CKA_TOKEN, &yes, 1 }, { CKA_LABEL, (void *)label, len }, { CKA_ID, (void *)label, len },
		{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) }, { CKA_EC_POINT, (void *)point, sizeof(point) },
	};
	CK_ATTRIBUTE priv[] = {
		{ CKA_CLASS, &priv_class, sizeof(priv_class) }, { CKA_KEY_TYPE, &ec, sizeof(ec) },
		{ CKA_TOKEN, &yes, 1 }, { CKA_LABEL, (void *)label, len }, { CKA_ID, (void *)label, len },
		{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) }, { CKA_VALUE, (void *)value, sizeof(value) },
	};
	CK_OBJECT_HANDLE a, b;

	return pg_object_create_pair(s, pub, 7, NULL, priv, 7, NULL, &a, &b);
}

static CK_RV
generated_pair(CK_SESSION_HANDLE s, const char *label)
{
	CK_MECHANISM mech = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_BBOOL yes = CK_TRUE;
	CK_ULONG len = strlen(label);
	CK_ATTRIBUTE pub[] = {
		{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) }, { CKA_TOKEN, &yes, 1 },
		{ CKA_LABEL, (void *)label, len }, { CKA_ID, (void *)label, len },
	};
	CK_ATTRIBUTE priv[] = {
		{ CKA_TOKEN, &yes, 1 }, { CKA_SIGN, &yes, 1 }, { CKA_LABEL, (void *)label, len },
		{ CKA_ID, (void *)label, len },
	};
	CK_OBJECT_HANDLE a, b;

	return p11->C_GenerateKeyPair(s, &mech, pub, 4, priv, 4, &a, &b);
}

static int
child(const char *log)
{
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
	unsigned seq = 0;
	bool generate = true;
	char label[64];

	if (fd < 0)
		return 2;
	for (;;) {
		CK_SESSION_HANDLE s;
		CK_SLOT_ID slot = 0;   /* init_token made the first token */
		if (init() != CKR_OK ||
		    p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK ||
		    p11->C_Login(s, CKU_USER, (CK_UTF8CHAR *)USER_PIN, 4) != CKR_OK)
			return 4;
		for (int i = 0; i < 6; i++) {
			CK_RV rv;
			snprintf(label, sizeof(label), "%ld-%u", (long)getpid(), seq++);
			if (i % 2 == 0) {
				st_data(s, label, true, i % 4 == 0);
				record(fd, 'd', label);
				continue;
			}
			rv = generate ? generated_pair(s, label) : imported_pair(s, label);
			if (rv == CKR_FUNCTION_NOT_SUPPORTED || rv == CKR_MECHANISM_INVALID) {
				generate = false;
				rv = imported_pair(s, label);
			}
			if (rv != CKR_OK)
				return 5;
			record(fd, 'k', label);
		}
		if (p11->C_Finalize(NULL) != CKR_OK)
			return 6;
	}
}

static CK_RV
init_token(void)
{
	CK_UTF8CHAR padded[32];
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot = 0;
	CK_ULONG n = 1;
	CK_RV rv;

	memset(padded, ' ', sizeof(padded));
	memcpy(padded, "crash", 5);
	if ((rv = init()) != CKR_OK || (rv = p11->C_GetSlotList(CK_TRUE, &slot, &n)) != CKR_OK ||
	    (rv = p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN), padded)) != CKR_OK ||
	    (rv = p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s)) != CKR_OK ||
	    (rv = p11->C_Login(s, CKU_SO, (CK_UTF8CHAR *)SO_PIN, strlen(SO_PIN))) != CKR_OK ||
	    (rv = p11->C_InitPIN(s, (CK_UTF8CHAR *)USER_PIN, 4)) != CKR_OK)
		return rv;
	return p11->C_Finalize(NULL);
}

static const char *log_arg;

/* The objects with a label and class; *first gets one handle. */
static CK_ULONG
find(CK_SESSION_HANDLE s, const char *label, CK_OBJECT_CLASS cls, CK_OBJECT_HANDLE *first)
{
	CK_ATTRIBUTE t[] = { { CKA_LABEL, (void *)label, strlen(label) }, { CKA_CLASS, &cls, sizeof(cls) } };
	CK_OBJECT_HANDLE found[4];
	CK_ULONG n = 0;

	ck_assert_rv(p11->C_FindObjectsInit(s, t, 2), CKR_OK);
	ck_assert_rv(p11->C_FindObjects(s, found, 4, &n), CKR_OK);
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
	if (n > 0 && first != NULL)
		*first = found[0];
	return n;
}

static void
check_data(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE h)
{
	char label[64], value[64];
	CK_ATTRIBUTE t[] = { { CKA_LABEL, label, sizeof(label) }, { CKA_VALUE, value, sizeof(value) } };

	ck_assert_rv(p11->C_GetAttributeValue(s, h, t, 2), CKR_OK);
	pg_assert_mem_eq(value, t[1].ulValueLen, label, t[0].ulValueLen);
}

/* A pair is whole: the other half exists, and (generated) it signs. */
static void
check_pair(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE priv)
{
	char label[64];
	CK_ATTRIBUTE t = { CKA_LABEL, label, sizeof(label) - 1 };
	CK_OBJECT_HANDLE pub = 0;
	CK_MECHANISM mech = { CKM_ECDSA, NULL, 0 };
	CK_BYTE hash[32] = { 7 }, sig[128];
	CK_ULONG siglen = sizeof(sig);
	CK_BBOOL local = 0;
	CK_ATTRIBUTE l = { CKA_LOCAL, &local, 1 };

	ck_assert_rv(p11->C_GetAttributeValue(s, priv, &t, 1), CKR_OK);
	label[t.ulValueLen] = 0;
	pg_assert_int_eq(find(s, label, CKO_PUBLIC_KEY, &pub), 1);
	ck_assert_rv(p11->C_GetAttributeValue(s, priv, &l, 1), CKR_OK);
	if (!local)
		return;
	ck_assert_rv(p11->C_SignInit(s, &mech, priv), CKR_OK);
	ck_assert_rv(p11->C_Sign(s, hash, sizeof(hash), sig, &siglen), CKR_OK);
	ck_assert_rv(p11->C_VerifyInit(s, &mech, pub), CKR_OK);
	ck_assert_rv(p11->C_Verify(s, hash, sizeof(hash), sig, siglen), CKR_OK);
}

static void
test_verify(void)
{
	FILE *f = fopen(log_arg, "r");
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot = 0;
	CK_ULONG logged = 0, all;
	CK_OBJECT_HANDLE objs[256], h;
	CK_OBJECT_CLASS cls;
	char kind, label[64];
	char path[600];

	ck_assert_rv(init(), CKR_OK);
	ck_assert_rv(p11->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	ck_assert_rv(p11->C_Login(s, CKU_USER, (CK_UTF8CHAR *)USER_PIN, 4), CKR_OK);
	/* Everything logged as created is there. */
	pg_assert_not_null(f);
	while (fscanf(f, " %c %63s", &kind, label) == 2) {
		if (kind == 'd')
			pg_assert_int_eq(find(s, label, CKO_DATA, NULL), 1);
		else
			pg_assert_int_eq(find(s, label, CKO_PRIVATE_KEY, NULL), 1);
		logged++;
	}
	fclose(f);
	printf("# %lu objects and pairs logged as created\n", logged);
	pg_assert(logged > 0);
	/* Nothing half-written: every object is complete, every pair whole. */
	all = 0;
	ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 0), CKR_OK);
	for (;;) {
		CK_ULONG got = 0;
		ck_assert_rv(p11->C_FindObjects(s, objs, 256, &got), CKR_OK);
		if (got == 0)
			break;
		all += got;
	}
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
	printf("# %lu objects on the token\n", all);
	for (CK_ULONG done = 0; done < all;) {
		CK_ULONG got = 0;
		CK_ATTRIBUTE c = { CKA_CLASS, &cls, sizeof(cls) };
		ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 0), CKR_OK);
		for (CK_ULONG skip = 0; skip < done;) {
			CK_ULONG k = 0;
			ck_assert_rv(p11->C_FindObjects(s, objs, done - skip > 256 ? 256 : done - skip, &k), CKR_OK);
			skip += k;
		}
		ck_assert_rv(p11->C_FindObjects(s, objs, 256, &got), CKR_OK);
		ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
		for (CK_ULONG i = 0; i < got; i++) {
			h = objs[i];
			ck_assert_rv(p11->C_GetAttributeValue(s, h, &c, 1), CKR_OK);
			if (cls == CKO_DATA)
				check_data(s, h);
			else if (cls == CKO_PRIVATE_KEY)
				check_pair(s, h);
			else
				pg_assert_int_eq(cls, CKO_PUBLIC_KEY);
		}
		done += got;
	}
	ck_assert_rv(p11->C_Finalize(NULL), CKR_OK);
	snprintf(path, sizeof(path), "%s/token-%lu.sqlite", dir_arg, slot);
	pg_assert(pg_db_check(path));
}

int
main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	dir_arg = argv[2];
	if (strcmp(argv[1], "init") == 0)
		return init_token() == CKR_OK ? 0 : 1;
	if (strcmp(argv[1], "child") == 0 && argc == 4)
		return child(argv[3]);
	if (strcmp(argv[1], "verify") == 0 && argc == 4) {
		log_arg = argv[3];
		pg_test("crash/verify", test_verify);
		return pg_test_run(1, argv);
	}
	return 2;
}
