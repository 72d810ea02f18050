/*
 * `p11glue server` and `p11glue remote` without their command lines:
 * what to serve (a module file, a module of the registry, or the whole
 * registry through the proxy module; with a URI selecting tokens), and a
 * listener on a unix socket that forks a worker (pg_rpc_serve) for each
 * peer of an allowed uid. Problems are printed as "p11glue: ..." and
 * returned as PG_EXIT_* codes.
 */
#ifndef PG_RPC_LISTEN_H
#define PG_RPC_LISTEN_H

#include "server.h"

#include <sys/types.h>

/* What a server serves, resolved from the command line. */
typedef struct {
	char *path;                /* the module file */
	char *reserved;            /* its C_Initialize reserved string, or NULL */
	p11glue_uri *filter;       /* the tokens to serve, or NULL: all */
} pg_rpc_target;

/*
 * Resolves provider (a module file) or filter (a PKCS#11 URI, taken by
 * t: its module-path, else its module-name in the registry, else the
 * proxy module serving the whole registry; its slot and token
 * attributes select what is served), both may be NULL. Then loads the module, so
 * that one that cannot load fails now, and, when the URI has slot or
 * token attributes, refuses a URI that selects nothing the module has.
 * Returns an exit code; t is filled even on failure (pg_rpc_target_clear).
 */
int pg_rpc_target_resolve(const char *provider, p11glue_uri *filter, pg_rpc_target *t);
void pg_rpc_target_clear(pg_rpc_target *t);

/* The opts of pg_rpc_serve for t (views into t). */
pg_rpc_serve_options pg_rpc_target_options(const pg_rpc_target *t);

/*
 * The default socket of this process: $XDG_RUNTIME_DIR/p11glue/pkcs11-PID,
 * else /tmp/p11glue-UID/pkcs11-PID, the directory made private (0700)
 * and refused when it is not this user's. free(); NULL after a message.
 */
char *pg_rpc_default_socket(void);

#define PG_RPC_MAX_ALLOWED 16

typedef struct {
	const char *socket_path;
	pg_rpc_serve_options opts;
	uid_t allowed[PG_RPC_MAX_ALLOWED];   /* besides our own uid */
	int n_allowed;
	bool verbose;                        /* report refused peers */
} pg_rpc_listener;

/*
 * Listens on l->socket_path (mode 0600; a stale socket is replaced, a
 * live server's is not). Returns the socket, or -1 after a message.
 * Then pg_rpc_listener_run serves until SIGTERM, SIGINT or SIGHUP: each
 * peer of our uid or an allowed one in a worker process of its own;
 * at the end the socket is removed and the workers are stopped. Returns
 * an exit code.
 */
int pg_rpc_listen(const pg_rpc_listener *l);
int pg_rpc_listener_run(pg_rpc_listener *l, int listen_fd);

#endif /* PG_RPC_LISTEN_H */
