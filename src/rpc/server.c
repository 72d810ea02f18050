/*
 * The worker serving a peer (see server.h): its threads, its hand-shake
 * and its end, in a process of its own (pg_rpc_serve) or among others in
 * one process (pg_rpc_conn_start). What a request does is dispatch.c's.
 */
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred, pthread_setname_np */
#include "config.h"

#include "server.h"
#include "dispatch.h"
#include "modules.h"
#include "rpc-calls.h"

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
/* How long a finishing worker process waits for calls in progress. */
#define FINISH_WAIT_MS 2000

/* What executing a request came to. */
enum { EXEC_OK, EXEC_MALFORMED, EXEC_GONE };

typedef struct pg_rpc_conn {
	pg_rpc_stream stream;
	pg_rpc_calls calls;
	pg_rpc_conn_options hooks;     /* in-process: the caller's; else funcs and v3 only */
	bool shared;                   /* one connection among others in this process */
	bool quiet;
	pg_module *module;             /* a worker process's module */
	uint32_t version;              /* the protocol version agreed with the peer */
	pthread_mutex_t write_lock;
	pthread_mutex_t lock;          /* what follows */
	pthread_cond_t role_cv;        /* idle threads wait here for the read role */
	pthread_cond_t standby_cv;     /* the standby waits here (see standby_thread) */
	int role;                      /* ROLE_* */
	uint64_t inline_seq;           /* counts calls executed by their reader */
	bool standby_asleep;           /* the standby waits without a deadline */
	bool standby_running;
	bool standby_cv_made;
	int threads;                   /* serving threads (the standby not counted) */
	int idle;                      /* threads waiting for the read role */
	int busy;                      /* calls in progress */
	bool finishing;
	atomic_uint answered;          /* replies about to be sent (see execute) */
} rs_worker;

/* The worker of this process (pg_rpc_serve). */
static rs_worker worker;
static _Thread_local void *current;

static void finish(rs_worker *w, int status) __attribute__((noreturn));
static void thread_gone(rs_worker *w, bool standby);

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

