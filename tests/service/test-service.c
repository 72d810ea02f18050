/*
 * The session service (`p11glue service`, src/service) with the real key
 * store, p11glue-client.so as applications load it, raw connections for
 * what a client module would never send, and a scripted pinentry
 * (fake-pinentry.sh). Each case has its own store, runtime directory and
 * service, started and stopped by PID.
 */
#define _GNU_SOURCE
#include "harness.h"

#include "config.h"

#include "control.h"
#include "initargs.h"
#include "marshal.h"
#include "pinentry.h"
#include "rpc-calls.h"
#include "wire.h"

#include <p11glue/pkcs11.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SO_PIN "12345678"
#define USER_PIN "87654321"
#define LABEL "test"

static const char *tool_path, *client_path, *store_path, *pinentry_path;
static char dir[512], sock_path[600], remote[700];
static pid_t service_pid;
static CK_FUNCTION_LIST_3_0 *cl;

static void
sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

static void
path_in(char *out, size_t size, const char *name)
{
	if ((size_t)snprintf(out, size, "%s/%s", dir, name) >= size)
		pg_test_fail(__FILE__, __LINE__, "path too long: %s/%s", dir, name);
}

static void
write_file(const char *name, const char *text)
{
	char path[700];
	int fd;

	path_in(path, sizeof(path), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pg_assert(fd >= 0);
	pg_assert_int_eq(write(fd, text, strlen(text)), (long)strlen(text));
	close(fd);
}

/* The file's text (at most 64 KiB), or "" when missing; static. */
static const char *
read_file(const char *name)
{
	static char text[65536];
	char path[700];
	ssize_t n = 0;
	int fd;

	path_in(path, sizeof(path), name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	return text;
}

static int
count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* Runs the p11glue tool with args (NULL-ended); its output goes to
 * tool.log. Returns its exit status. */
static int
run_tool(const char *first, ...)
{
	const char *argv[16] = { tool_path };
	char log[700];
	int argc = 1, status;
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	path_in(log, sizeof(log), "tool.log");
	pid = fork();
	pg_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600), null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(tool_path, (char **)argv);
		_exit(127);
	}
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(sa.sun_path))
		pg_test_fail(__FILE__, __LINE__, "socket path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Starts `p11glue service` in the foreground with the scripted pinentry
 * and extra arguments (NULL-ended); waits until it accepts connections. */
static void
start_service(const char *first, ...)
{
	const char *argv[16] = { tool_path, "service", "--verbose", "--pinentry", pinentry_path };
	char err[700];
	int argc = 5, fd;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	path_in(err, sizeof(err), "service.err");
	service_pid = fork();
	pg_assert(service_pid >= 0);
	if (service_pid == 0) {
		int out = open(err, O_WRONLY | O_CREAT | O_APPEND, 0600), null = open("/dev/null", O_RDWR);
		/* A case that crashes takes its service with it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(null, 0);
		dup2(null, 1);
		dup2(out, 2);
		execv(tool_path, (char **)argv);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		fd = connect_to(sock_path);
		if (fd >= 0) {
			close(fd);
			return;
		}
		if (waitpid(service_pid, NULL, WNOHANG) == service_pid) {
			service_pid = 0;
			pg_test_fail(__FILE__, __LINE__, "the service exited at start: %s",
			             read_file("service.err"));
		}
		sleep_ms(10);
	}
	pg_test_fail(__FILE__, __LINE__, "the service did not start in 20 s");
}

/* Stops it by its PID; returns its exit status. */
static int
stop_service(void)
{
	int status = 0;

	if (service_pid <= 0)
		return -1;
	kill(service_pid, SIGTERM);
	for (int i = 0; i < 2000; i++) {
		if (waitpid(service_pid, &status, WNOHANG) == service_pid) {
			service_pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		}
		sleep_ms(10);
	}
	kill(service_pid, SIGKILL);
	waitpid(service_pid, NULL, 0);
	service_pid = 0;
	return 128;
}

static CK_FUNCTION_LIST_3_0 *
load(const char *path)
{
	CK_C_GetInterface get;
	CK_INTERFACE_PTR iface = NULL;
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (dl == NULL)
		pg_test_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
	*(void **)&get = dlsym(dl, "C_GetInterface");
	pg_assert_not_null(get);
	pg_assert_int_eq(get(NULL, NULL, &iface, 0), CKR_OK);
	return iface->pFunctionList;
}

/* C_Initialize of the client module naming the service's socket. */
static CK_RV
init_client(void)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING };

	args.pReserved = remote;
	return cl->C_Initialize(&args);
}

static void
setup(void)
{
	char path[700], text[1600];

	tool_path = getenv("P11GLUE_TEST_TOOL");
	client_path = getenv("P11GLUE_TEST_CLIENT");
	store_path = getenv("P11GLUE_TEST_STORE");
	pinentry_path = getenv("P11GLUE_TEST_PINENTRY");
	if (!tool_path || !client_path || !store_path || !pinentry_path)
		pg_test_skip("P11GLUE_TEST_TOOL, _CLIENT, _STORE and _PINENTRY are needed");
	/* A case that hangs fails instead of blocking the suite. */
	alarm(240);
	snprintf(dir, sizeof(dir), "%s", pg_test_tmpdir());
	path_in(path, sizeof(path), "run");
	pg_assert_int_eq(mkdir(path, 0700), 0);
	setenv("XDG_RUNTIME_DIR", path, 1);
	if ((size_t)snprintf(sock_path, sizeof(sock_path), "%s/p11glue/pkcs11", path) >= 100)
		pg_test_skip("the temporary directory's path is too long for a socket");
	snprintf(remote, sizeof(remote), "remote=unix:path=%s", sock_path);
	path_in(path, sizeof(path), "store");
	setenv("P11GLUE_STORE_DIR", path, 1);
	path_in(path, sizeof(path), "conf");
	mkdir(path, 0700);
	setenv("P11GLUE_CONFIG", path, 1);
	path_in(path, sizeof(path), "pinentry.log");
	setenv("PINENTRY_LOG", path, 1);
	path_in(path, sizeof(path), "answers");
	setenv("PINENTRY_ANSWERS", path, 1);
	unsetenv("PINENTRY_HOLD");
	unsetenv("P11GLUE_SERVER_ADDRESS");
	unsetenv("P11GLUE_PINENTRY");
	setenv("P11GLUE_AUTOSTART", "0", 1);
	write_file("so", SO_PIN "\n");
	write_file("pin", USER_PIN "\n");
	path_in(path, sizeof(path), "so");
	pg_assert_int_eq(run_tool("init-token", "--module", store_path, "--label", LABEL,
	                          "--so-pin-source", path, NULL), 0);
	snprintf(text, sizeof(text), "%s/pin", dir);
	pg_assert_int_eq(run_tool("init-pin", "--module", store_path, "--so-pin-source", path,
	                          "--new-pin-source", text, "pkcs11:token=" LABEL, NULL), 0);
	snprintf(text, sizeof(text), "pkcs11:token=" LABEL "?pin-source=%s/pin", dir);
	pg_assert_int_eq(run_tool("generate-keypair", "--module", store_path, "--type",
	                          "ec:prime256v1", "--label", "k1", "--id", "01", text, NULL), 0);
	cl = load(client_path);
}

static void
teardown(void)
{
	stop_service();
}

/* ---------------------------------------------------------------------------
 * Helpers on the client module
 */

static CK_SLOT_ID
token_slot(void)
{
	CK_SLOT_ID slots[8];
	CK_ULONG n = 8;
	CK_TOKEN_INFO ti;

	if (cl->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
		return (CK_SLOT_ID)-1;
	for (CK_ULONG i = 0; i < n; i++) {
		if (cl->C_GetTokenInfo(slots[i], &ti) == CKR_OK && memcmp(ti.label, LABEL " ", 5) == 0)
			return slots[i];
	}
	return (CK_SLOT_ID)-1;
}

static CK_SESSION_HANDLE
open_session(void)
{
	CK_SESSION_HANDLE s = CK_INVALID_HANDLE;
	CK_SLOT_ID slot = token_slot();

	if (slot == (CK_SLOT_ID)-1 ||
	    cl->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK)
		return CK_INVALID_HANDLE;
	return s;
}

static CK_STATE
state_of(CK_SESSION_HANDLE s)
{
	CK_SESSION_INFO info;

	if (cl->C_GetSessionInfo(s, &info) != CKR_OK)
		return (CK_STATE)-1;
	return info.state;
}

/* How many private keys the session finds (-1 on an error). */
static long
private_keys(CK_SESSION_HANDLE s)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t = { CKA_CLASS, &cls, sizeof(cls) };
	CK_OBJECT_HANDLE found[8];
	CK_ULONG n = 0;

	if (cl->C_FindObjectsInit(s, &t, 1) != CKR_OK)
		return -1;
	if (cl->C_FindObjects(s, found, 8, &n) != CKR_OK)
		n = (CK_ULONG)-1;
	cl->C_FindObjectsFinal(s);
	return (long)n;
}

/* An ECDSA signature with the token's key; CKR_OK when made. */
static CK_RV
sign_once(CK_SESSION_HANDLE s)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t = { CKA_CLASS, &cls, sizeof(cls) };
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	CK_BYTE hash[32] = { 1, 2, 3 }, sig[128];
	CK_ULONG len = sizeof(sig), n = 0;
	CK_OBJECT_HANDLE key;
	CK_RV rv;

	if ((rv = cl->C_FindObjectsInit(s, &t, 1)) != CKR_OK)
		return rv;
	rv = cl->C_FindObjects(s, &key, 1, &n);
	cl->C_FindObjectsFinal(s);
	if (rv != CKR_OK)
		return rv;
	if (n != 1)
		return CKR_KEY_HANDLE_INVALID;
	if ((rv = cl->C_SignInit(s, &m, key)) != CKR_OK)
		return rv;
	return cl->C_Sign(s, hash, sizeof(hash), sig, &len);
}

