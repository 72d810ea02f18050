/*
 * Serving PKCS#11 over the RPC protocol, one peer per worker, in two
 * ways:
 *
 * - pg_rpc_serve: one connection (or a stdin/stdout pair) in a process of
 *   its own (a worker forked per connection by the listener, or the
 *   `p11glue remote` process). The worker initializes the module itself,
 *   so every connection is its own PKCS#11 application: its sessions and
 *   its login state are never seen by another. When the peer goes away
 *   the worker finalizes the module (which closes the peer's sessions)
 *   and exits.
 * - pg_rpc_conn_start: one connection among others in one process (the
 *   session service, src/service), on a function list the caller gives,
 *   which learns whose request it runs from pg_rpc_conn_current. When
 *   the peer goes away the caller is told, and the worker's threads end.
 *
 * Requests are multiplexed by request id; several threads serve them in a
 * leader/follower scheme: the thread that reads a request executes it
 * and another thread takes over reading, so one client's threads never
 * queue behind each other. A request the client marked as its only one in
 * flight (PG_RPC_LONE) is executed by its reader, who then reads on, so a
 * sequential client pays no hand-off between threads; a standby thread
 * (named PG_RPC_STANDBY_NAME) passes the reading on when such a call runs
 * long.
 */
#ifndef PG_RPC_SERVER_H
#define PG_RPC_SERVER_H

#include "wire.h"

#include <p11glue/uri.h>

#include <sys/types.h>

#define PG_RPC_STANDBY_NAME "p11glue-standby"

typedef struct {
	const char *module_path;   /* the module file to serve (resolved) */
	const char *reserved;      /* its C_Initialize reserved string, or NULL */
	const p11glue_uri *filter; /* only the slots and tokens it matches, or NULL */
	bool quiet;                /* no messages on stderr */
} pg_rpc_serve_options;

/*
 * Serves one peer on in_fd/out_fd (the same socket, or two pipes). Does
 * not return: the process exits when the peer is done (status 0) or sent
 * something malformed (status 1, after an error reply).
 */
void pg_rpc_serve(int in_fd, int out_fd, const pg_rpc_serve_options *opts)
	__attribute__((noreturn));

/* Codes from PG_RPC_VENDOR_FIRST to PG_RPC_VENDOR_LAST are requests of the
 * process serving the connection (pg_rpc_conn_options.vendor), outside
 * PKCS#11 (the session service's control calls). */
#define PG_RPC_VENDOR_FIRST 0x8000u
#define PG_RPC_VENDOR_LAST 0x80ffu

typedef struct {
	CK_FUNCTION_LIST_3_0 *funcs;   /* what requests call; outlives the connection */
	bool v3;                       /* funcs has the 3.0 entries */
	/* Answers a vendor request (body in, reply body into out, starting
	 * with a u64 CK_RV); false when it is malformed (the peer gets an
	 * error frame and is disconnected). NULL: vendor codes are malformed. */
	bool (*vendor)(void *data, uint32_t code, pg_rpc_in *in, pg_rpc_out *out);
	/* Called once, on a thread of the connection, when the peer is gone
	 * (or pg_rpc_conn_stop) and none of its calls runs any longer; the
	 * worker's memory and the socket go right after. */
	void (*done)(void *data);
	void *data;                    /* what pg_rpc_conn_current returns */
	bool quiet;                    /* no messages on stderr */
} pg_rpc_conn_options;

typedef struct pg_rpc_conn pg_rpc_conn;

/*
 * Serves the peer on the socket fd with threads of its own (the
 * handshake first), and returns at once. On failure (no thread) returns
 * NULL; fd is then the caller's to close. Otherwise fd is the worker's
 * and the connection is valid until opts->done returns.
 */
pg_rpc_conn *pg_rpc_conn_start(int fd, const pg_rpc_conn_options *opts);

/* Hangs up on the peer: the worker ends as if the peer had gone (calls in
 * progress finish first). Call it only before opts->done of c returned. */
void pg_rpc_conn_stop(pg_rpc_conn *c);

/* The data of the connection whose request the calling thread is
 * running, or NULL outside a request. */
void *pg_rpc_conn_current(void);

/* Does the slot (and the token in it, if any) match filter? A slot
 * without a token matches only a URI without token attributes. */
bool pg_rpc_slot_matches(CK_FUNCTION_LIST *f, const p11glue_uri *filter, CK_SLOT_ID slot);

/* The uid of a unix socket's peer (SO_PEERCRED); false when unknown. */
bool pg_rpc_peer_uid(int fd, uid_t *uid);

#endif /* PG_RPC_SERVER_H */
