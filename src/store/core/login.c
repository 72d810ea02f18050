/*
 * Login and PINs: C_Login, C_LoginUser, C_Logout, C_InitPIN, C_SetPIN.
 *
 * A PIN is checked by unwrapping the token key with a key derived from
 * it (seal.c); the KDF takes tens of milliseconds, so the module mutex is
 * released meanwhile. Wrong PINs are counted in the token database (so
 * every process sees the count and a restart does not reset it): the
 * user (or SO) PIN locks after the token's max_fails consecutive
 * failures; a correct PIN resets the count, and the SO unlocks the user
 * PIN with C_InitPIN.
 */
#include "config.h"

#include "core.h"

#include <string.h>

/*
 * Stores the outcome of a PIN check (no write when nothing changes). A
 * write-protected token cannot count: the check's own answer stands
 * (whoever can make the file read-only can copy it, too).
 */
static CK_RV
record_attempt(pg_token *tok, CK_USER_TYPE user, bool ok)
{
	CK_RV rv = pg_token_sync(tok);

	if (rv != CKR_OK)
		return rv;
	if (ok && tok->pins[user].fails == 0)
		return CKR_OK;
	rv = pg_token_begin_write(tok);
	if (rv == CKR_TOKEN_WRITE_PROTECTED)
		return CKR_OK;
	if (rv != CKR_OK)
		return rv;
	rv = pg_db_set_fails(tok, user, ok ? 0 : tok->pins[user].fails + 1);
	if (rv == CKR_OK)
		return pg_db_commit(tok);
	pg_db_rollback(tok);
	return rv;
}

CK_RV
pg_pin_verify_locked(pg_token *tok, CK_USER_TYPE user, const CK_UTF8CHAR *pin, CK_ULONG len,
                     pg_token_key **key)
{
	unsigned gen = pg_store.generation;
	int64_t epoch = tok->epoch;
	pg_pin_wrap wrap = tok->pins[user];
	CK_RV rv, recorded;

	*key = NULL;
	if (!wrap.set)
		return user == CKU_USER ? CKR_USER_PIN_NOT_INITIALIZED : CKR_DEVICE_ERROR;
	if (wrap.fails >= tok->max_fails)
		return CKR_PIN_LOCKED;
	/* No PIN of another length exists; such a try is not counted. */
	if (len < PG_PIN_MIN || len > PG_PIN_MAX)
		return CKR_PIN_INCORRECT;
	pg_store_unlock();
	rv = pg_token_key_unwrap(&wrap, user, pin, len, key);
	pg_memzero(&wrap, sizeof(wrap));
	pg_store_lock();
	if (!pg_store.initialized || pg_store.generation != gen) {
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
		goto fail;
	}
	if (rv != CKR_OK && rv != CKR_PIN_INCORRECT)
		goto fail;
	if (tok->epoch != epoch) {
		/* The token was initialised anew meanwhile: a different key. */
		rv = CKR_PIN_INCORRECT;
		goto fail;
	}
	recorded = record_attempt(tok, user, rv == CKR_OK);
	if (recorded != CKR_OK)
		rv = recorded;
	if (rv == CKR_OK)
		return CKR_OK;
fail:
	pg_token_key_free(*key);
	*key = NULL;
	return rv;
}

static CK_RV
login_locked(pg_session *s, CK_USER_TYPE user, const CK_UTF8CHAR *pin, CK_ULONG len)
{
	pg_token *tok = s->tok;
	pg_token_key *key = NULL;
	pg_login want = user == CKU_SO ? PG_LOGIN_SO : PG_LOGIN_USER;
	pg_sealer *sealer;
	CK_RV rv;

	if (user != CKU_SO && user != CKU_USER && user != CKU_CONTEXT_SPECIFIC)
		return CKR_USER_TYPE_INVALID;
	if (user == CKU_CONTEXT_SPECIFIC) {
		/* Re-authentication for a key with CKA_ALWAYS_AUTHENTICATE. */
		if (tok->login != PG_LOGIN_USER)
			return CKR_USER_NOT_LOGGED_IN;
		rv = pg_pin_verify_locked(tok, CKU_USER, pin, len, &key);
		pg_token_key_free(key);
		/* A logout while the KDF ran (without the mutex) wins. */
		if (rv == CKR_OK && tok->login != PG_LOGIN_USER)
			rv = CKR_USER_NOT_LOGGED_IN;
		return rv;
	}
	if (tok->login == want)
		return CKR_USER_ALREADY_LOGGED_IN;
	if (tok->login != PG_LOGIN_NONE)
		return CKR_USER_ANOTHER_ALREADY_LOGGED_IN;
	if (user == CKU_SO && tok->sessions > tok->rw_sessions)
		return CKR_SESSION_READ_ONLY_EXISTS;
	rv = pg_pin_verify_locked(tok, user, pin, len, &key);
	if (rv != CKR_OK)
		return rv;
	/* Another thread may have logged in while the KDF ran. */
	if (tok->login != PG_LOGIN_NONE) {
		pg_token_key_free(key);
		return tok->login == want ? CKR_USER_ALREADY_LOGGED_IN
		                          : CKR_USER_ANOTHER_ALREADY_LOGGED_IN;
	}
	tok->key = key;
	tok->login = want;
	if (want != PG_LOGIN_USER)
		return CKR_OK;
	sealer = pg_sealer_new(key);
	rv = sealer ? pg_entries_reseal_locked(tok, sealer) : CKR_HOST_MEMORY;
	pg_sealer_free(sealer);
	if (rv != CKR_OK)
		pg_token_logout_locked(tok);
	return rv;
}

/*
 * C_Login(CKU_CONTEXT_SPECIFIC): the PIN again for the operation just
 * initialized with a CKA_ALWAYS_AUTHENTICATE key, which may then give
 * its output. The session's operation lock is taken first, as for
 * every operation call, then the module mutex.
 */
