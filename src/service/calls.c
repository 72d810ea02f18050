/*
 * The function list the session service's clients call (see service.h):
 * the module's entries behind checks that keep each client to its own
 * sessions, and the login calls answered for the whole service.
 *
 * PKCS#11 calls carry no caller, so the client is the connection whose
 * request the calling thread runs (pg_rpc_conn_current).
 */
#include "config.h"

#include "svc.h"
#include "pkcs11-calls.h"

#include <stdint.h>
#include <string.h>

#define PG_EXPAND(...) __VA_ARGS__

static CK_FUNCTION_LIST_3_0 list;

/* The token of one of the calling client's sessions, or NULL. */
static svc_token *
own(CK_SESSION_HANDLE session)
{
	svc_conn *c = pg_rpc_conn_current();
	CK_ULONG value = 0;
	bool found;

	if (c == NULL)
		return NULL;
	pthread_mutex_lock(&c->lock);
	found = pg_handle_map_get(&c->sessions, session, &value);
	pthread_mutex_unlock(&c->lock);
	return found ? (svc_token *)(uintptr_t)value : NULL;
}

/* ---------------------------------------------------------------------------
 * Forwarders generated from the call list
 */

/* A call on a session: the client's own only, and a use of its token. */
#define PG_FWD_SESSION(name, params, args, v3only)                           \
	static CK_RV svc_##name(PG_EXPAND params)                                \
	{                                                                        \
		svc_token *t = own(hSession);                                        \
		if (t == NULL)                                                       \
			return CKR_SESSION_HANDLE_INVALID;                               \
		pg_svc_touch(t);                                                     \
		if ((v3only && !pg_svc.v3) || pg_svc.f->name == NULL)                \
			return CKR_FUNCTION_NOT_SUPPORTED;                               \
		return pg_svc.f->name args;                                          \
	}

/* C_GetSessionInfo: the client's own session, but no use (programs poll
 * it to see whether they are logged in). */
#define PG_FWD_INFO(name, params, args, v3only)                              \
	static CK_RV svc_##name(PG_EXPAND params)                                \
	{                                                                        \
		if (own(hSession) == NULL)                                           \
			return CKR_SESSION_HANDLE_INVALID;                               \
		return pg_svc.f->name args;                                          \
	}

#define PG_FWD_SLOT(name, params, args, v3only)                              \
	static CK_RV svc_##name(PG_EXPAND params)                                \
	{                                                                        \
		if ((v3only && !pg_svc.v3) || pg_svc.f->name == NULL)                \
			return CKR_FUNCTION_NOT_SUPPORTED;                               \
		return pg_svc.f->name args;                                          \
	}

PG_FORWARD_CALLS

/* ---------------------------------------------------------------------------
 * Sessions
 */

static CK_RV
svc_open(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication, CK_NOTIFY Notify,
         CK_SESSION_HANDLE_PTR phSession)
{
	svc_conn *c = pg_rpc_conn_current();
	svc_token *t;
	bool kept;
	CK_RV rv;

	if (c == NULL)
		return CKR_GENERAL_ERROR;
	rv = pg_svc.f->C_OpenSession(slotID, flags, pApplication, Notify, phSession);
	if (rv != CKR_OK)
		return rv;
	t = pg_svc_token(slotID);
	pthread_mutex_lock(&c->lock);
	kept = t != NULL && pg_handle_map_put(&c->sessions, *phSession, (CK_ULONG)(uintptr_t)t);
	pthread_mutex_unlock(&c->lock);
	if (!kept) {
		pg_svc.f->C_CloseSession(*phSession);
		return CKR_HOST_MEMORY;
	}
	return CKR_OK;
}

static CK_RV
svc_close(CK_SESSION_HANDLE hSession)
{
	svc_conn *c = pg_rpc_conn_current();
	bool mine;

	if (c == NULL)
		return CKR_SESSION_HANDLE_INVALID;
	/* Out of the client's set first: its other calls fail from now on. */
	pthread_mutex_lock(&c->lock);
	mine = pg_handle_map_remove(&c->sessions, hSession);
	pthread_mutex_unlock(&c->lock);
	return mine ? pg_svc.f->C_CloseSession(hSession) : CKR_SESSION_HANDLE_INVALID;
}

