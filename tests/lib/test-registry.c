/*
 * Tests of the module registry and managed modules (src/lib/registry.c,
 * modules.c, managed.c) with Debian's real modules: SoftHSM2, OpenSC and
 * p11-kit's trust module (paths from the environment, set by Meson).
 */
#define _GNU_SOURCE
#include "config.h"

#include "harness.h"

#include <p11glue/p11glue.h>

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
#include <unistd.h>

#define SO_PIN "12345678"
#define USER_PIN "1234"

static const char *softhsm;
static const char *opensc;
static const char *trust;
static char confdir[1500];

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* Writes DIR/modules/NAME.module with the given text (printf-style). */
static void __attribute__((format(printf, 2, 3)))
add_module(const char *name, const char *fmt, ...)
{
	char file[256], text[2048];
	va_list ap;

	snprintf(file, sizeof(file), "modules/%s.module", name);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	write_file(confdir, file, text);
}

/* Every test: its own SoftHSM2 token directory and registry directory. */
static void
setup(void)
{
	const char *t = pg_test_tmpdir();
	char path[2048], text[2100];

	snprintf(path, sizeof(path), "%s/tokens", t);
	mkdir(path, 0700);
	snprintf(text, sizeof(text), "directories.tokendir = %s\n", path);
	write_file(t, "softhsm2.conf", text);
	snprintf(path, sizeof(path), "%s/softhsm2.conf", t);
	setenv("SOFTHSM2_CONF", path, 1);
	snprintf(confdir, sizeof(confdir), "%s/p11", t);
	mkdir(confdir, 0700);
	snprintf(path, sizeof(path), "%s/modules", confdir);
	mkdir(path, 0700);
	setenv("P11GLUE_CONFIG", confdir, 1);
}

static p11glue_registry *
load(unsigned flags)
{
	p11glue_registry *reg = NULL;
	int rv = p11glue_registry_load(flags, &reg);

	if (rv != P11GLUE_OK)
		pg_test_fail(__FILE__, __LINE__, "registry load: %s: %s", p11glue_strerror(rv),
		             reg ? p11glue_registry_messages(reg) : "");
	return reg;
}

static CK_FUNCTION_LIST *
functions(p11glue_registry *reg, const char *name)
{
	p11glue_module *mod = p11glue_registry_find(reg, name);
	CK_FUNCTION_LIST *f;

	pg_assert_not_null(mod);
	f = p11glue_module_functions(mod);
	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "%s: %s", name, p11glue_module_error(mod));
	return f;
}

