/*
 * p11glue-client.so: a PKCS#11 3.0 module whose token lives behind a
 * p11glue server (`p11glue server`, or `p11glue remote` at the end of an
 * ssh command).
 *
 * The address comes from the C_Initialize reserved string "remote=ADDR"
 * (the registry passes a module file's "remote:" setting that way), else
 * from P11GLUE_SERVER_ADDRESS: "unix:path=PATH", or "|COMMAND", which is
 * run with its stdin and stdout connected to the module; else it is the
 * user's session service (`p11glue service`, src/service), which the
 * module starts when nothing listens there (unless P11GLUE_AUTOSTART is
 * 0 or no): applications registered by `p11glue setup` name no address.
 *
 * Every entry point but a few is generated from the call list
 * (rpc-client.inc, made by src/rpc/gen-rpc.py); the few written here
 * keep local state: sessions, whose handles are the module's own and map
 * to the server's handle and the connection they belong to; the
 * interfaces; initialization.
 *
 * While the server is unreachable, slot lists are empty, slot calls
 * return CKR_TOKEN_NOT_PRESENT and session calls CKR_DEVICE_REMOVED. The
 * next call after the server is back connects again: sessions of the
 * old connection are gone (CKR_SESSION_HANDLE_INVALID), new ones work.
 */
#define _GNU_SOURCE /* dladdr */
#include "config.h"

#include "address.h"
#include "conn.h"
#include "handles.h"
#include "initargs.h"
#include "interfaces.h"
#include "marshal.h"
#include "rpc-calls.h"
#include "pkcs11-calls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define RESERVED_PREFIX "remote="

enum { RC_NONE, RC_SLOT, RC_SESSION, RC_INFO, RC_OPEN, RC_CLOSE, RC_CLOSE_ALL };

typedef struct {
	CK_SESSION_HANDLE remote;
	unsigned generation;
	CK_SLOT_ID slot;
	CK_MECHANISM_TYPE msg_mech[4];   /* message encrypt, decrypt, sign, verify */
} rc_session;

static struct {
	pthread_rwlock_t lock;           /* calls read; session changes write */
	bool initialized;
	pg_handle_map sessions;          /* our handle -> rc_session * */
	CK_SESSION_HANDLE next_handle;
} st = { PTHREAD_RWLOCK_INITIALIZER };

typedef struct {
	pg_rpc_out out;
	pg_rpc_frame reply;
	pg_rpc_in in;
	uint32_t code;
	int kind;
	CK_RV error;                 /* set while encoding: returned by rc_run */
	bool answered;               /* in holds a reply to check */
	CK_SESSION_HANDLE session;   /* ours */
	unsigned generation;         /* of the session, 0 if none */
	CK_MECHANISM_TYPE msg_mech[4];
} rc_call;

static CK_FUNCTION_LIST_3_0 client_list;
static CK_FUNCTION_LIST client_list_2;
static CK_INTERFACE client_interfaces[2];

/* ---------------------------------------------------------------------------
 * Calls
 */

static CK_RV
rc_begin(rc_call *call, uint32_t code, int kind)
{
	bool ready;

	memset(call, 0, sizeof(*call));
	pthread_rwlock_rdlock(&st.lock);
	ready = st.initialized;
	pthread_rwlock_unlock(&st.lock);
	if (!ready)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pg_rpc_out_init(&call->out);
	call->code = code;
	call->kind = kind;
	return CKR_OK;
}

/* The server's handle of one of our sessions. */
static void
rc_add_session(rc_call *call, CK_SESSION_HANDLE handle)
{
	pg_handle_entry *e;
	rc_session *s;

	pthread_rwlock_rdlock(&st.lock);
	e = pg_handle_map_find(&st.sessions, handle);
	if (e == NULL) {
		call->error = CKR_SESSION_HANDLE_INVALID;
	} else {
		s = (rc_session *)(uintptr_t)e->value;
		call->session = handle;
		call->generation = s->generation;
		memcpy(call->msg_mech, s->msg_mech, sizeof(call->msg_mech));
		pg_rpc_add_u64(&call->out, s->remote);
	}
	pthread_rwlock_unlock(&st.lock);
}

static void
rc_set_msg_mech(rc_call *call, int kind, const CK_MECHANISM *mech)
{
	pg_handle_entry *e;

	pthread_rwlock_wrlock(&st.lock);
	e = pg_handle_map_find(&st.sessions, call->session);
	if (e != NULL && mech != NULL)
		((rc_session *)(uintptr_t)e->value)->msg_mech[kind] = mech->mechanism;
	pthread_rwlock_unlock(&st.lock);
}

