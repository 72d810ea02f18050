/*
 * p11glue server: serves a module (or a token, or the whole registry) on
 * a unix socket, one worker process per connection.
 * p11glue remote: serves it on stdin/stdout, for `ssh host p11glue remote`.
 * What they do is src/rpc's (listen.h, server.h); here are their command
 * lines and what they print.
 */
#include "config.h"

#include "tool.h"
#include "listen.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The target of a MODULE|URI argument (a URI parsed here); exit code. */
static int
resolve(const char *provider, const char *uri_text, pg_rpc_target *t)
{
	p11glue_uri *filter = NULL;

	memset(t, 0, sizeof(*t));
	if (uri_text != NULL && !pg_token_parse_uri(uri_text, &filter))
		return PG_EXIT_FAIL;
	return pg_rpc_target_resolve(provider, filter, t);
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
	pg_rpc_serve_options opts;
	const char *arg;
	pg_rpc_target t;
	int next, rv = pg_tool_options(argc, argv, NULL, 0, remote_usage, 0, -1, &next);

	if (rv >= 0)
		return rv;
	if (argc - next != 1)
		return pg_tool_usage_error(argv[0], "one MODULE or URI is required");
	arg = argv[next];
	rv = strncmp(arg, "pkcs11:", 7) == 0 ? resolve(NULL, arg, &t) : resolve(arg, NULL, &t);
	if (rv != PG_EXIT_OK) {
		pg_rpc_target_clear(&t);
		return rv;
	}
	opts = pg_rpc_target_options(&t);
	signal(SIGPIPE, SIG_IGN);
	pg_rpc_serve(STDIN_FILENO, STDOUT_FILENO, &opts);
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
	static pg_rpc_listener s;
	static pg_rpc_target t;
	const char *provider = NULL, *socket_arg = NULL;
	bool foreground = false, csh = false;
	char *socket_path, *end;
	pid_t pid;
	int opt, fd;
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
			if (*optarg == 0 || *end != 0 || uid < 0 || s.n_allowed >= PG_RPC_MAX_ALLOWED)
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
	opt = resolve(provider, optind < argc ? argv[optind] : NULL, &t);
	if (opt != PG_EXIT_OK)
		return opt;
	socket_path = socket_arg ? strdup(socket_arg) : pg_rpc_default_socket();
	if (socket_path == NULL)
		return PG_EXIT_FAIL;
	s.socket_path = socket_path;
	s.opts = pg_rpc_target_options(&t);
	fd = pg_rpc_listen(&s);
	if (fd < 0)
		return PG_EXIT_FAIL;
	if (foreground) {
		print_address(socket_path, getpid(), csh);
		return pg_rpc_listener_run(&s, fd);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return PG_EXIT_FAIL;
	if (pid > 0) {
		print_address(socket_path, pid, csh);
		_exit(PG_EXIT_OK);
	}
	if (!pg_detach())
		return PG_EXIT_FAIL;
	return pg_rpc_listener_run(&s, fd);
}