/* Executes one request and sends its reply. */
static int
execute(rs_worker *w, const pg_rpc_frame *f)
{
	bool vendor = f->code >= PG_RPC_VENDOR_FIRST && f->code <= PG_RPC_VENDOR_LAST;
	void *saved = current;
	pg_rpc_out out;
	pg_rpc_in in;
	bool ok, sent;

	pg_rpc_in_init(&in, f->body, f->len);
	pg_rpc_out_init(&out);
	current = w->hooks.data;
	if (vendor)
		ok = w->hooks.vendor != NULL && w->hooks.vendor(w->hooks.data, f->code, &in, &out);
	else
		ok = pg_rpc_calls_run(&w->calls, f->code, &in, &out);
	current = saved;
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
	sent = ok && send_frame(w, &out, f->id, f->code);
	pg_rpc_out_clear(&out);
	return !ok ? EXEC_MALFORMED : sent ? EXEC_OK : EXEC_GONE;
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

/* The worker ends with status: a worker process exits; a connection of a
 * shared process has its threads leave (the calling thread too, when it
 * returns). */
static void
end(rs_worker *w, int status)
{
	if (!w->shared)
		finish(w, status);
	pthread_mutex_lock(&w->lock);
	w->finishing = true;
	w->busy--;
	pthread_cond_broadcast(&w->role_cv);
	if (w->standby_running)
		pthread_cond_signal(&w->standby_cv);
	pthread_mutex_unlock(&w->lock);
	/* A thread blocked reading sees the end of the stream. */
	shutdown(w->stream.in_fd, SHUT_RDWR);
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
	if (pthread_create(&t, &attr, serve_thread, w) != 0)
		thread_gone(w, false);
	pthread_attr_destroy(&attr);
}

/* Reads one request (the read role held) and admits it as a call in
 * progress; false when the worker ends (ended here, or already ending). */
static bool
read_request(rs_worker *w, pg_rpc_frame *f, bool *lone)
{
	int rc = pg_rpc_stream_read(&w->stream, f);
	bool admitted;

	(void)atomic_load_explicit(&w->answered, memory_order_acquire);
	*lone = rc == 1 && w->version >= 2 && (f->code & PG_RPC_LONE) != 0;
	if (*lone)
		f->code &= ~PG_RPC_LONE;
	/* A call is admitted under the lock that finish() decides under:
	 * once the worker is finishing, what this thread read is dropped
	 * and the module is not called again. */
	pthread_mutex_lock(&w->lock);
	admitted = !w->finishing;
	if (admitted)
		w->busy++;
	pthread_mutex_unlock(&w->lock);
	if (!admitted) {
		if (rc == 1)
			pg_rpc_frame_clear(f);
		return false;
	}
	if (rc == 1)
		return true;
	if (rc == -2)
		send_error(w, f->id);
	end(w, rc == 0 ? 0 : 1);
	return false;
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
		while (w->role != ROLE_FREE && !w->finishing) {
			w->idle++;
			pthread_cond_wait(&w->role_cv, &w->lock);
			w->idle--;
		}
		if (w->finishing)
			break;
		w->role = ROLE_READING;
		pthread_mutex_unlock(&w->lock);
		if (!read_request(w, &f, &lone)) {
			pthread_mutex_lock(&w->lock);
			break;
		}
		pthread_mutex_lock(&w->lock);
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
		rc = execute(w, &f);
		if (rc == EXEC_MALFORMED) {
			if (!w->quiet)
				pg_message("server: malformed %s request from the peer; closing",
				           f.code < PG_RPC_CALL_COUNT ? pg_rpc_call_names[f.code] : "unknown");
			send_error(w, f.id);
		}
		pg_rpc_frame_clear(&f);
		if (rc != EXEC_OK) {
			end(w, rc == EXEC_MALFORMED ? 1 : 0);
			pthread_mutex_lock(&w->lock);
			break;
		}
		pthread_mutex_lock(&w->lock);
		w->busy--;
		if (w->role == ROLE_INLINE && w->inline_seq == mine)
			w->role = ROLE_FREE;   /* taken again at the top */
	}
	pthread_mutex_unlock(&w->lock);
	thread_gone(w, false);
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
			continue;
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
		while (!w->finishing && pthread_cond_timedwait(&w->standby_cv, &w->lock, &at) == 0) {
			/* A signal meant for the untimed wait: the tick goes on. */
		}
	}
	pthread_mutex_unlock(&w->lock);
	thread_gone(w, true);
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
	w->standby_cv_made = true;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	w->standby_running = true;
	if (pthread_create(&t, &attr, standby_thread, w) != 0) {
		w->standby_running = false;
		w->version = 1;
	} else {
		pthread_setname_np(t, PG_RPC_STANDBY_NAME);
	}
	pthread_attr_destroy(&attr);
}

static void
worker_init(rs_worker *w, int in_fd, int out_fd)
{
	memset(w, 0, sizeof(*w));
	pg_rpc_stream_init(&w->stream, in_fd, out_fd);
	pg_rpc_stream_set_spin(&w->stream, PG_RPC_SPIN_US);
	pthread_mutex_init(&w->write_lock, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->role_cv, NULL);
	w->threads = 1;
	w->busy = 1;
}

/* The peer's hello, answered; false (after a message) when it speaks no
 * version of the protocol or hangs up. */
static bool
handshake(rs_worker *w, uint32_t *version)
{
	pg_rpc_frame f;
	int rc = pg_rpc_stream_read(&w->stream, &f);
	bool ok = rc == 1 && pg_rpc_parse_hello(&f, version);

	pg_rpc_frame_clear(&f);
	/* A peer that hangs up at once (a probe) is no error. */
	if (!ok && !w->quiet && rc != 0)
		pg_message("server: the peer does not speak the p11glue protocol");
	if (ok && *version > PG_RPC_VERSION)
		*version = PG_RPC_VERSION;
	return ok;
}

/* ---------------------------------------------------------------------------
 * A worker process
 */

/* Ends the worker: from the moment finishing is set (under the lock that
 * admits calls, see read_request) no call starts; it waits a while for
 * those in progress (the calling thread's own counts as one), finalizes
 * the module once none runs, and exits. A call still stuck in the module
 * after the wait means exiting without C_Finalize. */
