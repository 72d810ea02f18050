/*
 * p11glue service: the session service (src/service, service.h).
 * p11glue unlock: logs a token of the service in for the whole session,
 * through p11glue-client.so (a C_Login the service answers for every
 * client). p11glue lock: the service's control call (control.h).
 * Here are their command lines and what they print.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "store-tool.h"
#include "service.h"
#include "control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * p11glue service
 */

static void
service_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue service [--socket PATH] [--daemon] [--pinentry PROGRAM]\n"
	        "                       [--idle-lock SECONDS] [-v] [--module PATH] [--store DIR]\n"
	        "\n"
	        "Serves your key store to all of your applications (p11glue-client.so)\n"
	        "from one process, so that one unlock ('p11glue unlock', or the first\n"
	        "PIN asked through pinentry) serves the whole session. systemd starts it\n"
	        "through p11glue.socket ('p11glue setup' enables it); without systemd,\n"
	        "p11glue-client.so starts it on first use. Only your own user may connect.\n"
	        "Its tokens report a protected authentication path: applications log in\n"
	        "without a PIN, and a locked token asks once through pinentry. An\n"
	        "application's C_Logout leaves the token unlocked for the others; 'p11glue\n"
	        "lock', the idle lock and the end of the service lock it.\n"
	        "\n"
	        "Options:\n"
	        "  --socket PATH        listen here (default $XDG_RUNTIME_DIR/p11glue/pkcs11,\n"
	        "                       else /tmp/p11glue-UID/pkcs11); a socket passed by\n"
	        "                       systemd (socket activation) is taken instead\n"
	        "  --daemon             become a daemon once listening; a service already\n"
	        "                       listening there is no error (exit status 0)\n"
	        "  --pinentry PROGRAM   ask for PINs with this pinentry program (default\n"
	        "                       $P11GLUE_PINENTRY, else pinentry from $PATH); 'none':\n"
	        "                       never ask (a locked token's login is cancelled)\n"
	        "  --idle-lock SECONDS  lock a token no application used for this long\n"
	        "                       (default 0: never)\n"
	        "  -v, --verbose        report refused peers, unlocks and locks on stderr\n"
	        "  --module PATH        serve this module file (default: the key store, as\n"
	        "                       the key store commands find it)\n"
	        "  --store DIR          the key store directory (default $P11GLUE_STORE_DIR,\n"
	        "                       else $XDG_DATA_HOME/p11glue/store)\n"
	        "  -h, --help           show this help\n"
	        "\n"
	        "It ends on SIGTERM, SIGINT or SIGHUP, and when its socket is removed (your\n"
	        "runtime directory goes when you log out); every token is locked then.\n"
	        "\n"
	        "Exit status: 0 stopped (or, with --daemon, listening), 1 an error.\n"
	        "\n"
	        "Examples:\n"
	        "  p11glue service --daemon\n"
	        "  p11glue setup --service\n");
}

/* The module the service serves, and never the client module itself. */
static int
service_module(const pg_store_opts *o, char **file, char **reserved)
{
	const char *name = NULL, *base;
	int rv = pg_keytoken_module(o, NULL, file, &name, reserved);

	if (rv != PG_EXIT_OK)
		return rv;
	base = strrchr(*file, '/');
	if (strcmp(base ? base + 1 : *file, "p11glue-client.so") == 0) {
		pg_message("the session service serves the key store, not p11glue-client.so (%s): "
		           "give --module PATH", *file);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_cmd_service(int argc, char **argv)
{
	pg_service_options opts = { 0 };
	pg_store_opts o = { 0 };
	const char *idle = NULL;
	bool verbose = false;
	const pg_opt table[] = {
		{ "socket", 0, PG_OPT_TEXT, &opts.socket_path, 0 },
		{ "daemon", 0, PG_OPT_FLAG, &opts.daemon, 0 },
		{ "pinentry", 0, PG_OPT_TEXT, &opts.pinentry, 0 },
		{ "idle-lock", 0, PG_OPT_TEXT, &idle, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &verbose, 0 },
		PG_STORE_OPTIONS(&o),
	};
	char *file = NULL, *reserved = NULL, *end;
	unsigned long seconds = 0;
	int next, rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), service_usage, 0, 0,
	                               &next);

	if (rv >= 0)
		return rv;
	if (idle != NULL) {
		errno = 0;
		seconds = strtoul(idle, &end, 10);
		if (*idle == 0 || *end != 0 || *idle == '-' || errno != 0 || seconds > 100000000UL)
			return pg_tool_usage_error(argv[0], "--idle-lock needs a number of seconds");
	}
	rv = service_module(&o, &file, &reserved);
	if (rv == PG_EXIT_OK) {
		opts.module_path = file;
		opts.reserved = reserved;
		opts.idle_lock = (unsigned)seconds;
		opts.verbose = verbose;
		rv = pg_service_run(&opts);
	}
	free(file);
	free(reserved);
	return rv;
}

