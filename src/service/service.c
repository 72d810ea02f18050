/*
 * The session service's process (service.h): its socket (its own, or
 * systemd's), the module, the clients, the idle timer and the end.
 */
#define _GNU_SOURCE
#include "config.h"

#include "svc.h"
#include "address.h"
#include "listen.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* systemd's first passed descriptor (sd_listen_fds(3)). */
#define LISTEN_FDS_START 3
/* How long the end waits for clients' calls to finish (ms). */
#define STOP_WAIT_MS 5000

/* The read end of the signals' pipe (pg_signal_pipe). */
static int signal_fd = -1;

/* ---------------------------------------------------------------------------
 * The socket
 */

/* The listening socket systemd passed (socket activation), or -1. */
static int
systemd_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int listening = 0;
	socklen_t len = sizeof(listening);

	if (pid == NULL || fds == NULL || strtol(pid, NULL, 10) != (long)getpid() ||
	    strtol(fds, NULL, 10) < 1)
		return -1;
	/* Not passed on to what this process starts (pinentry). */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(LISTEN_FDS_START, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
	    !listening) {
		pg_message("service: descriptor %d from systemd is no listening socket",
		           LISTEN_FDS_START);
		return -1;
	}
	fcntl(LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
	return LISTEN_FDS_START;
}

/* Is a service listening at path? */
static bool
live(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	strcpy(sa.sun_path, path);
	up = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return up;
}

/*
 * Listens on path, under a lock beside it so that two services started
 * at once (two clients starting one each) cannot both take the address:
 * the second finds the first listening. Returns the socket, -1 after a
 * message, or -2 when a service already listens there.
 */
static int
listen_at(const char *path, bool quiet_if_live)
{
	pg_rpc_listener l = { .socket_path = path };
	char *lock_path;
	int lock_fd, fd;

	if (asprintf(&lock_path, "%s.lock", path) < 0)
		return -1;
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(lock_path);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
		pg_message("service: cannot lock %s.lock: %s", path, strerror(errno));
		if (lock_fd >= 0)
			close(lock_fd);
		return -1;
	}
	if (live(path)) {
		if (!quiet_if_live)
			pg_message("service: a service already listens on %s", path);
		fd = -2;
	} else {
		fd = pg_rpc_listen(&l);
	}
	close(lock_fd);
	return fd;
}

/* Watches the socket's directory: the socket removed (the user's runtime
 * directory goes at logout) ends the service. -1 when it cannot. */
static int
watch_socket(const char *path)
{
	char *copy = strdup(path);
	int fd = copy ? inotify_init1(IN_CLOEXEC | IN_NONBLOCK) : -1;

	if (fd >= 0 && inotify_add_watch(fd, dirname(copy), IN_DELETE | IN_DELETE_SELF |
	                                 IN_MOVED_FROM | IN_MOVE_SELF) < 0) {
		close(fd);
		fd = -1;
	}
	free(copy);
	return fd;
}

/* The socket file is still the one this service made. */
static bool
still_ours(const char *path, const struct stat *made)
{
	struct stat st;

	return lstat(path, &st) == 0 && st.st_ino == made->st_ino && st.st_dev == made->st_dev;
}

/* ---------------------------------------------------------------------------
 * Clients
 */

