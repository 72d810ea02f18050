/*
 * The session service's control calls, for the command line (`p11glue
 * lock`, `p11glue status`): vendor requests (server.h, PG_RPC_VENDOR_*)
 * on the service's own socket, so that only its own user reaches them
 * (SO_PEERCRED), after the usual hello. Nothing here unlocks: unlocking
 * is a C_Login through p11glue-client.so, which carries the user's PIN
 * only; the SO never logs in through the service.
 *
 *   STATUS  request: empty
 *           reply:   u64 CKR_OK, u64 pid, u64 started (Unix time),
 *                    u64 idle lock (s), bytes pinentry program,
 *                    u32 n, then per token: u64 slot, CK_TOKEN_INFO,
 *                    u8 unlocked, u64 since (Unix time), u64 seconds
 *                    left before the idle lock (~0: none)
 *   LOCK    request: u8 all, u64 slot
 *           reply:   u64 CK_RV, u32 tokens locked
 */
#ifndef PG_SERVICE_CONTROL_H
#define PG_SERVICE_CONTROL_H

#include "wire.h"
#include "server.h"

#define PG_SERVICE_STATUS (PG_RPC_VENDOR_FIRST + 0)
#define PG_SERVICE_LOCK (PG_RPC_VENDOR_FIRST + 1)
#define PG_SERVICE_NO_IDLE UINT64_MAX

typedef struct {
	CK_SLOT_ID slot;
	CK_TOKEN_INFO info;
	bool unlocked;
	int64_t since;               /* Unix time of the unlock */
	uint64_t idle_left;          /* seconds before the idle lock, or PG_SERVICE_NO_IDLE */
} pg_service_token;

typedef struct {
	int64_t pid;
	int64_t started;             /* Unix time */
	uint64_t idle_lock;          /* seconds, 0: none */
	char pinentry[256];
	size_t n;
	pg_service_token *tokens;    /* n of them */
} pg_service_status;

enum {
	PG_SERVICE_OK = 0,
	PG_SERVICE_NOT_RUNNING = -1, /* nothing listens there */
	PG_SERVICE_REFUSED = -2,     /* no session service (another uid's, a fork-per-connection server) */
	PG_SERVICE_BROKEN = -3       /* the exchange failed */
};

/* The user's service socket (address.h), or NULL after a message. free(). */
char *pg_service_default_socket(void);

/*
 * Asks the service at socket_path for its status; never starts one.
 * Returns PG_SERVICE_*; *st is filled on PG_SERVICE_OK (clear it).
 */
int pg_service_status_get(const char *socket_path, pg_service_status *st);
void pg_service_status_clear(pg_service_status *st);

/* Locks one token (all: every token); *rv the service's answer, *locked
 * how many were unlocked. Returns PG_SERVICE_*. */
int pg_service_lock(const char *socket_path, bool all, CK_SLOT_ID slot, CK_RV *rv,
                    unsigned *locked);

#endif /* PG_SERVICE_CONTROL_H */
