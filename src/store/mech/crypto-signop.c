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

static CK_RV sign_update(void *state, const unsigned char *data, size_t len)
{
	return pg_sign_update(state, data, len);
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

/* Signature output per 5.2 (a one-shot call on a started operation:
 * CKR_OPERATION_ACTIVE); calls pg_sign_oneshot/final/recover to make it. */
static CK_RV sign_out(void *state, pg_op_out_how how, CK_BYTE_PTR data, CK_ULONG len,
                      CK_BYTE_PTR sig, CK_ULONG_PTR sig_len)
{
	pg_sign *sign = state;
	size_t need = pg_sign_len(sign), n = 0;
	CK_RV rv;

	/* 5.12: C_Sign cannot finish a multi-part operation. */
	if (how == PG_OUT_ONESHOT && pg_sign_started(sign))
		return CKR_OPERATION_ACTIVE;
	if (sig == NULL) {
		*sig_len = need;
		return CKR_OK;
	}
	if (*sig_len < need) {
		*sig_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (how == PG_OUT_ONESHOT)
		rv = pg_sign_oneshot(sign, data, len, sig, &n);
	else if (how == PG_OUT_FINAL)
		rv = pg_sign_final(sign, sig, &n);
	else
		rv = pg_sign_recover(sign, data, len, sig, &n);
	if (rv == CKR_OK)
		*sig_len = n;
	return rv;
}

/* C_Verify and C_VerifyFinal (final: data NULL, len 0). */
static CK_RV verify_call(CK_SESSION_HANDLE h, bool final, CK_BYTE_PTR data, CK_ULONG len,
                         CK_BYTE_PTR sig, CK_ULONG sig_len)
{
	pg_session *s;
	CK_RV rv;
	bool ok = (data != NULL || len == 0) && (sig != NULL || sig_len == 0);
	pg_sign *sign = pg_op_enter(h, PG_OP_VERIFY, ok, &s, &rv);

	if (sign == NULL)
		return rv;
	if (final)
		rv = pg_verify_final(sign, sig, sig_len);
	else if (pg_sign_started(sign))
		rv = CKR_OPERATION_ACTIVE;
	else
		rv = pg_verify_oneshot(sign, data, len, sig, sig_len);
	/* 5.14: a call to C_Verify or C_VerifyFinal always ends the operation. */
	pg_session_op_end(s, PG_OP_VERIFY);
	return pg_call_end(s, rv);
}

CK_RV pg_C_SignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                    CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_SIGN);
}

CK_RV pg_C_Sign(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_op_output(hSession, PG_OP_SIGN, sign_out, PG_OUT_ONESHOT, pData, ulDataLen,
	                    pSignature, pulSignatureLen);
}

CK_RV pg_C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_op_update(hSession, PG_OP_SIGN, sign_update, pPart, ulPartLen);
}

CK_RV pg_C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                     CK_ULONG_PTR pulSignatureLen)
{
	return pg_op_output(hSession, PG_OP_SIGN, sign_out, PG_OUT_FINAL, NULL, 0, pSignature,
	                    pulSignatureLen);
}

CK_RV pg_C_SignRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_SIGN_RECOVER);
}

CK_RV pg_C_SignRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                       CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_op_output(hSession, PG_OP_SIGN_RECOVER, sign_out, PG_OUT_RECOVER, pData,
	                    ulDataLen, pSignature, pulSignatureLen);
}

CK_RV pg_C_VerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                      CK_OBJECT_HANDLE hKey)
{
	return sign_init(hSession, pMechanism, hKey, PG_OP_VERIFY);
}

CK_RV pg_C_Verify(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                  CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	return verify_call(hSession, false, pData, ulDataLen, pSignature, ulSignatureLen);
}

CK_RV pg_C_VerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_op_update(hSession, PG_OP_VERIFY, sign_update, pPart, ulPartLen);
}

CK_RV pg_C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                       CK_ULONG ulSignatureLen)
{
	return verify_call(hSession, true, NULL, 0, pSignature, ulSignatureLen);
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