static CK_RV
login_pin(CK_SESSION_HANDLE s, const char *pin)
{
	return cl->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)pin, pin ? strlen(pin) : 0);
}

/*
 * Runs fn in a child process, a client of its own (the client module
 * initialized anew there: PKCS#11 v3.0 §5.2). Returns what fn returned
 * (0 for success, else the line that failed), 255 when it crashed.
 */
static int
in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	pg_assert(pid >= 0);
	if (pid == 0) {
		alarm(120);
		if (init_client() != CKR_OK)
			_exit(__LINE__ % 250);
		_exit(fn(arg));
	}
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

#define CHECK(cond) do { if (!(cond)) return __LINE__ % 250 ? __LINE__ % 250 : 1; } while (0)

/* Waits (at most 60 s) until the file holds what; false when it never does. */
static bool
wait_for(const char *name, const char *what)
{
	for (int i = 0; i < 6000; i++) {
		if (strstr(read_file(name), what) != NULL)
			return true;
		sleep_ms(10);
	}
	return false;
}

/* ---------------------------------------------------------------------------
 * One login for every client
 */

static void
test_protected_path(void)
{
	CK_TOKEN_INFO ti;

	start_service(NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	pg_assert_int_eq(cl->C_GetTokenInfo(token_slot(), &ti), CKR_OK);
	pg_assert(ti.flags & CKF_PROTECTED_AUTHENTICATION_PATH);
	pg_assert(ti.flags & CKF_LOGIN_REQUIRED);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

static int
child_sees_unlocked(void *arg)
{
	CK_SESSION_HANDLE s = open_session();

	(void)arg;
	CHECK(s != CK_INVALID_HANDLE);
	/* Logged in without a login of its own. */
	CHECK(state_of(s) == CKS_RW_USER_FUNCTIONS);
	CHECK(private_keys(s) == 1);
	CHECK(sign_once(s) == CKR_OK);
	/* A login through the protected path succeeds at once; one with a
	 * PIN is told the user is logged in. */
	CHECK(cl->C_Login(s, CKU_USER, NULL, 0) == CKR_OK);
	CHECK(login_pin(s, USER_PIN) == CKR_USER_ALREADY_LOGGED_IN);
	CHECK(login_pin(s, "00000000") == CKR_USER_ALREADY_LOGGED_IN);
	/* Its logout leaves the token unlocked for the others. */
	CHECK(cl->C_Logout(s) == CKR_OK);
	CHECK(state_of(s) == CKS_RW_USER_FUNCTIONS);
	return 0;
}

static int
child_sees_locked(void *arg)
{
	CK_SESSION_HANDLE s = open_session();

	(void)arg;
	CHECK(s != CK_INVALID_HANDLE);
	CHECK(state_of(s) == CKS_RW_PUBLIC_SESSION);
	CHECK(private_keys(s) == 0);
	CHECK(cl->C_Logout(s) == CKR_USER_NOT_LOGGED_IN);
	return 0;
}

/* One client's C_Login with the PIN unlocks the token for another
 * client, in another process, whose logout does not lock it. */
static void
test_shared_login(void)
{
	CK_SESSION_HANDLE s;

	start_service(NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert(s != CK_INVALID_HANDLE);
	pg_assert_int_eq(in_child(child_sees_locked, NULL), 0);
	pg_assert_int_eq(login_pin(s, USER_PIN), CKR_OK);
	pg_assert_int_eq(state_of(s), CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(in_child(child_sees_unlocked, NULL), 0);
	/* Still unlocked here after the other's logout and exit. */
	pg_assert_int_eq(state_of(s), CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(sign_once(s), CKR_OK);
	/* This client's own logout does not lock it either. */
	pg_assert_int_eq(cl->C_Logout(s), CKR_OK);
	pg_assert_int_eq(state_of(s), CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	/* Nor does the last client leaving: the service holds the login. */
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(state_of(s), CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A wrong PIN is refused and unlocks nothing; the SO never logs in. */
static void
test_wrong_pin_and_so(void)
{
	CK_SESSION_HANDLE s;

	start_service(NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(login_pin(s, "00000000"), CKR_PIN_INCORRECT);
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(cl->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, 8), CKR_USER_TYPE_INVALID);
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(cl->C_LoginUser(s, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, 8, NULL, 0),
	                 CKR_USER_TYPE_INVALID);
	/* The right one still works (the failed count is reset). */
	pg_assert_int_eq(login_pin(s, USER_PIN), CKR_OK);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* p11glue unlock, then p11glue lock: every client locked again, and the
 * status says so. */
static void
test_unlock_lock_status(void)
{
	char src[720];
	pg_service_status st;
	CK_SESSION_HANDLE s;
	time_t before = time(NULL);

	start_service(NULL);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert_int_eq(st.pid, service_pid);
	pg_assert(st.n >= 1);
	pg_assert(!st.tokens[0].unlocked);
	pg_service_status_clear(&st);
	snprintf(src, sizeof(src), "%s/pin", dir);
	pg_assert_int_eq(run_tool("unlock", "--pin-source", src, NULL), 0);
	pg_assert(strstr(read_file("tool.log"), "token 'test' unlocked for this session") != NULL);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert(st.tokens[0].unlocked);
	pg_assert(st.tokens[0].since >= (int64_t)before && st.tokens[0].since <= (int64_t)time(NULL));
	pg_assert(st.tokens[0].idle_left == PG_SERVICE_NO_IDLE);
	pg_service_status_clear(&st);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(sign_once(s), CKR_OK);
	pg_assert_int_eq(run_tool("unlock", "--pin-source", src, NULL), 0);
	pg_assert(strstr(read_file("tool.log"), "token 'test' was unlocked already") != NULL);
	pg_assert_int_eq(run_tool("lock", NULL), 0);
	pg_assert(strstr(read_file("tool.log"), "token 'test' locked") != NULL);
	/* Locked for the client that was using it. */
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(private_keys(s), 0);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert(!st.tokens[0].unlocked);
	pg_service_status_clear(&st);
	/* And the next login asks (here: a pinentry that is cancelled). */
	write_file("answers", "cancel\n");
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_FUNCTION_CANCELED);
	pg_assert_int_eq(run_tool("lock", "pkcs11:token=" LABEL, NULL), 0);
	pg_assert(strstr(read_file("tool.log"), "token 'test' was not unlocked") != NULL);
	pg_assert(run_tool("lock", "pkcs11:token=no-such-token", NULL) != 0);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A wrong PIN through p11glue unlock says so and unlocks nothing. */
static void
test_unlock_wrong_pin(void)
{
	char src[720];
	pg_service_status st;

	start_service(NULL);
	write_file("bad", "11111111\n");
	snprintf(src, sizeof(src), "%s/bad", dir);
	pg_assert_int_eq(run_tool("unlock", "--pin-source", src, NULL), 1);
	pg_assert(strstr(read_file("tool.log"), "CKR_PIN_INCORRECT") != NULL);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert(!st.tokens[0].unlocked);
	pg_service_status_clear(&st);
	/* Without a terminal or a PIN, the service's pinentry asks. */
	write_file("answers", "pin " USER_PIN "\n");
	pg_assert_int_eq(run_tool("unlock", NULL), 0);
	pg_assert_int_eq(count_of(read_file("pinentry.log"), "GETPIN"), 1);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert(st.tokens[0].unlocked);
	pg_service_status_clear(&st);
}

/* ---------------------------------------------------------------------------
 * pinentry
 */

/* A locked token asked for through the protected path: the service asks
 * pinentry, naming the token, and unlocks it for every client. */
static void
test_pinentry_unlocks(void)
{
	CK_SESSION_HANDLE s;
	const char *log;

	start_service(NULL);
	write_file("answers", "pin " USER_PIN "\n");
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_OK);
	pg_assert_int_eq(state_of(s), CKS_RW_USER_FUNCTIONS);
	log = read_file("pinentry.log");
	pg_assert_int_eq(count_of(log, "GETPIN"), 1);
	pg_assert(strstr(log, "SETDESC ") != NULL && strstr(log, "\"test\"") != NULL);
	pg_assert(strstr(log, "SETPROMPT PIN:") != NULL);
	/* No PIN in what the service said of it. */
	pg_assert(strstr(read_file("service.err"), USER_PIN) == NULL);
	pg_assert_int_eq(in_child(child_sees_unlocked, NULL), 0);
	pg_assert_int_eq(count_of(read_file("pinentry.log"), "GETPIN"), 1);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A wrong PIN is asked again in the same dialog, saying why. */
static void
test_pinentry_retry(void)
{
	CK_SESSION_HANDLE s;
	const char *log;

	start_service(NULL);
	write_file("answers", "pin 00000000\npin " USER_PIN "\n");
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_OK);
	log = read_file("pinentry.log");
	pg_assert_int_eq(count_of(log, "GETPIN"), 2);
	pg_assert_int_eq(count_of(log, "SETERROR"), 1);
	pg_assert_int_eq(count_of(log, "BYE"), 1);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* Cancelled, or a pinentry that dies: the client is told, the token stays
 * locked and the service goes on serving. */
static void
test_pinentry_cancel(void)
{
	CK_SESSION_HANDLE s;
	CK_TOKEN_INFO ti;

	start_service(NULL);
	write_file("answers", "cancel\n");
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_FUNCTION_CANCELED);
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(cl->C_GetTokenInfo(token_slot(), &ti), CKR_OK);
	pg_assert_int_eq(kill(service_pid, 0), 0);
	/* The next login asks again: a dialog that dies. */
	write_file("pinentry.log", "");
	write_file("answers", "die\n");
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_FUNCTION_FAILED);
	pg_assert_int_eq(count_of(read_file("pinentry.log"), "GETPIN"), 1);
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	/* And one that works. */
	write_file("answers", "pin " USER_PIN "\n");
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_OK);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

static int
child_login_null(void *arg)
{
	CK_SESSION_HANDLE s = open_session();

	(void)arg;
	CHECK(s != CK_INVALID_HANDLE);
	CHECK(cl->C_Login(s, CKU_USER, NULL, 0) == CKR_OK);
	CHECK(state_of(s) == CKS_RW_USER_FUNCTIONS);
	return 0;
}

typedef struct {
	pid_t pid;
} bg_child;

static void
start_in_child(bg_child *c, int (*fn)(void *))
{
	c->pid = fork();
	pg_assert(c->pid >= 0);
	if (c->pid == 0) {
		alarm(120);
		_exit(init_client() != CKR_OK ? 1 : fn(NULL));
	}
}

static int
wait_child(bg_child *c)
{
	int status;

	pg_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* Two clients (each running child) need the locked token at once, the
 * pinentry giving answers: one dialog for both. */
static void
two_logins_one_dialog(const char *answers, int (*child)(void *))
{
	char hold[700];
	bg_child a, b;

	path_in(hold, sizeof(hold), "hold");
	setenv("PINENTRY_HOLD", hold, 1);
	start_service(NULL);
	write_file("answers", answers);
	start_in_child(&a, child);
	pg_assert(wait_for("pinentry.log", "GETPIN"));
	start_in_child(&b, child);
	/* b's login waits for a's dialog (the service says so), then both
	 * are answered by it. */
	pg_assert(wait_for("service.err", "a login waits for the one in progress"));
	write_file("hold", "");
	pg_assert_int_eq(wait_child(&a), 0);
	pg_assert_int_eq(wait_child(&b), 0);
	pg_assert_int_eq(count_of(read_file("pinentry.log"), "GETPIN"), 1);
}

static void
test_pinentry_once(void)
{
	two_logins_one_dialog("pin " USER_PIN "\n", child_login_null);
}

static int
child_login_cancelled(void *arg)
{
	CK_SESSION_HANDLE s = open_session();

	(void)arg;
	CHECK(s != CK_INVALID_HANDLE);
	CHECK(cl->C_Login(s, CKU_USER, NULL, 0) == CKR_FUNCTION_CANCELED);
	return 0;
}

/* ... and a cancelled dialog answers both: not a second dialog for the
 * client that waited. */
static void
test_pinentry_once_cancelled(void)
{
	two_logins_one_dialog("cancel\npin " USER_PIN "\n", child_login_cancelled);
}

/* p11glue lock while the dialog is open cancels it. */
static void
test_lock_cancels_dialog(void)
{
	char hold[700];
	bg_child a;

	path_in(hold, sizeof(hold), "hold");
	setenv("PINENTRY_HOLD", hold, 1);
	start_service(NULL);
	write_file("answers", "pin " USER_PIN "\n");
	start_in_child(&a, child_login_null);
	pg_assert(wait_for("pinentry.log", "GETPIN"));
	pg_assert_int_eq(run_tool("lock", NULL), 0);
	/* The client's login failed (its child reports the line). */
	pg_assert(wait_child(&a) != 0);
	pg_assert_int_eq(kill(service_pid, 0), 0);
}

/* A key that asks for its PIN for each use: C_Login(CKU_CONTEXT_SPECIFIC)
 * without a PIN is asked through pinentry too, with a PIN it is the
 * module's. */
static void
test_context_specific(void)
{
	CK_BBOOL yes = CK_TRUE;
	CK_BYTE params[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	CK_ATTRIBUTE pub[] = { { CKA_EC_PARAMS, params, sizeof(params) },
	                       { CKA_VERIFY, &yes, sizeof(yes) } };
	CK_ATTRIBUTE priv[] = { { CKA_SIGN, &yes, sizeof(yes) }, { CKA_PRIVATE, &yes, sizeof(yes) },
	                        { CKA_ALWAYS_AUTHENTICATE, &yes, sizeof(yes) } };
	CK_MECHANISM gen = { CKM_EC_KEY_PAIR_GEN, NULL, 0 }, m = { CKM_ECDSA, NULL, 0 };
	CK_OBJECT_HANDLE hpub, hpriv;
	CK_BYTE hash[32] = { 9 }, sig[128];
	CK_ULONG len = sizeof(sig);
	CK_SESSION_HANDLE s;

	start_service(NULL);
	write_file("answers", "pin " USER_PIN "\npin " USER_PIN "\n");
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, NULL, 0), CKR_OK);
	pg_assert_int_eq(cl->C_GenerateKeyPair(s, &gen, pub, 2, priv, 3, &hpub, &hpriv), CKR_OK);
	pg_assert_int_eq(cl->C_SignInit(s, &m, hpriv), CKR_OK);
	pg_assert_int_eq(cl->C_Login(s, CKU_CONTEXT_SPECIFIC, NULL, 0), CKR_OK);
	pg_assert_int_eq(cl->C_Sign(s, hash, sizeof(hash), sig, &len), CKR_OK);
	pg_assert_int_eq(count_of(read_file("pinentry.log"), "GETPIN"), 2);
	pg_assert(strstr(read_file("pinentry.log"), "each time") != NULL);
	len = sizeof(sig);
	pg_assert_int_eq(cl->C_SignInit(s, &m, hpriv), CKR_OK);
	pg_assert_int_eq(cl->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)USER_PIN,
	                             strlen(USER_PIN)), CKR_OK);
	pg_assert_int_eq(cl->C_Sign(s, hash, sizeof(hash), sig, &len), CKR_OK);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* ---------------------------------------------------------------------------
 * Each client's own sessions (raw connections: handles as the service
 * gives them, which the client module never shows)
 */

typedef struct {
	int fd;
	pg_rpc_stream s;
	uint32_t id;
} raw;

static void
raw_open(raw *r)
{
	pg_rpc_frame f;
	uint32_t version;

	r->fd = connect_to(sock_path);
	pg_assert(r->fd >= 0);
	pg_rpc_stream_init(&r->s, r->fd, r->fd);
	r->id = 1;
	pg_assert(pg_rpc_send_hello(&r->s, 1));
	pg_assert_int_eq(pg_rpc_stream_read(&r->s, &f), 1);
	pg_assert(pg_rpc_parse_hello(&f, &version));
	pg_rpc_frame_clear(&f);
}

static void
raw_close(raw *r)
{
	pg_rpc_stream_clear(&r->s);
	close(r->fd);
}

/* One call with a request of u64 values; returns its CK_RV, the next
 * u64 of the reply in *next (when not NULL). */
static CK_RV
raw_call(raw *r, uint32_t code, int n, const uint64_t *args, uint64_t *next)
{
	pg_rpc_frame f;
	pg_rpc_out out;
	pg_rpc_in in;
	CK_RV rv;

	pg_rpc_out_init(&out);
	for (int i = 0; i < n; i++)
		pg_rpc_add_u64(&out, args[i]);
	pg_assert(pg_rpc_out_finish(&out, r->id++, code));
	pg_assert(pg_rpc_stream_write(&r->s, &out));
	pg_rpc_out_clear(&out);
	pg_assert_int_eq(pg_rpc_stream_read(&r->s, &f), 1);
	pg_assert_int_eq(f.code, code);
	pg_rpc_in_init(&in, f.body, f.len);
	rv = pg_rpc_get_u64(&in);
	if (next != NULL)
		*next = pg_rpc_get_u64(&in);
	pg_rpc_frame_clear(&f);
	return rv;
}

static uint64_t
raw_session(raw *r, CK_SLOT_ID slot)
{
	uint64_t args[2] = { slot, CKF_SERIAL_SESSION }, h = 0;

	pg_assert_int_eq(raw_call(r, PG_RPC_CALL_C_OpenSession, 2, args, &h), CKR_OK);
	return h;
}

static CK_ULONG
session_count(raw *r, CK_SLOT_ID slot)
{
	pg_rpc_frame f;
	pg_rpc_out out;
	pg_rpc_in in;
	CK_TOKEN_INFO ti;

	pg_rpc_out_init(&out);
	pg_rpc_add_u64(&out, slot);
	pg_assert(pg_rpc_out_finish(&out, r->id++, PG_RPC_CALL_C_GetTokenInfo));
	pg_assert(pg_rpc_stream_write(&r->s, &out));
	pg_rpc_out_clear(&out);
	pg_assert_int_eq(pg_rpc_stream_read(&r->s, &f), 1);
	pg_rpc_in_init(&in, f.body, f.len);
	pg_assert_int_eq(pg_rpc_get_u64(&in), CKR_OK);
	pg_assert(pg_rpc_get_token_info(&in, &ti));
	pg_rpc_frame_clear(&f);
	return ti.ulSessionCount;
}

static void
test_own_sessions(void)
{
	char so[700];
	raw a, b;
	uint64_t ha, hb, hb2, slot = 0, args[4];

	/* A second token, in slot 1. */
	path_in(so, sizeof(so), "so");
	pg_assert_int_eq(run_tool("init-token", "--module", store_path, "--label", "two",
	                          "--so-pin-source", so, NULL), 0);
	start_service(NULL);
	raw_open(&a);
	raw_open(&b);
	ha = raw_session(&a, slot);
	hb = raw_session(&b, slot);
	pg_assert(ha != hb);
	/* b cannot use, log in on, or close a's session; nor a b's. */
	args[0] = ha;
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_CloseSession, 1, args, NULL),
	                 CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_Logout, 1, args, NULL), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL),
	                 CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_FindObjectsFinal, 1, args, NULL),
	                 CKR_SESSION_HANDLE_INVALID);
	args[0] = hb;
	pg_assert_int_eq(raw_call(&a, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL),
	                 CKR_SESSION_HANDLE_INVALID);
	args[0] = ha;
	pg_assert_int_eq(raw_call(&a, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL), CKR_OK);
	/* C_CloseAllSessions of b closes b's on that slot, not a's, nor b's
	 * on another slot. */
	hb2 = raw_session(&b, 1);
	args[0] = slot;
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_CloseAllSessions, 1, args, NULL), CKR_OK);
	args[0] = hb;
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL),
	                 CKR_SESSION_HANDLE_INVALID);
	args[0] = hb2;
	pg_assert_int_eq(raw_call(&b, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL), CKR_OK);
	args[0] = ha;
	pg_assert_int_eq(raw_call(&a, PG_RPC_CALL_C_GetSessionInfo, 1, args, NULL), CKR_OK);
	raw_close(&a);
	raw_close(&b);
}

