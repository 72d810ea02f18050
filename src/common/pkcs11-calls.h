/*
 * Every PKCS#11 3.0 entry point as X(name, parameters, arguments, kind),
 * in function-list order, for code that forwards calls: the managed
 * per-caller lists, the proxy module, call logging. kind says how a
 * forwarder treats the call: SESSION (first argument a CK_SESSION_HANDLE),
 * SLOT (first argument a CK_SLOT_ID), OPEN, CLOSE and CLOSE_ALL (the
 * session life cycle), INFO (C_GetSessionInfo: a session call whose
 * answer names a slot), NONE (library-wide calls). Forwarders write the
 * NONE and life-cycle ones by hand. Kept in step with include/p11glue/pkcs11.h by
 * tests/lib/test-calls.c, which compares the two lists.
 */
#ifndef PG_PKCS11_CALLS_H
#define PG_PKCS11_CALLS_H

#define PG_CALLS_2X(X) \
	X(C_Initialize, (CK_VOID_PTR pInitArgs), (pInitArgs), NONE) \
	X(C_Finalize, (CK_VOID_PTR pReserved), (pReserved), NONE) \
	X(C_GetInfo, (CK_INFO_PTR pInfo), (pInfo), NONE) \
	X(C_GetFunctionList, (CK_FUNCTION_LIST_PTR_PTR ppFunctionList), (ppFunctionList), NONE) \
	X(C_GetSlotList, (CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount), (tokenPresent, pSlotList, pulCount), NONE) \
	X(C_GetSlotInfo, (CK_SLOT_ID slotID, CK_SLOT_INFO_PTR pInfo), (slotID, pInfo), SLOT) \
	X(C_GetTokenInfo, (CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo), (slotID, pInfo), SLOT) \
	X(C_GetMechanismList, (CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList, CK_ULONG_PTR pulCount), (slotID, pMechanismList, pulCount), SLOT) \
	X(C_GetMechanismInfo, (CK_SLOT_ID slotID, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO_PTR pInfo), (slotID, type, pInfo), SLOT) \
	X(C_InitToken, (CK_SLOT_ID slotID, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pLabel), (slotID, pPin, ulPinLen, pLabel), SLOT) \
	X(C_InitPIN, (CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen), (hSession, pPin, ulPinLen), SESSION) \
	X(C_SetPIN, (CK_SESSION_HANDLE hSession, CK_UTF8CHAR_PTR pOldPin, CK_ULONG ulOldLen, CK_UTF8CHAR_PTR pNewPin, CK_ULONG ulNewLen), (hSession, pOldPin, ulOldLen, pNewPin, ulNewLen), SESSION) \
	X(C_OpenSession, (CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication, CK_NOTIFY Notify, CK_SESSION_HANDLE_PTR phSession), (slotID, flags, pApplication, Notify, phSession), OPEN) \
	X(C_CloseSession, (CK_SESSION_HANDLE hSession), (hSession), CLOSE) \
	X(C_CloseAllSessions, (CK_SLOT_ID slotID), (slotID), CLOSE_ALL) \
	X(C_GetSessionInfo, (CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo), (hSession, pInfo), INFO) \
	X(C_GetOperationState, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState, CK_ULONG_PTR pulOperationStateLen), (hSession, pOperationState, pulOperationStateLen), SESSION) \
	X(C_SetOperationState, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pOperationState, CK_ULONG ulOperationStateLen, CK_OBJECT_HANDLE hEncryptionKey, CK_OBJECT_HANDLE hAuthenticationKey), (hSession, pOperationState, ulOperationStateLen, hEncryptionKey, hAuthenticationKey), SESSION) \
	X(C_Login, (CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen), (hSession, userType, pPin, ulPinLen), SESSION) \
	X(C_Logout, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_CreateObject, (CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phObject), (hSession, pTemplate, ulCount, phObject), SESSION) \
	X(C_CopyObject, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phNewObject), (hSession, hObject, pTemplate, ulCount, phNewObject), SESSION) \
	X(C_DestroyObject, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject), (hSession, hObject), SESSION) \
	X(C_GetObjectSize, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ULONG_PTR pulSize), (hSession, hObject, pulSize), SESSION) \
	X(C_GetAttributeValue, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount), (hSession, hObject, pTemplate, ulCount), SESSION) \
	X(C_SetAttributeValue, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount), (hSession, hObject, pTemplate, ulCount), SESSION) \
	X(C_FindObjectsInit, (CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount), (hSession, pTemplate, ulCount), SESSION) \
	X(C_FindObjects, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject, CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount), (hSession, phObject, ulMaxObjectCount, pulObjectCount), SESSION) \
	X(C_FindObjectsFinal, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_EncryptInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_Encrypt, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pEncryptedData, CK_ULONG_PTR pulEncryptedDataLen), (hSession, pData, ulDataLen, pEncryptedData, pulEncryptedDataLen), SESSION) \
	X(C_EncryptUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen), (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen), SESSION) \
	X(C_EncryptFinal, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastEncryptedPart, CK_ULONG_PTR pulLastEncryptedPartLen), (hSession, pLastEncryptedPart, pulLastEncryptedPartLen), SESSION) \
	X(C_DecryptInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_Decrypt, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedData, CK_ULONG ulEncryptedDataLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen), (hSession, pEncryptedData, ulEncryptedDataLen, pData, pulDataLen), SESSION) \
	X(C_DecryptUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen), (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen), SESSION) \
	X(C_DecryptFinal, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastPart, CK_ULONG_PTR pulLastPartLen), (hSession, pLastPart, pulLastPartLen), SESSION) \
	X(C_DigestInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism), (hSession, pMechanism), SESSION) \
	X(C_Digest, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen), (hSession, pData, ulDataLen, pDigest, pulDigestLen), SESSION) \
	X(C_DigestUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen), (hSession, pPart, ulPartLen), SESSION) \
	X(C_DigestKey, (CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hKey), (hSession, hKey), SESSION) \
	X(C_DigestFinal, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen), (hSession, pDigest, pulDigestLen), SESSION) \
	X(C_SignInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_Sign, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen), (hSession, pData, ulDataLen, pSignature, pulSignatureLen), SESSION) \
	X(C_SignUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen), (hSession, pPart, ulPartLen), SESSION) \
	X(C_SignFinal, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen), (hSession, pSignature, pulSignatureLen), SESSION) \
	X(C_SignRecoverInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_SignRecover, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen), (hSession, pData, ulDataLen, pSignature, pulSignatureLen), SESSION) \
	X(C_VerifyInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_Verify, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen), (hSession, pData, ulDataLen, pSignature, ulSignatureLen), SESSION) \
	X(C_VerifyUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen), (hSession, pPart, ulPartLen), SESSION) \
	X(C_VerifyFinal, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen), (hSession, pSignature, ulSignatureLen), SESSION) \
	X(C_VerifyRecoverInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_VerifyRecover, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen), (hSession, pSignature, ulSignatureLen, pData, pulDataLen), SESSION) \
	X(C_DigestEncryptUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen), (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen), SESSION) \
	X(C_DecryptDigestUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen), (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen), SESSION) \
	X(C_SignEncryptUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen), (hSession, pPart, ulPartLen, pEncryptedPart, pulEncryptedPartLen), SESSION) \
	X(C_DecryptVerifyUpdate, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart, CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen), (hSession, pEncryptedPart, ulEncryptedPartLen, pPart, pulPartLen), SESSION) \
	X(C_GenerateKey, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phKey), (hSession, pMechanism, pTemplate, ulCount, phKey), SESSION) \
	X(C_GenerateKeyPair, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_ATTRIBUTE_PTR pPublicKeyTemplate, CK_ULONG ulPublicKeyAttributeCount, CK_ATTRIBUTE_PTR pPrivateKeyTemplate, CK_ULONG ulPrivateKeyAttributeCount, CK_OBJECT_HANDLE_PTR phPublicKey, CK_OBJECT_HANDLE_PTR phPrivateKey), (hSession, pMechanism, pPublicKeyTemplate, ulPublicKeyAttributeCount, pPrivateKeyTemplate, ulPrivateKeyAttributeCount, phPublicKey, phPrivateKey), SESSION) \
	X(C_WrapKey, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hWrappingKey, CK_OBJECT_HANDLE hKey, CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen), (hSession, pMechanism, hWrappingKey, hKey, pWrappedKey, pulWrappedKeyLen), SESSION) \
	X(C_UnwrapKey, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hUnwrappingKey, CK_BYTE_PTR pWrappedKey, CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey), (hSession, pMechanism, hUnwrappingKey, pWrappedKey, ulWrappedKeyLen, pTemplate, ulAttributeCount, phKey), SESSION) \
	X(C_DeriveKey, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hBaseKey, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey), (hSession, pMechanism, hBaseKey, pTemplate, ulAttributeCount, phKey), SESSION) \
	X(C_SeedRandom, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSeed, CK_ULONG ulSeedLen), (hSession, pSeed, ulSeedLen), SESSION) \
	X(C_GenerateRandom, (CK_SESSION_HANDLE hSession, CK_BYTE_PTR RandomData, CK_ULONG ulRandomLen), (hSession, RandomData, ulRandomLen), SESSION) \
	X(C_GetFunctionStatus, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_CancelFunction, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_WaitForSlotEvent, (CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved), (flags, pSlot, pReserved), NONE)

