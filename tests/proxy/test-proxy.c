/*
 * Tests of the proxy module (src/proxy/proxy.c), loaded as applications
 * load it (dlopen), in front of Debian's SoftHSM2 and OpenSC.
 */
#define _GNU_SOURCE
#include "config.h"

#include "harness.h"
#include "initargs.h"

#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SO_PIN "12345678"
#define USER_PIN "1234"

static const char *proxy_path;
static const char *softhsm;
static const char *opensc;
static const char *trust;
static char confdir[1500];
static void *dl;
static CK_FUNCTION_LIST_3_0 *px;

static void __attribute__((format(printf, 2, 3)))
add_module(const char *name, const char *fmt, ...)
{
	char path[2048], text[2048];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/modules/%s.module", confdir, name);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	f = fopen(path, "w");
	pg_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void
setup(void)
{
	const char *t = pg_test_tmpdir();
	char path[2048], text[2100];
	CK_C_GetInterface get;
	CK_INTERFACE_PTR iface;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tokens", t);
	mkdir(path, 0700);
	snprintf(text, sizeof(text), "directories.tokendir = %s\n", path);
	snprintf(path, sizeof(path), "%s/softhsm2.conf", t);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	setenv("SOFTHSM2_CONF", path, 1);
	snprintf(confdir, sizeof(confdir), "%s/p11", t);
	mkdir(confdir, 0700);
	snprintf(path, sizeof(path), "%s/modules", confdir);
	mkdir(path, 0700);
	setenv("P11GLUE_CONFIG", confdir, 1);
	add_module("softhsm2", "module: %s\n", softhsm);
	add_module("opensc", "module: %s\n", opensc);
	add_module("trust", "module: %s\ndisable-in: p11-kit-proxy\n", trust);

	dl = dlopen(proxy_path, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL)
		pg_test_fail(__FILE__, __LINE__, "dlopen: %s", dlerror());
	*(void **)&get = dlsym(dl, "C_GetInterface");
	pg_assert_not_null(get);
	pg_assert_int_eq(get((CK_UTF8CHAR_PTR)"PKCS 11", NULL, &iface, 0), CKR_OK);
	px = iface->pFunctionList;
	pg_assert_int_eq(px->version.major, 3);
}

static CK_ULONG
slot_list(CK_BBOOL present, CK_SLOT_ID *slots, CK_ULONG cap)
{
	CK_ULONG n = 0;

	pg_assert_int_eq(px->C_GetSlotList(present, NULL, &n), CKR_OK);
	pg_assert(n <= cap);
	n = cap;
	pg_assert_int_eq(px->C_GetSlotList(present, slots, &n), CKR_OK);
	return n;
}

/* Initializes the free slot as a token with a user PIN; returns its proxy slot. */
static CK_SLOT_ID
init_token(void)
{
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slots[8];
	CK_SESSION_HANDLE s;
	CK_TOKEN_INFO info;
	CK_ULONG n = slot_list(CK_FALSE, slots, 8);

	memset(label, ' ', sizeof(label));
	memcpy(label, "proxied", 7);
	pg_assert_int_eq(px->C_InitToken(slots[n - 1], (CK_UTF8CHAR_PTR)SO_PIN, 8, label), CKR_OK);
	n = slot_list(CK_TRUE, slots, 8);
	for (CK_ULONG i = 0; i < n; i++) {
		pg_assert_int_eq(px->C_GetTokenInfo(slots[i], &info), CKR_OK);
		if (!(info.flags & CKF_TOKEN_INITIALIZED))
			continue;
		pg_assert_int_eq(px->C_OpenSession(slots[i], CKF_SERIAL_SESSION | CKF_RW_SESSION,
		                                   NULL, NULL, &s), CKR_OK);
		pg_assert_int_eq(px->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, 8), CKR_OK);
		pg_assert_int_eq(px->C_InitPIN(s, (CK_UTF8CHAR_PTR)USER_PIN, 4), CKR_OK);
		pg_assert_int_eq(px->C_CloseSession(s), CKR_OK);
		return slots[i];
	}
	pg_test_fail(__FILE__, __LINE__, "no initialized token");
}