/* ---------------------------------------------------------------------------
 * p11glue unlock
 */

static void
unlock_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue unlock [--pin-source SRC] [--pinentry] [--socket PATH] [URI]\n"
	        "\n"
	        "Logs a token of your session service in for the whole session: every\n"
	        "application of yours that uses it through p11glue-client.so finds it\n"
	        "unlocked and needs no PIN until 'p11glue lock', the idle lock, or the end\n"
	        "of the service. Starts the service when it does not run. The PIN comes\n"
	        "from --pin-source, else the URI's pin-value or pin-source, else the\n"
	        "terminal, else (no terminal, or --pinentry) the service's pinentry.\n"
	        "Without a URI, the service's one token.\n"
	        "\n"
	        "Options:\n"
	        "  --pin-source SRC  read the PIN from SRC: file:PATH or PATH, env:NAME, fd:N\n"
	        "  --pinentry        let the service ask through pinentry, even on a terminal\n"
	        "  --socket PATH     the service's socket (default: your session service's)\n"
	        "  -h, --help        show this help\n"
	        "\n"
	        "Exit status: 0 unlocked (or unlocked already), 1 refused (wrong PIN,\n"
	        "cancelled) or no service, 2 a usage error.\n"
	        "\n"
	        "Example:\n"
	        "  p11glue unlock 'pkcs11:token=mykeys'\n");
}

/* The client module's reserved string naming the service's socket. */
static char *
remote_of(const char *socket_path)
{
	char *path = socket_path ? strdup(socket_path) : pg_service_default_socket(), *text = NULL;

	if (path != NULL && asprintf(&text, "remote=unix:path=%s", path) < 0)
		text = NULL;
	free(path);
	return text;
}

int
pg_cmd_unlock(int argc, char **argv)
{
	pg_store_opts o = { 0 };
	const char *socket_path = NULL;
	bool pinentry = false, was = false;
	const pg_opt table[] = {
		PG_PIN_OPTION(&o.pins),
		{ "pinentry", 0, PG_OPT_FLAG, &pinentry, 0 },
		{ "socket", 0, PG_OPT_TEXT, &socket_path, 0 },
	};
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	char *client = NULL, *remote = NULL;
	int next, rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), unlock_usage, 0, 1,
	                               &next);

	if (rv >= 0)
		return rv;
	memset(&kt, 0, sizeof(kt));
	if (!pg_store_parse_uri(next < argc ? argv[next] : NULL, &uri)) {
		rv = PG_EXIT_FAIL;
		goto out;
	}
	client = pg_token_client_file();
	remote = remote_of(socket_path);
	if (client == NULL || remote == NULL) {
		rv = PG_EXIT_FAIL;
		goto out;
	}
	o.module = client;
	o.reserved = remote;
	rv = pg_keytoken_load(&kt, &o, uri);
	if (rv == PG_EXIT_OK)
		rv = pg_keytoken_select(&kt, uri, 0);
	if (rv == PG_EXIT_OK)
		rv = pg_keytoken_open(&kt, false);
	if (rv == PG_EXIT_OK)
		rv = pg_keytoken_unlock(&kt, uri, !pinentry && isatty(STDIN_FILENO), &was);
	if (rv == PG_EXIT_OK)
		printf("token '%s' %s\n", pg_keytoken_label(&kt),
		       was ? "was unlocked already" : "unlocked for this session");
