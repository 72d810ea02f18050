/*
 * How a worker of `p11glue server` ends, against a module that catches a
 * use after C_Finalize (guard-module.c over SoftHSM2): a request read
 * while the worker finishes is dropped, not run in a finalized module; a
 * call in progress returns before C_Finalize; a call stuck past the wait
 * means an exit without C_Finalize; and a storm of connections whose
 * headers claim huge lengths, held open while a real client signs, never
 * has the module called after C_Finalize. And no process of the server
 * writes a core file.
 */
#define _GNU_SOURCE
#include "config.h"

#include "served.h"
#include "wire.h"
#include "rpc-calls.h"

#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>

static const char *guard_path;
static char guard_log[1024];

static void
setup(void)
{
	setup_env();
	guard_path = getenv("P11GLUE_TEST_GUARD");
	if (guard_path == NULL)
		pg_test_skip("P11GLUE_TEST_GUARD is needed");
	snprintf(guard_log, sizeof(guard_log), "%s/guard.log", pg_test_tmpdir());
	setenv("PG_GUARD_UNDER", softhsm_path, 1);
	setenv("PG_GUARD_LOG", guard_log, 1);
	unsetenv("PG_GUARD_FINALIZE_MS");
	unsetenv("PG_GUARD_SLOW_MS");
}

static void
teardown(void)
{
	stop_server();
}

static void
start_guarded(void)
{
	start_server_args("--provider", guard_path, NULL);
}

/* What the guard caught: its log, "" when nothing. */
static const char *
caught(void)
{
	static char text[4096];
	size_t n = 0;
	FILE *f = fopen(guard_log, "r");

	if (f != NULL) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = 0;
	return text;
}

#define assert_nothing_caught()                                                        \
	do {                                                                           \
		const char *got_ = caught();                                           \
		if (*got_ != 0)                                                        \
			pg_test_fail(__FILE__, __LINE__, "the guard caught: %s", got_); \
	} while (0)

static void
send_all(int fd, const void *data, size_t len)
{
	pg_assert_int_eq(send(fd, data, len, MSG_NOSIGNAL), (long)len);
}

static void
send_frame(int fd, uint32_t id, uint32_t code, const void *body, size_t len)
{
	unsigned char h[12];

	for (int i = 0; i < 4; i++) {
		h[i] = (unsigned char)(len >> (8 * i));
		h[4 + i] = (unsigned char)(id >> (8 * i));
		h[8 + i] = (unsigned char)(code >> (8 * i));
	}
	send_all(fd, h, sizeof(h));
	if (len)
		send_all(fd, body, len);
}

/* A raw connection that said hello (version 2). */
static int
raw_connect(void)
{
	pg_rpc_stream s;
	pg_rpc_frame f;
	uint32_t v;
	int fd = connect_socket();

	pg_assert(fd >= 0);
	pg_rpc_stream_init(&s, fd, fd);
	pg_assert(pg_rpc_send_hello(&s, 2));
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert(pg_rpc_parse_hello(&f, &v));
	pg_rpc_frame_clear(&f);
	pg_rpc_stream_clear(&s);
	return fd;
}

/* The next frame from the server: its id, and whether it is an error
 * frame; false at the end of the stream. Bounded: 30 s. */
static bool
next_frame(pg_rpc_stream *s, uint32_t *id, bool *error)
{
	struct pollfd p = { s->in_fd, POLLIN, 0 };
	pg_rpc_frame f;

	if (s->end == s->start)
		pg_assert_int_eq(poll(&p, 1, 30000), 1);
	if (pg_rpc_stream_read(s, &f) != 1)
		return false;
	*id = f.id;
	*error = f.code == PG_RPC_ERROR;
	pg_rpc_frame_clear(&f);
	return true;
}

/* C_GetSessionInfo with half a session handle: malformed once parsed. */
static void
send_malformed(int fd, uint32_t id)
{
	static const unsigned char half[4] = { 1 };

	send_frame(fd, id, PG_RPC_CALL_C_GetSessionInfo, half, sizeof(half));
}

