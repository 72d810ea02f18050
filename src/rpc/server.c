/*
 * Serving a module over RPC (see server.h).
 */
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred */
#include "config.h"

#include "server.h"
#include "marshal.h"
#include "modules.h"
#include "handles.h"
#include "rpc-calls.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Threads serving one peer at most (each runs one call at a time). */
#define MAX_THREADS 64
/* The standby's tick: a call executed by its reader that is still running
 * a whole tick later has the reading passed on (see standby_thread). */
#define STANDBY_TICK_NS (2 * 1000 * 1000)
/* Ticks without such a call after which the standby waits untimed. */
#define STANDBY_QUIET_TICKS 16

/* The read role: free, held by a thread reading, or held by a thread
 * executing the call it read (which reads again when done). */
enum { ROLE_FREE, ROLE_READING, ROLE_INLINE };
/* How long a finishing worker waits for calls in progress. */
#define FINISH_WAIT_MS 2000

typedef struct {
	pg_rpc_stream stream;
	const pg_rpc_serve_options *opts;
	CK_FUNCTION_LIST_3_0 *funcs;
	pg_module *module;
	bool v3;
	uint32_t version;              /* the protocol version agreed with the peer */
	pthread_mutex_t write_lock;
	pthread_mutex_t lock;          /* what follows */
	pthread_cond_t role_cv;        /* idle threads wait here for the read role */
	pthread_cond_t standby_cv;     /* the standby waits here (see standby_thread) */
	int role;                      /* ROLE_* */
	uint64_t inline_seq;           /* counts calls executed by their reader */
	bool standby_asleep;           /* the standby waits without a deadline */
	int threads;                   /* serving threads (the standby not counted) */
	int idle;                      /* threads waiting for the read role */
	int busy;                      /* calls in progress */
	bool finishing;
	pg_handle_map allowed;         /* with a filter: slots it matched */
	atomic_uint answered;          /* replies about to be sent (see execute) */
} rs_worker;

typedef struct {
	rs_worker *w;
	CK_FUNCTION_LIST_3_0 *funcs;
	bool v3;
	pg_rpc_arena *arena;
} rs_ctx;

static rs_worker worker;

static void finish(int status) __attribute__((noreturn));

/* ---------------------------------------------------------------------------
 * Helpers of the generated handlers
 */

/* An output buffer: u8 present, u64 capacity (at most what a reply holds). */
static CK_BYTE_PTR
rs_get_out_bytes(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG *len)
{
	bool present = pg_rpc_get_u8(in) != 0;
	uint64_t cap = pg_rpc_get_u64(in);
	CK_BYTE_PTR p;

	if (cap > PG_RPC_MAX_BODY - 64)
		cap = PG_RPC_MAX_BODY - 64;
	*len = (CK_ULONG)cap;
	if (!present || in->failed)
		return NULL;
	p = pg_rpc_arena_alloc(&ctx->arena, (size_t)cap);
	if (p == NULL)
		in->failed = true;
	return p;
}

static void
rs_add_out_bytes(pg_rpc_out *out, const CK_BYTE *p, CK_ULONG len)
{
	pg_rpc_add_u64(out, len);
	pg_rpc_add_u8(out, p != NULL);
	if (p != NULL)
		pg_rpc_add_bytes(out, p, len);
}

static CK_UTF8CHAR_PTR
rs_get_label(pg_rpc_in *in)
{
	if (!pg_rpc_get_u8(in))
		return NULL;
	return (CK_UTF8CHAR_PTR)pg_rpc_get_raw(in, 32);
}

static CK_ULONG *
rs_alloc_ulongs(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG n)
{
	CK_ULONG *p;

	if (n > PG_RPC_MAX_COUNT) {
		in->failed = true;
		return NULL;
	}
	p = pg_rpc_arena_alloc(&ctx->arena, (n ? n : 1) * sizeof(CK_ULONG));
	if (p == NULL)
		in->failed = true;
	return p;
}

/* What a module wrote into a handle array of max entries. */
static void
rs_add_ulongs(pg_rpc_out *out, const CK_ULONG *p, CK_ULONG max, CK_ULONG count)
{
	if (count > max)
		count = max;
	pg_rpc_add_u32(out, (uint32_t)count);
	for (CK_ULONG i = 0; i < count; i++)
		pg_rpc_add_u64(out, p[i]);
}