/* ---------------------------------------------------------------------------
 * Cases
 */

static void
test_not_initialized(void)
{
	CK_ULONG n;
	CK_INFO info;

	pg_assert_int_eq(px->C_GetSlotList(CK_FALSE, NULL, &n), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_GetInfo(&info), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_CloseSession(1), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_GetTokenInfo(0, NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_CRYPTOKI_ALREADY_INITIALIZED);
	pg_assert_int_eq(px->C_GetSlotList(CK_FALSE, NULL, NULL), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_GetInfo(NULL), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_GetInfo(&info), CKR_OK);
	pg_assert_mem_eq(info.manufacturerID, 7, "p11glue", 7);
	pg_assert_int_eq(info.cryptokiVersion.major, 3);
	pg_assert_int_eq(px->C_Finalize((CK_VOID_PTR)1), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
}

static CK_RV
dummy_mutex(CK_VOID_PTR mutex)
{
	(void)mutex;
	return CKR_OK;
}

static CK_RV
dummy_create(CK_VOID_PTR_PTR mutex)
{
	*mutex = NULL;
	return CKR_OK;
}

/* PKCS#11 v3.0 §5.4: pReserved should be NULL_PTR. The proxy has no
 * options: anything else is refused, never read, but a string from a
 * caller that marks it as one. */
static void
test_reserved_pointer(void)
{
	static void *const wild[] = { (void *)1, (void *)0x10, (void *)"store=/tmp" };
	CK_C_INITIALIZE_ARGS args;

	for (size_t i = 0; i < sizeof(wild) / sizeof(wild[0]); i++) {
		memset(&args, 0, sizeof(args));
		args.pReserved = wild[i];
		pg_assert_int_eq(px->C_Initialize(&args), CKR_ARGUMENTS_BAD);
		args.flags = CKF_OS_LOCKING_OK;
		pg_assert_int_eq(px->C_Initialize(&args), CKR_ARGUMENTS_BAD);
		/* Callbacks and flags as NSS passes them, but not NSS's. */
		args.CreateMutex = dummy_create;
		args.DestroyMutex = dummy_mutex;
		args.LockMutex = dummy_mutex;
		args.UnlockMutex = dummy_mutex;
		pg_assert_int_eq(px->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	}
	/* Refused, so not initialized. */
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	memset(&args, 0, sizeof(args));
	args.flags = PG_CKF_RESERVED_STRING;
	args.pReserved = (void *)1;
	pg_assert_int_eq(px->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"any";
	pg_assert_int_eq(px->C_Initialize(&args), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	memset(&args, 0, sizeof(args));
	pg_assert_int_eq(px->C_Initialize(&args), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void
test_slots_stable_and_hotplug(void)
{
	CK_SLOT_ID first[8], again[8], after[8];
	CK_SLOT_INFO info;
	CK_ULONG n, m, k;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	/* OpenSC without a card has no slot; the trust module is disabled for
	 * the proxy: SoftHSM's free slot only. */
	n = slot_list(CK_FALSE, first, 8);
	pg_assert_int_eq(n, 1);
	m = slot_list(CK_FALSE, again, 8);
	pg_assert_int_eq(m, n);
	pg_assert_mem_eq(again, m * sizeof(CK_SLOT_ID), first, n * sizeof(CK_SLOT_ID));
	pg_assert_int_eq(px->C_GetSlotInfo(first[0], &info), CKR_OK);
	pg_assert_mem_eq(info.manufacturerID, 15, "SoftHSM project", 15);
	pg_assert_int_eq(px->C_GetSlotInfo(12345, &info), CKR_SLOT_ID_INVALID);
	/* Short buffers. */
	k = 0;
	pg_assert_int_eq(px->C_GetSlotList(CK_FALSE, after, &k), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(k, 1);
	/* Hot-plug: SoftHSM adds a new free slot after C_InitToken, which it
	 * reports on the next size query; the proxy shows it, and the token
	 * keeps its proxy slot. */
	pg_assert_ulong_eq(init_token(), first[0]);
	k = slot_list(CK_TRUE, after, 8);
	pg_assert_int_eq(k, 2);
	pg_assert_ulong_eq(after[0], first[0]);
	pg_assert(after[1] != first[0]);
	pg_assert_int_eq(px->C_GetSlotInfo(after[1], &info), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void
test_sessions(void)
{
	CK_SESSION_HANDLE a, b, c;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	slot = init_token();
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &a), CKR_OK);
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &b),
	                 CKR_OK);
	pg_assert(a != b);
	/* The session names the proxy's slot, not the module's. */
	pg_assert_int_eq(px->C_GetSessionInfo(a, &info), CKR_OK);
	pg_assert_ulong_eq(info.slotID, slot);
	pg_assert_ulong_eq(info.state, CKS_RO_PUBLIC_SESSION);
	pg_assert_int_eq(px->C_Login(b, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 4), CKR_OK);
	pg_assert_int_eq(px->C_GetSessionInfo(b, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(px->C_Login(b, CKU_USER, (CK_UTF8CHAR_PTR)"9999", 4),
	                 CKR_USER_ALREADY_LOGGED_IN);
	pg_assert_int_eq(px->C_GetSessionInfo(987654, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, NULL),
	                 CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_OpenSession(999, CKF_SERIAL_SESSION, NULL, NULL, &c),
	                 CKR_SLOT_ID_INVALID);
	pg_assert_int_eq(px->C_CloseSession(a), CKR_OK);
	pg_assert_int_eq(px->C_CloseSession(a), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &c), CKR_OK);
	pg_assert_int_eq(px->C_CloseAllSessions(slot), CKR_OK);
	pg_assert_int_eq(px->C_GetSessionInfo(b, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(px->C_GetSessionInfo(c, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(px->C_CloseAllSessions(4242), CKR_SLOT_ID_INVALID);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void
test_v3_functions_on_v2_module(void)
{
	CK_INTERFACE list[4], *iface;
	CK_VERSION v240 = { 2, 40 };
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;
	CK_ULONG n = 0;

	pg_assert_int_eq(px->C_GetInterfaceList(NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	n = 1;
	pg_assert_int_eq(px->C_GetInterfaceList(list, &n), CKR_BUFFER_TOO_SMALL);
	n = 4;
	pg_assert_int_eq(px->C_GetInterfaceList(list, &n), CKR_OK);
	pg_assert_int_eq(px->C_GetInterface((CK_UTF8CHAR_PTR)"PKCS 11", &v240, &iface, 0), CKR_OK);
	pg_assert_int_eq(((CK_FUNCTION_LIST *)iface->pFunctionList)->version.minor, 40);
	pg_assert_int_eq(px->C_GetInterface((CK_UTF8CHAR_PTR)"nope", NULL, &iface, 0),
	                 CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	slot = init_token();
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	/* SoftHSM 2.6 is a 2.40 module. */
	pg_assert_int_eq(px->C_LoginUser(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 4,
	                                 (CK_UTF8CHAR_PTR)"u", 1), CKR_FUNCTION_NOT_SUPPORTED);
	pg_assert_int_eq(px->C_SessionCancel(s, 0), CKR_FUNCTION_NOT_SUPPORTED);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void
test_wait_for_slot_event(void)
{
	CK_SLOT_ID slot;

	pg_assert_int_eq(px->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL),
	                 CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL), CKR_NO_EVENT);
	pg_assert_int_eq(px->C_WaitForSlotEvent(CKF_DONT_BLOCK, NULL, NULL), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void *
waiter(void *arg)
{
	CK_SLOT_ID slot;

	*(CK_RV *)arg = px->C_WaitForSlotEvent(0, &slot, NULL);
	return NULL;
}

/* A blocked waiter is released by C_Finalize from another thread. */
static void
test_wait_released_by_finalize(void)
{
	struct timespec start, end;
	CK_RV rv = 0xdeadbeef;
	pthread_t thread;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(pthread_create(&thread, NULL, waiter, &rv), 0);
	usleep(300 * 1000);
	/* Still waiting: nothing happened. */
	pg_assert_ulong_eq(rv, 0xdeadbeef);
	clock_gettime(CLOCK_MONOTONIC, &start);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	pthread_join(thread, NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	pg_assert_ulong_eq(rv, CKR_CRYPTOKI_NOT_INITIALIZED);
	/* Released by the finalize, not by a timeout (generous bound). */
	pg_assert(end.tv_sec - start.tv_sec < 5);
}

typedef struct {
	CK_SLOT_ID slot;
	CK_OBJECT_HANDLE priv, pub;
	int failures;
} sign_job;

static void *
signer(void *arg)
{
	sign_job *job = arg;
	CK_MECHANISM mech = { CKM_ECDSA, NULL, 0 };
	unsigned char hash[32], sig[128];
	CK_SESSION_HANDLE s;
	CK_ULONG len;

	memset(hash, 0x5a, sizeof(hash));
	if (px->C_OpenSession(job->slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK) {
		__atomic_add_fetch(&job->failures, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (int i = 0; i < 100; i++) {
		len = sizeof(sig);
		if (px->C_SignInit(s, &mech, job->priv) != CKR_OK ||
		    px->C_Sign(s, hash, sizeof(hash), sig, &len) != CKR_OK ||
		    px->C_VerifyInit(s, &mech, job->pub) != CKR_OK ||
		    px->C_Verify(s, hash, sizeof(hash), sig, len) != CKR_OK)
			__atomic_add_fetch(&job->failures, 1, __ATOMIC_RELAXED);
	}
	px->C_CloseSession(s);
	return NULL;
}

/* 8 threads sign and verify through the proxy at once. */
static void
test_threads(void)
{
	static const unsigned char p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	CK_MECHANISM gen = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE pub_tmpl[] = {
		{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) },
		{ CKA_VERIFY, &yes, sizeof(yes) },
		{ CKA_TOKEN, &yes, sizeof(yes) },
	};
	CK_ATTRIBUTE priv_tmpl[] = {
		{ CKA_SIGN, &yes, sizeof(yes) },
		{ CKA_TOKEN, &yes, sizeof(yes) },
		{ CKA_PRIVATE, &yes, sizeof(yes) },
	};
	pthread_t threads[8];
	sign_job job = { 0 };
	CK_SESSION_HANDLE s;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	job.slot = init_token();
	pg_assert_int_eq(px->C_OpenSession(job.slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL,
	                                   &s), CKR_OK);
	pg_assert_int_eq(px->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 4), CKR_OK);
	pg_assert_int_eq(px->C_GenerateKeyPair(s, &gen, pub_tmpl, 3, priv_tmpl, 3, &job.pub,
	                                       &job.priv), CKR_OK);
	for (int i = 0; i < 8; i++)
		pg_assert_int_eq(pthread_create(&threads[i], NULL, signer, &job), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(threads[i], NULL);
	pg_assert_int_eq(job.failures, 0);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

static void
test_failing_modules(void)
{
	CK_SLOT_ID slots[8];

	/* A module that does not load is skipped ... */
	add_module("missing", "module: %s\n", "/nonexistent/module.so");
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(slot_list(CK_FALSE, slots, 8), 1);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	/* ... unless it is critical. */
	add_module("missing", "module: %s\ncritical: yes\n", "/nonexistent/module.so");
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_GENERAL_ERROR);
	pg_assert_int_eq(px->C_GetSlotList(CK_FALSE, NULL, &(CK_ULONG){ 0 }),
	                 CKR_CRYPTOKI_NOT_INITIALIZED);
}

/* The slot IDs and descriptions of a fresh process that initializes the
 * proxy and lists its slots (a child forked before this one initialized,
 * so it shares nothing of it). */
static CK_ULONG
slots_of_fresh_process(CK_SLOT_ID *ids, CK_UTF8CHAR (*descriptions)[64], CK_ULONG cap)
{
	int fds[2], status;
	CK_ULONG n = 0;
	pid_t child;

	pg_assert_int_eq(pipe(fds), 0);
	child = fork();
	if (child == 0) {
		CK_SLOT_INFO info;
		CK_ULONG count = cap;
		close(fds[0]);
		if (px->C_Initialize(NULL) != CKR_OK ||
		    px->C_GetSlotList(CK_FALSE, ids, &count) != CKR_OK)
			_exit(1);
		for (CK_ULONG i = 0; i < count; i++) {
			if (px->C_GetSlotInfo(ids[i], &info) != CKR_OK ||
			    write(fds[1], &ids[i], sizeof(ids[i])) != sizeof(ids[i]) ||
			    write(fds[1], info.slotDescription, 64) != 64)
				_exit(2);
		}
		_exit(0);
	}
	close(fds[1]);
	while (n < cap && read(fds[0], &ids[n], sizeof(ids[n])) == sizeof(ids[n]) &&
	       read(fds[0], descriptions[n], 64) == 64)
		n++;
	close(fds[0]);
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return n;
}

/* Java's SunPKCS11 with "slot = N" calls C_GetSlotInfo(N) before any
 * C_GetSlotList: an ID that another process listed is valid right
 * after C_Initialize, and names the same slot. */
static void
test_slot_ids_valid_from_initialize(void)
{
	CK_UTF8CHAR descriptions[8][64];
	CK_SLOT_ID ids[8];
	CK_SLOT_INFO info;
	CK_ULONG n = slots_of_fresh_process(ids, descriptions, 8);

	pg_assert_int_eq(n, 1);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_GetSlotInfo(ids[0], &info), CKR_OK);
	pg_assert_mem_eq(info.slotDescription, 64, descriptions[0], 64);
	pg_assert_int_eq(px->C_GetSlotInfo(ids[0] + 1, &info), CKR_SLOT_ID_INVALID);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

/* An ID names the same module's slot for the life of the process, across
 * C_Finalize and C_Initialize, and is invalid while its module is not
 * loaded, never another slot. */
static void
test_slot_ids_stable_for_process(void)
{
	CK_SLOT_ID first[8], again[8];
	CK_SLOT_INFO info, want;
	CK_ULONG n;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	n = slot_list(CK_FALSE, first, 8);
	pg_assert_int_eq(n, 1);
	pg_assert_int_eq(px->C_GetSlotInfo(first[0], &want), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	/* Without listing: the same ID, the same slot. */
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_GetSlotInfo(first[0], &info), CKR_OK);
	pg_assert_mem_eq(info.slotDescription, 64, want.slotDescription, 64);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	/* SoftHSM left out of the proxy: its ID is no slot. */
	add_module("softhsm2", "module: %s\ndisable-in: p11glue-proxy\n", softhsm);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_GetSlotInfo(first[0], &info), CKR_SLOT_ID_INVALID);
	pg_assert_int_eq(slot_list(CK_FALSE, again, 8), 0);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	/* Back again: the same ID. */
	add_module("softhsm2", "module: %s\n", softhsm);
	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(slot_list(CK_FALSE, again, 8), 1);
	pg_assert_ulong_eq(again[0], first[0]);
	pg_assert_int_eq(px->C_GetSlotInfo(first[0], &info), CKR_OK);
	pg_assert_mem_eq(info.slotDescription, 64, want.slotDescription, 64);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

/* Runs func with stderr going to DIR/stderr.txt; returns what it wrote
 * (static storage). */
static const char *
capture_stderr(void (*func)(void))
{
	static char text[65536];
	char path[2048];
	int fd, saved;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr.txt", pg_test_tmpdir());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	pg_assert(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	func();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	text[n > 0 ? n : 0] = 0;
	return text;
}

static int
count_lines_with(const char *text, const char *word)
{
	int count = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		if (memmem(text, len, word, strlen(word)) != NULL)
			count++;
		text += len + (text[len] == '\n');
	}
	return count;
}

static void
initialize_three_times(void)
{
	CK_SLOT_ID slots[8];

	for (int i = 0; i < 3; i++) {
		pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
		pg_assert_int_eq(slot_list(CK_FALSE, slots, 8), 1);
		pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
	}
}

/* A broken module file is reported once per process, however often the
 * application initializes the proxy, and the other modules work. */
static void
test_bad_file_reported_once(void)
{
	char path[2048];
	const char *err;

	add_module("bad", "nokey\n");
	add_module("gone", "module: /nonexistent/gone.so\n");
	err = capture_stderr(initialize_three_times);
	snprintf(path, sizeof(path), "%s/modules/bad.module", confdir);
	if (count_lines_with(err, path) != 1 || count_lines_with(err, "gone.so") != 1)
		pg_test_fail(__FILE__, __LINE__, "want each problem once, stderr:\n%s", err);
}

static void
initialize_and_list(void)
{
	CK_SLOT_ID slots[8];

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	slot_list(CK_FALSE, slots, 8);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

#define LOG_SO_PIN "so-Zq8xWv"
#define LOG_USER_PIN "us-K3vwPj"

/* Login, key generation, signing: calls whose arguments include PINs. */
static void
logged_session(void)
{
	static const unsigned char p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	CK_MECHANISM gen = { CKM_EC_KEY_PAIR_GEN, NULL, 0 }, sign = { CKM_ECDSA, NULL, 0 };
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE pub_tmpl[] = { { CKA_EC_PARAMS, (void *)p256, sizeof(p256) } };
	CK_ATTRIBUTE priv_tmpl[] = { { CKA_SIGN, &yes, sizeof(yes) } };
	unsigned char hash[32] = { 1 }, sig[128];
	CK_ULONG n = 8, len = sizeof(sig);
	CK_OBJECT_HANDLE pub, priv;
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slots[8];
	CK_SESSION_HANDLE s;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(px->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	memset(label, ' ', sizeof(label));
	memcpy(label, "logged", 6);
	pg_assert_int_eq(px->C_InitToken(slots[0], (CK_UTF8CHAR_PTR)LOG_SO_PIN,
	                                 strlen(LOG_SO_PIN), label), CKR_OK);
	n = 8;
	pg_assert_int_eq(px->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(px->C_OpenSession(slots[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL,
	                                   NULL, &s), CKR_OK);
	pg_assert_int_eq(px->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR)LOG_SO_PIN, strlen(LOG_SO_PIN)),
	                 CKR_OK);
	pg_assert_int_eq(px->C_InitPIN(s, (CK_UTF8CHAR_PTR)LOG_USER_PIN, strlen(LOG_USER_PIN)),
	                 CKR_OK);
	pg_assert_int_eq(px->C_Logout(s), CKR_OK);
	pg_assert_int_eq(px->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)"wrong-pin", 9),
	                 CKR_PIN_INCORRECT);
	pg_assert_int_eq(px->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)LOG_USER_PIN,
	                             strlen(LOG_USER_PIN)), CKR_OK);
	pg_assert_int_eq(px->C_GenerateKeyPair(s, &gen, pub_tmpl, 1, priv_tmpl, 1, &pub, &priv),
	                 CKR_OK);
	pg_assert_int_eq(px->C_SignInit(s, &sign, priv), CKR_OK);
	pg_assert_int_eq(px->C_Sign(s, hash, sizeof(hash), sig, &len), CKR_OK);
	pg_assert_int_eq(px->C_CloseSession(s), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

/* log-calls: yes logs every call the proxy makes to that module (name,
 * slot or session, result) and nothing of the other modules; no PIN. */
static void
test_log_calls(void)
{
	const char *err;

	add_module("softhsm2", "module: %s\nlog-calls: yes\n", softhsm);
	err = capture_stderr(logged_session);
	if (strstr(err, "softhsm2: C_Initialize(0) = CKR_OK") == NULL ||
	    strstr(err, "softhsm2: C_GetSlotList(") == NULL ||
	    strstr(err, "softhsm2: C_InitToken(") == NULL ||
	    strstr(err, "softhsm2: C_OpenSession(") == NULL ||
	    strstr(err, ") = CKR_PIN_INCORRECT") == NULL ||
	    strstr(err, "softhsm2: C_Login(") == NULL ||
	    strstr(err, "softhsm2: C_GenerateKeyPair(") == NULL ||
	    strstr(err, "softhsm2: C_Sign(") == NULL ||
	    strstr(err, "softhsm2: C_CloseSession(") == NULL ||
	    strstr(err, "softhsm2: C_Finalize(0) = CKR_OK") == NULL)
		pg_test_fail(__FILE__, __LINE__, "calls missing from the log:\n%s", err);
	if (strstr(err, LOG_SO_PIN) || strstr(err, LOG_USER_PIN) || strstr(err, "wrong-pin") ||
	    strstr(err, "opensc"))
		pg_test_fail(__FILE__, __LINE__, "a PIN or another module in the log:\n%s", err);
	/* Without the setting, nothing is logged. */
	add_module("softhsm2", "module: %s\n", softhsm);
	err = capture_stderr(initialize_and_list);
	if (strstr(err, "C_") != NULL)
		pg_test_fail(__FILE__, __LINE__, "calls logged without log-calls:\n%s", err);
}

static void
test_fork(void)
{
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;
	int status;
	pid_t child;

	pg_assert_int_eq(px->C_Initialize(NULL), CKR_OK);
	slot = init_token();
	pg_assert_int_eq(px->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	child = fork();
	if (child == 0) {
		CK_SESSION_INFO info;
		CK_SLOT_ID slots[8];
		CK_ULONG n = 8;
		int code = 0;
		if (px->C_GetSessionInfo(s, &info) != CKR_CRYPTOKI_NOT_INITIALIZED)
			code |= 1;
		if (px->C_Initialize(NULL) != CKR_OK)
			code |= 2;
		if (px->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK || n < 1)
			code |= 4;
		_exit(code);
	}
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status));
	pg_assert_int_eq(WEXITSTATUS(status), 0);
	pg_assert_int_eq(px->C_CloseSession(s), CKR_OK);
	pg_assert_int_eq(px->C_Finalize(NULL), CKR_OK);
}

int
main(int argc, char **argv)
{
	proxy_path = getenv("P11GLUE_TEST_PROXY");
	softhsm = getenv("P11GLUE_TEST_SOFTHSM");
	opensc = getenv("P11GLUE_TEST_OPENSC");
	trust = getenv("P11GLUE_TEST_P11KIT_TRUST");
	if (!proxy_path || !softhsm || !opensc || !trust) {
		fprintf(stderr, "set P11GLUE_TEST_PROXY, _SOFTHSM, _OPENSC and _P11KIT_TRUST\n");
		return 99;
	}
	pg_test_fork_cases(true);
	pg_test_fixture(setup, NULL);
	pg_test("proxy/not-initialized", test_not_initialized);
	pg_test("proxy/reserved-pointer", test_reserved_pointer);
	pg_test("proxy/slots-stable-and-hotplug", test_slots_stable_and_hotplug);
	pg_test("proxy/sessions", test_sessions);
	pg_test("proxy/v3-functions-on-v2-module", test_v3_functions_on_v2_module);
	pg_test("proxy/wait-for-slot-event", test_wait_for_slot_event);
	pg_test("proxy/wait-released-by-finalize", test_wait_released_by_finalize);
	pg_test("proxy/8-threads-sign", test_threads);
	pg_test("proxy/failing-modules", test_failing_modules);
	pg_test("proxy/fork", test_fork);
	pg_test("proxy/bad-file-reported-once", test_bad_file_reported_once);
	pg_test("proxy/slot-ids-valid-from-initialize", test_slot_ids_valid_from_initialize);
	pg_test("proxy/slot-ids-stable-for-process", test_slot_ids_stable_for_process);
	pg_test("proxy/log-calls", test_log_calls);
	return pg_test_run(argc, argv);
}
