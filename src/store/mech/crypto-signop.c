/*
 * p11glue-store: C_Sign*, C_Verify*, C_SignRecover* and C_VerifyRecover*
 * (base specification 5.12 to 5.14).
 *
 * Every call checks, in order: the session (pg_call_begin), the
 * arguments, the operation state; then works. A call ends its operation
 * unless it only reported a length or CKR_BUFFER_TOO_SMALL (5.2).
 */
#include "crypto.h"
#include "mech.h"

static void sign_free(void *state)
{
	pg_sign_free(state);
}

static CK_RV sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE hkey,
                       pg_op_kind kind)
{
	pg_session *s;
	const pg_mech *mech;
	pg_key_use use;
	pg_key *key;
	pg_sign *sign = NULL;
	CK_RV rv = pg_call_begin(h, &s);

	if (rv != CKR_OK)
		return rv;
	/* 3.0, 5.12: a NULL mechanism ends the active operation. */
	if (m == NULL) {
		if (pg_op_state(s, kind) != NULL)
			pg_session_op_end(s, kind);
		return pg_call_end(s, CKR_OK);
	}
	if (pg_op_state(s, kind) != NULL)
		return pg_call_end(s, CKR_OPERATION_ACTIVE);
	pg_key_use_init(&use, kind);
	rv = pg_op_key(s, hkey, m, &use, &mech, &key);
	if (rv == CKR_OK) {
		rv = pg_sign_new(mech, m, key, kind, &sign);
		pg_key_unref(key);
	}
	if (rv == CKR_OK) {
		pg_op_set(s, kind, sign, sign_free);
		pg_session_op(s, kind)->need_auth = use.always_auth;
	}
	return pg_call_end(s, rv);
}

/* The active operation of a kind, or NULL with *rv set. */
static pg_sign *active(pg_session *s, pg_op_kind kind, CK_RV *rv)
{
	return pg_op_ready(s, kind, rv);
}

/* Ends a call: the operation ends too unless 5.2 keeps it. */
static CK_RV finish(pg_session *s, pg_op_kind kind, CK_RV rv, const void *out)
{
	if (!pg_op_keep(rv, out) && pg_op_state(s, kind) != NULL)
		pg_session_op_end(s, kind);
	return pg_call_end(s, rv);
}

/* Ends a call that produces no output: a failure ends the operation. */
static CK_RV finish_update(pg_session *s, pg_op_kind kind, CK_RV rv)
{
	if (rv != CKR_OK && pg_op_state(s, kind) != NULL)
		pg_session_op_end(s, kind);
	return pg_call_end(s, rv);
}

/* Ends a call on bad arguments: an active operation ends with it. */
static CK_RV bad_arguments(pg_session *s, pg_op_kind kind)
{
	return finish_update(s, kind, CKR_ARGUMENTS_BAD);
}

/* Signature output per 5.2; calls pg_sign_oneshot/final/recover to make it. */
static CK_RV sign_out(pg_sign *sign, int how, CK_BYTE_PTR data, CK_ULONG len, CK_BYTE_PTR sig,
                      CK_ULONG_PTR sig_len)
{
	size_t need = pg_sign_len(sign), n = 0;
	CK_RV rv;

	if (sig == NULL) {
		*sig_len = need;
		return CKR_OK;
	}
	if (*sig_len < need) {
		*sig_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (how == 0)
		rv = pg_sign_oneshot(sign, data, len, sig, &n);
	else if (how == 1)
		rv = pg_sign_final(sign, sig, &n);
	else
		rv = pg_sign_recover(sign, data, len, sig, &n);
	if (rv == CKR_OK)
		*sig_len = n;
	return rv;
}

CK_RV pg_C_SignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                    CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_SIGN);
}

