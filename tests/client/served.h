/*
 * Test helpers: a SoftHSM2 token served by `p11glue server` (started by
 * the test, stopped by its PID) and p11glue-client.so loaded as an
 * application loads it. Static functions: each test file includes it once.
 */
#ifndef PG_TEST_SERVED_H
#define PG_TEST_SERVED_H

#include "harness.h"

#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PG_N_ELEMENTS
#define PG_N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Not every file uses every helper. */
#define PG_TEST_HELPER static __attribute__((unused))

#define SO_PIN "12345678"
#define USER_PIN "123456"

static const char *softhsm_path, *client_path, *tool_path;
static char sock_path[100], address[200];
static pid_t server_pid;

PG_TEST_HELPER void
sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

PG_TEST_HELPER int
connect_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Starts `p11glue server --foreground` with extra arguments (NULL-ended);
 * waits (at most 20 s) until it accepts connections. */
PG_TEST_HELPER void
start_server_args(const char *first, ...)
{
	const char *argv[16] = { tool_path, "server", "--foreground", "--socket", sock_path };
	int argc = 5, fd;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	server_pid = fork();
	pg_assert(server_pid >= 0);
	if (server_pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		/* A case that crashes takes its server with it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(null, 1);
		execv(tool_path, (char **)argv);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		fd = connect_socket();
		if (fd >= 0) {
			close(fd);
			return;
		}
		if (waitpid(server_pid, NULL, WNOHANG) == server_pid) {
			server_pid = 0;
			pg_test_fail(__FILE__, __LINE__, "the server exited at start");
		}
		sleep_ms(10);
	}
	pg_test_fail(__FILE__, __LINE__, "the server did not start in 20 s");
}

PG_TEST_HELPER void
start_server(void)
{
	start_server_args("--provider", softhsm_path, NULL);
}

/* Stops the server by its PID (SIGTERM, then SIGKILL after 10 s). */
PG_TEST_HELPER void
stop_server(void)
{
	if (server_pid <= 0)
		return;
	kill(server_pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(server_pid, NULL, WNOHANG) == server_pid) {
			server_pid = 0;
			return;
		}
		sleep_ms(10);
	}
	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	server_pid = 0;
}

/* A private SoftHSM2 token directory and the paths the test needs. */
PG_TEST_HELPER void
setup_env(void)
{
	const char *t = pg_test_tmpdir();
	char path[1024], text[1100];
	FILE *f;

	softhsm_path = getenv("P11GLUE_TEST_SOFTHSM");
	client_path = getenv("P11GLUE_TEST_CLIENT");
	tool_path = getenv("P11GLUE_TEST_TOOL");
	if (!softhsm_path || !client_path || !tool_path)
		pg_test_skip("P11GLUE_TEST_SOFTHSM, P11GLUE_TEST_CLIENT and P11GLUE_TEST_TOOL are needed");
	/* A case that hangs fails instead of blocking the suite. */
	alarm(240);
	snprintf(path, sizeof(path), "%s/tokens", t);
	mkdir(path, 0700);
	snprintf(text, sizeof(text), "directories.tokendir = %s\nlog.level = ERROR\n", path);
	snprintf(path, sizeof(path), "%s/softhsm2.conf", t);
	f = fopen(path, "w");
	pg_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	setenv("SOFTHSM2_CONF", path, 1);
	if ((size_t)snprintf(sock_path, sizeof(sock_path), "%s/sock", t) >= sizeof(sock_path))
		pg_test_skip("the temporary directory's path is too long for a socket");
	snprintf(address, sizeof(address), "unix:path=%s", sock_path);
	setenv("P11GLUE_SERVER_ADDRESS", address, 1);
}

PG_TEST_HELPER CK_FUNCTION_LIST_3_0 *
load(const char *path)
{
	CK_C_GetInterface get;
	CK_INTERFACE_PTR iface = NULL;
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (dl == NULL)
		pg_test_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
	*(void **)&get = dlsym(dl, "C_GetInterface");
	if (get != NULL && get(NULL, NULL, &iface, 0) == CKR_OK)
		return iface->pFunctionList;
	CK_C_GetFunctionList list;
	CK_FUNCTION_LIST_PTR f;
	*(void **)&list = dlsym(dl, "C_GetFunctionList");
	pg_assert_not_null(list);
	pg_assert_int_eq(list(&f), CKR_OK);
	return (CK_FUNCTION_LIST_3_0 *)f;
}

/* The slot of token "label", or (CK_SLOT_ID)-1; no assertions (for
 * forked children, which must not leave through the harness). */
PG_TEST_HELPER CK_SLOT_ID
slot_of(CK_FUNCTION_LIST_3_0 *f, const char *label)
{
	CK_SLOT_ID slots[16];
	CK_ULONG n = 16;
	CK_TOKEN_INFO ti;

	if (f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
		return (CK_SLOT_ID)-1;
	for (CK_ULONG i = 0; i < n; i++) {
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
		    memcmp(ti.label, label, strlen(label)) == 0 && ti.label[strlen(label)] == ' ')
			return slots[i];
	}
	return (CK_SLOT_ID)-1;
}

PG_TEST_HELPER CK_SLOT_ID
find_token(CK_FUNCTION_LIST_3_0 *f, const char *label)
{
	CK_SLOT_ID slots[16];
	CK_ULONG n = 16;
	CK_TOKEN_INFO ti;

	pg_assert_int_eq(f->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	for (CK_ULONG i = 0; i < n; i++) {
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
		    memcmp(ti.label, label, strlen(label)) == 0 && ti.label[strlen(label)] == ' ')
			return slots[i];
	}
	pg_test_fail(__FILE__, __LINE__, "no token %s", label);
}

/* Initializes SoftHSM's free slot as token "label" with the user PIN set. */
PG_TEST_HELPER CK_SLOT_ID
init_token(CK_FUNCTION_LIST_3_0 *f, const char *label)
{
	CK_UTF8CHAR text[32];
	CK_SLOT_ID slots[16], slot;
	CK_ULONG n = 16;
	CK_SESSION_HANDLE s;

	pg_assert_int_eq(f->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert(n >= 1);
	memset(text, ' ', sizeof(text));
	memcpy(text, label, strlen(label));
	pg_assert_int_eq(f->C_InitToken(slots[n - 1], (CK_UTF8CHAR_PTR)SO_PIN, 8, text), CKR_OK);
	slot = find_token(f, label);
	pg_assert_int_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s),
	                 CKR_OK);
	pg_assert_int_eq(f->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR)SO_PIN, 8), CKR_OK);
	pg_assert_int_eq(f->C_InitPIN(s, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)), CKR_OK);
	pg_assert_int_eq(f->C_Logout(s), CKR_OK);
	pg_assert_int_eq(f->C_CloseSession(s), CKR_OK);
	return slot;
}