/* Closes the client's sessions on slot (all: on every slot). */
static void
close_own(svc_conn *c, bool all, CK_SLOT_ID slot)
{
	CK_ULONG handle, value;
	size_t pos = 0;

	pthread_mutex_lock(&c->lock);
	while (pg_handle_map_next(&c->sessions, &pos, &handle, &value)) {
		if (!all && ((svc_token *)(uintptr_t)value)->slot != slot)
			continue;
		pg_handle_map_remove(&c->sessions, handle);
		pos = 0;    /* removal shifts entries: start over */
		pthread_mutex_unlock(&c->lock);
		pg_svc.f->C_CloseSession(handle);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
}

/* Only the client's own sessions: the others' stay open. */
static CK_RV
svc_close_all(CK_SLOT_ID slotID)
{
	svc_conn *c = pg_rpc_conn_current();
	CK_SLOT_INFO info;
	CK_RV rv = pg_svc.f->C_GetSlotInfo(slotID, &info);

	if (rv == CKR_OK && c != NULL)
		close_own(c, false, slotID);
	return rv;
}

void
pg_svc_close_sessions(svc_conn *c)
{
	close_own(c, true, 0);
}

/* ---------------------------------------------------------------------------
 * The token and its login
 */

/* The service asks for PINs itself: applications call C_Login without
 * one (PKCS#11 v3.0 §5.6, C_Login with a protected authentication path)
 * and show no dialog of their own. */
static CK_RV
svc_token_info(CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo)
{
	CK_RV rv = pg_svc.f->C_GetTokenInfo(slotID, pInfo);

	if (rv == CKR_OK)
		pInfo->flags |= CKF_PROTECTED_AUTHENTICATION_PATH;
	return rv;
}

static CK_RV
login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	svc_token *t = own(hSession);

	if (t == NULL)
		return CKR_SESSION_HANDLE_INVALID;
	switch (userType) {
	case CKU_USER:
		return pg_svc_login(t, pPin, ulPinLen);
	case CKU_SO:
		/* The SO administers the store directly (p11glue init-pin ...),
		 * never through the service, whose login everyone shares. */
		return CKR_USER_TYPE_INVALID;
	case CKU_CONTEXT_SPECIFIC:
		/* Per session: the client's own operation. */
		if (pPin == NULL)
			return pg_svc_login_again(t, hSession);
		return pg_svc.f->C_Login(hSession, userType, pPin, ulPinLen);
	default:
		return CKR_USER_TYPE_INVALID;
	}
}

static CK_RV
svc_login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
          CK_ULONG ulPinLen)
{
	return login(hSession, userType, pPin, ulPinLen);
}

/* One user per token: a name, when given, is the module's to check. */
static CK_RV
svc_login_user(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
               CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pUsername, CK_ULONG ulUsernameLen)
{
	if (pUsername == NULL && ulUsernameLen == 0)
		return login(hSession, userType, pPin, ulPinLen);
	if (own(hSession) == NULL)
		return CKR_SESSION_HANDLE_INVALID;
	return userType == CKU_USER || userType == CKU_SO ? CKR_USER_TYPE_INVALID
	       : pg_svc.f->C_LoginUser(hSession, userType, pPin, ulPinLen, pUsername, ulUsernameLen);
}

/* The login is the service's, shared by every client: one client's
 * logout leaves it (and answers as if its own sessions went public,
 * which the others' must not). `p11glue lock` locks. */
static CK_RV
svc_logout(CK_SESSION_HANDLE hSession)
{
	svc_token *t = own(hSession);

	if (t == NULL)
		return CKR_SESSION_HANDLE_INVALID;
	return pg_svc_unlocked(t) ? CKR_OK : CKR_USER_NOT_LOGGED_IN;
}

/* ---------------------------------------------------------------------------
 * Library-wide calls
 */

static CK_RV
svc_info(CK_INFO_PTR pInfo)
{
	return pg_svc.f->C_GetInfo(pInfo);
}

static CK_RV
svc_slot_list(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	return pg_svc.f->C_GetSlotList(tokenPresent, pSlotList, pulCount);
}

static CK_RV
svc_wait(CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved)
{
	return pg_svc.f->C_WaitForSlotEvent(flags, pSlot, pReserved);
}

/* C_Initialize, C_Finalize and the interface calls are the client
 * module's own: the worker never passes them on. */
static CK_RV
svc_not_here(void)
{
	return CKR_FUNCTION_NOT_SUPPORTED;
}

CK_FUNCTION_LIST_3_0 *
pg_svc_functions(void)
{
	/* The table from the call list; the entries written by hand after. */
#define PG_ENTRY(name, params, args, kind) PG_ENTRY_##kind(name)
#define PG_ENTRY_SESSION(name) list.name = svc_##name;
#define PG_ENTRY_INFO(name) list.name = svc_##name;
#define PG_ENTRY_SLOT(name) list.name = svc_##name;
#define PG_ENTRY_NONE(name) list.name = (CK_##name)(void (*)(void))svc_not_here;
#define PG_ENTRY_OPEN(name)
#define PG_ENTRY_CLOSE(name)
#define PG_ENTRY_CLOSE_ALL(name)
	PG_CALLS(PG_ENTRY)
#undef PG_ENTRY
	list.version = (CK_VERSION){ 3, 0 };
	list.C_GetInfo = svc_info;
	list.C_GetSlotList = svc_slot_list;
	list.C_WaitForSlotEvent = svc_wait;
	list.C_GetTokenInfo = svc_token_info;
	list.C_OpenSession = svc_open;
	list.C_CloseSession = svc_close;
	list.C_CloseAllSessions = svc_close_all;
	list.C_Login = svc_login;
	list.C_LoginUser = svc_login_user;
	list.C_Logout = svc_logout;
	return &list;
}