/* C_GenerateRandom of 16 bytes on session 1 (none: the module says so,
 * after PG_GUARD_SLOW_MS). */
static void
send_generate_random(int fd, uint32_t id)
{
	pg_rpc_out out;

	pg_rpc_out_init(&out);
	pg_rpc_add_u64(&out, 1);
	pg_rpc_add_u8(&out, 1);
	pg_rpc_add_u64(&out, 16);
	pg_assert(!out.failed);
	send_frame(fd, id, PG_RPC_CALL_C_GenerateRandom, out.data + PG_RPC_HEADER,
	           out.len - PG_RPC_HEADER);
	pg_rpc_out_clear(&out);
}

/*
 * A malformed request ends the worker while its second thread waits to
 * read; a valid request that arrives while C_Finalize runs (the guard
 * holds it open 600 ms) is read then. It must be dropped, not run in the
 * finalized module.
 */
static void
test_late_request_dropped(void)
{
	pg_rpc_stream s;
	uint32_t id;
	bool error;
	int fd;

	setenv("PG_GUARD_FINALIZE_MS", "600", 1);
	start_guarded();
	fd = raw_connect();
	send_malformed(fd, 1);
	sleep_ms(150);
	send_frame(fd, 2, PG_RPC_CALL_C_GetInfo, NULL, 0);
	pg_rpc_stream_init(&s, fd, fd);
	pg_assert(next_frame(&s, &id, &error));
	pg_assert_int_eq(id, 1);
	pg_assert(error);
	/* Then the end: the late request gets no answer. */
	pg_assert(!next_frame(&s, &id, &error));
	pg_rpc_stream_clear(&s);
	close(fd);
	assert_nothing_caught();
}

/* A call running when the worker is told to end returns (and is
 * answered) before C_Finalize. */
static void
test_call_in_progress_returns(void)
{
	bool error, seen_error = false, seen_reply = false;
	pg_rpc_stream s;
	uint32_t id;
	int fd;

	setenv("PG_GUARD_SLOW_MS", "500", 1);
	start_guarded();
	fd = raw_connect();
	send_generate_random(fd, 1);
	sleep_ms(100);
	send_malformed(fd, 2);
	pg_rpc_stream_init(&s, fd, fd);
	while (next_frame(&s, &id, &error)) {
		if (id == 2 && error)
			seen_error = true;
		else if (id == 1 && !error)
			seen_reply = true;
		else
			pg_test_fail(__FILE__, __LINE__, "frame %u (error %d)", id, error);
	}
	pg_rpc_stream_clear(&s);
	close(fd);
	pg_assert(seen_error);
	pg_assert(seen_reply);
	assert_nothing_caught();
}

/* A call stuck in the module past the wait: the worker exits without
 * C_Finalize (which would run beside it) and without answering it. */
static void
test_stuck_call_no_finalize(void)
{
	bool error, seen_error = false;
	pg_rpc_stream s;
	uint32_t id;
	int fd;

	setenv("PG_GUARD_SLOW_MS", "10000", 1);
	start_guarded();
	fd = raw_connect();
	send_generate_random(fd, 1);
	sleep_ms(100);
	send_malformed(fd, 2);
	pg_rpc_stream_init(&s, fd, fd);
	while (next_frame(&s, &id, &error)) {
		if (id == 1)
			pg_test_fail(__FILE__, __LINE__, "the stuck call was answered: the worker waited for it");
		pg_assert(id == 2 && error);
		seen_error = true;
	}
	pg_rpc_stream_clear(&s);
	close(fd);
	pg_assert(seen_error);
	assert_nothing_caught();
}

/* ---------------------------------------------------------------------------
 * The storm
 */

#define STORM_LABEL "storm"

/* What a real client does: list, find the token's key, and with sign
 * log in and sign with it. 0 when all went well; no assertions (it runs
 * in forked children). */
