/*
 * p11glue server: serves a module (or a token, or the whole registry) on
 * a unix socket, one worker process per connection.
 * p11glue remote: serves it on stdin/stdout, for `ssh host p11glue remote`.
 */
#define _GNU_SOURCE
#include "config.h"

#include "tool.h"
#include "compat.h"
#include "modules.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORKERS 1024
#define MAX_ALLOWED 16

/* What to serve, resolved from the command line. */
typedef struct {
	char *path;            /* module file */
	char *reserved;
	p11glue_uri *filter;
} target;

/* The proxy module, which serves the whole registry. */
static char *
proxy_path(void)
{
	char exe[PATH_MAX], buf[PATH_MAX + 64], *slash;
	const char *env = getenv("P11GLUE_PROXY_MODULE");
	ssize_t n;

	if (env && *env)
		return pg_module_resolve(env);
	/* In a build tree the proxy sits beside the tools' folder. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(buf, sizeof(buf), "%s/../proxy/p11glue-proxy.so", exe);
			if (access(buf, R_OK) == 0)
				return realpath(buf, NULL);
		}
	}
	return pg_module_resolve(P11GLUE_MODULE_DIR "/p11glue-proxy.so");
}

static int
resolve_target(const char *provider, const char *uri_text, target *t)
{
	const unsigned char *name, *path;
	p11glue_registry *reg = NULL;
	p11glue_module *mod;

	memset(t, 0, sizeof(*t));
	if (uri_text && !pg_token_parse_uri(uri_text, &t->filter))
		return PG_EXIT_FAIL;
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

/* Loads the module once here: a module that cannot load fails now, and
 * workers find it loaded (each initializes it for itself). */
static pg_module *
preload(const target *t)
{
	char *why = NULL;
	pg_module *m = pg_module_open(t->path, &why);

	if (m == NULL) {
		pg_message("cannot load %s: %s", t->path, why ? why : "?");
		free(why);
	}
	return m;
}

/* ---------------------------------------------------------------------------
 * p11glue remote
 */

static void
remote_usage(FILE *out)
{
	fprintf(out, "Usage: p11glue remote MODULE|URI\n\n"
	        "Serves a PKCS#11 module, or the tokens a PKCS#11 URI selects, with the\n"
	        "p11glue protocol on standard input and output, for\n"
	        "  ssh HOST p11glue remote MODULE   (P11GLUE_SERVER_ADDRESS='|ssh HOST ...')\n");
}

int
pg_cmd_remote(int argc, char **argv)
{
	pg_rpc_serve_options opts = { 0 };
	const char *arg;
	target t;
	int next, rv = pg_tool_options(argc, argv, NULL, 0, remote_usage, 0, -1, &next);

	if (rv >= 0)
		return rv;
	if (argc - next != 1)
		return pg_tool_usage_error(argv[0], "one MODULE or URI is required");
	arg = argv[next];
	rv = strncmp(arg, "pkcs11:", 7) == 0 ? resolve_target(NULL, arg, &t)
	                                      : resolve_target(arg, NULL, &t);
	if (rv != PG_EXIT_OK || preload(&t) == NULL)
		return PG_EXIT_FAIL;
	opts = (pg_rpc_serve_options){ t.path, t.reserved, t.filter, false };
	signal(SIGPIPE, SIG_IGN);
	pg_rpc_serve(STDIN_FILENO, STDOUT_FILENO, &opts);
}

/* ---------------------------------------------------------------------------
 * p11glue server
 */

static int signal_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (write(signal_pipe[1], &c, 1) < 0)
		c = 0;
	errno = saved;
}

static char *
default_socket(void)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	char dir[PATH_MAX], *path;
	struct stat st;

	if (runtime && *runtime)
		snprintf(dir, sizeof(dir), "%s/p11glue", runtime);
	else
		snprintf(dir, sizeof(dir), "/tmp/p11glue-%lu", (unsigned long)getuid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return NULL;
	/* Ours and private, or not used at all. */
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		pg_message("%s is not a private directory of this user", dir);
		return NULL;
	}
	if (asprintf(&path, "%s/pkcs11-%ld", dir, (long)getpid()) < 0)
		return NULL;
	return path;
}

static int
listen_on(const char *path)
{
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
	int listen_fd;
	const char *socket_path;
	pg_rpc_serve_options opts;
	uid_t allowed[MAX_ALLOWED];
	int n_allowed;
	pid_t workers[MAX_WORKERS];
	int n_workers;
	bool verbose;
} server;

static bool
uid_allowed(const server *s, uid_t uid)
{
	if (uid == geteuid())
		return true;
	for (int i = 0; i < s->n_allowed; i++) {
		if (s->allowed[i] == uid)
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
		if (s->verbose)
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
		close(signal_pipe[0]);
		close(signal_pipe[1]);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		pg_die_with_parent();
		if (getppid() == 1)
			_exit(0);
		pg_rpc_serve(fd, fd, &s->opts);
	}
	if (pid > 0)
		s->workers[s->n_workers++] = pid;
	close(fd);
}

