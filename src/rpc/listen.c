/*
 * What a server serves and its listener (listen.h).
 */
#define _GNU_SOURCE
#include "config.h"

#include "listen.h"
#include "address.h"
#include "compat.h"
#include "modules.h"
#include "names.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORKERS 1024

/* ---------------------------------------------------------------------------
 * What to serve
 */

/* The proxy module, which serves the whole registry. */
static char *
proxy_path(void)
{
	const char *env = getenv("P11GLUE_PROXY_MODULE");
	char *built;

	if (env && *env)
		return pg_module_resolve(env);
	/* In a build tree the proxy is the build's. */
	built = pg_build_tree_file("proxy/p11glue-proxy.so");
	if (built != NULL)
		return built;
	return pg_module_resolve(P11GLUE_MODULE_DIR "/p11glue-proxy.so");
}

static int
resolve_path(const char *provider, p11glue_uri *filter, pg_rpc_target *t)
{
	const unsigned char *name, *path;
	p11glue_registry *reg = NULL;
	p11glue_module *mod;

	memset(t, 0, sizeof(*t));
	t->filter = filter;
	path = t->filter ? p11glue_uri_get(t->filter, P11GLUE_URI_MODULE_PATH, NULL) : NULL;
	name = t->filter ? p11glue_uri_get(t->filter, P11GLUE_URI_MODULE_NAME, NULL) : NULL;
	if (provider == NULL && path != NULL)
		provider = (const char *)path;
	if (provider != NULL) {
		t->path = pg_module_resolve(provider);
		if (t->path == NULL) {
			pg_message("no module file %s", provider);
			return PG_EXIT_FAIL;
		}
	} else if (name != NULL) {
		if (p11glue_registry_load(P11GLUE_REGISTRY_NO_LOAD, &reg) != P11GLUE_OK ||
		    (mod = p11glue_registry_find(reg, (const char *)name)) == NULL ||
		    p11glue_module_config(mod, "module") == NULL) {
			pg_message("no module named %s in the registry", name);
			p11glue_registry_free(reg);
			return PG_EXIT_FAIL;
		}
		t->path = pg_module_resolve(p11glue_module_config(mod, "module"));
		if (p11glue_module_config(mod, "x-init-reserved"))
			t->reserved = strdup(p11glue_module_config(mod, "x-init-reserved"));
		p11glue_registry_free(reg);
		if (t->path == NULL) {
			pg_message("module %s: its file is not found", name);
			return PG_EXIT_FAIL;
		}
	} else {
		t->path = proxy_path();
		if (t->path == NULL) {
			pg_message("cannot find p11glue-proxy.so to serve the registry");
			return PG_EXIT_FAIL;
		}
	}
	return PG_EXIT_OK;
}

/* Does the URI name a slot or token (not only a module)? */
static bool
selects_tokens(const p11glue_uri *uri)
{
	static const int attrs[] = {
		P11GLUE_URI_TOKEN, P11GLUE_URI_MANUFACTURER, P11GLUE_URI_SERIAL, P11GLUE_URI_MODEL,
		P11GLUE_URI_SLOT_DESCRIPTION, P11GLUE_URI_SLOT_MANUFACTURER, P11GLUE_URI_SLOT_ID,
	};

	for (size_t i = 0; uri != NULL && i < PG_N_ELEMENTS(attrs); i++) {
		if (p11glue_uri_get(uri, attrs[i], NULL) != NULL)
			return true;
	}
	return false;
}

/* Some slot of the module matches the filter (the module initialized
 * here for the look and finalized again; workers initialize their own). */