static int
client_work(CK_FUNCTION_LIST_3_0 *f, bool sign)
{
	CK_OBJECT_CLASS cls = sign ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY;
	CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &cls, sizeof(cls) } };
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	unsigned char digest[32] = { 1, 2, 3 }, sig[128];
	CK_ULONG n = 0, sig_len = sizeof(sig);
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE key;
	CK_SLOT_ID slot;
	CK_RV rv;
	int failed = 1;

	if ((rv = f->C_Initialize(NULL)) != CKR_OK) {
		fprintf(stderr, "# the client: C_Initialize: 0x%lx\n", rv);
		return 1;
	}
	slot = slot_of(f, STORM_LABEL);
	if (slot == (CK_SLOT_ID)-1) {
		fprintf(stderr, "# the client: no token labelled %s\n", STORM_LABEL);
		goto out;
	}
	if ((rv = f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s)) != CKR_OK) {
		fprintf(stderr, "# the client: C_OpenSession 0x%lx\n", rv);
		goto out;
	}
	rv = sign ? f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN)) : CKR_OK;
	if ((rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN) &&
	    f->C_FindObjectsInit(s, tmpl, 1) == CKR_OK && f->C_FindObjects(s, &key, 1, &n) == CKR_OK &&
	    f->C_FindObjectsFinal(s) == CKR_OK && n == 1 &&
	    (!sign || (f->C_SignInit(s, &m, key) == CKR_OK &&
	               f->C_Sign(s, digest, sizeof(digest), sig, &sig_len) == CKR_OK && sig_len == 64)))
		failed = 0;
	else
		fprintf(stderr, "# the client: a call of the round failed (login 0x%lx, %lu keys)\n", rv, n);
	f->C_CloseSession(s);
out:
	f->C_Finalize(NULL);
	return failed;
}

/* The bytes a real client sends for client_work, recorded by a relay
 * between it and the server. */
