/*
 * The client module's connection (see conn.h).
 */
#define _GNU_SOURCE
#include "config.h"

#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a new connection waits for the server's hello. */
#define HELLO_TIMEOUT_MS 30000
/* How long a start of the session service may take (ms). */
#define START_TIMEOUT_MS 30000

extern char **environ;

typedef struct pending {
	uint32_t id;
	bool done;
	bool failed;
	pthread_cond_t cond;
	pg_rpc_frame frame;
	struct pending *next;
} pending;

static struct {
	pthread_mutex_t lock;          /* everything; requests are written under it */
	char *address;
	char *autostart;               /* the p11glue program that starts the service, or NULL */
	int fd;                        /* -1 when not connected */
	pid_t child;                   /* the "|command" process, or 0 */
	bool alive;
	bool reading;                  /* a caller holds the reading role */
	unsigned generation;
	uint32_t version;              /* the protocol version agreed on */
	uint32_t next_id;
	pg_rpc_stream stream;
	pending *waiting;
	char why[320];                 /* why the last connection attempt failed */
} conn = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, -1 };

/* Records why connecting failed (conn.lock held). */
static void PG_PRINTF(1, 2)
why_locked(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(conn.why, sizeof(conn.why), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------------------
 * Connecting
 */

static int
connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		why_locked("the socket path %s is too long", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int saved = errno;

		why_locked("no server at %s: %s%s", path, strerror(saved),
		           saved == ENOENT || saved == ECONNREFUSED
		           ? " (is 'p11glue server' running, and P11GLUE_SERVER_ADDRESS its address?)" : "");
		if (fd >= 0)
			close(fd);
		errno = saved;   /* the caller tells a missing server from other failures */
		return -1;
	}
	return fd;
}

/*
 * Starts the session service: `tool service --daemon`, whose first
 * process exits once the service listens (or at once when another start
 * got there first, both taking the address under a lock). posix_spawn:
 * safe in a threaded process; the child is waited for by its PID only.
 */
static bool
start_service_locked(void)
{
	char *argv[] = { conn.autostart, "service", "--daemon", NULL };
	int status = 0, rc;
	pid_t pid, got = 0;

	rc = posix_spawn(&pid, conn.autostart, NULL, NULL, argv, environ);
	if (rc != 0) {
		why_locked("cannot start the session service (%s): %s", conn.autostart, strerror(rc));
		return false;
	}
	for (int i = 0; i < START_TIMEOUT_MS / 10 && got == 0; i++) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == 0)
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	if (got == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		why_locked("the session service (%s service --daemon) did not start in time",
		           conn.autostart);
		return false;
	}
	/* The application may reap children itself (got < 0): connecting
	 * tells. */
	if (got == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		why_locked("the session service did not start: %s service --daemon failed (status %d)",
		           conn.autostart, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return false;
	}
	return true;
}

/* Runs "sh -c COMMAND" with one end of a socket pair as its stdin and
 * stdout (posix_spawn: safe in a threaded process). */
static int
connect_command(const char *command, pid_t *child)
{
	posix_spawn_file_actions_t actions;
	char *argv[] = { "/bin/sh", "-c", (char *)command, NULL };
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
	posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
	rc = posix_spawn(child, "/bin/sh", &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(sv[1]);
	if (rc != 0) {
		why_locked("cannot run /bin/sh for '%s': %s", command, strerror(rc));
		close(sv[0]);
		*child = 0;
		return -1;
	}
	return sv[0];
}

static void
reap_child(pid_t pid)
{
	/* The command ends when its input does; give it a moment, then stop it. */
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Drops the current connection (conn.lock held; no reader active). */
static void
disconnect_locked(void)
{
	if (conn.fd >= 0)
		close(conn.fd);
	conn.fd = -1;
	pg_rpc_stream_clear(&conn.stream);
	conn.alive = false;
	if (conn.child > 0)
		reap_child(conn.child);
	conn.child = 0;
}

static bool
handshake(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	pg_rpc_frame f = { 0 };
	uint32_t version;
	bool ok;

	int got = 0;

	/* A server that refuses a peer closes the connection at once: the
	 * hello cannot be written, or the answer is the end of the stream. */
	if (pg_rpc_send_hello(&conn.stream, PG_RPC_VERSION)) {
		if (poll(&p, 1, HELLO_TIMEOUT_MS) != 1) {
			why_locked("%s did not answer", conn.address);
			return false;
		}
		got = pg_rpc_stream_read(&conn.stream, &f);
	}
	ok = got == 1 && pg_rpc_parse_hello(&f, &version) && version <= PG_RPC_VERSION;
	pg_rpc_frame_clear(&f);
	conn.version = ok ? version : 0;
	if (got != 1 && conn.address[0] == '|')
		why_locked("the command '%s' ended before a server answered (does it run "
		           "'p11glue remote'?)", conn.address + 1);
	else if (got != 1)
		why_locked("the server at %s refused the connection (a server serves its own user "
		           "only, and others it names with --allow-uid)", conn.address);
	else if (!ok)
		why_locked("%s does not speak this version of the p11glue protocol", conn.address);
	return ok;
}

/* Connects when not connected (conn.lock held). */
static bool
connect_locked(void)
{
	const char *a = conn.address;
	int fd;

	if (conn.alive)
		return true;
	if (a == NULL || conn.reading)
		return false;
	disconnect_locked();
	if (a[0] == '|')
		fd = connect_command(a + 1, &conn.child);
	else
		fd = connect_unix(strncmp(a, "unix:path=", 10) == 0 ? a + 10 : a);
	if (fd < 0 && conn.autostart != NULL && (errno == ENOENT || errno == ECONNREFUSED) &&
	    start_service_locked())
		fd = connect_unix(strncmp(a, "unix:path=", 10) == 0 ? a + 10 : a);
	if (fd < 0)
		return false;
	conn.fd = fd;
	pg_rpc_stream_init(&conn.stream, fd, fd);
	pg_rpc_stream_set_spin(&conn.stream, PG_RPC_SPIN_US);
	if (!handshake(fd)) {
		disconnect_locked();
		return false;
	}
	conn.alive = true;
	conn.why[0] = 0;
	conn.generation++;
	if (conn.generation == 0)
		conn.generation = 1;
	return true;
}

bool
pg_conn_set_address(const char *address)
{
	char *copy;

	if (address == NULL || (address[0] != '|' && address[0] != '/' &&
	                        strncmp(address, "unix:path=/", 11) != 0))
		return false;
	copy = strdup(address);
	if (copy == NULL)
		return false;
	pthread_mutex_lock(&conn.lock);
	free(conn.address);
	conn.address = copy;
	pthread_mutex_unlock(&conn.lock);
	return true;
}

bool
pg_conn_set_autostart(const char *tool)
{
	char *copy = tool ? strdup(tool) : NULL;

	if (tool != NULL && copy == NULL)
		return false;
	pthread_mutex_lock(&conn.lock);
	free(conn.autostart);
	conn.autostart = copy;
	pthread_mutex_unlock(&conn.lock);
	return true;
}

/* Marks the connection broken and fails every waiting call. */
static void
fail_locked(void)
{
	conn.alive = false;
	if (conn.fd >= 0)
		shutdown(conn.fd, SHUT_RDWR);
	for (pending *p = conn.waiting; p; p = p->next) {
		p->failed = true;
		pthread_cond_signal(&p->cond);
	}
}

void
pg_conn_close(void)
{
	pthread_mutex_lock(&conn.lock);
	fail_locked();
	/* The next C_Initialize sets them again. */
	free(conn.address);
	free(conn.autostart);
	conn.address = conn.autostart = NULL;
	/* A caller still reading sees the shut-down socket and stops; the
	 * descriptor is closed by the next connect or here when idle. */
	if (!conn.reading)
		disconnect_locked();
	pthread_mutex_unlock(&conn.lock);
}

void
pg_conn_after_fork(void)
{
	/* The parent's connection is the parent's: the child closes its copy
	 * (the parent's stays open) and connects anew when initialized. */
	pthread_mutex_init(&conn.lock, NULL);
	if (conn.fd >= 0)
		close(conn.fd);
	conn.fd = -1;
	conn.child = 0;
	conn.alive = false;
	conn.reading = false;
	conn.waiting = NULL;
	conn.stream.buf = NULL;    /* shared with the parent's memory image: leave it */
	pg_rpc_stream_init(&conn.stream, -1, -1);
}

bool
pg_conn_why(char *buf, size_t size)
{
	bool any;

	pthread_mutex_lock(&conn.lock);
	any = conn.why[0] != 0;
	snprintf(buf, size, "%s", conn.why);
	pthread_mutex_unlock(&conn.lock);
	return any;
}

unsigned
pg_conn_generation(bool try_connect)
{
	unsigned g;

	pthread_mutex_lock(&conn.lock);
	if (try_connect)
		connect_locked();
	g = conn.alive ? conn.generation : 0;
	pthread_mutex_unlock(&conn.lock);
	return g;
}

/* ---------------------------------------------------------------------------
 * Calls
 */

static void
unlink_pending(pending *p)
{
	for (pending **pp = &conn.waiting; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			return;
		}
	}
}

/* Gives the reading role to a caller still waiting (conn.lock held). */
static void
pass_reading_locked(void)
{
	for (pending *p = conn.waiting; p; p = p->next) {
		if (!p->done && !p->failed) {
			pthread_cond_signal(&p->cond);
			return;
		}
	}
}

/* Reads frames until p's reply came or the connection broke (conn.lock
 * held on entry and exit; dropped while reading). */
static void
read_for_locked(pending *p)
{
	pg_rpc_frame f;
	int rc;

	conn.reading = true;
	while (!p->done && !p->failed) {
		pthread_mutex_unlock(&conn.lock);
		rc = pg_rpc_stream_read(&conn.stream, &f);
		pthread_mutex_lock(&conn.lock);
		if (rc != 1) {
			fail_locked();
			break;
		}
		for (pending *q = conn.waiting; q; q = q->next) {
			if (q->id == f.id && !q->done) {
				q->frame = f;
				q->done = true;
				f.body = NULL;
				if (q != p)
					pthread_cond_signal(&q->cond);
				break;
			}
		}
		pg_rpc_frame_clear(&f);    /* a reply nobody waits for */
	}
	conn.reading = false;
	pass_reading_locked();
}

int
pg_conn_call(pg_rpc_out *request, uint32_t code, unsigned expected, pg_rpc_frame *reply,
             unsigned *generation)
{
	pending p = { 0 };
	uint32_t flags;
	int rv = PG_CONN_OK;

	memset(reply, 0, sizeof(*reply));
	pthread_mutex_lock(&conn.lock);
	if (!connect_locked()) {
		pthread_mutex_unlock(&conn.lock);
		return PG_CONN_UNREACHABLE;
	}
	/* A session of an earlier connection is gone with it. */
	if (expected != 0 && expected != conn.generation) {
		pthread_mutex_unlock(&conn.lock);
		return PG_CONN_STALE;
	}
	*generation = conn.generation;
	p.id = conn.next_id++;
	if (p.id == 0)
		p.id = conn.next_id++;
	pthread_cond_init(&p.cond, NULL);
	/* No other call in flight: the server may execute this one on the
	 * thread that reads it (wire.h). */
	flags = conn.waiting == NULL && conn.version >= 2 ? PG_RPC_LONE : 0;
	p.next = conn.waiting;
	conn.waiting = &p;
	/* Written under the lock: one frame at a time, and one lock for the
	 * common path. A reader blocked in read() holds no lock. */
	if (!pg_rpc_out_finish(request, p.id, code | flags)) {
		rv = PG_CONN_UNREACHABLE;
	} else if (!pg_rpc_stream_write(&conn.stream, request)) {
		fail_locked();
		rv = PG_CONN_UNREACHABLE;
	}
	while (rv == PG_CONN_OK && !p.done && !p.failed) {
		if (!conn.reading)
			read_for_locked(&p);
		else
			pthread_cond_wait(&p.cond, &conn.lock);
	}
	unlink_pending(&p);
	if (rv == PG_CONN_OK && p.done && !p.failed && p.frame.code == code) {
		*reply = p.frame;
		p.frame.body = NULL;
	} else if (rv == PG_CONN_OK) {
		/* An error frame: the server found the request malformed and
		 * closes the connection. */
		if (p.done && p.frame.code == PG_RPC_ERROR)
			fail_locked();
		rv = PG_CONN_UNREACHABLE;
	}
	pthread_mutex_unlock(&conn.lock);
	pg_rpc_frame_clear(&p.frame);
	pthread_cond_destroy(&p.cond);
	return rv;
}
