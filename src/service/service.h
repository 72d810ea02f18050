/*
 * The session service: one process per user that serves the user's key
 * store to all of the user's applications (through p11glue-client.so)
 * with ONE instance of the module, so that one login unlocks the token
 * for every application of the session.
 *
 * Each connection is served by threads of its own (src/rpc's worker,
 * pg_rpc_conn_start) over one function list (calls.c) that keeps each
 * client to its own sessions and answers logins for the whole service:
 *
 * - The token reports CKF_PROTECTED_AUTHENTICATION_PATH: applications
 *   call C_Login without a PIN and never prompt themselves.
 * - C_Login(CKU_USER) of a locked token logs it in for everyone on a
 *   session of the service's own: with the PIN the client gave, else one
 *   asked once through the user's pinentry (pinentry.c), whatever the
 *   number of clients waiting. While unlocked (every session of every
 *   client shows the user's state) a login without a PIN succeeds at
 *   once, and one with a PIN gets CKR_USER_ALREADY_LOGGED_IN. A
 *   cancelled pinentry gives CKR_FUNCTION_CANCELED.
 * - C_Logout answers CKR_OK and leaves the token unlocked for the others;
 *   `p11glue lock` (a control call, control.c) or the idle timeout locks
 *   it: C_Logout of the service's session, which wipes the unwrapped
 *   keys from memory.
 * - The SO never logs in here (CKR_USER_TYPE_INVALID).
 * - A client's sessions close when it disconnects.
 *
 * Only peers of the service's own uid are served (SO_PEERCRED).
 */
#ifndef PG_SERVICE_H
#define PG_SERVICE_H

#include "common.h"

typedef struct {
	const char *module_path;   /* the module to serve: the key store */
	const char *reserved;      /* its C_Initialize reserved string, or NULL */
	const char *socket_path;   /* NULL: the user's (address.h) */
	const char *pinentry;      /* NULL: $P11GLUE_PINENTRY, else "pinentry"; "none": never ask */
	unsigned idle_lock;        /* seconds without use after which a token locks; 0: never */
	bool daemon;               /* fork once listening; a live service there is no error */
	bool verbose;              /* report refused peers, unlocks and locks on stderr */
} pg_service_options;

/*
 * Runs the service: takes the socket systemd passes (socket activation,
 * $LISTEN_FDS) or listens on opts->socket_path, loads and initializes
 * the module, and serves until SIGTERM, SIGINT or SIGHUP, or until its
 * socket is removed (the user's runtime directory goes at logout). At
 * the end every token is locked. Returns an exit code after a message.
 */
int pg_service_run(const pg_service_options *opts);

#endif /* PG_SERVICE_H */
