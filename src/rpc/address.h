/*
 * Where a user's p11glue sockets live: $XDG_RUNTIME_DIR/p11glue, else
 * /tmp/p11glue-UID, a directory of this user's only (mode 0700). The
 * session service (src/service) listens there at a fixed name that its
 * clients (p11glue-client.so, the CLI) find without being told.
 */
#ifndef PG_RPC_ADDRESS_H
#define PG_RPC_ADDRESS_H

#include "common.h"

/* The session service's socket name and its start lock, in the directory. */
#define PG_RPC_SERVICE_NAME "pkcs11"
#define PG_RPC_SERVICE_LOCK "pkcs11.lock"

/*
 * The directory, created (0700) when missing. NULL when it cannot be
 * made or is not a private directory of this user (another owner, a
 * link, group or other access): *why (static text) says which. free().
 */
char *pg_rpc_socket_dir(const char **why);

/* dir/name; NULL as above or when out of memory. free(). */
char *pg_rpc_socket_path(const char *name, const char **why);

#endif /* PG_RPC_ADDRESS_H */
