/*
 * module.c: function lists, interfaces, C_Initialize arguments and
 * options, C_Finalize, C_GetInfo, fork.
 */
#include "store-test.h"
#include "initargs.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static CK_RV
dummy_mutex(void *m)
{
	(void)m;
	return CKR_OK;
}

static CK_RV
dummy_create(void **m)
{
	*m = NULL;
	return CKR_OK;
}

static void
test_function_list(void)
{
	CK_FUNCTION_LIST *list = NULL;

	ck_assert_rv(C_GetFunctionList(NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(C_GetFunctionList(&list), CKR_OK);
	pg_assert_int_eq(list->version.major, 2);
	pg_assert_int_eq(list->version.minor, 40);
	pg_assert(list->C_Initialize == C_Initialize);
	pg_assert(list->C_Sign != NULL);
	pg_assert(list->C_WaitForSlotEvent != NULL);
}

static void
test_interfaces(void)
{
	CK_INTERFACE ifaces[4], *iface = NULL;
	CK_ULONG n = 0;
	CK_VERSION v2 = { 2, 40 }, v9 = { 9, 9 };
	CK_FUNCTION_LIST_3_0 *l3;

	ck_assert_rv(C_GetInterfaceList(NULL, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(C_GetInterfaceList(NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	n = 1;
	ck_assert_rv(C_GetInterfaceList(ifaces, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 2);
	n = 4;
	ck_assert_rv(C_GetInterfaceList(ifaces, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	pg_assert_str_eq((char *)ifaces[0].pInterfaceName, "PKCS 11");
	pg_assert_int_eq(((CK_VERSION *)ifaces[0].pFunctionList)->major, 3);
	pg_assert_int_eq(((CK_VERSION *)ifaces[1].pFunctionList)->major, 2);

	ck_assert_rv(C_GetInterface(NULL, NULL, NULL, 0), CKR_ARGUMENTS_BAD);
	ck_assert_rv(C_GetInterface(NULL, NULL, &iface, 0), CKR_OK);
	l3 = iface->pFunctionList;
	pg_assert_int_eq(l3->version.major, 3);
	pg_assert(l3->C_LoginUser != NULL && l3->C_SessionCancel != NULL);
	pg_assert(l3->C_MessageVerifyFinal != NULL);
	ck_assert_rv(C_GetInterface((CK_UTF8CHAR *)"PKCS 11", &v2, &iface, 0), CKR_OK);
	pg_assert_int_eq(((CK_VERSION *)iface->pFunctionList)->minor, 40);
	ck_assert_rv(C_GetInterface((CK_UTF8CHAR *)"PKCS 11", &v9, &iface, 0), CKR_ARGUMENTS_BAD);
	ck_assert_rv(C_GetInterface((CK_UTF8CHAR *)"Vendor", NULL, &iface, 0), CKR_ARGUMENTS_BAD);
	/* Not fork-safe in the 3.0 sense: asking for it finds nothing. */
	ck_assert_rv(C_GetInterface(NULL, NULL, &iface, CKF_INTERFACE_FORK_SAFE),
	             CKR_ARGUMENTS_BAD);
}

static void
test_not_initialized(void)
{
	CK_ULONG n = 0;
	CK_INFO info;
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;

	st_load();
	ck_assert_rv(p11->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_GetInfo(&info), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_GetSlotList(CK_FALSE, NULL, &n), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &s),
	             CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_CloseSession(1), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Login(1, CKU_USER, (CK_UTF8CHAR *)"1234", 4),
	             CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_FindObjectsInit(1, NULL, 0), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL),
	             CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SignInit(1, NULL, 1), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_GenerateRandom(1, (CK_BYTE *)&n, 1), CKR_CRYPTOKI_NOT_INITIALIZED);
	ck_assert_rv(p11->C_GetFunctionStatus(1), CKR_CRYPTOKI_NOT_INITIALIZED);
}

static void
test_init_args(void)
{
	CK_C_INITIALIZE_ARGS args;

	st_load();
	memset(&args, 0, sizeof(args));
	args.CreateMutex = dummy_create;
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.DestroyMutex = dummy_mutex;
	args.LockMutex = dummy_mutex;
	args.UnlockMutex = dummy_mutex;
	/* Callbacks without CKF_OS_LOCKING_OK: we cannot use them. */
	ck_assert_rv(p11->C_Initialize(&args), CKR_CANT_LOCK);
	args.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	args.pReserved = (void *)st_options(NULL);
	ck_assert_rv(p11->C_Initialize(&args), CKR_OK);
	ck_assert_rv(p11->C_Initialize(&args), CKR_CRYPTOKI_ALREADY_INITIALIZED);
	ck_assert_rv(p11->C_Finalize((void *)1), CKR_ARGUMENTS_BAD);
	st_fini();
	/* No arguments at all: the default directory under $P11GLUE_STORE_DIR. */
	setenv("P11GLUE_STORE_DIR", st_dir(), 1);
	ck_assert_rv(p11->C_Initialize(NULL), CKR_OK);
	unsetenv("P11GLUE_STORE_DIR");
	st_fini();
}

static void
test_options(void)
{
	CK_C_INITIALIZE_ARGS args;

	st_load();
	memset(&args, 0, sizeof(args));
	args.flags = PG_CKF_RESERVED_STRING;
	args.pReserved = (void *)"max-pin-attempts=0";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"max-pin-attempts=abc";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"scrypt-log2n=40";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"store=";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"wrap-decrypt=maybe";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"wrap-decrypt";
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	args.pReserved = (void *)"";
	setenv("P11GLUE_STORE_DIR", st_dir(), 1);
	ck_assert_rv(p11->C_Initialize(&args), CKR_OK);
	unsetenv("P11GLUE_STORE_DIR");
	st_fini();
	/* Unknown keys (meant for another module) are ignored. */
	ck_assert_rv(st_initialize("configdir='sql:/x' flags=readOnly max-pin-attempts=3"), CKR_OK);
	st_fini();
}

/* The store directory an options string names, and whether C_Initialize
 * with args (whose pReserved is that string) created it. */
static bool
dir_used(CK_C_INITIALIZE_ARGS *args, const char *name)
{
	static char options[1100];
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", pg_test_tmpdir(), name);
	snprintf(options, sizeof(options), "store=%s scrypt-log2n=10", path);
	args->pReserved = options;
	ck_assert_rv(p11->C_Initialize(args), CKR_OK);
	st_fini();
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PKCS#11 v3.0 §5.4: pReserved should be NULL_PTR. A pointer that is not a
 * string from a caller that marks it as one is refused, never read. */
static void
test_reserved_pointer(void)
{
	static void *const wild[] = { (void *)1, (void *)0x10, (void *)0x1001 };
	CK_C_INITIALIZE_ARGS args;

	st_load();
	for (size_t i = 0; i < N_ELEMENTS(wild); i++) {
		memset(&args, 0, sizeof(args));
		args.pReserved = wild[i];
		ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
		args.flags = CKF_OS_LOCKING_OK;
		ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
		/* Callbacks and flags as NSS passes them, but not NSS's. */
		args.CreateMutex = dummy_create;
		args.DestroyMutex = dummy_mutex;
		args.LockMutex = dummy_mutex;
		args.UnlockMutex = dummy_mutex;
		args.flags = CKF_OS_LOCKING_OK | CKF_LIBRARY_CANT_CREATE_OS_THREADS;
		ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	}
	/* Marked, but in the first page: no string lives there. */
	memset(&args, 0, sizeof(args));
	args.flags = PG_CKF_RESERVED_STRING;
	args.pReserved = (void *)1;
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	/* A real string, unmarked (p11-kit's way): refused as well. */
	memset(&args, 0, sizeof(args));
	args.flags = CKF_OS_LOCKING_OK;
	args.pReserved = (void *)st_options(NULL);
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	/* Marked the way p11glue's registry marks it: read. */
	args.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	pg_assert(dir_used(&args, "marked"));
	/* NULL, in arguments or as arguments. */
	memset(&args, 0, sizeof(args));
	setenv("P11GLUE_STORE_DIR", st_dir(), 1);
	ck_assert_rv(p11->C_Initialize(&args), CKR_OK);
	st_fini();
	ck_assert_rv(p11->C_Initialize(NULL), CKR_OK);
	st_fini();
	unsetenv("P11GLUE_STORE_DIR");
}

/* NSS passes modutil's -string where pReserved is, p11-kit a module's
 * x-init-reserved, each with its own mutex callbacks: recognised by the
 * library the callbacks live in. data: { library, one of its functions,
 * store directory name }. */
static void
test_reserved_from_loader(const void *data)
{
	const char *const *lib = data;
	CK_C_INITIALIZE_ARGS args;
	void *handle = dlopen(lib[0], RTLD_NOW | RTLD_LOCAL);
	void *fn;

	if (handle == NULL)
		pg_test_skip("the library cannot be loaded");
	fn = dlsym(handle, lib[1]);
	pg_assert_not_null(fn);
	st_load();
	memset(&args, 0, sizeof(args));
	/* Never called: the store locks with the system's primitives. */
	memcpy(&args.CreateMutex, &fn, sizeof(fn));
	memcpy(&args.DestroyMutex, &fn, sizeof(fn));
	memcpy(&args.LockMutex, &fn, sizeof(fn));
	memcpy(&args.UnlockMutex, &fn, sizeof(fn));
	args.flags = CKF_OS_LOCKING_OK;
	pg_assert(dir_used(&args, lib[2]));
	args.pReserved = (void *)0x10;
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	/* Callbacks of two different libraries: not a loader's. */
	args.LockMutex = dummy_mutex;
	args.pReserved = (void *)st_options(NULL);
	ck_assert_rv(p11->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	dlclose(handle);
}

static void
test_store_dir_created(void)
{
	struct stat st;

	st_init();
	pg_assert_int_eq(stat(st_dir(), &st), 0);
	pg_assert_int_eq(st.st_mode & 0777, 0700);
	st_fini();
}

static void
test_info(void)
{
	CK_INFO info;
	CK_FUNCTION_LIST *list2;

	st_init();
	ck_assert_rv(p11->C_GetInfo(NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetInfo(&info), CKR_OK);
	pg_assert_int_eq(info.cryptokiVersion.major, 3);
	pg_assert_int_eq(info.cryptokiVersion.minor, 0);
	pg_assert_mem_eq(info.manufacturerID, 8, "p11glue ", 8);
	pg_assert_mem_eq(info.libraryDescription, 18, "p11glue key store ", 18);
	pg_assert_int_eq(info.flags, 0);
	ck_assert_rv(C_GetFunctionList(&list2), CKR_OK);
	ck_assert_rv(list2->C_GetInfo(&info), CKR_OK);
	pg_assert_int_eq(info.cryptokiVersion.major, 2);
	pg_assert_int_eq(info.cryptokiVersion.minor, 40);
	st_fini();
}

static void
test_legacy(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	st_init();
	slot = st_token("legacy");
	s = st_open(slot, false);
	ck_assert_rv(p11->C_GetFunctionStatus(s), CKR_FUNCTION_NOT_PARALLEL);
	ck_assert_rv(p11->C_CancelFunction(s), CKR_FUNCTION_NOT_PARALLEL);
	ck_assert_rv(p11->C_GetFunctionStatus(s + 100), CKR_SESSION_HANDLE_INVALID);
	st_fini();
}

/* Runs body in a child; returns its exit status. */
static int
in_child(int (*body)(CK_SLOT_ID), CK_SLOT_ID slot)
{
	int status = -1;
	pid_t pid = fork();

	pg_assert(pid >= 0);
	if (pid == 0)
		_exit(body(slot));
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	pg_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int
child_after_fork(CK_SLOT_ID slot)
{
	CK_SESSION_HANDLE s;
	CK_ULONG n = 0;
	CK_INFO info;

	/* The parent's state is not ours: initialise first. */
	if (p11->C_GetInfo(&info) != CKR_CRYPTOKI_NOT_INITIALIZED)
		return 2;
	if (p11->C_GetSlotList(CK_TRUE, NULL, &n) != CKR_CRYPTOKI_NOT_INITIALIZED)
		return 3;
	if (st_initialize(NULL) != CKR_OK)
		return 4;
	if (p11->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK)
		return 5;
	if (p11->C_Login(s, CKU_USER, (CK_UTF8CHAR *)USER_PIN, 4) != CKR_OK)
		return 6;
	if (st_count_label(s, "from parent") != 1)
		return 7;
	st_data(s, "from child", true, true);
	if (p11->C_Finalize(NULL) != CKR_OK)
		return 8;
	return 0;
}

static void
test_fork(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	st_init();
	slot = st_token("forked");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "from parent", true, true);
	pg_assert_int_eq(in_child(child_after_fork, slot), 0);
	/* The parent goes on with its session, and sees the child's object. */
	pg_assert_int_eq(st_count_label(s, "from child"), 1);
	pg_assert_int_eq(st_count_label(s, "from parent"), 1);
	st_fini();
}

int
main(int argc, char **argv)
{
	static const char *const nss[] = { "libnss3.so", "NSS_Init", "from-nss" };
	static const char *const p11_kit[] = { "libp11-kit.so.0", "p11_kit_modules_load", "from-p11-kit" };

	pg_test_fixture(NULL, st_teardown);
	pg_test("module/function-list", test_function_list);
	pg_test("module/interfaces", test_interfaces);
	pg_test("module/not-initialized", test_not_initialized);
	pg_test("module/init-args", test_init_args);
	pg_test("module/options", test_options);
	pg_test("module/reserved-pointer", test_reserved_pointer);
	pg_test_data("module/reserved-from-nss", test_reserved_from_loader, nss);
	pg_test_data("module/reserved-from-p11-kit", test_reserved_from_loader, p11_kit);
	pg_test("module/store-dir", test_store_dir_created);
	pg_test("module/info", test_info);
	pg_test("module/legacy", test_legacy);
	pg_test("module/fork", test_fork);
	return pg_test_run(argc, argv);
}
