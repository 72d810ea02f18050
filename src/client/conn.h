/*
 * The client module's connection to a p11glue server: one per process,
 * shared by all threads, with requests multiplexed by id. Reading is
 * leader/follower: a caller waiting for its reply reads frames itself
 * when no one else is reading, hands frames for other callers to them,
 * and passes the reading role on when its own reply has come. One
 * caller thus needs no other thread; many callers never queue behind
 * one another's calls.
 *
 * The connection is made (and remade after the server went away) on
 * demand; each connection has a generation number, so that sessions of
 * an earlier connection are known to be gone.
 */
#ifndef PG_CLIENT_CONN_H
#define PG_CLIENT_CONN_H

#include "wire.h"

/* Sets the address ("unix:path=PATH", an absolute PATH, or "|COMMAND"),
 * copied; false when it is not one of those. Closes any connection. */
bool pg_conn_set_address(const char *address) PG_MUST_CHECK;

/*
 * The address is the user's session service: when nothing listens there,
 * the next connection first starts it by running `tool service --daemon`
 * (which returns once the service listens, or at once when another start
 * won the race for the address), then connects. tool is copied; NULL
 * turns starting off.
 */
bool pg_conn_set_autostart(const char *tool) PG_MUST_CHECK;

/* Closes the connection, fails the calls waiting on it and forgets the
 * address (C_Finalize). */
void pg_conn_close(void);

/* After fork(), in the child: forgets the parent's connection. */
void pg_conn_after_fork(void);

enum {
	PG_CONN_OK = 0,
	PG_CONN_UNREACHABLE = -1,   /* no server, or the connection broke */
	PG_CONN_STALE = -2          /* connected, but not the expected connection */
};

/*
 * Sends a finished request (id and code are set here) and waits for its
 * reply. Connects first when needed. expected is the generation of the
 * connection the call belongs to (a session's), or 0 for any. On
 * PG_CONN_OK, *reply holds the reply frame (clear it) and *generation the
 * connection's generation. PG_CONN_UNREACHABLE when the server cannot be
 * reached or the connection broke (or, for an error frame, the server
 * refused the request); PG_CONN_STALE when connected anew since.
 */
int pg_conn_call(pg_rpc_out *request, uint32_t code, unsigned expected, pg_rpc_frame *reply,
                 unsigned *generation) PG_MUST_CHECK;

/* Why the last attempt to connect failed, into buf; false when it did
 * not fail (or none was made). */
bool pg_conn_why(char *buf, size_t size);

/* The generation of the current connection (0 when none), connecting
 * first when try_connect is set. */
unsigned pg_conn_generation(bool try_connect);

#endif /* PG_CLIENT_CONN_H */