static int
check_filter(pg_module *m, const pg_rpc_target *t)
{
	CK_FUNCTION_LIST_3_0 *f = pg_module_functions(m);
	CK_SLOT_ID *slots = NULL;
	CK_ULONG n = 0;
	bool found = false;
	CK_RV rv = pg_module_initialize(m, t->reserved);

	if (rv != CKR_OK) {
		pg_message("%s: C_Initialize: %s", t->path, pg_name_ckr(rv));
		return PG_EXIT_FAIL;
	}
	if (f->C_GetSlotList(CK_FALSE, NULL, &n) == CKR_OK && n > 0 &&
	    (slots = calloc(n, sizeof(*slots))) != NULL &&
	    f->C_GetSlotList(CK_FALSE, slots, &n) == CKR_OK) {
		for (CK_ULONG i = 0; !found && i < n; i++)
			found = pg_rpc_slot_matches((CK_FUNCTION_LIST *)f, t->filter, slots[i]);
	}
	free(slots);
	pg_module_finalize(m);
	if (!found) {
		pg_message("the URI selects no slot or token of %s: nothing to serve", t->path);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_rpc_target_resolve(const char *provider, p11glue_uri *filter, pg_rpc_target *t)
{
	pg_module *m;
	int status = resolve_path(provider, filter, t);

	if (status != PG_EXIT_OK)
		return status;
	/* Loaded once here: a module that cannot load fails now, and workers
	 * find it loaded (each initializes it for itself). */
	m = pg_module_load(t->path, NULL);
	if (m == NULL)
		return PG_EXIT_FAIL;
	return selects_tokens(t->filter) ? check_filter(m, t) : PG_EXIT_OK;
}

void
pg_rpc_target_clear(pg_rpc_target *t)
{
	free(t->path);
	free(t->reserved);
	p11glue_uri_free(t->filter);
	memset(t, 0, sizeof(*t));
}

pg_rpc_serve_options
pg_rpc_target_options(const pg_rpc_target *t)
{
	return (pg_rpc_serve_options){ t->path, t->reserved, t->filter, false };
}

/* ---------------------------------------------------------------------------
 * The listener
 */

/* The read end of the signals' pipe (pg_signal_pipe). */
static int signal_fd = -1;

char *
pg_rpc_default_socket(void)
{
	const char *why;
	char *dir = pg_rpc_socket_dir(&why), *path;

	if (dir == NULL) {
		pg_message("no directory for the socket: $XDG_RUNTIME_DIR/p11glue (or /tmp/p11glue-UID) %s",
		           why);
		return NULL;
	}
	if (asprintf(&path, "%s/pkcs11-%ld", dir, (long)getpid()) < 0)
		path = NULL;
	free(dir);
	return path;
}

int
pg_rpc_listen(const pg_rpc_listener *l)
{
	const char *path = l->socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t mask;
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pg_message("socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	/* A socket left by a server that is gone is replaced; a live one is not. */
	probe = socket(AF_UNIX, SOCK_STREAM, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		pg_message("%s: a server is already listening there", path);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	mask = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 128) != 0) {
		pg_message("%s: %s", path, strerror(errno));
		umask(mask);
		close(fd);
		return -1;
	}
	umask(mask);
	return fd;
}

typedef struct {
	pg_rpc_listener *l;
	int listen_fd;
	pid_t workers[MAX_WORKERS];
	int n_workers;
} server;

static bool
uid_allowed(const server *s, uid_t uid)
{
	if (uid == geteuid())
		return true;
	for (int i = 0; i < s->l->n_allowed; i++) {
		if (s->l->allowed[i] == uid)
			return true;
	}
	return false;
}

static void
reap(server *s)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		for (int i = 0; i < s->n_workers; i++) {
			if (s->workers[i] == pid) {
				s->workers[i] = s->workers[--s->n_workers];
				break;
			}
		}
	}
}

static void
accept_one(server *s)
{
	uid_t uid;
	pid_t pid;
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (!pg_rpc_peer_uid(fd, &uid) || !uid_allowed(s, uid)) {
		if (s->l->verbose)
			pg_message("refused a connection from uid %ld", (long)uid);
		close(fd);
		return;
	}
	if (s->n_workers >= MAX_WORKERS) {
		close(fd);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(s->listen_fd);
		pg_signal_pipe_close();
		pg_die_with_parent();
		if (getppid() == 1)
			_exit(0);
		pg_rpc_serve(fd, fd, &s->l->opts);
	}
	if (pid > 0)
		s->workers[s->n_workers++] = pid;
	close(fd);
}

static int
serve_loop(server *s)
{
	struct pollfd fds[2] = { { s->listen_fd, POLLIN, 0 }, { signal_fd, POLLIN, 0 } };
	unsigned char sig;

	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents & POLLIN) {
			if (read(signal_fd, &sig, 1) == 1 && sig != SIGCHLD)
				break;
			reap(s);
		}
		if (fds[0].revents & POLLIN)
			accept_one(s);
	}
	/* Stopping: no new clients, workers end with us. */
	close(s->listen_fd);
	unlink(s->l->socket_path);
	for (int i = 0; i < s->n_workers; i++)
		kill(s->workers[i], SIGTERM);
	for (int i = 0; i < s->n_workers; i++)
		waitpid(s->workers[i], NULL, 0);
	return PG_EXIT_OK;
}

int
pg_rpc_listener_run(pg_rpc_listener *l, int listen_fd)
{
	static server s;

	memset(&s, 0, sizeof(s));
	s.l = l;
	s.listen_fd = listen_fd;
	signal_fd = pg_signal_pipe(true);
	if (signal_fd < 0)
		return PG_EXIT_FAIL;
	return serve_loop(&s);
}
