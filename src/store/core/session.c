/*
 * Sessions: opening and closing, session state, operation slots for the
 * mech layer, and the legacy and 3.0 session calls (operation state,
 * cancel). Login and PINs are in login.c.
 *
 * A session is reference counted: the session table holds one
 * reference, and pg_session_acquire another while an operation runs, so
 * C_CloseSession from another thread only marks it closed; the last
 * reference frees its operations, outside the module mutex (freeing an
 * operation may drop object references, which takes the mutex).
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

pg_session *
pg_session_find_locked(CK_SESSION_HANDLE handle)
{
	return pg_map_get_handle(&pg_store.sessions, handle);
}

CK_RV
pg_session_enter(CK_SESSION_HANDLE handle, bool sync, pg_session **s)
{
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	pg_store_lock();
	*s = pg_session_find_locked(handle);
	if (*s == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if (sync)
		rv = pg_token_sync((*s)->tok);
	if (rv != CKR_OK)
		pg_store_unlock();
	return rv;
}

static void
session_free(pg_session *s, bool forked)
{
	for (size_t i = 0; i < PG_OP_COUNT; i++) {
		if (s->ops[i].state != NULL && s->ops[i].free != NULL)
			s->ops[i].free(s->ops[i].state);
	}
	if (!forked)
		pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Removes a session from the tables; returns it when the caller must
 * free it (after unlocking), else NULL. */
static pg_session *
session_close_locked(pg_session *s)
{
	pg_token *tok = s->tok;

	pg_map_remove(&pg_store.sessions, s->handle, s);
	s->closed = true;
	tok->sessions--;
	if (s->flags & CKF_RW_SESSION)
		tok->rw_sessions--;
	pg_entries_drop_session_locked(tok, s->handle);
	/* Closing an application's last session logs it out (§5.6). */
	if (tok->sessions == 0 && tok->login != PG_LOGIN_NONE)
		pg_token_logout_locked(tok);
	return --s->refs == 0 ? s : NULL;
}

void
pg_sessions_finalize(bool forked)
{
	pg_session *s, **all;
	size_t n = 0, pos = 0;

	pg_store_lock();
	all = calloc(pg_store.sessions.n + 1, sizeof(*all));
	while ((s = pg_map_each(&pg_store.sessions, &pos)) != NULL) {
		s->tok->sessions = 0;
		s->tok->rw_sessions = 0;
		s->closed = true;
		/* A thread still in an operation frees it when done. */
		if ((forked || --s->refs == 0) && all != NULL)
			all[n++] = s;
	}
	pg_map_clear(&pg_store.sessions);
	pg_store_unlock();
	for (size_t i = 0; i < n; i++)
		session_free(all[i], forked);
	free(all);
}