static unsigned char *
record_client(size_t *len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char relay[200], addr[220];
	unsigned char *rec = NULL, buf[65536];
	size_t used = 0;
	int lfd, cfd, sfd, status;
	pid_t child;

	snprintf(relay, sizeof(relay), "%s/relay", pg_test_tmpdir());
	snprintf(addr, sizeof(addr), "unix:path=%s", relay);
	memcpy(sa.sun_path, relay, strlen(relay) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	pg_assert(lfd >= 0);
	pg_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	pg_assert_int_eq(listen(lfd, 1), 0);
	child = fork();
	pg_assert(child >= 0);
	if (child == 0) {
		setenv("P11GLUE_SERVER_ADDRESS", addr, 1);
		_exit(client_work(load(client_path), false));
	}
	struct pollfd a = { lfd, POLLIN, 0 };
	pg_assert_int_eq(poll(&a, 1, 20000), 1);
	cfd = accept(lfd, NULL, NULL);
	pg_assert(cfd >= 0);
	sfd = connect_socket();
	pg_assert(sfd >= 0);
	for (;;) {
		struct pollfd p[2] = { { cfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		ssize_t n;

		pg_assert(poll(p, 2, 30000) > 0);
		if (p[0].revents & (POLLIN | POLLHUP)) {
			n = read(cfd, buf, sizeof(buf));
			if (n <= 0)
				break;
			rec = realloc(rec, used + (size_t)n);
			pg_assert_not_null(rec);
			memcpy(rec + used, buf, (size_t)n);
			used += (size_t)n;
			send_all(sfd, buf, (size_t)n);
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			n = read(sfd, buf, sizeof(buf));
			if (n <= 0)
				break;
			send_all(cfd, buf, (size_t)n);
		}
	}
	close(cfd);
	close(sfd);
	close(lfd);
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*len = used;
	return rec;
}

/* Where the recording's frames start (at most max). */
static size_t
frame_starts(const unsigned char *rec, size_t len, size_t *at, size_t max)
{
	size_t n = 0;

	for (size_t off = 0; off + 12 <= len && n < max;) {
		uint32_t body = (uint32_t)rec[off] | (uint32_t)rec[off + 1] << 8 |
		                (uint32_t)rec[off + 2] << 16 | (uint32_t)rec[off + 3] << 24;
		at[n++] = off;
		off += 12 + body;
	}
	return n;
}

/* The recording with a huge length written at off (width 4 or 8, either
 * byte order), sent on a new connection that stays open. -1 when the
 * server did not take the connection. */
static int
storm_one(const unsigned char *rec, size_t len, size_t off, uint64_t value, int width, bool big)
{
	unsigned char *copy = malloc(len);
	size_t sent = 0;
	int fd = connect_socket();

	pg_assert_not_null(copy);
	memcpy(copy, rec, len);
	for (int i = 0; i < width && off + (size_t)i < len; i++) {
		int shift = 8 * (big ? width - 1 - i : i);
		copy[off + (size_t)i] = (unsigned char)(value >> shift);
	}
	while (fd >= 0 && sent < len) {
		ssize_t n = send(fd, copy + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n <= 0)
			break;   /* the server hung up, or reads no more: held as it is */
		sent += (size_t)n;
	}
	free(copy);
	return fd;
}

/*
 * About a hundred connections at a time, each a real client's bytes with
 * a length field (or a body's eight bytes) claiming 0xFFFFFFFF,
 * 0x7FFFFFFF or 1 << 30 as 32 or 64 bits in either byte order, held open,
 * while a real client lists and signs over and over: every round of the
 * client works, the server serves on, and the module is never called
 * after C_Finalize.
 */
static void
test_storm(void)
{
	static const uint64_t values[] = { 0xFFFFFFFFu, 0x7FFFFFFFu, 1u << 30 };
	unsigned char *rec;
	size_t len, starts[64], n_starts, n_offs = 0, offs[256];
	int held[100], n_held = 0, status, conns = 0;
	pid_t worker;

	start_guarded();
	{
		CK_FUNCTION_LIST_3_0 *f = load(client_path);
		CK_OBJECT_HANDLE pub, priv;
		CK_SESSION_HANDLE s;
		CK_SLOT_ID slot;

		pg_assert_int_eq(f->C_Initialize(NULL), CKR_OK);
		slot = init_token(f, STORM_LABEL);
		s = open_session(f, slot, true);
		ec_key_pair(f, s, "storm-key", true, &pub, &priv);
		pg_assert_int_eq(f->C_CloseSession(s), CKR_OK);
		pg_assert_int_eq(f->C_Finalize(NULL), CKR_OK);
	}
	rec = record_client(&len);
	pg_assert(len > 12);
	n_starts = frame_starts(rec, len, starts, PG_N_ELEMENTS(starts));
	for (size_t i = 0; i < n_starts && n_offs < PG_N_ELEMENTS(offs); i++) {
		/* The length field, and the first bytes of the body. */
		for (size_t k = 0; k <= 32 && n_offs < PG_N_ELEMENTS(offs); k += 8) {
			size_t off = k == 0 ? starts[i] : starts[i] + 12 + k - 8;
			if (off + 4 <= len)
				offs[n_offs++] = off;
		}
	}
	/* The real client, meanwhile. */
	worker = fork();
	pg_assert(worker >= 0);
	if (worker == 0) {
		CK_FUNCTION_LIST_3_0 *f = load(client_path);
		int failures = 0;
		for (int round = 0; round < 40; round++)
			failures += client_work(f, true);
		_exit(failures > 100 ? 100 : failures);
	}
	for (size_t i = 0; i < n_offs; i++) {
		for (size_t v = 0; v < PG_N_ELEMENTS(values); v++) {
			for (int form = 0; form < 4; form++) {
				int fd = storm_one(rec, len, offs[i], values[v], form < 2 ? 4 : 8, form & 1);
				if (fd < 0)
					continue;
				conns++;
				if (n_held == (int)PG_N_ELEMENTS(held)) {
					for (int h = 0; h < n_held; h++)
						close(held[h]);
					n_held = 0;
				}
				held[n_held++] = fd;
			}
		}
	}
	pg_assert_int_eq(waitpid(worker, &status, 0), worker);
	for (int h = 0; h < n_held; h++)
		close(held[h]);
	free(rec);
	pg_assert(conns >= 100);
	pg_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		pg_test_fail(__FILE__, __LINE__, "%d of 40 rounds of the real client failed",
		             WEXITSTATUS(status));
	/* The last workers finish (bounded), and the server still serves. */
	sleep_ms(500);
	pg_assert_int_eq(kill(server_pid, 0), 0);
	pg_assert_int_eq(client_work(load(client_path), true), 0);
	assert_nothing_caught();
}

/* ---------------------------------------------------------------------------
 * No core files
 */

/* The first child of pid, or 0. */
static pid_t
first_child(pid_t pid)
{
	char path[64], buf[256];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return (pid_t)atoi(buf);
}

/* The soft and hard core size limits of pid, as "SOFT/HARD". */
static const char *
core_limits(pid_t pid)
{
	static char text[64];
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	strcpy(text, "?");
	f = fopen(path, "r");
	if (f == NULL)
		return text;
	while (fgets(line, sizeof(line), f) != NULL) {
		char soft[32], hard[32];
		if (sscanf(line, "Max core file size %31s %31s", soft, hard) == 2)
			snprintf(text, sizeof(text), "%s/%s", soft, hard);
	}
	fclose(f);
	return text;
}

static int
count_cores(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	pg_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, "core", 4) == 0;
	closedir(d);
	return n;
}

/*
 * The server started with cores allowed (ulimit -c unlimited) in a
 * directory where the system's core pattern would write them: a worker
 * and the server itself killed by a crashing signal leave no core file,
 * and their limit says none may be written.
 */
static void
test_no_core_file(void)
{
	struct rlimit any = { RLIM_INFINITY, RLIM_INFINITY };
	char dir[1100], pattern[256] = "";
	pid_t worker, pid;
	int fd, status;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/cwd", pg_test_tmpdir());
	pg_assert_int_eq(mkdir(dir, 0700), 0);
	pg_assert_int_eq(chdir(dir), 0);
	if (setrlimit(RLIMIT_CORE, &any) != 0)
		pg_test_skip("cannot allow core files (ulimit -c unlimited) here");
	start_server();
	fd = raw_connect();
	for (int i = 0; i < 500 && (worker = first_child(server_pid)) == 0; i++)
		sleep_ms(10);
	pg_assert(worker > 0);
	pg_assert_str_eq(core_limits(server_pid), "0/0");
	pg_assert_str_eq(core_limits(worker), "0/0");
	pg_assert_int_eq(kill(worker, SIGSEGV), 0);
	for (int i = 0; i < 1000 && kill(worker, 0) == 0; i++)
		sleep_ms(10);
	close(fd);
	pid = server_pid;
	server_pid = 0;
	pg_assert_int_eq(kill(pid, SIGABRT), 0);
	pg_assert_int_eq(waitpid(pid, &status, 0), pid);
	pg_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	pg_assert(!WCOREDUMP(status));
	/* Where the pattern writes into the working directory, none is there. */
	f = fopen("/proc/sys/kernel/core_pattern", "r");
	if (f != NULL) {
		if (fgets(pattern, sizeof(pattern), f) == NULL)
			pattern[0] = 0;
		fclose(f);
	}
	if (pattern[0] != 0 && pattern[0] != '|' && pattern[0] != '/')
		pg_assert_int_eq(count_cores(dir), 0);
}

int
main(int argc, char **argv)
{
	pg_test_fork_cases(true);
	pg_test_fixture(setup, teardown);
	pg_test("finish/late-request-dropped", test_late_request_dropped);
	pg_test("finish/call-in-progress-returns", test_call_in_progress_returns);
	pg_test("finish/stuck-call-no-finalize", test_stuck_call_no_finalize);
	pg_test("finish/storm", test_storm);
	pg_test("finish/no-core-file", test_no_core_file);
	return pg_test_run(argc, argv);
}
