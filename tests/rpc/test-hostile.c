/*
 * Hostile peers against `p11glue server` serving SoftHSM2: a corpus of
 * truncated, oversized, wrong-type and wrong-count messages, garbage
 * instead of a handshake, every call code with an empty body. Each gets
 * an answer or an error reply and a closed connection; the server keeps
 * serving everyone else, and no peer reaches another's sessions.
 */
#define _GNU_SOURCE
#include "config.h"

#include "served.h"
#include "wire.h"
#include "rpc-calls.h"

#include <poll.h>

static CK_FUNCTION_LIST_3_0 *cl;

static void
setup(void)
{
	setup_env();
	start_server();
	cl = load(client_path);
}

static void
teardown(void)
{
	stop_server();
}

/* A raw connection that said hello with a version (none when 0). */
static int
raw_connect_version(uint32_t version)
{
	pg_rpc_stream s;
	pg_rpc_frame f;
	uint32_t v;
	int fd = connect_socket();

	pg_assert(fd >= 0);
	if (version == 0)
		return fd;
	pg_rpc_stream_init(&s, fd, fd);
	pg_assert(pg_rpc_send_hello(&s, version));
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert(pg_rpc_parse_hello(&f, &v));
	pg_assert_int_eq(v, version);
	pg_rpc_frame_clear(&f);
	pg_rpc_stream_clear(&s);
	return fd;
}

/* A raw connection that said hello (when hello is set). */
static int
raw_connect(bool hello)
{
	return raw_connect_version(hello ? PG_RPC_VERSION : 0);
}

static void
send_raw(int fd, const void *data, size_t len)
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
	send_raw(fd, h, sizeof(h));
	if (len)
		send_raw(fd, body, len);
}

enum { GOT_EOF, GOT_ERROR, GOT_REPLY };

/* What the server did: closed, sent an error frame (then closed), or
 * answered. Bounded: 20 s. */
static int
outcome(int fd, uint32_t id)
{
	struct pollfd p = { fd, POLLIN, 0 };
	pg_rpc_stream s;
	pg_rpc_frame f;
	int rc, got;

	pg_rpc_stream_init(&s, fd, fd);
	pg_assert_int_eq(poll(&p, 1, 20000), 1);
	rc = pg_rpc_stream_read(&s, &f);
	if (rc != 1) {
		pg_rpc_stream_clear(&s);
		return GOT_EOF;
	}
	pg_assert_int_eq(f.id, id);
	got = f.code == PG_RPC_ERROR ? GOT_ERROR : GOT_REPLY;
	pg_rpc_frame_clear(&f);
	if (got == GOT_ERROR) {
		/* ... and the connection is closed after it. */
		pg_assert_int_eq(poll(&p, 1, 20000), 1);
		pg_assert(pg_rpc_stream_read(&s, &f) != 1);
	}
	pg_rpc_stream_clear(&s);
	return got;
}