static CK_ULONG *
rs_get_out_ulongs(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG *count)
{
	bool present = pg_rpc_get_u8(in) != 0;

	*count = pg_rpc_get_ulong(in);
	if (!present || in->failed)
		return NULL;
	return rs_alloc_ulongs(ctx, in, *count);
}

static void
rs_add_out_ulongs(pg_rpc_out *out, const CK_ULONG *p, CK_ULONG count)
{
	pg_rpc_add_u64(out, count);
	pg_rpc_add_u8(out, p != NULL);
	if (p == NULL)
		return;
	for (CK_ULONG i = 0; i < count; i++)
		pg_rpc_add_u64(out, p[i]);
}

/* ---------------------------------------------------------------------------
 * Slot filter (a URI selecting tokens)
 */

bool
pg_rpc_slot_matches(CK_FUNCTION_LIST *f, const p11glue_uri *filter, CK_SLOT_ID slot)
{
	CK_SLOT_INFO si;
	CK_TOKEN_INFO ti;

	if (f->C_GetSlotInfo(slot, &si) != CKR_OK || !p11glue_uri_match_slot_info(filter, slot, &si))
		return false;
	if (!(si.flags & CKF_TOKEN_PRESENT) || f->C_GetTokenInfo(slot, &ti) != CKR_OK) {
		/* No token: only a URI without token attributes selects it. */
		memset(&ti, 0, sizeof(ti));
	}
	return p11glue_uri_match_token_info(filter, &ti);
}

static bool
rs_slot_allowed(rs_ctx *ctx, CK_SLOT_ID slot)
{
	bool ok;

	if (ctx->w->opts->filter == NULL)
		return true;
	pthread_mutex_lock(&ctx->w->lock);
	ok = pg_handle_map_get(&ctx->w->allowed, slot, NULL);
	pthread_mutex_unlock(&ctx->w->lock);
	if (!ok && pg_rpc_slot_matches((CK_FUNCTION_LIST *)ctx->w->funcs, ctx->w->opts->filter, slot)) {
		pthread_mutex_lock(&ctx->w->lock);
		ok = pg_handle_map_put(&ctx->w->allowed, slot, 1);
		pthread_mutex_unlock(&ctx->w->lock);
	}
	return ok;
}

#include "rpc-server.inc"

/* ---------------------------------------------------------------------------
 * The calls served by hand
 */

/* The module's whole list (size query, then fill, as slots may appear). */
static CK_RV
module_slots(rs_ctx *ctx, CK_BBOOL present, CK_SLOT_ID **slots, CK_ULONG *n)
{
	CK_RV rv;

	for (int tries = 0; tries < 8; tries++) {
		rv = ctx->funcs->C_GetSlotList(present, NULL, n);
		if (rv != CKR_OK)
			return rv;
		if (*n > PG_RPC_MAX_COUNT)
			return CKR_DEVICE_ERROR;
		*slots = pg_rpc_arena_alloc(&ctx->arena, (*n ? *n : 1) * sizeof(CK_SLOT_ID));
		if (*slots == NULL)
			return CKR_HOST_MEMORY;
		rv = ctx->funcs->C_GetSlotList(present, *slots, n);
		if (rv != CKR_BUFFER_TOO_SMALL)
			return rv;
	}
	return rv;
}

static bool
rs_C_GetSlotList(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_BBOOL present = pg_rpc_get_u8(in);
	bool buffer = pg_rpc_get_u8(in) != 0;
	CK_ULONG cap = pg_rpc_get_ulong(in), n = 0, kept = 0;
	CK_SLOT_ID *slots = NULL;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	rv = module_slots(ctx, present, &slots, &n);
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
		if (rs_slot_allowed(ctx, slots[i]))
			slots[kept++] = slots[i];
	}
	if (rv == CKR_OK && buffer && kept > cap)
		rv = CKR_BUFFER_TOO_SMALL;
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		rs_add_out_ulongs(out, buffer ? slots : NULL, kept);
	else if (rv == CKR_BUFFER_TOO_SMALL)
		pg_rpc_add_u64(out, kept);
	return true;
}