PG_TEST_HELPER CK_SESSION_HANDLE
open_session(CK_FUNCTION_LIST_3_0 *f, CK_SLOT_ID slot, bool login)
{
	CK_SESSION_HANDLE s;
	CK_RV rv;

	pg_assert_int_eq(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s),
	                 CKR_OK);
	if (login) {
		rv = f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN));
		pg_assert(rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN);
	}
	return s;
}

/* An EC P-256 key pair (token objects, label given). */
PG_TEST_HELPER void
ec_key_pair(CK_FUNCTION_LIST_3_0 *f, CK_SESSION_HANDLE s, const char *label, bool token,
            CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv)
{
	static const unsigned char p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	CK_BBOOL yes = CK_TRUE, tok = token ? CK_TRUE : CK_FALSE;
	CK_MECHANISM m = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_ATTRIBUTE pt[] = {
		{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) }, { CKA_TOKEN, &tok, 1 },
		{ CKA_VERIFY, &yes, 1 }, { CKA_LABEL, (void *)label, strlen(label) },
	};
	CK_ATTRIBUTE kt[] = {
		{ CKA_TOKEN, &tok, 1 }, { CKA_SIGN, &yes, 1 }, { CKA_DERIVE, &yes, 1 },
		{ CKA_PRIVATE, &yes, 1 }, { CKA_SENSITIVE, &yes, 1 },
		{ CKA_LABEL, (void *)label, strlen(label) },
	};

	pg_assert_int_eq(f->C_GenerateKeyPair(s, &m, pt, PG_N_ELEMENTS(pt), kt, PG_N_ELEMENTS(kt),
	                                      pub, priv), CKR_OK);
}

#endif /* PG_TEST_SERVED_H */
