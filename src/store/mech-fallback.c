/*
 * Stand-ins for the mech layer, so the store core links and runs while
 * crypto-*.c are incomplete: every pg_C_Xxx the mech layer has not
 * defined returns CKR_FUNCTION_NOT_SUPPORTED, and there are no
 * mechanisms. The definitions are weak: the mech layer's own win at
 * link time (the store is always linked whole). Generated once from
 * include/p11glue/pkcs11.h.
 */
#include "config.h"

#include "store.h"
#include "mech.h"

#define PG_WEAK __attribute__((weak))

PG_WEAK CK_RV
pg_mech_list(CK_MECHANISM_TYPE *list, CK_ULONG *count)
{
	(void)list;
	*count = 0;
	return CKR_OK;
}

PG_WEAK CK_RV
pg_mech_info(CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info)
{
	(void)type;
	(void)info;
	return CKR_MECHANISM_INVALID;
}

PG_WEAK void
pg_mech_key_free(void *key)
{
	(void)key;
}

PG_WEAK CK_RV
pg_C_EncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_Encrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pEncryptedData, CK_ULONG_PTR pulEncryptedDataLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_EncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_EncryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastEncryptedPart, CK_ULONG_PTR pulLastEncryptedPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_Decrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedData, CK_ULONG ulEncryptedDataLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastPart, CK_ULONG_PTR pulLastPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DigestInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_Digest(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DigestKey(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DigestFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_Sign(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_Verify(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DigestEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptDigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptVerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_GenerateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_GenerateKeyPair(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_ATTRIBUTE_PTR pPublicKeyTemplate, CK_ULONG ulPublicKeyAttributeCount, CK_ATTRIBUTE_PTR pPrivateKeyTemplate, CK_ULONG ulPrivateKeyAttributeCount, CK_OBJECT_HANDLE_PTR phPublicKey, CK_OBJECT_HANDLE_PTR phPrivateKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_WrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hWrappingKey, CK_OBJECT_HANDLE hKey, CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_UnwrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hUnwrappingKey, CK_BYTE_PTR pWrappedKey, CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DeriveKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hBaseKey, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SeedRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSeed, CK_ULONG ulSeedLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_GenerateRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR RandomData, CK_ULONG ulRandomLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageEncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_EncryptMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pPlaintext, CK_ULONG ulPlaintextLen, CK_BYTE_PTR pCiphertext, CK_ULONG_PTR pulCiphertextLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_EncryptMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_EncryptMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pPlaintextPart, CK_ULONG ulPlaintextPartLen, CK_BYTE_PTR pCiphertextPart, CK_ULONG_PTR pulCiphertextPartLen, CK_FLAGS flags)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageEncryptFinal(CK_SESSION_HANDLE hSession)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageDecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pCiphertext, CK_ULONG ulCiphertextLen, CK_BYTE_PTR pPlaintext, CK_ULONG_PTR pulPlaintextLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_DecryptMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pCiphertextPart, CK_ULONG ulCiphertextPartLen, CK_BYTE_PTR pPlaintextPart, CK_ULONG_PTR pulPlaintextPartLen, CK_FLAGS flags)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageDecryptFinal(CK_SESSION_HANDLE hSession)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageSignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_SignMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageSignFinal(CK_SESSION_HANDLE hSession)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageVerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_VerifyMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}

PG_WEAK CK_RV
pg_C_MessageVerifyFinal(CK_SESSION_HANDLE hSession)
{
	return pg_store_check_initialized() == CKR_OK ? CKR_FUNCTION_NOT_SUPPORTED
	                                                 : CKR_CRYPTOKI_NOT_INITIALIZED;
}