CK_RV pg_C_Sign(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if ((pData == NULL && ulDataLen > 0) || pulSignatureLen == NULL)
		return bad_arguments(s, PG_OP_SIGN);
	sign = active(s, PG_OP_SIGN, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	/* 5.12: C_Sign cannot finish a multi-part operation. */
	if (pg_sign_started(sign))
		rv = CKR_OPERATION_ACTIVE;
	else
		rv = sign_out(sign, 0, pData, ulDataLen, pSignature, pulSignatureLen);
	return finish(s, PG_OP_SIGN, rv, pSignature);
}

CK_RV pg_C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pPart == NULL && ulPartLen > 0)
		return bad_arguments(s, PG_OP_SIGN);
	sign = active(s, PG_OP_SIGN, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	return finish_update(s, PG_OP_SIGN, pg_sign_update(sign, pPart, ulPartLen));
}

CK_RV pg_C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                     CK_ULONG_PTR pulSignatureLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pulSignatureLen == NULL)
		return bad_arguments(s, PG_OP_SIGN);
	sign = active(s, PG_OP_SIGN, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	rv = sign_out(sign, 1, NULL, 0, pSignature, pulSignatureLen);
	return finish(s, PG_OP_SIGN, rv, pSignature);
}

CK_RV pg_C_SignRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_SIGN_RECOVER);
}

CK_RV pg_C_SignRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                       CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if ((pData == NULL && ulDataLen > 0) || pulSignatureLen == NULL)
		return bad_arguments(s, PG_OP_SIGN_RECOVER);
	sign = active(s, PG_OP_SIGN_RECOVER, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	rv = sign_out(sign, 2, pData, ulDataLen, pSignature, pulSignatureLen);
	return finish(s, PG_OP_SIGN_RECOVER, rv, pSignature);
}

CK_RV pg_C_VerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                      CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_VERIFY);
}

CK_RV pg_C_Verify(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                  CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if ((pData == NULL && ulDataLen > 0) || (pSignature == NULL && ulSignatureLen > 0))
		return bad_arguments(s, PG_OP_VERIFY);
	sign = active(s, PG_OP_VERIFY, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	if (pg_sign_started(sign))
		rv = CKR_OPERATION_ACTIVE;
	else
		rv = pg_verify_oneshot(sign, pData, ulDataLen, pSignature, ulSignatureLen);
	/* 5.14: a call to C_Verify always ends the operation. */
	pg_session_op_end(s, PG_OP_VERIFY);
	return pg_call_end(s, rv);
}

CK_RV pg_C_VerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pPart == NULL && ulPartLen > 0)
		return bad_arguments(s, PG_OP_VERIFY);
	sign = active(s, PG_OP_VERIFY, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	return finish_update(s, PG_OP_VERIFY, pg_sign_update(sign, pPart, ulPartLen));
}

CK_RV pg_C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                       CK_ULONG ulSignatureLen)
{
	pg_session *s;
	pg_sign *sign;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if (pSignature == NULL && ulSignatureLen > 0)
		return bad_arguments(s, PG_OP_VERIFY);
	sign = active(s, PG_OP_VERIFY, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	rv = pg_verify_final(sign, pSignature, ulSignatureLen);
	pg_session_op_end(s, PG_OP_VERIFY);
	return pg_call_end(s, rv);
}

CK_RV pg_C_VerifyRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                             CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_VERIFY_RECOVER);
}

CK_RV pg_C_VerifyRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                         CK_ULONG ulSignatureLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	pg_session *s;
	pg_sign *sign;
	size_t n;
	CK_RV rv = pg_call_begin(hSession, &s);

	if (rv != CKR_OK)
		return rv;
	if ((pSignature == NULL && ulSignatureLen > 0) || pulDataLen == NULL)
		return bad_arguments(s, PG_OP_VERIFY_RECOVER);
	sign = active(s, PG_OP_VERIFY_RECOVER, &rv);
	if (sign == NULL)
		return pg_call_end(s, rv);
	if (pData == NULL) {
		/* A bound: the recovered data is at most a modulus long. */
		*pulDataLen = pg_sign_len(sign);
		return pg_call_end(s, CKR_OK);
	}
	n = *pulDataLen;
	rv = pg_verify_recover(sign, pSignature, ulSignatureLen, pData, &n);
	if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
		*pulDataLen = n;
	return finish(s, PG_OP_VERIFY_RECOVER, rv, pData);
}
