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

static CK_RV sign_make(const pg_mech *mech, CK_MECHANISM_PTR m, pg_key *key, pg_op_kind kind,
                       void **state)
{
	pg_sign *sign = NULL;
	CK_RV rv = pg_sign_new(mech, m, key, kind, &sign);

	*state = sign;
	return rv;
}

static CK_RV sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE hkey,
                       pg_op_kind kind)
{
	return pg_op_init(h, m, hkey, kind, sign_make, sign_free);
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
	CK_RV rv;
	bool ok = (pData != NULL || ulDataLen == 0) && pulSignatureLen != NULL;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_SIGN, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	/* 5.12: C_Sign cannot finish a multi-part operation. */
	if (pg_sign_started(sign))
		rv = CKR_OPERATION_ACTIVE;
	else
		rv = sign_out(sign, 0, pData, ulDataLen, pSignature, pulSignatureLen);
	return pg_op_finish(s, PG_OP_SIGN, rv, pSignature);
}

CK_RV pg_C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	pg_session *s;
	CK_RV rv;
	bool ok = pPart != NULL || ulPartLen == 0;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_SIGN, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	return pg_op_finish_update(s, PG_OP_SIGN, pg_sign_update(sign, pPart, ulPartLen));
}

CK_RV pg_C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                     CK_ULONG_PTR pulSignatureLen)
{
	pg_session *s;
	CK_RV rv;
	bool ok = pulSignatureLen != NULL;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_SIGN, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	rv = sign_out(sign, 1, NULL, 0, pSignature, pulSignatureLen);
	return pg_op_finish(s, PG_OP_SIGN, rv, pSignature);
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
	CK_RV rv;
	bool ok = (pData != NULL || ulDataLen == 0) && pulSignatureLen != NULL;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_SIGN_RECOVER, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	rv = sign_out(sign, 2, pData, ulDataLen, pSignature, pulSignatureLen);
	return pg_op_finish(s, PG_OP_SIGN_RECOVER, rv, pSignature);
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
	CK_RV rv;
	bool ok = (pData != NULL || ulDataLen == 0) && (pSignature != NULL || ulSignatureLen == 0);
	pg_sign *sign = pg_op_enter(hSession, PG_OP_VERIFY, ok, &s, &rv);

	if (sign == NULL)
		return rv;
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
	CK_RV rv;
	bool ok = pPart != NULL || ulPartLen == 0;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_VERIFY, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	return pg_op_finish_update(s, PG_OP_VERIFY, pg_sign_update(sign, pPart, ulPartLen));
}

CK_RV pg_C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                       CK_ULONG ulSignatureLen)
{
	pg_session *s;
	CK_RV rv;
	bool ok = pSignature != NULL || ulSignatureLen == 0;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_VERIFY, ok, &s, &rv);

	if (sign == NULL)
		return rv;
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
	size_t n;
	CK_RV rv;
	bool ok = (pSignature != NULL || ulSignatureLen == 0) && pulDataLen != NULL;
	pg_sign *sign = pg_op_enter(hSession, PG_OP_VERIFY_RECOVER, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	if (pData == NULL) {
		/* A bound: the recovered data is at most a modulus long. */
		*pulDataLen = pg_sign_len(sign);
		return pg_call_end(s, CKR_OK);
	}
	n = *pulDataLen;
	rv = pg_verify_recover(sign, pSignature, ulSignatureLen, pData, &n);
	if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
		*pulDataLen = n;
	return pg_op_finish(s, PG_OP_VERIFY_RECOVER, rv, pData);
}