/* The server still serves a well-behaved client. */
static void
still_serving(void)
{
	CK_SLOT_ID slots[4];
	CK_ULONG n = 4;

	pg_assert_int_eq(kill(server_pid, 0), 0);
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert(n >= 1);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

typedef struct {
	const char *name;
	uint32_t code;
	size_t len;                 /* body bytes to send */
	unsigned char body[64];
	uint32_t claimed;           /* header length when not len (0: len) */
} message;

#define U64(v) (unsigned char)(v), 0, 0, 0, 0, 0, 0, 0

static const message corpus[] = {
	{ "unknown call code", 9999, 0, { 0 }, 0 },
	{ "the hello code again", PG_RPC_HELLO, 12, "p11glue\0\1\0\0\0", 0 },
	{ "error code from a client", PG_RPC_ERROR, 0, { 0 }, 0 },
	{ "C_GetInfo with a trailing byte", PG_RPC_CALL_C_GetInfo, 1, { 0 }, 0 },
	{ "C_GetSessionInfo truncated", PG_RPC_CALL_C_GetSessionInfo, 4, { 1 }, 0 },
	{ "C_GetSlotInfo with a 32-bit slot", PG_RPC_CALL_C_GetSlotInfo, 4, { 0 }, 0 },
	/* C_FindObjectsInit: session, then a template claiming 65535 attributes. */
	{ "template count beyond the input", PG_RPC_CALL_C_FindObjectsInit, 12,
	  { U64(1), 0xff, 0xff, 0, 0 }, 0 },
	{ "template count over the limit", PG_RPC_CALL_C_FindObjectsInit, 12,
	  { U64(1), 0, 0, 0, 0x10 }, 0 },
	/* One attribute (CKA_LABEL) with value form 9. */
	{ "attribute value of an unknown form", PG_RPC_CALL_C_FindObjectsInit, 21,
	  { U64(1), 1, 0, 0, 0, U64(3), 9 }, 0 },
	/* One attribute whose byte string claims 2^31 bytes. */
	{ "attribute longer than the message", PG_RPC_CALL_C_FindObjectsInit, 25,
	  { U64(1), 1, 0, 0, 0, U64(3), 1, 0, 0, 0, 0x80 }, 0 },
	/* A mechanism with a parameter form 7. */
	{ "mechanism parameter of an unknown form", PG_RPC_CALL_C_DigestInit, 18,
	  { U64(1), 1, U64(0x250), 7 }, 0 },
	/* CKM_AES_GCM (0x1087) with structure id 1 (a CK_ULONG). */
	{ "mechanism with another's structure", PG_RPC_CALL_C_EncryptInit, 30,
	  { U64(1), 1, 0x87, 0x10, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, U64(5), U64(7) }, 0 },
	/* C_FindObjects: max count 2^40. */
	{ "handle count over the limit", PG_RPC_CALL_C_FindObjects, 16,
	  { U64(1), 0, 0, 0, 0, 0, 1, 0, 0 }, 0 },
	/* C_GetAttributeValue: 2 attributes of 16 MiB each (over the budget). */
	{ "attribute buffers over the frame size", PG_RPC_CALL_C_GetAttributeValue, 56,
	  { U64(1), U64(1), 2, 0, 0, 0, U64(0x11), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0,
	    U64(0x11), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0 }, 0 },
	/* C_Login with an input-buffer flag of 3. */
	{ "input buffer flag out of range", PG_RPC_CALL_C_Login, 17, { U64(1), U64(1), 3 }, 0 },
	{ "header claiming more than the limit", PG_RPC_CALL_C_GetInfo, 0, { 0 },
	  PG_RPC_MAX_BODY + 1 },
	{ "header claiming more than is sent", PG_RPC_CALL_C_GetInfo, 3, { 0 }, 1000 },
};

static void
test_corpus(void)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(corpus); i++) {
		const message *m = &corpus[i];
		unsigned char h[12];
		uint32_t len = m->claimed ? m->claimed : (uint32_t)m->len;
		int fd = raw_connect(true), got;

		for (int k = 0; k < 4; k++) {
			h[k] = (unsigned char)(len >> (8 * k));
			h[4 + k] = (unsigned char)(77 >> (8 * k));
			h[8 + k] = (unsigned char)(m->code >> (8 * k));
		}
		send_raw(fd, h, 12);
		if (m->len)
			send_raw(fd, m->body, m->len);
		if (m->claimed > m->len && m->claimed <= PG_RPC_MAX_BODY)
			shutdown(fd, SHUT_WR);   /* a truncated frame: the peer hangs up */
		got = outcome(fd, 77);
		if (got == GOT_REPLY)
			pg_test_fail(__FILE__, __LINE__, "%s: answered as if valid", m->name);
		close(fd);
	}
	still_serving();
}

/* Every call code with an empty body: an answer (calls without
 * arguments) or an error and a close; never a crash. */
static void
test_empty_bodies(void)
{
	int answered = 0;

	for (uint32_t code = 0; code < PG_RPC_CALL_COUNT; code++) {
		int fd = raw_connect(true);
		send_frame(fd, code, code, NULL, 0);
		answered += outcome(fd, code) == GOT_REPLY;
		close(fd);
	}
	/* C_GetInfo is the only call without arguments. */
	pg_assert_int_eq(answered, 1);
	still_serving();
}

static void
test_bad_handshakes(void)
{
	static const unsigned char magic[] = { 'p', '1', '1', 'k', 'i', 't', 0, 0, 1, 0, 0, 0 };
	static const unsigned char v0[] = { 'p', '1', '1', 'g', 'l', 'u', 'e', 0, 0, 0, 0, 0 };
	int fd;

	/* A call before the hello. */
	fd = raw_connect(false);
	send_frame(fd, 1, PG_RPC_CALL_C_GetInfo, NULL, 0);
	pg_assert_int_eq(outcome(fd, 1), GOT_EOF);
	close(fd);
	/* Another protocol's magic; version 0. */
	fd = raw_connect(false);
	send_frame(fd, 0, PG_RPC_HELLO, magic, sizeof(magic));
	pg_assert_int_eq(outcome(fd, 0), GOT_EOF);
	close(fd);
	fd = raw_connect(false);
	send_frame(fd, 0, PG_RPC_HELLO, v0, sizeof(v0));
	pg_assert_int_eq(outcome(fd, 0), GOT_EOF);
	close(fd);
	/* Plain garbage. */
	fd = raw_connect(false);
	send_raw(fd, "GET / HTTP/1.0\r\n\r\n", 18);
	pg_assert_int_eq(outcome(fd, 0), GOT_EOF);
	close(fd);
	/* A later version than ours: the server answers with its own. */
	pg_rpc_stream s;
	pg_rpc_frame f;
	uint32_t v;
	fd = raw_connect(false);
	pg_rpc_stream_init(&s, fd, fd);
	pg_assert(pg_rpc_send_hello(&s, 99));
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert(pg_rpc_parse_hello(&f, &v));
	pg_assert_int_eq(v, PG_RPC_VERSION);
	pg_rpc_frame_clear(&f);
	pg_rpc_stream_clear(&s);
	close(fd);
	still_serving();
}