/* Initializes SoftHSM's free slot as token "test" with a user PIN; returns its slot. */
static CK_SLOT_ID
init_token(CK_FUNCTION_LIST *f)
{
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slots[8];
	CK_ULONG n = 8;
	CK_SESSION_HANDLE s;
	CK_TOKEN_INFO info;

	pg_assert_int_eq(f->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert(n >= 1);
	memset(label, ' ', sizeof(label));
	memcpy(label, "test", 4);
	pg_assert_int_eq(f->C_InitToken(slots[0], (CK_UTF8CHAR_PTR)SO_PIN, 8, label), CKR_OK);
	/* SoftHSM gives the new token a slot of its own. */
	n = 8;
	pg_assert_int_eq(f->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	for (CK_ULONG i = 0; i < n; i++) {
		pg_assert_int_eq(f->C_GetTokenInfo(slots[i], &info), CKR_OK);
		if (!(info.flags & CKF_TOKEN_INITIALIZED))
			continue;
		pg_assert_int_eq(f->C_OpenSession(slots[i], CKF_SERIAL_SESSION | CKF_RW_SESSION,
		                                  NULL, NULL, &s), CKR_OK);
		pg_assert_int_eq(f->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, 8), CKR_OK);
		pg_assert_int_eq(f->C_InitPIN(s, (CK_UTF8CHAR_PTR)USER_PIN, 4), CKR_OK);
		pg_assert_int_eq(f->C_CloseSession(s), CKR_OK);
		return slots[i];
	}
	pg_test_fail(__FILE__, __LINE__, "no initialized token after C_InitToken");
}

/* ---------------------------------------------------------------------------
 * Configuration to modules
 */

static void
test_listing(void)
{
	p11glue_registry *reg;

	add_module("softhsm2", "module: %s\nx-custom: kept\n", softhsm);
	add_module("opensc", "module: %s\n", "opensc-pkcs11.so");
	add_module("trust", "module: %s\npriority: 5\n", trust);
	add_module("disabled", "module:\n");
	add_module("elsewhere", "module: %s\nenable-in: some-other-program\n", opensc);
	reg = load(0);
	pg_assert_int_eq(p11glue_registry_count(reg), 3);
	/* Higher priority first, then by name. */
	pg_assert_str_eq(p11glue_module_name(p11glue_registry_module(reg, 0)), "trust");
	pg_assert_str_eq(p11glue_module_name(p11glue_registry_module(reg, 1)), "opensc");
	pg_assert_str_eq(p11glue_module_name(p11glue_registry_module(reg, 2)), "softhsm2");
	pg_assert_null(p11glue_registry_module(reg, 3));
	pg_assert_int_eq(p11glue_module_priority(p11glue_registry_module(reg, 0)), 5);
	pg_assert_str_eq(p11glue_module_config(p11glue_registry_find(reg, "softhsm2"), "x-custom"),
	                 "kept");
	/* A relative module: is found in the module path. */
	pg_assert_str_eq(p11glue_module_filename(p11glue_registry_find(reg, "opensc")),
	                 "opensc-pkcs11.so");
	{
		char *real = realpath(opensc, NULL);
		pg_assert_str_eq(p11glue_module_path(p11glue_registry_find(reg, "opensc")), real);
		free(real);
	}
	for (size_t i = 0; i < 3; i++)
		pg_assert_null(p11glue_module_error(p11glue_registry_module(reg, i)));
	pg_assert_str_eq(p11glue_registry_messages(reg), "");
	p11glue_registry_free(reg);
}

static void
test_enable_disable(void)
{
	p11glue_registry *reg;

	add_module("mine", "module: %s\nenable-in: lib_test_registry, other\n", softhsm);
	add_module("not-mine", "module: %s\ndisable-in: other lib_test_registry\n", opensc);
	add_module("trust", "module: %s\ndisable-in: p11-kit-proxy\n", trust);
	reg = load(P11GLUE_REGISTRY_NO_LOAD);
	pg_assert_not_null(p11glue_registry_find(reg, "mine"));
	pg_assert_null(p11glue_registry_find(reg, "not-mine"));
	pg_assert_not_null(p11glue_registry_find(reg, "trust"));
	p11glue_registry_free(reg);

	/* The proxy answers to its own name and to p11-kit's proxy's. */
	add_module("mine", "module: %s\nenable-in: p11glue-proxy\n", softhsm);
	add_module("not-mine", "module: %s\nenable-in: p11-kit-proxy\n", opensc);
	reg = load(P11GLUE_REGISTRY_NO_LOAD | P11GLUE_REGISTRY_FOR_PROXY);
	pg_assert_not_null(p11glue_registry_find(reg, "mine"));
	pg_assert_not_null(p11glue_registry_find(reg, "not-mine"));
	pg_assert_null(p11glue_registry_find(reg, "trust"));
	p11glue_registry_free(reg);
	reg = load(P11GLUE_REGISTRY_NO_LOAD);
	pg_assert_int_eq(p11glue_registry_count(reg), 1);
	pg_assert_not_null(p11glue_registry_find(reg, "trust"));
	p11glue_registry_free(reg);
}

static void
test_broken_file_disables_one(void)
{
	p11glue_registry *reg;
	const char *error;

	add_module("softhsm2", "module: %s\n", softhsm);
	add_module("broken", "module: %s\nthis is not a setting\n", opensc);
	reg = load(0);
	pg_assert_int_eq(p11glue_registry_count(reg), 2);
	error = p11glue_module_error(p11glue_registry_find(reg, "broken"));
	pg_assert_not_null(error);
	pg_assert_null(p11glue_module_functions(p11glue_registry_find(reg, "broken")));
	pg_assert_not_null(strstr(p11glue_registry_messages(reg), "broken.module:2: expected"));
	pg_assert_not_null(functions(reg, "softhsm2"));
	p11glue_registry_free(reg);
}

static void
test_critical(void)
{
	p11glue_registry *reg = NULL;

	add_module("softhsm2", "module: %s\n", softhsm);
	add_module("missing", "module: %s\n", "/nonexistent/lib.so");
	reg = load(0);
	pg_assert_not_null(strstr(p11glue_module_error(p11glue_registry_find(reg, "missing")),
	                          "no such module file"));
	pg_assert_not_null(functions(reg, "softhsm2"));
	p11glue_registry_free(reg);

	add_module("missing", "module: %s\ncritical: yes\n", "/nonexistent/lib.so");
	pg_assert_int_eq(p11glue_registry_load(0, &reg), P11GLUE_ERR_MODULE);
	pg_assert_not_null(reg);
	pg_assert_not_null(strstr(p11glue_registry_messages(reg), "missing: cannot load"));
	p11glue_registry_free(reg);
}

static void
test_same_library_loads_once(void)
{
	p11glue_registry *reg;

	add_module("a", "module: %s\n", softhsm);
	add_module("b", "module: %s\n", softhsm);
	reg = load(0);
	pg_assert_not_null(functions(reg, "a"));
	pg_assert_str_eq(p11glue_module_error(p11glue_registry_find(reg, "b")), "same module as a");
	p11glue_registry_free(reg);
}

static void
test_init_reserved(void)
{
	char text[1200], dir[1024];
	p11glue_registry *reg;
	CK_FUNCTION_LIST *f;
	CK_SLOT_ID slots[4];
	CK_ULONG n = 4;
	CK_TOKEN_INFO info;

	snprintf(dir, sizeof(dir), "%s/anchors-here", pg_test_tmpdir());
	mkdir(dir, 0700);
	snprintf(text, sizeof(text), "module: %s\nx-init-reserved: paths=%s\n", trust, dir);
	write_file(confdir, "modules/trust.module", text);
	reg = load(0);
	f = functions(reg, "trust");
	pg_assert_int_eq(f->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	pg_assert_int_eq(f->C_GetTokenInfo(slots[0], &info), CKR_OK);
	/* p11-kit's trust module names the token after its path. */
	pg_assert_mem_eq(info.label, 12, "anchors-here", 12);
	p11glue_registry_free(reg);
}

static void
test_load_file(void)
{
	p11glue_registry *reg = NULL;

	pg_assert_int_eq(p11glue_registry_load_file(softhsm, NULL, NULL, 0, &reg), P11GLUE_OK);
	pg_assert_int_eq(p11glue_registry_count(reg), 1);
	pg_assert_str_eq(p11glue_module_name(p11glue_registry_module(reg, 0)), "libsofthsm2.so");
	pg_assert_not_null(functions(reg, "libsofthsm2.so"));
	p11glue_registry_free(reg);
	pg_assert_int_eq(p11glue_registry_load_file("/nonexistent.so", "x", NULL, 0, &reg),
	                 P11GLUE_ERR_MODULE);
	p11glue_registry_free(reg);
}

/* ---------------------------------------------------------------------------
 * Managed modules
 */

static void
test_two_callers_are_isolated(void)
{
	p11glue_registry *a, *b;
	CK_FUNCTION_LIST *fa, *fb;
	CK_SESSION_HANDLE sa, sb, sa2;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;

	add_module("softhsm2", "module: %s\n", softhsm);
	a = load(0);
	b = load(0);
	fa = functions(a, "softhsm2");
	fb = functions(b, "softhsm2");
	pg_assert(fa != fb);
	slot = init_token(fa);
	pg_assert_int_eq(fa->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &sa), CKR_OK);
	pg_assert_int_eq(fa->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &sa2), CKR_OK);
	pg_assert_int_eq(fb->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &sb), CKR_OK);
	/* One caller cannot reach the other's sessions. */
	pg_assert_int_eq(fb->C_GetSessionInfo(sa, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(fb->C_CloseSession(sa), CKR_SESSION_HANDLE_INVALID);
	/* A's C_CloseAllSessions closes A's sessions only. */
	pg_assert_int_eq(fa->C_CloseAllSessions(slot), CKR_OK);
	pg_assert_int_eq(fa->C_GetSessionInfo(sa, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(fb->C_GetSessionInfo(sb, &info), CKR_OK);
	pg_assert_int_eq(fa->C_CloseAllSessions(999999), CKR_SLOT_ID_INVALID);
	/* A's C_Finalize leaves B's session and the module alive. */
	pg_assert_int_eq(fa->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &sa), CKR_OK);
	pg_assert_int_eq(fa->C_Finalize(NULL), CKR_OK);
	pg_assert_int_eq(fa->C_GetSessionInfo(sa, &info), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(fa->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	pg_assert_int_eq(fb->C_GetSessionInfo(sb, &info), CKR_OK);
	pg_assert_int_eq(info.slotID, slot);
	/* A comes back; B's initialization is not disturbed. */
	pg_assert_int_eq(fa->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(fa->C_Initialize(NULL), CKR_CRYPTOKI_ALREADY_INITIALIZED);
	pg_assert_int_eq(fa->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &sa), CKR_OK);
	p11glue_registry_free(a);
	pg_assert_int_eq(fb->C_GetSessionInfo(sb, &info), CKR_OK);
	p11glue_registry_free(b);
}

static void
test_init_args(void)
{
	p11glue_registry *reg;
	CK_FUNCTION_LIST *f;
	CK_C_INITIALIZE_ARGS args;

	add_module("softhsm2", "module: %s\n", softhsm);
	reg = load(P11GLUE_REGISTRY_NO_INIT);
	f = functions(reg, "softhsm2");
	pg_assert_int_eq(f->C_GetSlotList(CK_FALSE, NULL, &(CK_ULONG){ 0 }),
	                 CKR_CRYPTOKI_NOT_INITIALIZED);
	memset(&args, 0, sizeof(args));
	args.CreateMutex = (CK_CREATEMUTEX)1;
	pg_assert_int_eq(f->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(f->C_Finalize((CK_VOID_PTR)1), CKR_ARGUMENTS_BAD);
	args.flags = CKF_OS_LOCKING_OK;
	args.CreateMutex = NULL;
	pg_assert_int_eq(f->C_Initialize(&args), CKR_OK);
	pg_assert_int_eq(f->C_Finalize(NULL), CKR_OK);
	pg_assert_int_eq(f->C_Initialize(NULL), CKR_OK);
	p11glue_registry_free(reg);
}

static void
test_interfaces(void)
{
	p11glue_registry *reg;
	CK_FUNCTION_LIST *f, *again = NULL;
	CK_INTERFACE list[2], *iface = NULL;
	CK_ULONG n = 0;
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;

	add_module("softhsm2", "module: %s\n", softhsm);
	reg = load(0);
	f = functions(reg, "softhsm2");
	pg_assert_int_eq(f->C_GetFunctionList(&again), CKR_OK);
	pg_assert(again == f);
	pg_assert_int_eq(f->C_GetFunctionList(NULL), CKR_ARGUMENTS_BAD);
	/* SoftHSM 2.6 is a 2.40 module: its callers see a 2.40 list. */
	pg_assert_int_eq(f->version.major, 2);
	{
		CK_FUNCTION_LIST_3_0 *f3 = (CK_FUNCTION_LIST_3_0 *)f;
		pg_assert_int_eq(f3->C_GetInterfaceList(NULL, &n), CKR_OK);
		pg_assert_int_eq(n, 1);
		n = 0;
		pg_assert_int_eq(f3->C_GetInterfaceList(list, &n), CKR_BUFFER_TOO_SMALL);
		n = 2;
		pg_assert_int_eq(f3->C_GetInterfaceList(list, &n), CKR_OK);
		pg_assert(list[0].pFunctionList == f);
		pg_assert_int_eq(f3->C_GetInterface((CK_UTF8CHAR_PTR)"PKCS 11", NULL, &iface, 0), CKR_OK);
		pg_assert(iface->pFunctionList == f);
		pg_assert_int_eq(f3->C_GetInterface((CK_UTF8CHAR_PTR)"Vendor", NULL, &iface, 0),
		                 CKR_ARGUMENTS_BAD);
		slot = init_token(f);
		pg_assert_int_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
		pg_assert_int_eq(f3->C_SessionCancel(s, 0), CKR_FUNCTION_NOT_SUPPORTED);
		pg_assert_int_eq(f3->C_LoginUser(s, CKU_USER, (CK_UTF8CHAR_PTR)"1234", 4,
		                                 (CK_UTF8CHAR_PTR)"u", 1), CKR_FUNCTION_NOT_SUPPORTED);
	}
	p11glue_registry_free(reg);
}

static void
test_unmanaged(void)
{
	p11glue_registry *managed, *raw;
	CK_FUNCTION_LIST *fm, *fr, *own = NULL;
	CK_RV (*get)(CK_FUNCTION_LIST_PTR_PTR);
	void *dl;

	add_module("softhsm2", "module: %s\nmanaged: no\n", softhsm);
	raw = load(0);
	fr = functions(raw, "softhsm2");
	dl = dlopen(softhsm, RTLD_NOW | RTLD_LOCAL);
	pg_assert_not_null(dl);
	*(void **)&get = dlsym(dl, "C_GetFunctionList");
	pg_assert_int_eq(get(&own), CKR_OK);
	/* Unmanaged: the module's own list. */
	pg_assert(fr == own);
	add_module("softhsm2", "module: %s\n", softhsm);
	managed = load(0);
	fm = functions(managed, "softhsm2");
	pg_assert(fm != own);
	/* Initialization is shared and counted: freeing the unmanaged user
	 * leaves the managed one working. */
	p11glue_registry_free(raw);
	pg_assert_int_eq(fm->C_GetSlotList(CK_FALSE, NULL, &(CK_ULONG){ 0 }), CKR_OK);
	p11glue_registry_free(managed);
	dlclose(dl);
}

/* After fork(), the child initializes again and works on its own. */
static void
test_fork(void)
{
	p11glue_registry *reg;
	CK_FUNCTION_LIST *f;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;
	int status;
	pid_t child;

	add_module("softhsm2", "module: %s\n", softhsm);
	reg = load(0);
	f = functions(reg, "softhsm2");
	slot = init_token(f);
	pg_assert_int_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	child = fork();
	if (child == 0) {
		CK_SESSION_HANDLE cs;
		int code = 0;
		if (f->C_GetSessionInfo(s, &info) != CKR_CRYPTOKI_NOT_INITIALIZED)
			code |= 1;
		if (f->C_Initialize(NULL) != CKR_OK)
			code |= 2;
		if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &cs) != CKR_OK)
			code |= 4;
		if (f->C_Login(cs, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 4) != CKR_OK)
			code |= 8;
		_exit(code);
	}
	pg_assert(child > 0);
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status));
	pg_assert_int_eq(WEXITSTATUS(status), 0);
	pg_assert_int_eq(f->C_GetSessionInfo(s, &info), CKR_OK);
	p11glue_registry_free(reg);
}

static void
test_log_calls(void)
{
	char buf[4096] = { 0 };
	p11glue_registry *reg;
	CK_FUNCTION_LIST *f;
	int pipefd[2], saved;
	ssize_t n;

	add_module("softhsm2", "module: %s\nlog-calls: yes\n", softhsm);
	pg_assert_int_eq(pipe(pipefd), 0);
	saved = dup(2);
	dup2(pipefd[1], 2);
	reg = load(0);
	f = functions(reg, "softhsm2");
	f->C_GetSlotList(CK_FALSE, NULL, &(CK_ULONG){ 0 });
	f->C_CloseSession(424242);
	p11glue_registry_free(reg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(pipefd[1]);
	n = read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	pg_assert(n > 0);
	pg_assert_not_null(strstr(buf, "softhsm2: C_Initialize(0) = CKR_OK"));
	pg_assert_not_null(strstr(buf, "softhsm2: C_GetSlotList(0) = CKR_OK"));
	pg_assert_not_null(strstr(buf, "softhsm2: C_CloseSession(424242) = CKR_SESSION_HANDLE_INVALID"));
	pg_assert_not_null(strstr(buf, "softhsm2: C_Finalize(0) = CKR_OK"));
}

/* The pool of managed lists is finite; running out is an error per module. */
static void
test_pool_exhaustion(void)
{
	p11glue_registry *regs[70];
	size_t ok = 0;
	const char *error = NULL;

	add_module("softhsm2", "module: %s\n", softhsm);
	for (size_t i = 0; i < 70; i++) {
		regs[i] = load(P11GLUE_REGISTRY_NO_INIT);
		if (p11glue_module_functions(p11glue_registry_module(regs[i], 0)))
			ok++;
		else
			error = p11glue_module_error(p11glue_registry_module(regs[i], 0));
	}
	pg_assert_int_eq(ok, 64);
	pg_assert_not_null(error);
	pg_assert_not_null(strstr(error, "too many managed function lists"));
	for (size_t i = 0; i < 70; i++)
		p11glue_registry_free(regs[i]);
	/* The pool is usable again. */
	regs[0] = load(0);
	pg_assert_not_null(functions(regs[0], "softhsm2"));
	p11glue_registry_free(regs[0]);
}

int
main(int argc, char **argv)
{
	softhsm = getenv("P11GLUE_TEST_SOFTHSM");
	opensc = getenv("P11GLUE_TEST_OPENSC");
	trust = getenv("P11GLUE_TEST_P11KIT_TRUST");
	if (!softhsm || !opensc || !trust) {
		fprintf(stderr, "set P11GLUE_TEST_SOFTHSM, _OPENSC and _P11KIT_TRUST\n");
		return 99;
	}
	/* Modules keep process-wide state (SoftHSM reads its configuration
	 * once per process, p11-kit's trust module its paths): a child per case. */
	pg_test_fork_cases(true);
	pg_test_fixture(setup, NULL);
	pg_test("config/listing", test_listing);
	pg_test("config/enable-disable", test_enable_disable);
	pg_test("config/broken-file-disables-one", test_broken_file_disables_one);
	pg_test("config/critical", test_critical);
	pg_test("config/same-library-loads-once", test_same_library_loads_once);
	pg_test("config/init-reserved", test_init_reserved);
	pg_test("config/load-file", test_load_file);
	pg_test("managed/two-callers-isolated", test_two_callers_are_isolated);
	pg_test("managed/init-args", test_init_args);
	pg_test("managed/interfaces", test_interfaces);
	pg_test("managed/unmanaged", test_unmanaged);
	pg_test("managed/fork", test_fork);
	pg_test("managed/log-calls", test_log_calls);
	pg_test("managed/pool-exhaustion", test_pool_exhaustion);
	return pg_test_run(argc, argv);
}