/* What a call answers when the server cannot be reached. */
static CK_RV
unreachable(const rc_call *call)
{
	bool ready;

	pthread_rwlock_rdlock(&st.lock);
	ready = st.initialized;
	pthread_rwlock_unlock(&st.lock);
	if (!ready)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	switch (call->kind) {
	case RC_SLOT:
	case RC_OPEN:
	case RC_CLOSE_ALL:
		return CKR_TOKEN_NOT_PRESENT;
	default:
		return CKR_DEVICE_REMOVED;
	}
}

static CK_RV
rc_run(rc_call *call)
{
	unsigned generation;

	if (call->error != CKR_OK)
		return call->error;
	if (call->out.failed)
		return CKR_HOST_MEMORY;   /* larger than a frame may be */
	switch (pg_conn_call(&call->out, call->code, call->generation, &call->reply, &generation)) {
	case PG_CONN_OK:
		break;
	case PG_CONN_STALE:
		return CKR_SESSION_HANDLE_INVALID;   /* a session of an earlier connection */
	default:
		return unreachable(call);
	}
	call->generation = generation;
	pg_rpc_in_init(&call->in, call->reply.body, call->reply.len);
	call->answered = true;
	return (CK_RV)pg_rpc_get_u64(&call->in);
}

/* A reply that does not parse is the server's fault: CKR_DEVICE_ERROR. */
static CK_RV
rc_end(rc_call *call, CK_RV rv)
{
	if (call->answered && !pg_rpc_in_done(&call->in))
		rv = CKR_DEVICE_ERROR;
	pg_rpc_out_clear(&call->out);
	pg_rpc_frame_clear(&call->reply);
	return rv;
}

static void
rc_add_out_bytes(rc_call *call, const void *p, const CK_ULONG *len)
{
	pg_rpc_add_u8(&call->out, p != NULL);
	pg_rpc_add_u64(&call->out, *len);
}

static void
rc_get_out_bytes(rc_call *call, CK_BYTE_PTR p, CK_ULONG_PTR len)
{
	CK_ULONG n = pg_rpc_get_ulong(&call->in);
	bool present = pg_rpc_get_u8(&call->in) != 0;
	const unsigned char *data;
	size_t got;

	if (present != (p != NULL))
		call->in.failed = true;
	if (present) {
		data = pg_rpc_get_bytes(&call->in, &got);
		/* Never past the caller's buffer. */
		if (data == NULL || got != n || n > *len) {
			call->in.failed = true;
			return;
		}
		memcpy(p, data, got);
	}
	if (!call->in.failed)
		*len = n;
}

static void
rc_get_out_fixed(rc_call *call, CK_BYTE_PTR p, CK_ULONG len)
{
	CK_ULONG n = len;

	rc_get_out_bytes(call, p, &n);
	if (n != len)
		call->in.failed = true;
}

static void
rc_add_out_ulongs(rc_call *call, const CK_ULONG *p, const CK_ULONG *count)
{
	pg_rpc_add_u8(&call->out, p != NULL);
	pg_rpc_add_u64(&call->out, *count);
}

static void
rc_get_out_ulongs(rc_call *call, CK_ULONG_PTR p, CK_ULONG_PTR count)
{
	CK_ULONG n = pg_rpc_get_ulong(&call->in);
	bool present = pg_rpc_get_u8(&call->in) != 0;

	if (present != (p != NULL) || (present && n > *count) ||
	    (present && n > (call->in.len - call->in.off) / 8)) {
		call->in.failed = true;
		return;
	}
	for (CK_ULONG i = 0; present && i < n; i++)
		p[i] = pg_rpc_get_ulong(&call->in);
	if (!call->in.failed)
		*count = n;
}