static void
finish(rs_worker *w, int status)
{
	struct timespec start, now;
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
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pthread_mutex_lock(&w->lock);
		idle = w->busy <= 1;
		pthread_mutex_unlock(&w->lock);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (idle || (now.tv_sec - start.tv_sec) * 1000 +
		            (now.tv_nsec - start.tv_nsec) / 1000000 >= FINISH_WAIT_MS)
			break;
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
	uint32_t version = 0;
	char *why = NULL;
	CK_RV rv;

	worker_init(w, in_fd, out_fd);
	w->quiet = opts->quiet;
	/* The handshake: the peer's highest version, ours in answer. */
	if (!handshake(w, &version))
		_exit(1);
	w->module = pg_module_open(opts->module_path, &why);
	if (w->module == NULL) {
		if (!opts->quiet)
			pg_message("server: cannot load %s: %s", opts->module_path, why ? why : "?");
		free(why);
		_exit(1);
	}
	pg_rpc_calls_init(&w->calls, pg_module_functions(w->module), pg_module_is_v3(w->module),
	                  opts->filter);
	rv = pg_module_initialize(w->module, opts->reserved);
	if (rv != CKR_OK) {
		if (!opts->quiet)
			pg_message("server: C_Initialize of %s failed: 0x%08lx", opts->module_path, rv);
		_exit(1);
	}
	w->version = version;
	if (!pg_rpc_send_hello(&w->stream, version))
		finish(w, 0);
	if (version >= 2)
		start_standby(w);
	w->busy = 0;
	serve_thread(w);
	/* Here only when another thread is finishing: it exits. */
	for (;;)
		pause();
}

/* ---------------------------------------------------------------------------
 * A connection among others
 */

static void
release(rs_worker *w)
{
	pg_rpc_stream_clear(&w->stream);
	pg_rpc_calls_clear(&w->calls);
	pthread_mutex_destroy(&w->write_lock);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->role_cv);
	if (w->standby_cv_made)
		pthread_cond_destroy(&w->standby_cv);
	free(w);
}

/* A thread of the worker (the standby, or a serving one) stops. The last
 * one out of a shared connection hands it back; a worker process's
 * threads end with the process. */
static void
thread_gone(rs_worker *w, bool standby)
{
	bool last;

	pthread_mutex_lock(&w->lock);
	if (standby)
		w->standby_running = false;
	else
		w->threads--;
	last = w->shared && w->threads == 0 && !w->standby_running;
	pthread_mutex_unlock(&w->lock);
	if (!last)
		return;
	if (w->hooks.done != NULL)
		w->hooks.done(w->hooks.data);
	close(w->stream.in_fd);
	release(w);
}

/* The first thread of a shared connection: the handshake, then serving. */
static void *
conn_thread(void *arg)
{
	rs_worker *w = arg;
	uint32_t version = 0;

	if (!handshake(w, &version) || !pg_rpc_send_hello(&w->stream, version)) {
		end(w, 0);
		thread_gone(w, false);
		return NULL;
	}
	pthread_mutex_lock(&w->lock);
	w->version = version;
	if (version >= 2 && !w->finishing)
		start_standby(w);
	w->busy = 0;
	pthread_mutex_unlock(&w->lock);
	return serve_thread(w);
}

pg_rpc_conn *
pg_rpc_conn_start(int fd, const pg_rpc_conn_options *opts)
{
	rs_worker *w = malloc(sizeof(*w));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (w == NULL)
		return NULL;
	worker_init(w, fd, fd);
	w->shared = true;
	w->hooks = *opts;
	w->quiet = opts->quiet;
	pg_rpc_calls_init(&w->calls, opts->funcs, opts->v3, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, conn_thread, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		release(w);
		return NULL;
	}
	return w;
}

void
pg_rpc_conn_stop(pg_rpc_conn *c)
{
	/* The reader sees the end of the stream and the worker ends. */
	shutdown(c->stream.in_fd, SHUT_RDWR);
}

void *
pg_rpc_conn_current(void)
{
	return current;
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