/* The next reply on s: its code (the request's, without flags); the
 * request's id in *id. Bounded: 20 s. */
static uint32_t
reply_code(pg_rpc_stream *s, uint32_t *id)
{
	struct pollfd p = { s->in_fd, POLLIN, 0 };
	pg_rpc_frame f;
	uint32_t code;

	if (s->end == s->start)
		pg_assert_int_eq(poll(&p, 1, 20000), 1);
	pg_assert_int_eq(pg_rpc_stream_read(s, &f), 1);
	*id = f.id;
	code = f.code;
	pg_rpc_frame_clear(&f);
	return code;
}

/* Version 1 peers are served as before: a code with the version 2 flag
 * is no call there. Under version 2 the flag is taken and not echoed;
 * a request with it, one without, and several sent at once are served. */
static void
test_versions(void)
{
	pg_rpc_stream s;
	uint32_t id, seen = 0;
	int fd;

	fd = raw_connect_version(1);
	pg_rpc_stream_init(&s, fd, fd);
	send_frame(fd, 1, PG_RPC_CALL_C_GetInfo, NULL, 0);
	pg_assert_int_eq(reply_code(&s, &id), PG_RPC_CALL_C_GetInfo);
	pg_assert_int_eq(id, 1);
	pg_rpc_stream_clear(&s);
	send_frame(fd, 2, PG_RPC_CALL_C_GetInfo | PG_RPC_LONE, NULL, 0);
	pg_assert_int_eq(outcome(fd, 2), GOT_ERROR);
	close(fd);
	fd = raw_connect_version(2);
	pg_rpc_stream_init(&s, fd, fd);
	send_frame(fd, 1, PG_RPC_CALL_C_GetInfo | PG_RPC_LONE, NULL, 0);
	pg_assert_int_eq(reply_code(&s, &id), PG_RPC_CALL_C_GetInfo);
	pg_assert_int_eq(id, 1);
	send_frame(fd, 2, PG_RPC_CALL_C_GetInfo, NULL, 0);
	pg_assert_int_eq(reply_code(&s, &id), PG_RPC_CALL_C_GetInfo);
	pg_assert_int_eq(id, 2);
	/* Several at once, all marked: those already buffered when one is
	 * read are read by another thread; replies come in any order. */
	for (uint32_t i = 3; i < 11; i++)
		send_frame(fd, i, PG_RPC_CALL_C_GetInfo | PG_RPC_LONE, NULL, 0);
	for (int i = 3; i < 11; i++) {
		pg_assert_int_eq(reply_code(&s, &id), PG_RPC_CALL_C_GetInfo);
		pg_assert(id >= 3 && id < 11 && !(seen & (1u << id)));
		seen |= 1u << id;
	}
	pg_rpc_stream_clear(&s);
	/* Another flag bit is no call. */
	send_frame(fd, 11, PG_RPC_CALL_C_GetInfo | (PG_RPC_LONE << 1), NULL, 0);
	pg_assert_int_eq(outcome(fd, 11), GOT_ERROR);
	close(fd);
	still_serving();
}

/* A raw peer names the server-side handle of another client's session:
 * its own worker has no such session. */
static void
test_no_foreign_sessions(void)
{
	unsigned char body[8];
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;
	pg_rpc_stream st;
	pg_rpc_frame f;
	pg_rpc_in in;
	int fd;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "victim");
	s = open_session(cl, slot, true);
	fd = raw_connect(true);
	pg_rpc_stream_init(&st, fd, fd);
	/* SoftHSM numbers sessions from 1: try the first few. */
	for (unsigned h = 1; h <= 4; h++) {
		memset(body, 0, sizeof(body));
		body[0] = (unsigned char)h;
		send_frame(fd, h, PG_RPC_CALL_C_GetSessionInfo, body, 8);
		pg_assert_int_eq(pg_rpc_stream_read(&st, &f), 1);
		pg_rpc_in_init(&in, f.body, f.len);
		pg_assert_ulong_eq(pg_rpc_get_u64(&in), CKR_SESSION_HANDLE_INVALID);
		pg_rpc_frame_clear(&f);
	}
	pg_rpc_stream_clear(&st);
	close(fd);
	/* The victim's session is untouched. */
	CK_SESSION_INFO info;
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

int
main(int argc, char **argv)
{
	pg_test_fork_cases(true);
	pg_test_fixture(setup, teardown);
	pg_test("hostile/corpus", test_corpus);
	pg_test("hostile/empty-bodies", test_empty_bodies);
	pg_test("hostile/handshakes", test_bad_handshakes);
	pg_test("hostile/versions", test_versions);
	pg_test("hostile/no-foreign-sessions", test_no_foreign_sessions);
	return pg_test_run(argc, argv);
}