/* The client left: its sessions close. */
static void
client_done(void *data)
{
	svc_conn *c = data;

	pg_svc_close_sessions(c);
	pthread_mutex_lock(&pg_svc.lock);
	for (svc_conn **p = &pg_svc.clients; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	pthread_cond_broadcast(&pg_svc.cond);
	pthread_mutex_unlock(&pg_svc.lock);
	pg_handle_map_clear(&c->sessions);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void
accept_one(int listen_fd, CK_FUNCTION_LIST_3_0 *funcs)
{
	pg_rpc_conn_options o = { funcs, pg_svc.v3, pg_svc_control, client_done, NULL, false };
	svc_conn *c;
	uid_t uid = (uid_t)-1;
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	/* The user's own programs only; root is no exception. */
	if (!pg_rpc_peer_uid(fd, &uid) || uid != geteuid()) {
		if (pg_svc.verbose)
			pg_message("service: refused a connection from uid %ld", (long)uid);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	pthread_mutex_init(&c->lock, NULL);
	pg_handle_map_init(&c->sessions);
	o.data = c;
	o.quiet = !pg_svc.verbose;
	/* Listed before its first request can end it (client_done unlists). */
	pthread_mutex_lock(&pg_svc.lock);
	c->next = pg_svc.clients;
	pg_svc.clients = c;
	c->rpc = pg_rpc_conn_start(fd, &o);
	if (c->rpc == NULL) {
		pg_svc.clients = c->next;
		pthread_mutex_unlock(&pg_svc.lock);
		close(fd);
		pthread_mutex_destroy(&c->lock);
		free(c);
		return;
	}
	pthread_mutex_unlock(&pg_svc.lock);
}

/* Locks every token and hangs up on every client, waiting a while for
 * their calls to end; false when some did not. */
static bool
stop_clients(void)
{
	bool gone;
	struct timespec until;
	int rc = 0;

	pg_svc_lock_all();
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_MS / 1000;
	pthread_mutex_lock(&pg_svc.lock);
	for (svc_conn *c = pg_svc.clients; c; c = c->next)
		pg_rpc_conn_stop(c->rpc);
	while (pg_svc.clients != NULL && rc == 0)
		rc = pthread_cond_timedwait(&pg_svc.cond, &pg_svc.lock, &until);
	gone = pg_svc.clients == NULL;
	pthread_mutex_unlock(&pg_svc.lock);
	return gone;
}

/* ---------------------------------------------------------------------------
 * Running
 */

typedef struct {
	int listen_fd;
	int watch_fd;               /* -1: the socket is systemd's, or no watch */
	const char *path;           /* the socket made here, or NULL */
	struct stat made;
} svc_run;

/* True when the socket is no longer the one made here: it is not
 * removed at the end, either. */
static bool
socket_gone(svc_run *r)
{
	if (still_ours(r->path, &r->made))
		return false;
	if (pg_svc.verbose)
		pg_message("service: %s was removed; stopping", r->path);
	r->path = NULL;
	return true;
}

static void
serve(svc_run *r)
{
	CK_FUNCTION_LIST_3_0 *funcs = pg_svc_functions();
	struct pollfd fds[3] = { { r->listen_fd, POLLIN, 0 }, { signal_fd, POLLIN, 0 },
	                         { r->watch_fd, POLLIN, 0 } };
	char events[4096];
	unsigned char sig;
	int timeout;

	/* Removed before the watch began (a client can connect as soon as
	 * the socket listens). */
	if (r->watch_fd >= 0 && socket_gone(r))
		return;
	for (;;) {
		timeout = pg_svc_idle_check();
		if (poll(fds, r->watch_fd >= 0 ? 3 : 2, timeout) < 0 && errno != EINTR)
			break;
		if ((fds[1].revents & POLLIN) && read(signal_fd, &sig, 1) == 1)
			break;
		if (r->watch_fd >= 0 && (fds[2].revents & POLLIN)) {
			while (read(r->watch_fd, events, sizeof(events)) > 0)
				;
			if (socket_gone(r))
				break;
		}
		if (fds[0].revents & POLLIN)
			accept_one(r->listen_fd, funcs);
	}
}

/* Detaches from the caller once listening: the parent returns (exit
 * status 0) when clients can already connect. */
static bool
daemonize(void)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid > 0)
		_exit(PG_EXIT_OK);
	return pg_detach();
}

static int
open_socket(const pg_service_options *opts, svc_run *r, char **path)
{
	const char *why;

	r->listen_fd = systemd_socket();
	if (r->listen_fd >= 0)
		return PG_EXIT_OK;
	*path = opts->socket_path ? strdup(opts->socket_path)
	                          : pg_rpc_socket_path(PG_RPC_SERVICE_NAME, &why);
	if (*path == NULL) {
		pg_message("service: no socket directory: $XDG_RUNTIME_DIR/p11glue (or "
		           "/tmp/p11glue-UID) %s", opts->socket_path ? "out of memory" : why);
		return PG_EXIT_FAIL;
	}
	r->listen_fd = listen_at(*path, opts->daemon);
	if (r->listen_fd == -2)   /* already served: a start that raced another is done */
		return opts->daemon ? -2 : PG_EXIT_FAIL;
	if (r->listen_fd < 0)
		return PG_EXIT_FAIL;
	if (lstat(*path, &r->made) != 0) {
		close(r->listen_fd);
		unlink(*path);
		return PG_EXIT_FAIL;
	}
	r->path = *path;
	return PG_EXIT_OK;
}

int
pg_service_run(const pg_service_options *opts)
{
	svc_run r = { -1, -1, NULL, { 0 } };
	char *path = NULL;
	pg_module *module;
	bool stuck = false;
	int status;
	CK_RV rv;

	/* Loaded before listening, so that a module that cannot load fails
	 * while the caller still hears of it; initialized after the fork. */
	module = pg_module_load(opts->module_path, "service");
	if (module == NULL)
		return PG_EXIT_FAIL;
	status = open_socket(opts, &r, &path);
	if (status != PG_EXIT_OK) {
		free(path);
		return status == -2 ? PG_EXIT_OK : status;
	}
	/* Watched from now on: a socket removed while the module starts up
	 * is seen when serving starts. */
	if (r.path != NULL)
		r.watch_fd = watch_socket(r.path);
	/* A service that cannot start leaves no socket behind. */
	status = PG_EXIT_FAIL;
	if (opts->daemon && !daemonize())
		goto out;
	signal_fd = pg_signal_pipe(false);
	if (signal_fd < 0)
		goto out;
	status = PG_EXIT_OK;
	rv = pg_module_initialize(module, opts->reserved);
	if (rv != CKR_OK) {
		pg_message("service: C_Initialize of %s failed: 0x%08lx", opts->module_path, rv);
		status = PG_EXIT_FAIL;
		goto out;
	}
	pg_svc_init(module, opts);
	serve(&r);
	/* No client's call runs once they are all gone: then C_Finalize.
	 * With a call still stuck in the module, the process ends without
	 * it, and without running anything at exit that could reach the
	 * module under that call. */
	stuck = !stop_clients();
	if (!stuck)
		pg_module_finalize(module);
out:
	close(r.listen_fd);
	if (r.path != NULL && still_ours(r.path, &r.made))
		unlink(r.path);
	if (r.watch_fd >= 0)
		close(r.watch_fd);
	free(path);
	if (stuck) {
		if (pg_svc.verbose)
			pg_message("service: a call did not return in %d s; exiting without C_Finalize",
			           STOP_WAIT_MS / 1000);
		_exit(status);
	}
	return status;
}