/* A client that goes away takes its sessions with it. */
static void
test_disconnect_closes(void)
{
	raw a, b;
	CK_ULONG before, now = 0;

	start_service(NULL);
	raw_open(&a);
	raw_open(&b);
	before = session_count(&b, 0);
	for (int i = 0; i < 3; i++)
		raw_session(&a, 0);
	pg_assert_int_eq(session_count(&b, 0), before + 3);
	raw_close(&a);
	for (int i = 0; i < 2000; i++) {
		now = session_count(&b, 0);
		if (now == before)
			break;
		sleep_ms(10);
	}
	pg_assert_int_eq(now, before);
	raw_close(&b);
}

/* Only the service's own user: another uid's connection is refused. */
static void
test_other_uid(void)
{
	char run[700];
	int status;
	pid_t pid;

	if (geteuid() != 0)
		pg_test_skip("needs root to act as another user");
	start_service(NULL);
	/* The directory and socket opened up: only SO_PEERCRED refuses. */
	chmod(dir, 0755);
	path_in(run, sizeof(run), "run");
	chmod(run, 0755);
	path_in(run, sizeof(run), "run/p11glue");
	chmod(run, 0755);
	chmod(sock_path, 0666);
	pid = fork();
	pg_assert(pid >= 0);
	if (pid == 0) {
		pg_rpc_stream s;
		pg_rpc_frame f;
		int fd;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		fd = connect_to(sock_path);
		if (fd < 0)
			_exit(3);
		pg_rpc_stream_init(&s, fd, fd);
		/* The hello cannot be answered: the connection is closed. */
		if (pg_rpc_send_hello(&s, 2) && pg_rpc_stream_read(&s, &f) == 1)
			_exit(4);
		_exit(0);
	}
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	pg_assert(WIFEXITED(status));
	pg_assert_int_eq(WEXITSTATUS(status), 0);
	pg_assert(wait_for("service.err", "refused a connection from uid 65534"));
}