static bool
rs_C_OpenSession(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_SLOT_ID slot = pg_rpc_get_ulong(in);
	CK_FLAGS flags = pg_rpc_get_ulong(in);
	CK_SESSION_HANDLE session = 0;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	/* Notify callbacks stay on the client's side (PKCS#11 v3.0 §5.6
	 * lets a library never call them). */
	if (!rs_slot_allowed(ctx, slot))
		rv = CKR_SLOT_ID_INVALID;
	else
		rv = ctx->funcs->C_OpenSession(slot, flags, NULL, NULL, &session);
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		pg_rpc_add_u64(out, session);
	return true;
}

static bool
rs_C_GetAttributeValue(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_SESSION_HANDLE session = pg_rpc_get_ulong(in);
	CK_OBJECT_HANDLE object = pg_rpc_get_ulong(in);
	CK_ATTRIBUTE *tmpl;
	CK_ULONG count;
	CK_RV rv;

	if (!pg_rpc_get_attr_request(in, &ctx->arena, &tmpl, &count) || !pg_rpc_in_done(in))
		return false;
	rv = ctx->funcs->C_GetAttributeValue(session, object, tmpl, count);
	pg_rpc_add_u64(out, rv);
	/* These codes still describe every attribute (PKCS#11 v3.0 §5.7.5). */
	if (rv == CKR_OK || rv == CKR_ATTRIBUTE_SENSITIVE || rv == CKR_ATTRIBUTE_TYPE_INVALID ||
	    rv == CKR_BUFFER_TOO_SMALL)
		pg_rpc_add_attr_result(out, tmpl, count);
	return true;
}

static bool
rs_C_WaitForSlotEvent(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_FLAGS flags = pg_rpc_get_ulong(in);
	CK_SLOT_ID slot = 0;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	/* Events of slots outside the filter are skipped. */
	do
		rv = ctx->funcs->C_WaitForSlotEvent(flags, &slot, NULL);
	while (rv == CKR_OK && !rs_slot_allowed(ctx, slot) && !(flags & CKF_DONT_BLOCK));
	if (rv == CKR_OK && !rs_slot_allowed(ctx, slot))
		rv = CKR_NO_EVENT;
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		pg_rpc_add_u64(out, slot);
	return true;
}

/* ---------------------------------------------------------------------------
 * The worker: leader/follower threads
 *
 * One thread at a time holds the read role and blocks reading the peer;
 * once it has a request it either passes the role to an idle thread (one
 * is started when none is idle) and executes the request, or, when the
 * client said no other call of its was in flight (PG_RPC_LONE) and nothing
 * else is buffered, executes it first and then reads on. The first keeps
 * one client's threads from queueing behind each other's calls; the
 * second spares a sequential client's every call a wake-up of a second
 * thread, which on these machines costs about as much as the call itself
 * (bench/run-rpc.sh). A call executed that way may still block (a PIN
 * pad, C_WaitForSlotEvent) while another thread of the client sends a
 * request: the standby thread passes the role on when such a call has run
 * for a whole tick, so a request waits at most two ticks to be read.
 */

static bool
send_frame(rs_worker *w, pg_rpc_out *out, uint32_t id, uint32_t code)
{
	bool ok;

	if (!pg_rpc_out_finish(out, id, code))
		return false;
	pthread_mutex_lock(&w->write_lock);
	ok = pg_rpc_stream_write(&w->stream, out);
	pthread_mutex_unlock(&w->write_lock);
	return ok;
}

/* Executes one request; false when it was malformed. */
static bool
execute(rs_worker *w, const pg_rpc_frame *f)
{
	rs_ctx ctx = { w, w->funcs, w->v3, NULL };
	pg_rpc_out out;
	pg_rpc_in in;
	bool ok;

	if (f->code >= PG_RPC_CALL_COUNT || rs_handlers[f->code] == NULL)
		return false;
	pg_rpc_in_init(&in, f->body, f->len);
	pg_rpc_out_init(&out);
	ok = rs_handlers[f->code](&ctx, &in, &out);
	pg_rpc_arena_free(ctx.arena);
	/* A peer sends a request that depends on a reply only after that
	 * reply: the order runs through the peer, outside this process. This
	 * release (paired with the acquire after each read) makes it an order
	 * here too, so that what one thread left in the module for the peer's
	 * next call (a session's operation state) is seen by the thread that
	 * serves that call; it also tells ThreadSanitizer. */
	atomic_fetch_add_explicit(&w->answered, 1, memory_order_release);
	if (ok && out.failed) {
		/* The answer does not fit a frame: say so instead. */
		pg_rpc_out_clear(&out);
		pg_rpc_out_init(&out);
		pg_rpc_add_u64(&out, CKR_DEVICE_MEMORY);
	}
	if (ok && !send_frame(w, &out, f->id, f->code))
		finish(0);
	pg_rpc_out_clear(&out);
	return ok;
}

