/*
 * The session service's state, shared by its files (not offered): the
 * module, the tokens' login state (login.c), the clients (service.c) and
 * the function list they call (calls.c). See service.h for the model.
 */
#ifndef PG_SERVICE_SVC_H
#define PG_SERVICE_SVC_H

#include "service.h"
#include "server.h"
#include "handles.h"
#include "modules.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>

/* A token's login state, one per slot the service has seen; kept until
 * the service ends (sessions point at it). Fields under pg_svc.lock
 * unless said otherwise. */
typedef struct svc_token {
	CK_SLOT_ID slot;
	bool unlocked;
	bool asking;                 /* a login runs: a PIN being checked, or pinentry */
	bool asked_pinentry;         /* the last finished login asked through pinentry */
	uint64_t round;              /* finished logins */
	CK_RV result;                /* the last one's */
	CK_SESSION_HANDLE holder;    /* the service's own session, which holds the login */
	pid_t pinentry;              /* the pinentry asking now, or 0 */
	time_t since;                /* when it was unlocked (wall clock) */
	atomic_llong last_use;       /* monotonic seconds of a client's last session call */
	struct svc_token *next;
} svc_token;

/* A client: its sessions (module handle -> svc_token *), under lock. */
typedef struct svc_conn {
	pthread_mutex_t lock;
	pg_handle_map sessions;
	pg_rpc_conn *rpc;            /* under pg_svc.lock */
	struct svc_conn *next;       /* under pg_svc.lock */
} svc_conn;

typedef struct {
	pg_module *module;
	CK_FUNCTION_LIST_3_0 *f;     /* the module's own list */
	bool v3;
	const char *pinentry;        /* the program, or NULL: never ask */
	unsigned idle_lock;          /* seconds; 0: never */
	bool verbose;
	time_t started;
	pthread_mutex_t lock;        /* tokens and their state, clients */
	pthread_cond_t cond;         /* a login finished; a client left */
	svc_token *tokens;
	svc_conn *clients;
} svc_state;

extern svc_state pg_svc;

/* ---------------------------------------------------------------------------
 * login.c: tokens
 */

/* Sets up pg_svc for module (initialized by the caller). */
void pg_svc_init(pg_module *module, const pg_service_options *opts);

/* The state of slot's token, made on first use; NULL when out of memory. */
svc_token *pg_svc_token(CK_SLOT_ID slot);

/* A client used the token (a call on one of its sessions). */
static inline void
pg_svc_touch(svc_token *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	atomic_store_explicit(&t->last_use, (long long)now.tv_sec, memory_order_relaxed);
}

/*
 * C_Login(CKU_USER) of a client. While the token is unlocked: CKR_OK
 * without a PIN (the protected path's login), CKR_USER_ALREADY_LOGGED_IN
 * with one. Else logs it in for everyone with pin (NULL: asked through
 * pinentry, one dialog for all the clients that wait for it).
 */
CK_RV pg_svc_login(svc_token *t, const CK_UTF8CHAR *pin, CK_ULONG len);

/* C_Login(CKU_CONTEXT_SPECIFIC) without a PIN: asked through pinentry,
 * then given to the module for session. */
CK_RV pg_svc_login_again(svc_token *t, CK_SESSION_HANDLE session);

bool pg_svc_unlocked(svc_token *t);

/* Locks the token (a pinentry asking for it is stopped first); false
 * when it was not unlocked. */
bool pg_svc_lock(svc_token *t);
/* Locks every token; returns how many were unlocked. */
unsigned pg_svc_lock_all(void);

/* Locks the tokens idle for pg_svc.idle_lock seconds; returns the
 * milliseconds until the next may be due, or -1 for none. */
int pg_svc_idle_check(void);

/* Seconds before t locks for idleness, or UINT64_MAX when it will not. */
uint64_t pg_svc_idle_left(svc_token *t);

/* ---------------------------------------------------------------------------
 * calls.c: the function list clients call
 */

/* The list, with the module's entries behind the checks (pg_svc set up). */
CK_FUNCTION_LIST_3_0 *pg_svc_functions(void);

/* Closes every session the client still has (it is gone). */
void pg_svc_close_sessions(svc_conn *c);

/* ---------------------------------------------------------------------------
 * control.c
 */

/* Answers a control request (pg_rpc_conn_options.vendor). */
bool pg_svc_control(void *data, uint32_t code, pg_rpc_in *in, pg_rpc_out *out);

#endif /* PG_SERVICE_SVC_H */
