/*
 * Serving one PKCS#11 module over the RPC protocol: one connection (or a
 * stdin/stdout pair) per call of pg_rpc_serve, which runs in a process of
 * its own (a worker forked per connection by the listener, or the
 * `p11glue remote` process). The worker initializes the module itself,
 * so every connection is its own PKCS#11 application: its sessions and
 * its login state are never seen by another. When the peer goes away the
 * worker finalizes the module (which closes the peer's sessions) and
 * exits.
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

/* Does the slot (and the token in it, if any) match filter? A slot
 * without a token matches only a URI without token attributes. */
bool pg_rpc_slot_matches(CK_FUNCTION_LIST *f, const p11glue_uri *filter, CK_SLOT_ID slot);

/* The uid of a unix socket's peer (SO_PEERCRED); false when unknown. */
bool pg_rpc_peer_uid(int fd, uid_t *uid);

#endif /* PG_RPC_SERVER_H */