static void
send_error(rs_worker *w, uint32_t id)
{
	pg_rpc_out out;

	pg_rpc_out_init(&out);
	pg_rpc_add_u64(&out, CKR_DEVICE_ERROR);
	if (!send_frame(w, &out, id, PG_RPC_ERROR))
		pg_rpc_out_clear(&out);
	pg_rpc_out_clear(&out);
}

static void *serve_thread(void *arg);

/* Frees the read role for another thread (w->lock held): wakes an idle
 * one, or says that one is to be started (start_thread, after unlocking). */
static bool
pass_role_locked(rs_worker *w)
{
	w->role = ROLE_FREE;
	if (w->idle > 0) {
		pthread_cond_signal(&w->role_cv);
		return false;
	}
	if (w->threads >= MAX_THREADS || w->finishing)
		return false;   /* the next thread done with its call reads */
	w->threads++;
	return true;
}

static void
start_thread(rs_worker *w)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, serve_thread, w) != 0) {
		pthread_mutex_lock(&w->lock);
		w->threads--;
		pthread_mutex_unlock(&w->lock);
	}
	pthread_attr_destroy(&attr);
}

static void *
serve_thread(void *arg)
{
	rs_worker *w = arg;
	pg_rpc_frame f;
	uint64_t mine = 0;
	bool lone, spawn;
	int rc;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		/* The role is this thread's when its own call left it free. */
		while (w->role != ROLE_FREE) {
			w->idle++;
			pthread_cond_wait(&w->role_cv, &w->lock);
			w->idle--;
		}
		w->role = ROLE_READING;
		pthread_mutex_unlock(&w->lock);
		rc = pg_rpc_stream_read(&w->stream, &f);
		(void)atomic_load_explicit(&w->answered, memory_order_acquire);
		lone = rc == 1 && w->version >= 2 && (f.code & PG_RPC_LONE) != 0;
		if (lone)
			f.code &= ~PG_RPC_LONE;
		pthread_mutex_lock(&w->lock);
		w->busy++;
		if (rc <= 0) {
			pthread_mutex_unlock(&w->lock);
			if (rc == -2)
				send_error(w, f.id);
			finish(rc == 0 ? 0 : 1);
		}
		spawn = false;
		if (lone && w->stream.end == w->stream.start) {
			/* Executed here, then read on (unless the standby
			 * passed the role on meanwhile). */
			w->role = ROLE_INLINE;
			mine = ++w->inline_seq;
			if (w->standby_asleep)
				pthread_cond_signal(&w->standby_cv);
		} else {
			/* Someone must be reading while this thread works. */
			spawn = pass_role_locked(w);
		}
		pthread_mutex_unlock(&w->lock);
		if (spawn)
			start_thread(w);
		if (!execute(w, &f)) {
			if (!w->opts->quiet)
				pg_message("server: malformed %s request from the peer; closing",
				           f.code < PG_RPC_CALL_COUNT ? pg_rpc_call_names[f.code] : "unknown");
			send_error(w, f.id);
			pg_rpc_frame_clear(&f);
			finish(1);
		}
		pg_rpc_frame_clear(&f);
		pthread_mutex_lock(&w->lock);
		w->busy--;
		if (w->role == ROLE_INLINE && w->inline_seq == mine)
			w->role = ROLE_FREE;   /* taken again at the top */
	}
	return NULL;
}

/*
 * The standby: wakes each tick while calls are executed by their readers,
 * and frees the read role when the same such call is still running at two
 * ticks in a row. After STANDBY_QUIET_TICKS ticks without one it waits
 * untimed, woken by the next (so an idle peer costs no wake-ups).
 */