CK_RV
C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication, CK_NOTIFY Notify,
              CK_SESSION_HANDLE_PTR phSession)
{
	pg_token *tok;
	pg_session *s = NULL;
	CK_RV rv = pg_store_check_initialized();

	(void)pApplication;
	(void)Notify;   /* no notifications: the store never surrenders */
	if (rv != CKR_OK)
		return rv;
	pg_store_lock();
	tok = pg_token_find_locked(slotID);
	if (tok == NULL)
		rv = CKR_SLOT_ID_INVALID;
	else if (phSession == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!(flags & CKF_SERIAL_SESSION))
		rv = CKR_SESSION_PARALLEL_NOT_SUPPORTED;
	else if (tok->free_slot)
		rv = CKR_TOKEN_NOT_RECOGNIZED;
	else if (tok->broken)
		rv = CKR_DEVICE_ERROR;
	else if (!(flags & CKF_RW_SESSION) && tok->login == PG_LOGIN_SO)
		rv = CKR_SESSION_READ_WRITE_SO_EXISTS;
	else if ((s = calloc(1, sizeof(*s))) == NULL)
		rv = CKR_HOST_MEMORY;
	if (rv != CKR_OK)
		goto out;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	s->handle = ++pg_store.next_session;
	s->tok = tok;
	s->flags = flags & (CKF_RW_SESSION | CKF_SERIAL_SESSION);
	s->refs = 1;
	if (!pg_map_add(&pg_store.sessions, s->handle, s)) {
		pthread_mutex_destroy(&s->lock);
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	tok->sessions++;
	if (flags & CKF_RW_SESSION)
		tok->rw_sessions++;
	*phSession = s->handle;
	s = NULL;
out:
	free(s);
	pg_store_unlock();
	return rv;
}

CK_RV
C_CloseSession(CK_SESSION_HANDLE hSession)
{
	pg_session *s, *dead;
	CK_RV rv = pg_session_enter(hSession, false, &s);

	if (rv != CKR_OK)
		return rv;
	dead = session_close_locked(s);
	pg_store_unlock();
	if (dead != NULL)
		session_free(dead, false);
	return CKR_OK;
}

CK_RV
C_CloseAllSessions(CK_SLOT_ID slotID)
{
	pg_session **dead = NULL;
	pg_session *s;
	pg_token *tok;
	size_t n = 0, pos = 0;
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	pg_store_lock();
	tok = pg_token_find_locked(slotID);
	if (tok == NULL) {
		pg_store_unlock();
		return CKR_SLOT_ID_INVALID;
	}
	dead = calloc(tok->sessions + 1, sizeof(*dead));
	if (dead == NULL) {
		pg_store_unlock();
		return CKR_HOST_MEMORY;
	}
	/* Collect first: closing changes the table being walked. */
	while ((s = pg_map_each(&pg_store.sessions, &pos)) != NULL) {
		if (s->tok == tok && n < tok->sessions)
			dead[n++] = s;
	}
	for (size_t i = 0; i < n; i++)
		dead[i] = session_close_locked(dead[i]);
	pg_store_unlock();
	for (size_t i = 0; i < n; i++) {
		if (dead[i] != NULL)
			session_free(dead[i], false);
	}
	free(dead);
	return CKR_OK;
}

static CK_STATE
session_state_locked(const pg_session *s)
{
	bool rw = (s->flags & CKF_RW_SESSION) != 0;

	switch (s->tok->login) {
	case PG_LOGIN_USER:
		return rw ? CKS_RW_USER_FUNCTIONS : CKS_RO_USER_FUNCTIONS;
	case PG_LOGIN_SO:
		return CKS_RW_SO_FUNCTIONS;
	default:
		return rw ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION;
	}
}

CK_RV
C_GetSessionInfo(CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo)
{
	pg_session *s;
	CK_RV rv = pg_session_enter(hSession, false, &s);

	if (rv != CKR_OK)
		return rv;
	if (pInfo == NULL) {
		rv = CKR_ARGUMENTS_BAD;
	} else {
		pInfo->slotID = s->tok->slot;
		pInfo->state = session_state_locked(s);
		pInfo->flags = s->flags;
		pInfo->ulDeviceError = 0;
	}
	pg_store_unlock();
	return rv;
}

CK_RV
pg_session_acquire(CK_SESSION_HANDLE handle, pg_session **session)
{
	pg_session *s;
	bool closed;
	CK_RV rv = pg_session_enter(handle, false, &s);

	*session = NULL;
	if (rv != CKR_OK)
		return rv;
	s->refs++;
	pg_store_unlock();
	pthread_mutex_lock(&s->lock);
	pg_store_lock();
	closed = s->closed;
	pg_store_unlock();
	if (closed) {
		pg_session_release(s);
		return CKR_SESSION_CLOSED;
	}
	*session = s;
	return CKR_OK;
}

void
pg_session_release(pg_session *s)
{
	bool last;

	if (s == NULL)
		return;
	pthread_mutex_unlock(&s->lock);
	pg_store_lock();
	last = --s->refs == 0;
	pg_store_unlock();
	if (last)
		session_free(s, false);
}

pg_op *
pg_session_op(pg_session *session, pg_op_kind kind)
{
	pg_return_val_if_fail(kind < PG_OP_COUNT, NULL);
	return &session->ops[kind];
}

void
pg_session_op_end(pg_session *session, pg_op_kind kind)
{
	pg_op *op;

	pg_return_if_fail(kind < PG_OP_COUNT);
	op = &session->ops[kind];
	if (op->state != NULL && op->free != NULL)
		op->free(op->state);
	op->state = NULL;
	op->free = NULL;
	op->need_auth = false;
}

CK_SLOT_ID
pg_session_slot(const pg_session *session)
{
	return session->tok->slot;
}

bool
pg_session_is_rw(const pg_session *session)
{
	return (session->flags & CKF_RW_SESSION) != 0;
}

bool
pg_session_user_logged_in(const pg_session *session)
{
	bool user;

	pg_store_lock();
	user = session->tok->login == PG_LOGIN_USER;
	pg_store_unlock();
	return user;
}

CK_RV
pg_session_key(pg_session *session, CK_OBJECT_HANDLE handle, pg_object **key)
{
	pg_entry *e;
	CK_OBJECT_CLASS cls;
	CK_RV rv;

	*key = NULL;
	pg_store_lock();
	/*
	 * A handle this process knows needs no look at the database: keys
	 * are used far more often than other processes change them, and the
	 * look costs system calls on the signing path. An unknown handle
	 * may be another process's new object: sync and look again.
	 */
	e = pg_entry_find_locked(handle);
	if (e == NULL) {
		rv = pg_token_sync(session->tok);
		if (rv != CKR_OK)
			goto out;
		e = pg_entry_find_locked(handle);
	}
	rv = CKR_KEY_HANDLE_INVALID;
	if (e == NULL || !pg_entry_visible_locked(e, session))
		goto out;
	cls = pg_attrs_ulong(&e->obj.attrs, CKA_CLASS, CK_UNAVAILABLE_INFORMATION);
	if (cls != CKO_PUBLIC_KEY && cls != CKO_PRIVATE_KEY && cls != CKO_SECRET_KEY)
		goto out;
	/* Key material still sealed: only a login opens it. */
	rv = CKR_USER_NOT_LOGGED_IN;
	if (e->sealed)
		goto out;
	pg_object_ref_locked(&e->obj);
	*key = &e->obj;
	rv = CKR_OK;
out:
	pg_store_unlock();
	return rv;
}

static bool
any_op(const pg_session *s)
{
	for (size_t i = 0; i < PG_OP_COUNT; i++) {
		if (s->ops[i].state != NULL)
			return true;
	}
	return false;
}

CK_RV
C_GetOperationState(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState,
                    CK_ULONG_PTR pulOperationStateLen)
{
	pg_session *s;
	CK_RV rv = pg_session_acquire(hSession, &s);

	(void)pOperationState;
	if (rv != CKR_OK)
		return rv;
	if (pulOperationStateLen == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!any_op(s))
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else
		rv = CKR_STATE_UNSAVEABLE;   /* operations hold libcrypto state */
	pg_session_release(s);
	return rv;
}

CK_RV
C_SetOperationState(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState,
                    CK_ULONG ulOperationStateLen, CK_OBJECT_HANDLE hEncryptionKey,
                    CK_OBJECT_HANDLE hAuthenticationKey)
{
	pg_session *s;
	CK_RV rv = pg_session_acquire(hSession, &s);

	(void)ulOperationStateLen;
	(void)hEncryptionKey;
	(void)hAuthenticationKey;
	if (rv != CKR_OK)
		return rv;
	/* No state is ever saved, so none can be restored. */
	rv = pOperationState == NULL ? CKR_ARGUMENTS_BAD : CKR_SAVED_STATE_INVALID;
	pg_session_release(s);
	return rv;
}

static CK_RV
legacy_call(CK_SESSION_HANDLE hSession)
{
	pg_session *s;
	CK_RV rv = pg_session_enter(hSession, false, &s);

	if (rv != CKR_OK)
		return rv;
	pg_store_unlock();
	return CKR_FUNCTION_NOT_PARALLEL;
}

CK_RV
C_GetFunctionStatus(CK_SESSION_HANDLE hSession)
{
	return legacy_call(hSession);
}

CK_RV
C_CancelFunction(CK_SESSION_HANDLE hSession)
{
	return legacy_call(hSession);
}

CK_RV
C_SessionCancel(CK_SESSION_HANDLE hSession, CK_FLAGS flags)
{
	static const struct {
		CK_FLAGS flag;
		pg_op_kind kind;
	} map[] = {
		{ CKF_FIND_OBJECTS, PG_OP_FIND },
		{ CKF_ENCRYPT, PG_OP_ENCRYPT },
		{ CKF_DECRYPT, PG_OP_DECRYPT },
		{ CKF_DIGEST, PG_OP_DIGEST },
		{ CKF_SIGN, PG_OP_SIGN },
		{ CKF_VERIFY, PG_OP_VERIFY },
		{ CKF_SIGN_RECOVER, PG_OP_SIGN_RECOVER },
		{ CKF_VERIFY_RECOVER, PG_OP_VERIFY_RECOVER },
		{ CKF_MESSAGE_ENCRYPT, PG_OP_MESSAGE_ENCRYPT },
		{ CKF_MESSAGE_DECRYPT, PG_OP_MESSAGE_DECRYPT },
		{ CKF_MESSAGE_SIGN, PG_OP_MESSAGE_SIGN },
		{ CKF_MESSAGE_VERIFY, PG_OP_MESSAGE_VERIFY },
	};
	pg_session *s;
	CK_RV rv = pg_session_acquire(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	for (size_t i = 0; i < PG_N_ELEMENTS(map); i++) {
		if (flags & map[i].flag)
			pg_session_op_end(s, map[i].kind);
	}
	pg_session_release(s);
	return CKR_OK;
}
