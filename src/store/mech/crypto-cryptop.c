/*
 * p11glue-store: C_Encrypt* and C_Decrypt* (base specification 5.9, 5.10).
 *
 * Every call checks, in order: the session, the arguments, the
 * operation state (pg_op_init, pg_op_enter); then works. Output follows 5.2: a
 * NULL buffer asks for the length, a short one gets CKR_BUFFER_TOO_SMALL,
 * and both keep the operation; a single-part or final call that does
 * anything else ends it, as does any failure of an update.
 */
#include "crypto.h"
#include "mech.h"

static void cipher_free(void *state)
{
	pg_cipher_free(state);
}

static CK_RV cipher_make(const pg_mech *mech, CK_MECHANISM_PTR m, pg_key *key, pg_op_kind kind,
                         void **state)
{
	pg_cipher *c = NULL;
	CK_RV rv = pg_cipher_new(mech, m, key, kind == PG_OP_ENCRYPT, &c);

	*state = c;
	return rv;
}

/* Single-part and final output per 5.2 (a single-part call on a started
 * operation: CKR_OPERATION_ACTIVE). */
static CK_RV cipher_out(void *state, pg_op_out_how how, CK_BYTE_PTR in, CK_ULONG in_len,
                        CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_cipher *c = state;
	size_t n = out != NULL ? *out_len : 0;
	CK_RV rv;

	/* 5.9: C_Encrypt cannot finish a multi-part operation. */
	if (how == PG_OUT_ONESHOT && pg_cipher_started(c))
		return CKR_OPERATION_ACTIVE;
	if (how == PG_OUT_ONESHOT)
		rv = pg_cipher_oneshot(c, in, in_len, out, &n);
	else
		rv = pg_cipher_final(c, out, &n);
	if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
		*out_len = n;
	return rv;
}

CK_RV pg_crypt_update(pg_session *s, pg_op_kind kind, CK_BYTE_PTR in, CK_ULONG in_len,
                      CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	CK_RV rv;
	pg_cipher *c = pg_op_ready(s, kind, &rv);
	size_t n;

	if (c == NULL)
		return rv;
	n = out != NULL ? *out_len : 0;
	rv = pg_cipher_update(c, in, in_len, out, &n);
	if (rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL)
		*out_len = n;
	if (rv != CKR_OK && rv != CKR_BUFFER_TOO_SMALL)
		pg_session_op_end(s, kind);
	return rv;
}

static CK_RV crypt_update(CK_SESSION_HANDLE h, pg_op_kind kind, CK_BYTE_PTR in, CK_ULONG in_len,
                          CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	pg_session *s;
	CK_RV rv = pg_call_begin(h, &s);

	if (rv != CKR_OK)
		return rv;
	if ((in == NULL && in_len > 0) || out_len == NULL)
		return pg_op_finish_update(s, kind, CKR_ARGUMENTS_BAD);
	return pg_call_end(s, pg_crypt_update(s, kind, in, in_len, out, out_len));
}

CK_RV pg_C_EncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_OBJECT_HANDLE hKey)
{
	return pg_op_init(hSession, pMechanism, hKey, PG_OP_ENCRYPT, cipher_make, cipher_free);
}

CK_RV pg_C_Encrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                   CK_BYTE_PTR pEncryptedData, CK_ULONG_PTR pulEncryptedDataLen)
{
	return pg_op_output(hSession, PG_OP_ENCRYPT, cipher_out, PG_OUT_ONESHOT, pData, ulDataLen,
	                    pEncryptedData, pulEncryptedDataLen);
}

CK_RV pg_C_EncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
                         CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return crypt_update(hSession, PG_OP_ENCRYPT, pPart, ulPartLen, pEncryptedPart,
	                    pulEncryptedPartLen);
}

CK_RV pg_C_EncryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastEncryptedPart,
                        CK_ULONG_PTR pulLastEncryptedPartLen)
{
	return pg_op_output(hSession, PG_OP_ENCRYPT, cipher_out, PG_OUT_FINAL, NULL, 0,
	                    pLastEncryptedPart, pulLastEncryptedPartLen);
}

CK_RV pg_C_DecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_OBJECT_HANDLE hKey)
{
	return pg_op_init(hSession, pMechanism, hKey, PG_OP_DECRYPT, cipher_make, cipher_free);
}

CK_RV pg_C_Decrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedData,
                   CK_ULONG ulEncryptedDataLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	return pg_op_output(hSession, PG_OP_DECRYPT, cipher_out, PG_OUT_ONESHOT, pEncryptedData,
	                    ulEncryptedDataLen, pData, pulDataLen);
}

CK_RV pg_C_DecryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                         CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	return crypt_update(hSession, PG_OP_DECRYPT, pEncryptedPart, ulEncryptedPartLen, pPart,
	                    pulPartLen);
}

CK_RV pg_C_DecryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastPart,
                        CK_ULONG_PTR pulLastPartLen)
{
	return pg_op_output(hSession, PG_OP_DECRYPT, cipher_out, PG_OUT_FINAL, NULL, 0, pLastPart,
	                    pulLastPartLen);
}