static int
serve_loop(server *s)
{
	struct pollfd fds[2] = { { s->listen_fd, POLLIN, 0 }, { signal_pipe[0], POLLIN, 0 } };
	unsigned char sig;

	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents & POLLIN) {
			if (read(signal_pipe[0], &sig, 1) == 1 && sig != SIGCHLD)
				break;
			reap(s);
		}
		if (fds[0].revents & POLLIN)
			accept_one(s);
	}
	/* Stopping: no new clients, workers end with us. */
	close(s->listen_fd);
	unlink(s->socket_path);
	for (int i = 0; i < s->n_workers; i++)
		kill(s->workers[i], SIGTERM);
	for (int i = 0; i < s->n_workers; i++)
		waitpid(s->workers[i], NULL, 0);
	return PG_EXIT_OK;
}

static void
print_address(const char *path, pid_t pid, bool csh)
{
	if (csh)
		printf("setenv P11GLUE_SERVER_ADDRESS unix:path=%s;\nsetenv P11GLUE_SERVER_PID %ld;\n",
		       path, (long)pid);
	else
		printf("P11GLUE_SERVER_ADDRESS=unix:path=%s; export P11GLUE_SERVER_ADDRESS;\n"
		       "P11GLUE_SERVER_PID=%ld; export P11GLUE_SERVER_PID;\n", path, (long)pid);
	fflush(stdout);
}

static int
server_usage(const char *cmd)
{
	printf("Usage: %s [OPTIONS] [URI]\n"
	       "\n"
	       "Serves PKCS#11 on a unix socket for p11glue-client.so: one module\n"
	       "(--provider), the tokens a PKCS#11 URI selects, or the whole registry.\n"
	       "Prints the address to export, as ssh-agent does.\n"
	       "\n"
	       "  --provider MODULE  serve this module file\n"
	       "  --socket PATH      listen here (default $XDG_RUNTIME_DIR/p11glue/pkcs11-PID)\n"
	       "  --foreground       stay in the foreground (default: become a daemon)\n"
	       "  --allow-uid UID    also serve this user (repeatable; default: own uid only)\n"
	       "  -s, --sh           print sh commands (default)\n"
	       "  -c, --csh          print csh commands\n"
	       "  -v, --verbose      report refused peers on stderr\n"
	       "\n"
	       "Stop it with: kill $P11GLUE_SERVER_PID\n", cmd);
	return PG_EXIT_OK;
}

int
pg_cmd_server(int argc, char **argv)
{
	static const struct option options[] = {
		{ "provider", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 'S' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "allow-uid", required_argument, NULL, 'u' },
		{ "sh", no_argument, NULL, 's' },
		{ "csh", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static server s;
	const char *provider = NULL, *socket_arg = NULL;
	bool foreground = false, csh = false;
	char *socket_path, *end;
	target t;
	pid_t pid;
	int opt;
	long uid;

	memset(&s, 0, sizeof(s));
	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":scvh", options, NULL)) != -1) {
		switch (opt) {
		case 'p': provider = optarg; break;
		case 'S': socket_arg = optarg; break;
		case 'f': foreground = true; break;
		case 's': csh = false; break;
		case 'c': csh = true; break;
		case 'v': s.verbose = true; break;
		case 'u':
			uid = strtol(optarg, &end, 10);
			if (*optarg == 0 || *end != 0 || uid < 0 || s.n_allowed >= MAX_ALLOWED)
				return pg_tool_usage_error(argv[0], "--allow-uid needs a user id");
			s.allowed[s.n_allowed++] = (uid_t)uid;
			break;
		case 'h': return server_usage(argv[0]);
		default: return pg_tool_option_error(argv[0], opt, argv);
		}
	}
	if (argc - optind > 1 || (provider && argc - optind == 1))
		return pg_tool_usage_error(argv[0], "give --provider MODULE or one URI");
	/* t lives as long as the server: its strings are the workers'. */
	if (resolve_target(provider, optind < argc ? argv[optind] : NULL, &t) != PG_EXIT_OK ||
	    preload(&t) == NULL)
		return PG_EXIT_FAIL;
	socket_path = socket_arg ? strdup(socket_arg) : default_socket();
	if (socket_path == NULL)
		return PG_EXIT_FAIL;
	s.socket_path = socket_path;
	s.opts = (pg_rpc_serve_options){ t.path, t.reserved, t.filter, false };
	s.listen_fd = listen_on(socket_path);
	if (s.listen_fd < 0 || pipe2(signal_pipe, O_CLOEXEC) != 0)
		return PG_EXIT_FAIL;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGCHLD, on_signal);
	if (foreground) {
		print_address(socket_path, getpid(), csh);
		return serve_loop(&s);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return PG_EXIT_FAIL;
	if (pid > 0) {
		print_address(socket_path, pid, csh);
		_exit(PG_EXIT_OK);
	}
	setsid();
	if (chdir("/") != 0)
		return PG_EXIT_FAIL;
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return serve_loop(&s);
}