static void *
standby_thread(void *arg)
{
	rs_worker *w = arg;
	uint64_t seen = 0;
	struct timespec at;
	int quiet = 0;
	bool spawn;

	pthread_mutex_lock(&w->lock);
	while (!w->finishing) {
		spawn = false;
		if (w->role == ROLE_INLINE && w->inline_seq == seen) {
			spawn = pass_role_locked(w);
			quiet = 0;
		} else if (w->inline_seq != seen) {
			seen = w->inline_seq;
			quiet = 0;
		} else if (++quiet >= STANDBY_QUIET_TICKS) {
			w->standby_asleep = true;
			while (w->inline_seq == seen && !w->finishing)
				pthread_cond_wait(&w->standby_cv, &w->lock);
			w->standby_asleep = false;
			seen = w->inline_seq;
			quiet = 0;
		}
		if (spawn) {
			pthread_mutex_unlock(&w->lock);
			start_thread(w);
			pthread_mutex_lock(&w->lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_nsec += STANDBY_TICK_NS;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while (pthread_cond_timedwait(&w->standby_cv, &w->lock, &at) == 0 && !w->finishing) {
			/* A signal meant for the untimed wait: the tick goes on. */
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Starts the standby (the peer speaks version 2); without it no call is
 * executed by its reader. */
static void
start_standby(rs_worker *w)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->standby_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, standby_thread, w) != 0)
		w->version = 1;
	else
		pthread_setname_np(t, PG_RPC_STANDBY_NAME);
	pthread_attr_destroy(&attr);
}

/* Ends the worker: waits a while for calls in progress (the calling
 * thread's own counts as one), finalizes the module, exits. */
static void
finish(int status)
{
	rs_worker *w = &worker;
	bool idle = false, first;

	pthread_mutex_lock(&w->lock);
	first = !w->finishing;
	w->finishing = true;
	pthread_mutex_unlock(&w->lock);
	if (!first) {
		/* Another thread is finishing: this one stops here. */
		pthread_mutex_lock(&w->lock);
		w->busy--;
		pthread_mutex_unlock(&w->lock);
		for (;;)
			pause();
	}
	for (int i = 0; i < FINISH_WAIT_MS / 10 && !idle; i++) {
		pthread_mutex_lock(&w->lock);
		idle = w->busy <= 1;
		pthread_mutex_unlock(&w->lock);
		if (!idle)
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	/* C_Finalize closes what the peer left open (its sessions, its
	 * login); with a call still stuck in the module, exiting does. */
	if (idle)
		pg_module_finalize(w->module);
	_exit(status);
}

void
pg_rpc_serve(int in_fd, int out_fd, const pg_rpc_serve_options *opts)
{
	rs_worker *w = &worker;
	pg_rpc_frame f;
	uint32_t version = 0;
	char *why = NULL;
	CK_RV rv;
	int rc;

	memset(w, 0, sizeof(*w));
	pg_rpc_stream_init(&w->stream, in_fd, out_fd);
	w->opts = opts;
	pthread_mutex_init(&w->write_lock, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->role_cv, NULL);
	pg_handle_map_init(&w->allowed);
	w->threads = 1;
	w->busy = 1;
	/* The handshake: the peer's highest version, ours in answer. */
	rc = pg_rpc_stream_read(&w->stream, &f);
	if (rc != 1 || !pg_rpc_parse_hello(&f, &version)) {
		/* A peer that hangs up at once (a probe) is no error. */
		if (!opts->quiet && rc != 0)
			pg_message("server: the peer does not speak the p11glue protocol");
		pg_rpc_frame_clear(&f);
		_exit(1);
	}
	pg_rpc_frame_clear(&f);
	if (version > PG_RPC_VERSION)
		version = PG_RPC_VERSION;
	w->module = pg_module_open(opts->module_path, &why);
	if (w->module == NULL) {
		if (!opts->quiet)
			pg_message("server: cannot load %s: %s", opts->module_path, why ? why : "?");
		free(why);
		_exit(1);
	}
	w->funcs = pg_module_functions(w->module);
	w->v3 = pg_module_is_v3(w->module);
	rv = pg_module_initialize(w->module, opts->reserved);
	if (rv != CKR_OK) {
		if (!opts->quiet)
			pg_message("server: C_Initialize of %s failed: 0x%08lx", opts->module_path, rv);
		_exit(1);
	}
	w->version = version;
	if (!pg_rpc_send_hello(&w->stream, version))
		finish(0);
	if (version >= 2)
		start_standby(w);
	w->busy = 0;
	serve_thread(w);
	finish(0);
}

bool
pg_rpc_peer_uid(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred))
		return false;
	*uid = cred.uid;
	return true;
}