#define PG_CALLS_3_0(X) \
	X(C_GetInterfaceList, (CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount), (pInterfacesList, pulCount), NONE) \
	X(C_GetInterface, (CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion, CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags), (pInterfaceName, pVersion, ppInterface, flags), NONE) \
	X(C_LoginUser, (CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pUsername, CK_ULONG ulUsernameLen), (hSession, userType, pPin, ulPinLen, pUsername, ulUsernameLen), SESSION) \
	X(C_SessionCancel, (CK_SESSION_HANDLE hSession, CK_FLAGS flags), (hSession, flags), SESSION) \
	X(C_MessageEncryptInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_EncryptMessage, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pPlaintext, CK_ULONG ulPlaintextLen, CK_BYTE_PTR pCiphertext, CK_ULONG_PTR pulCiphertextLen), (hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen, pPlaintext, ulPlaintextLen, pCiphertext, pulCiphertextLen), SESSION) \
	X(C_EncryptMessageBegin, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen), (hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen), SESSION) \
	X(C_EncryptMessageNext, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pPlaintextPart, CK_ULONG ulPlaintextPartLen, CK_BYTE_PTR pCiphertextPart, CK_ULONG_PTR pulCiphertextPartLen, CK_FLAGS flags), (hSession, pParameter, ulParameterLen, pPlaintextPart, ulPlaintextPartLen, pCiphertextPart, pulCiphertextPartLen, flags), SESSION) \
	X(C_MessageEncryptFinal, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_MessageDecryptInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_DecryptMessage, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pCiphertext, CK_ULONG ulCiphertextLen, CK_BYTE_PTR pPlaintext, CK_ULONG_PTR pulPlaintextLen), (hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen, pCiphertext, ulCiphertextLen, pPlaintext, pulPlaintextLen), SESSION) \
	X(C_DecryptMessageBegin, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData, CK_ULONG ulAssociatedDataLen), (hSession, pParameter, ulParameterLen, pAssociatedData, ulAssociatedDataLen), SESSION) \
	X(C_DecryptMessageNext, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pCiphertextPart, CK_ULONG ulCiphertextPartLen, CK_BYTE_PTR pPlaintextPart, CK_ULONG_PTR pulPlaintextPartLen, CK_FLAGS flags), (hSession, pParameter, ulParameterLen, pCiphertextPart, ulCiphertextPartLen, pPlaintextPart, pulPlaintextPartLen, flags), SESSION) \
	X(C_MessageDecryptFinal, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_MessageSignInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_SignMessage, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen), (hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, pulSignatureLen), SESSION) \
	X(C_SignMessageBegin, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen), (hSession, pParameter, ulParameterLen), SESSION) \
	X(C_SignMessageNext, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen), (hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, pulSignatureLen), SESSION) \
	X(C_MessageSignFinal, (CK_SESSION_HANDLE hSession), (hSession), SESSION) \
	X(C_MessageVerifyInit, (CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism, CK_OBJECT_HANDLE hKey), (hSession, pMechanism, hKey), SESSION) \
	X(C_VerifyMessage, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen), (hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, ulSignatureLen), SESSION) \
	X(C_VerifyMessageBegin, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen), (hSession, pParameter, ulParameterLen), SESSION) \
	X(C_VerifyMessageNext, (CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter, CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen, CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen), (hSession, pParameter, ulParameterLen, pData, ulDataLen, pSignature, ulSignatureLen), SESSION) \
	X(C_MessageVerifyFinal, (CK_SESSION_HANDLE hSession), (hSession), SESSION)

#define PG_CALLS(X) PG_CALLS_2X(X) PG_CALLS_3_0(X)

/*
 * Forwarders: after defining PG_FWD_SESSION, PG_FWD_SLOT and PG_FWD_INFO
 * (name, params, args, v3only), PG_FORWARD_CALLS expands to one of them
 * for each entry point of that kind, v3only 1 for the calls new in 3.0.
 * The library-wide calls and the session life cycle (NONE, OPEN, CLOSE,
 * CLOSE_ALL) expand to nothing: forwarders write those by hand.
 */
#define PG_FWD_NONE(name, params, args, v3only)
#define PG_FWD_OPEN(name, params, args, v3only)
#define PG_FWD_CLOSE(name, params, args, v3only)
#define PG_FWD_CLOSE_ALL(name, params, args, v3only)
#define PG_FWD_2X_(name, params, args, kind) PG_FWD_##kind(name, params, args, 0)
#define PG_FWD_3_0_(name, params, args, kind) PG_FWD_##kind(name, params, args, 1)
#define PG_FORWARD_CALLS PG_CALLS_2X(PG_FWD_2X_) PG_CALLS_3_0(PG_FWD_3_0_)

#endif /* PG_PKCS11_CALLS_H */