out:
	pg_keytoken_clear(&kt);
	pg_pins_clear(&o.pins);
	p11glue_uri_free(uri);
	free(client);
	free(remote);
	return rv;
}

/* ---------------------------------------------------------------------------
 * p11glue lock
 */

static void
lock_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue lock [--socket PATH] [URI]\n"
	        "\n"
	        "Locks the tokens of your session service that the URI selects (without\n"
	        "one, all of them): they are logged out for every application, and the\n"
	        "keys they had unwrapped are wiped from the service's memory. The next\n"
	        "application that needs one asks for its PIN through pinentry. Does not\n"
	        "start the service.\n"
	        "\n"
	        "Options:\n"
	        "  --socket PATH  the service's socket (default: your session service's)\n"
	        "  -h, --help     show this help\n"
	        "\n"
	        "Exit status: 0 done (also when nothing was unlocked or no service runs),\n"
	        "1 no token matches the URI, or the service cannot be asked, 2 a usage\n"
	        "error.\n");
}

static const char *
label_of(const pg_service_token *t, char buf[static 33])
{
	size_t n = sizeof(t->info.label);

	memcpy(buf, t->info.label, n);
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = 0;
	return buf;
}

static int
lock_one(const char *path, const pg_service_token *t)
{
	char label[33];
	unsigned locked = 0;
	CK_RV ckr = CKR_OK;

	if (pg_service_lock(path, false, t->slot, &ckr, &locked) != PG_SERVICE_OK || ckr != CKR_OK) {
		pg_message("token '%s': the service did not lock it (%s)", label_of(t, label),
		           pg_token_ckr(ckr));
		return PG_EXIT_FAIL;
	}
	printf("token '%s' %s\n", label_of(t, label), locked ? "locked" : "was not unlocked");
	return PG_EXIT_OK;
}

int
pg_cmd_lock(int argc, char **argv)
{
	const char *socket_arg = NULL;
	const pg_opt table[] = { { "socket", 0, PG_OPT_TEXT, &socket_arg, 0 } };
	pg_service_status st;
	p11glue_uri *uri = NULL;
	char *path = NULL;
	size_t matched = 0;
	int next, rc, rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), lock_usage, 0, 1,
	                                   &next);

	if (rv >= 0)
		return rv;
	if (next < argc && !pg_token_parse_uri(argv[next], &uri))
		return PG_EXIT_FAIL;
	path = socket_arg ? strdup(socket_arg) : pg_service_default_socket();
	rc = path ? pg_service_status_get(path, &st) : PG_SERVICE_BROKEN;
	if (rc == PG_SERVICE_NOT_RUNNING) {
		printf("no session service runs at %s: nothing is unlocked\n", path);
		rv = PG_EXIT_OK;
	} else if (rc != PG_SERVICE_OK) {
		pg_message("%s: %s", path ? path : "the session service",
		           rc == PG_SERVICE_REFUSED ? "no session service of this user answers there"
		                                    : "the session service does not answer");
		rv = PG_EXIT_FAIL;
	} else {
		rv = PG_EXIT_OK;
		for (size_t i = 0; i < st.n; i++) {
			if (!(st.tokens[i].info.flags & CKF_TOKEN_INITIALIZED) ||
			    (uri != NULL && !p11glue_uri_match_token_info(uri, &st.tokens[i].info)))
				continue;
			matched++;
			if (lock_one(path, &st.tokens[i]) != PG_EXIT_OK)
				rv = PG_EXIT_FAIL;
		}
		if (uri != NULL && matched == 0) {
			pg_message("no token of the session service matches the URI");
			rv = PG_EXIT_FAIL;
		}
		pg_service_status_clear(&st);
	}
	p11glue_uri_free(uri);
	free(path);
	return rv;
}