/* ---------------------------------------------------------------------------
 * The service's life
 */

/* Locked again after the idle time without use. */
static void
test_idle_lock(void)
{
	pg_service_status st;
	CK_SESSION_HANDLE s;
	bool locked = false;

	start_service("--idle-lock", "1", NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(login_pin(s, USER_PIN), CKR_OK);
	for (int i = 0; i < 300 && !locked; i++) {
		pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
		locked = !st.tokens[0].unlocked;
		pg_assert_int_eq(st.idle_lock, 1);
		pg_service_status_clear(&st);
		if (!locked)
			sleep_ms(100);
	}
	pg_assert(locked);
	pg_assert_int_eq(state_of(s), CKS_RW_PUBLIC_SESSION);
	pg_assert(strstr(read_file("service.err"), "slot 0: locked") != NULL);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* The service restarts while a client runs: the old sessions are gone,
 * new ones work, and the new service starts locked. */
static void
test_restart(void)
{
	CK_SESSION_HANDLE s, s2;
	CK_SESSION_INFO info;
	CK_RV rv;

	start_service(NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(login_pin(s, USER_PIN), CKR_OK);
	pg_assert_int_eq(stop_service(), 0);
	/* The service removed its socket and locked the token. */
	pg_assert(access(sock_path, F_OK) != 0);
	rv = cl->C_GetSessionInfo(s, &info);
	pg_assert(rv == CKR_DEVICE_REMOVED || rv == CKR_SESSION_HANDLE_INVALID);
	start_service(NULL);
	s2 = open_session();
	pg_assert(s2 != CK_INVALID_HANDLE);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(state_of(s2), CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(login_pin(s2, USER_PIN), CKR_OK);
	pg_assert_int_eq(sign_once(s2), CKR_OK);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A second service on the same socket is refused; with --daemon it is no
 * error (the one running serves). */
static void
test_second_service(void)
{
	pg_service_status st;

	start_service(NULL);
	pg_assert_int_eq(run_tool("service", "--pinentry", "none", NULL), 1);
	pg_assert(strstr(read_file("tool.log"), "a service already listens") != NULL);
	pg_assert_int_eq(run_tool("service", "--daemon", NULL), 0);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert_int_eq(st.pid, service_pid);
	pg_service_status_clear(&st);
}

/* A service that cannot start (here: no file descriptor left for its
 * signal pipe, after it listened) says why, exits 1 and leaves no socket
 * behind. Limits rise from 3 until the pipe is what fails. */
static void
test_failed_start(void)
{
	char err[700];
	bool pipe_failed = false;

	path_in(err, sizeof(err), "service.err");
	for (rlim_t limit = 3; limit < 32 && !pipe_failed; limit++) {
		int status = 0;
		pid_t got = 0;

		unlink(err);
		service_pid = fork();
		pg_assert(service_pid >= 0);
		if (service_pid == 0) {
			int out = open(err, O_WRONLY | O_CREAT | O_APPEND, 0600);
			int null = open("/dev/null", O_RDWR);
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			dup2(null, 0);
			dup2(null, 1);
			dup2(out, 2);
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
			setrlimit(RLIMIT_NOFILE, &(struct rlimit){ limit, limit });
			execl(tool_path, tool_path, "service", "--pinentry", "none", (char *)NULL);
			_exit(127);
		}
		for (int i = 0; i < 3000 && got == 0; i++) {
			got = waitpid(service_pid, &status, WNOHANG);
			if (got == 0)
				sleep_ms(10);
		}
		if (got == 0)
			pg_test_fail(__FILE__, __LINE__, "the service started with %lu descriptors "
			             "before its signal pipe failed", (unsigned long)limit);
		service_pid = 0;
		/* Too few even to load its libraries: 127. */
		pg_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
		pg_assert(access(sock_path, F_OK) != 0);
		pipe_failed = strstr(read_file("service.err"), "cannot make the signal pipe") != NULL;
		if (pipe_failed)
			pg_assert_int_eq(WEXITSTATUS(status), 1);
	}
	pg_assert(pipe_failed);
	/* And the next start is not hindered. */
	start_service(NULL);
}

/* The pids of `p11glue service` processes of this case (their
 * XDG_RUNTIME_DIR is the case's). */
static int
services_running(pid_t *first)
{
	const char *want = getenv("XDG_RUNTIME_DIR");
	char path[300], buf[65536];
	struct dirent *e;
	int n = 0, fd;
	ssize_t len;
	DIR *d = opendir("/proc");

	pg_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0 || memmem(buf, (size_t)len, "\0service\0--daemon", 17) == NULL)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		char key[700];
		snprintf(key, sizeof(key), "XDG_RUNTIME_DIR=%s", want);
		if (len > 0 && memmem(buf, (size_t)len, key, strlen(key) + 1) != NULL) {
			if (n++ == 0)
				*first = (pid_t)atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

static int
child_self_start(void *arg)
{
	CK_SLOT_ID slots[4];
	CK_ULONG n = 4;

	(void)arg;
	CHECK(cl->C_GetSlotList(CK_TRUE, slots, &n) == CKR_OK);
	CHECK(n >= 1);
	CHECK(open_session() != CK_INVALID_HANDLE);
	return 0;
}

/* With no service running, the client module starts one: four clients at
 * once start exactly one. */
static void
test_self_start(void)
{
	bg_child c[4];
	pg_service_status st;
	pid_t pid = 0;

	setenv("P11GLUE_AUTOSTART", "1", 1);
	/* The default address: the user's service (no reserved string). */
	remote[0] = 0;
	pg_assert(access(sock_path, F_OK) != 0);
	for (int i = 0; i < 4; i++) {
		c[i].pid = fork();
		pg_assert(c[i].pid >= 0);
		if (c[i].pid == 0) {
			alarm(120);
			_exit(cl->C_Initialize(NULL) != CKR_OK ? 1 : child_self_start(NULL));
		}
	}
	for (int i = 0; i < 4; i++)
		pg_assert_int_eq(wait_child(&c[i]), 0);
	pg_assert_int_eq(services_running(&pid), 1);
	pg_assert_int_eq(pg_service_status_get(sock_path, &st), PG_SERVICE_OK);
	pg_assert_int_eq(st.pid, pid);
	pg_service_status_clear(&st);
	kill(pid, SIGTERM);
	for (int i = 0; i < 2000 && kill(pid, 0) == 0; i++)
		sleep_ms(10);
	pg_assert(kill(pid, 0) != 0);
}

/* The service ends when its socket is removed (the runtime directory goes
 * at logout), locking its tokens. */
static void
test_socket_removed(void)
{
	int status = 0;
	pid_t got = 0;

	start_service(NULL);
	pg_assert_int_eq(unlink(sock_path), 0);
	for (int i = 0; i < 6000 && got == 0; i++) {
		got = waitpid(service_pid, &status, WNOHANG);
		if (got == 0)
			sleep_ms(10);
	}
	pg_assert_int_eq(got, service_pid);
	service_pid = 0;
	pg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pg_assert(strstr(read_file("service.err"), "was removed; stopping") != NULL);
}

/* ---------------------------------------------------------------------------
 * Threads: several clients' threads sign at once
 */

static void *
sign_thread(void *arg)
{
	CK_SESSION_HANDLE s = open_session();
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 40; i++)
		bad += sign_once(s) != CKR_OK;
	cl->C_CloseSession(s);
	return (void *)bad;
}

static int
child_threads(void *arg)
{
	pthread_t t[4];
	void *bad;
	long total = 0;

	(void)arg;
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, sign_thread, NULL) == 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		total += (long)bad;
	}
	CHECK(total == 0);
	return 0;
}

static void
test_threads(void)
{
	CK_SESSION_HANDLE s;
	bg_child c[2];

	start_service(NULL);
	pg_assert_int_eq(init_client(), CKR_OK);
	s = open_session();
	pg_assert_int_eq(login_pin(s, USER_PIN), CKR_OK);
	for (int i = 0; i < 2; i++)
		start_in_child(&c[i], child_threads);
	pg_assert_int_eq(child_threads(NULL), 0);
	for (int i = 0; i < 2; i++)
		pg_assert_int_eq(wait_child(&c[i]), 0);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

int
main(int argc, char **argv)
{
	pg_test_fork_cases(true);
	pg_test_fixture(setup, teardown);
	pg_test("service/protected-path", test_protected_path);
	pg_test("service/shared-login", test_shared_login);
	pg_test("service/wrong-pin-and-so", test_wrong_pin_and_so);
	pg_test("service/unlock-lock-status", test_unlock_lock_status);
	pg_test("service/unlock-wrong-pin", test_unlock_wrong_pin);
	pg_test("service/pinentry-unlocks", test_pinentry_unlocks);
	pg_test("service/pinentry-retry", test_pinentry_retry);
	pg_test("service/pinentry-cancel", test_pinentry_cancel);
	pg_test("service/pinentry-once", test_pinentry_once);
	pg_test("service/pinentry-once-cancelled", test_pinentry_once_cancelled);
	pg_test("service/lock-cancels-dialog", test_lock_cancels_dialog);
	pg_test("service/context-specific", test_context_specific);
	pg_test("service/own-sessions", test_own_sessions);
	pg_test("service/disconnect-closes", test_disconnect_closes);
	pg_test("service/other-uid", test_other_uid);
	pg_test("service/idle-lock", test_idle_lock);
	pg_test("service/restart", test_restart);
	pg_test("service/second-service", test_second_service);
	pg_test("service/failed-start", test_failed_start);
	pg_test("service/self-start", test_self_start);
	pg_test("service/socket-removed", test_socket_removed);
	pg_test("service/threads", test_threads);
	return pg_test_run(argc, argv);
}