static CK_RV
context_login(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	pg_session *s;
	bool waiting = false;
	CK_RV rv = pg_session_acquire(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	for (int k = 0; k < PG_OP_COUNT; k++)
		waiting |= pg_session_op(s, (pg_op_kind)k)->need_auth;
	pg_store_lock();
	rv = pg_token_sync(s->tok);
	if (rv == CKR_OK && pPin == NULL)
		rv = CKR_ARGUMENTS_BAD;
	if (rv == CKR_OK && s->tok->login != PG_LOGIN_USER)
		rv = CKR_USER_NOT_LOGGED_IN;
	if (rv == CKR_OK && !waiting)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	if (rv == CKR_OK)
		rv = login_locked(s, CKU_CONTEXT_SPECIFIC, pPin, ulPinLen);
	pg_store_unlock();
	for (int k = 0; rv == CKR_OK && k < PG_OP_COUNT; k++)
		pg_session_op(s, (pg_op_kind)k)->need_auth = false;
	pg_session_release(s);
	return rv;
}

static CK_RV
login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	pg_session *s;
	CK_RV rv = pg_store_check_initialized();

	if (rv == CKR_OK && userType == CKU_CONTEXT_SPECIFIC)
		return context_login(hSession, pPin, ulPinLen);
	rv = pg_session_enter(hSession, true, &s);
	if (rv != CKR_OK)
		return rv;
	rv = pPin == NULL ? CKR_ARGUMENTS_BAD : login_locked(s, userType, pPin, ulPinLen);
	pg_store_unlock();
	return rv;
}

CK_RV
C_Login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
        CK_ULONG ulPinLen)
{
	return login(hSession, userType, pPin, ulPinLen);
}

CK_RV
C_LoginUser(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
            CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pUsername, CK_ULONG ulUsernameLen)
{
	/* One user per token: the name is checked for form only. */
	if (pUsername == NULL && ulUsernameLen > 0) {
		CK_RV rv = pg_store_check_initialized();
		return rv != CKR_OK ? rv : CKR_ARGUMENTS_BAD;
	}
	return login(hSession, userType, pPin, ulPinLen);
}

CK_RV
C_Logout(CK_SESSION_HANDLE hSession)
{
	pg_session *s;
	CK_RV rv = pg_session_enter(hSession, false, &s);

	if (rv != CKR_OK)
		return rv;
	if (s->tok->login == PG_LOGIN_NONE)
		rv = CKR_USER_NOT_LOGGED_IN;
	else
		pg_token_logout_locked(s->tok);
	pg_store_unlock();
	return rv;
}

/* Wraps `key` under a new PIN (mutex released) and stores it. */
static CK_RV
store_pin_locked(pg_token *tok, CK_USER_TYPE user, pg_token_key *key, const CK_UTF8CHAR *pin,
                 CK_ULONG len)
{
	unsigned gen = pg_store.generation;
	unsigned log2n = pg_store.kdf_log2n;
	pg_pin_wrap wrap;
	CK_RV rv;

	pg_store_unlock();
	rv = pg_token_key_wrap(key, user, pin, len, log2n, &wrap);
	pg_store_lock();
	if (rv == CKR_OK && (!pg_store.initialized || pg_store.generation != gen))
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	if (rv == CKR_OK)
		rv = pg_token_begin_write(tok);
	if (rv == CKR_OK) {
		rv = pg_db_set_pin(tok, user, &wrap);
		if (rv == CKR_OK)
			rv = pg_db_commit(tok);
		else
			pg_db_rollback(tok);
	}
	pg_memzero(&wrap, sizeof(wrap));
	return rv;
}

CK_RV
C_InitPIN(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen)
{
	pg_session *s;
	pg_token_key *key = NULL;
	CK_RV rv = pg_session_enter(hSession, true, &s);

	if (rv != CKR_OK)
		return rv;
	if (!(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else if (s->tok->login != PG_LOGIN_SO)
		rv = CKR_USER_NOT_LOGGED_IN;
	else if (pPin == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (ulPinLen < PG_PIN_MIN || ulPinLen > PG_PIN_MAX)
		rv = CKR_PIN_LEN_RANGE;
	else if ((key = pg_token_key_dup(s->tok->key)) == NULL)
		rv = CKR_HOST_MEMORY;
	else
		rv = store_pin_locked(s->tok, CKU_USER, key, pPin, ulPinLen);
	pg_store_unlock();
	pg_token_key_free(key);
	return rv;
}

CK_RV
C_SetPIN(CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pOldPin, CK_ULONG ulOldLen,
         CK_UTF8CHAR_PTR pNewPin, CK_ULONG ulNewLen)
{
	pg_session *s;
	pg_token *tok = NULL;
	pg_token_key *key = NULL;
	CK_USER_TYPE user;
	CK_RV rv = pg_session_enter(hSession, true, &s);

	if (rv != CKR_OK)
		return rv;
	/* §5.6: the SO's PIN in an SO session, else the user's (logged in or not). */
	user = s->tok->login == PG_LOGIN_SO ? CKU_SO : CKU_USER;
	if (!(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else if (pOldPin == NULL || pNewPin == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (ulNewLen < PG_PIN_MIN || ulNewLen > PG_PIN_MAX)
		rv = CKR_PIN_LEN_RANGE;
	else
		rv = pg_pin_verify_locked(tok = s->tok, user, pOldPin, ulOldLen, &key);
	/* s may be closed while the KDF ran; the token stays. */
	if (rv == CKR_OK)
		rv = store_pin_locked(tok, user, key, pNewPin, ulNewLen);
	pg_store_unlock();
	pg_token_key_free(key);
	return rv;
}