static void
rc_get_handles(rc_call *call, CK_OBJECT_HANDLE_PTR p, CK_ULONG max, CK_ULONG_PTR count)
{
	uint32_t n = pg_rpc_get_u32(&call->in);

	if (n > max || n > (call->in.len - call->in.off) / 8) {
		call->in.failed = true;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		p[i] = pg_rpc_get_ulong(&call->in);
	*count = n;
}

static void
rc_add_label(rc_call *call, const CK_UTF8CHAR *label)
{
	pg_rpc_add_u8(&call->out, label != NULL);
	if (label != NULL)
		pg_rpc_add_raw(&call->out, label, 32);
}

#include "rpc-client.inc"

/* ---------------------------------------------------------------------------
 * Initialization
 */

static void
drop_sessions_locked(bool all, CK_SLOT_ID slot)
{
	CK_ULONG key, value;
	size_t pos = 0;

	while (pg_handle_map_next(&st.sessions, &pos, &key, &value)) {
		rc_session *s = (rc_session *)(uintptr_t)value;
		if (!all && s->slot != slot)
			continue;
		free(s);
		pg_handle_map_remove(&st.sessions, key);
		pos = 0;
	}
}

static void
after_fork_child(void)
{
	/* PKCS#11 v3.0 §5.2: the child must initialize again. */
	pthread_rwlock_init(&st.lock, NULL);
	pg_conn_after_fork();
	if (st.initialized)
		drop_sessions_locked(true, 0);
	st.initialized = false;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void
register_fork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* The p11glue program that starts the service: the build tree's beside
 * this module when it runs from one (src/client/ and src/tools/), else
 * the installed one. free(). */
static char *
tool_path(void)
{
	static const char built[] = "/../tools/p11glue";
	Dl_info info;
	const char *slash;
	char *path;
	size_t dir;

	if (dladdr((void *)tool_path, &info) != 0 && info.dli_fname != NULL &&
	    (slash = strrchr(info.dli_fname, '/')) != NULL) {
		dir = (size_t)(slash - info.dli_fname);
		if (dir >= 7 && memcmp(slash - 7, "/client", 7) == 0 &&
		    (path = malloc(dir + sizeof(built))) != NULL) {
			memcpy(path, info.dli_fname, dir);
			memcpy(path + dir, built, sizeof(built));
			if (access(path, X_OK) == 0)
				return path;
			free(path);
		}
	}
	return strdup(P11GLUE_BINDIR "/p11glue");
}

/* "unix:path=" and the user's service socket; NULL after a message. */
static char *
service_address(void)
{
	const char *why;
	char *path = pg_rpc_socket_path(PG_RPC_SERVICE_NAME, &why), *address = NULL;

	if (path == NULL || asprintf(&address, "unix:path=%s", path) < 0) {
		pg_message("client: no server address, and no session service: "
		           "$XDG_RUNTIME_DIR/p11glue (or /tmp/p11glue-UID) %s", path ? "out of memory" : why);
		address = NULL;
	}
	free(path);
	return address;
}

/* Starts the service when address is the user's service and starting is
 * not turned off. */
static bool
set_autostart(const char *address)
{
	const char *env = getenv("P11GLUE_AUTOSTART"), *why;
	char *service = pg_rpc_socket_path(PG_RPC_SERVICE_NAME, &why), *tool = NULL;
	const char *path = strncmp(address, "unix:path=", 10) == 0 ? address + 10 : address;
	bool ok;

	if (service != NULL && strcmp(path, service) == 0 &&
	    !(env && (strcmp(env, "0") == 0 || strcmp(env, "no") == 0)))
		tool = tool_path();
	ok = pg_conn_set_autostart(tool);
	free(tool);
	free(service);
	return ok;
}

static CK_RV
rc_C_Initialize(CK_VOID_PTR pInitArgs)
{
	CK_C_INITIALIZE_ARGS *args = pInitArgs;
	const char *reserved = NULL;
	const char *address = NULL;
	char *service = NULL;
	/* pReserved is read only from a caller known to pass a string there. */
	CK_RV rv = pg_initialize_args_read(args, &reserved);

	if (rv != CKR_OK)
		return rv;
	pthread_once(&fork_once, register_fork);
	if (reserved && strncmp(reserved, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0)
		address = reserved + strlen(RESERVED_PREFIX);
	if (address == NULL)
		address = getenv("P11GLUE_SERVER_ADDRESS");
	if (address == NULL || *address == 0) {
		address = service = service_address();
		if (address == NULL)
			return CKR_GENERAL_ERROR;
	}
	pthread_rwlock_wrlock(&st.lock);
	if (st.initialized) {
		pthread_rwlock_unlock(&st.lock);
		free(service);
		return CKR_CRYPTOKI_ALREADY_INITIALIZED;
	}
	if (!pg_conn_set_address(address) || !set_autostart(address)) {
		pthread_rwlock_unlock(&st.lock);
		pg_message("client: not a server address: %s (want unix:path=PATH or |COMMAND)",
		           address);
		free(service);
		return CKR_ARGUMENTS_BAD;
	}
	free(service);
	pg_handle_map_init(&st.sessions);
	st.next_handle = 1;
	st.initialized = true;
	pthread_rwlock_unlock(&st.lock);
	/* A server that is away now is no error: it may come later. */
	(void)pg_conn_generation(true);
	return CKR_OK;
}

static CK_RV
rc_C_Finalize(CK_VOID_PTR pReserved)
{
	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_rwlock_wrlock(&st.lock);
	if (!st.initialized) {
		pthread_rwlock_unlock(&st.lock);
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	st.initialized = false;
	drop_sessions_locked(true, 0);
	pg_handle_map_clear(&st.sessions);
	pthread_rwlock_unlock(&st.lock);
	/* The server's worker finalizes its module when we hang up, which
	 * closes our sessions there; waiting calls fail. */
	pg_conn_close();
	return CKR_OK;
}

/* The served module's information, or ours while the server is away. */
static CK_RV
rc_C_GetInfo(CK_INFO_PTR pInfo)
{
	rc_call call;
	CK_RV rv;

	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	rv = rc_begin(&call, PG_RPC_CALL_C_GetInfo, RC_NONE);
	if (rv != CKR_OK)
		return rv;
	rv = rc_run(&call);
	if (rv == CKR_OK)
		pg_rpc_get_info(&call.in, pInfo);
	if (rv == CKR_DEVICE_REMOVED) {
		memset(pInfo, 0, sizeof(*pInfo));
		pInfo->cryptokiVersion = (CK_VERSION){ 3, 0 };
		pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "p11glue");
		pg_pad(pInfo->libraryDescription, sizeof(pInfo->libraryDescription),
		    "p11glue remote client");
		pInfo->libraryVersion = (CK_VERSION){ 0, 1 };
		rv = CKR_OK;
	}
	return rc_end(&call, rv);
}

static CK_RV
rc_C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	*ppFunctionList = &client_list_2;
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * Slots and sessions
 */

/* Says on stderr why the client has no slots, once for each reason. */
static void
say_why(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char said[320];
	char why[320];

	if (!pg_conn_why(why, sizeof(why)))
		return;
	pthread_mutex_lock(&lock);
	if (strcmp(why, said) != 0) {
		snprintf(said, sizeof(said), "%s", why);
		pg_message("p11glue-client.so has no slots: %s", why);
	}
	pthread_mutex_unlock(&lock);
}

static CK_RV
rc_C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	rc_call call;
	CK_RV rv;

	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	rv = rc_begin(&call, PG_RPC_CALL_C_GetSlotList, RC_NONE);
	if (rv != CKR_OK)
		return rv;
	pg_rpc_add_u8(&call.out, tokenPresent);
	rc_add_out_ulongs(&call, pSlotList, pulCount);
	rv = rc_run(&call);
	if (rv == CKR_OK)
		rc_get_out_ulongs(&call, pSlotList, pulCount);
	else if (rv == CKR_BUFFER_TOO_SMALL)
		*pulCount = pg_rpc_get_ulong(&call.in);
	else if (rv == CKR_DEVICE_REMOVED) {
		/* No server, no slots; and the user is told why, once a reason. */
		*pulCount = 0;
		rv = CKR_OK;
		say_why();
	}
	return rc_end(&call, rv);
}

static CK_RV
rc_C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication, CK_NOTIFY Notify,
                 CK_SESSION_HANDLE_PTR phSession)
{
	rc_session *s;
	CK_SESSION_HANDLE remote = 0;
	rc_call call;
	CK_RV rv;

	(void)pApplication;
	(void)Notify;   /* never called: PKCS#11 v3.0 §5.6 allows it */
	if (phSession == NULL)
		return CKR_ARGUMENTS_BAD;
	rv = rc_begin(&call, PG_RPC_CALL_C_OpenSession, RC_OPEN);
	if (rv != CKR_OK)
		return rv;
	pg_rpc_add_u64(&call.out, slotID);
	pg_rpc_add_u64(&call.out, flags);
	rv = rc_run(&call);
	if (rv == CKR_OK)
		remote = pg_rpc_get_ulong(&call.in);
	rv = rc_end(&call, rv);
	if (rv != CKR_OK)
		return rv;
	s = calloc(1, sizeof(*s));
	pthread_rwlock_wrlock(&st.lock);
	if (s != NULL && st.initialized) {
		*s = (rc_session){ remote, call.generation, slotID, { 0 } };
		*phSession = st.next_handle++;
		if (!pg_handle_map_put(&st.sessions, *phSession, (CK_ULONG)(uintptr_t)s)) {
			rv = CKR_HOST_MEMORY;
		}
	} else {
		rv = s ? CKR_CRYPTOKI_NOT_INITIALIZED : CKR_HOST_MEMORY;
	}
	pthread_rwlock_unlock(&st.lock);
	if (rv != CKR_OK) {
		free(s);
		/* The server's session goes with the connection; no need to close it. */
	}
	return rv;
}

static void
forget_session(CK_SESSION_HANDLE handle)
{
	CK_ULONG value;

	pthread_rwlock_wrlock(&st.lock);
	if (pg_handle_map_get(&st.sessions, handle, &value)) {
		free((rc_session *)(uintptr_t)value);
		pg_handle_map_remove(&st.sessions, handle);
	}
	pthread_rwlock_unlock(&st.lock);
}

static CK_RV
rc_C_CloseSession(CK_SESSION_HANDLE hSession)
{
	rc_call call;
	CK_RV rv = rc_begin(&call, PG_RPC_CALL_C_CloseSession, RC_CLOSE);

	if (rv != CKR_OK)
		return rv;
	rc_add_session(&call, hSession);
	rv = rc_end(&call, rc_run(&call));
	if (rv == CKR_OK || rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED ||
	    rv == CKR_DEVICE_REMOVED)
		forget_session(hSession);
	return rv;
}

static CK_RV
rc_C_CloseAllSessions(CK_SLOT_ID slotID)
{
	rc_call call;
	CK_RV rv = rc_begin(&call, PG_RPC_CALL_C_CloseAllSessions, RC_CLOSE_ALL);

	if (rv != CKR_OK)
		return rv;
	pg_rpc_add_u64(&call.out, slotID);
	rv = rc_end(&call, rc_run(&call));
	if (rv == CKR_OK || rv == CKR_TOKEN_NOT_PRESENT) {
		pthread_rwlock_wrlock(&st.lock);
		drop_sessions_locked(false, slotID);
		pthread_rwlock_unlock(&st.lock);
	}
	return rv;
}

static CK_RV
rc_C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	rc_call call;
	CK_RV rv;

	if (pTemplate == NULL && ulCount > 0)
		return CKR_ARGUMENTS_BAD;
	rv = rc_begin(&call, PG_RPC_CALL_C_GetAttributeValue, RC_SESSION);
	if (rv != CKR_OK)
		return rv;
	rc_add_session(&call, hSession);
	pg_rpc_add_u64(&call.out, hObject);
	pg_rpc_add_attr_request(&call.out, pTemplate, ulCount);
	rv = rc_run(&call);
	if (rv == CKR_OK || rv == CKR_ATTRIBUTE_SENSITIVE || rv == CKR_ATTRIBUTE_TYPE_INVALID ||
	    rv == CKR_BUFFER_TOO_SMALL) {
		if (!pg_rpc_get_attr_result(&call.in, pTemplate, ulCount))
			call.in.failed = true;
	}
	return rc_end(&call, rv);
}

static CK_RV
rc_C_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved)
{
	rc_call call;
	CK_RV rv;

	if (pSlot == NULL || pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	rv = rc_begin(&call, PG_RPC_CALL_C_WaitForSlotEvent, RC_NONE);
	if (rv != CKR_OK)
		return rv;
	pg_rpc_add_u64(&call.out, flags);
	rv = rc_run(&call);
	if (rv == CKR_OK)
		*pSlot = pg_rpc_get_ulong(&call.in);
	else if (rv == CKR_DEVICE_REMOVED && (flags & CKF_DONT_BLOCK))
		rv = CKR_NO_EVENT;
	return rc_end(&call, rv);
}

/* ---------------------------------------------------------------------------
 * Interfaces and the function lists
 */

#define RC_ENTRY(name, params, args, kind) rc_##name,
PG_MODULE_LISTS(rc_, RC_ENTRY, client_list, client_list_2, client_interfaces);
#undef RC_ENTRY

PG_MODULE_EXPORTS(rc_, EXPORT)
