/*
 * The function list members (module.c): the core's C_Xxx and the mech
 * layer's pg_C_Xxx (declared in mech.h). Generated once from the entry
 * point lists of include/p11glue/pkcs11.h.
 */
#ifndef PG_STORE_MECH_ENTRY_H
#define PG_STORE_MECH_ENTRY_H

#include "mech.h"

/*
 * The members of CK_FUNCTION_LIST (the 2.x part of both lists), for
 * module.c: the core's C_Xxx and the mech layer's pg_C_Xxx. get_info
 * is the C_GetInfo of the list (each list reports its own version).
 */
#define PG_STORE_FUNCTIONS_2X(get_info) \
	.C_Initialize = C_Initialize, \
	.C_Finalize = C_Finalize, \
	.C_GetInfo = get_info, \
	.C_GetFunctionList = C_GetFunctionList, \
	.C_GetSlotList = C_GetSlotList, \
	.C_GetSlotInfo = C_GetSlotInfo, \
	.C_GetTokenInfo = C_GetTokenInfo, \
	.C_GetMechanismList = C_GetMechanismList, \
	.C_GetMechanismInfo = C_GetMechanismInfo, \
	.C_InitToken = C_InitToken, \
	.C_InitPIN = C_InitPIN, \
	.C_SetPIN = C_SetPIN, \
	.C_OpenSession = C_OpenSession, \
	.C_CloseSession = C_CloseSession, \
	.C_CloseAllSessions = C_CloseAllSessions, \
	.C_GetSessionInfo = C_GetSessionInfo, \
	.C_GetOperationState = C_GetOperationState, \
	.C_SetOperationState = C_SetOperationState, \
	.C_Login = C_Login, \
	.C_Logout = C_Logout, \
	.C_CreateObject = C_CreateObject, \
	.C_CopyObject = C_CopyObject, \
	.C_DestroyObject = C_DestroyObject, \
	.C_GetObjectSize = C_GetObjectSize, \
	.C_GetAttributeValue = C_GetAttributeValue, \
	.C_SetAttributeValue = C_SetAttributeValue, \
	.C_FindObjectsInit = C_FindObjectsInit, \
	.C_FindObjects = C_FindObjects, \
	.C_FindObjectsFinal = C_FindObjectsFinal, \
	.C_EncryptInit = pg_C_EncryptInit, \
	.C_Encrypt = pg_C_Encrypt, \
	.C_EncryptUpdate = pg_C_EncryptUpdate, \
	.C_EncryptFinal = pg_C_EncryptFinal, \
	.C_DecryptInit = pg_C_DecryptInit, \
	.C_Decrypt = pg_C_Decrypt, \
	.C_DecryptUpdate = pg_C_DecryptUpdate, \
	.C_DecryptFinal = pg_C_DecryptFinal, \
	.C_DigestInit = pg_C_DigestInit, \
	.C_Digest = pg_C_Digest, \
	.C_DigestUpdate = pg_C_DigestUpdate, \
	.C_DigestKey = pg_C_DigestKey, \
	.C_DigestFinal = pg_C_DigestFinal, \
	.C_SignInit = pg_C_SignInit, \
	.C_Sign = pg_C_Sign, \
	.C_SignUpdate = pg_C_SignUpdate, \
	.C_SignFinal = pg_C_SignFinal, \
	.C_SignRecoverInit = pg_C_SignRecoverInit, \
	.C_SignRecover = pg_C_SignRecover, \
	.C_VerifyInit = pg_C_VerifyInit, \
	.C_Verify = pg_C_Verify, \
	.C_VerifyUpdate = pg_C_VerifyUpdate, \
	.C_VerifyFinal = pg_C_VerifyFinal, \
	.C_VerifyRecoverInit = pg_C_VerifyRecoverInit, \
	.C_VerifyRecover = pg_C_VerifyRecover, \
	.C_DigestEncryptUpdate = pg_C_DigestEncryptUpdate, \
	.C_DecryptDigestUpdate = pg_C_DecryptDigestUpdate, \
	.C_SignEncryptUpdate = pg_C_SignEncryptUpdate, \
	.C_DecryptVerifyUpdate = pg_C_DecryptVerifyUpdate, \
	.C_GenerateKey = pg_C_GenerateKey, \
	.C_GenerateKeyPair = pg_C_GenerateKeyPair, \
	.C_WrapKey = pg_C_WrapKey, \
	.C_UnwrapKey = pg_C_UnwrapKey, \
	.C_DeriveKey = pg_C_DeriveKey, \
	.C_SeedRandom = pg_C_SeedRandom, \
	.C_GenerateRandom = pg_C_GenerateRandom, \
	.C_GetFunctionStatus = C_GetFunctionStatus, \
	.C_CancelFunction = C_CancelFunction, \
	.C_WaitForSlotEvent = C_WaitForSlotEvent,

/* The members new in CK_FUNCTION_LIST_3_0. */
#define PG_STORE_FUNCTIONS_3_0 \
	.C_GetInterfaceList = C_GetInterfaceList, \
	.C_GetInterface = C_GetInterface, \
	.C_LoginUser = C_LoginUser, \
	.C_SessionCancel = C_SessionCancel, \
	.C_MessageEncryptInit = pg_C_MessageEncryptInit, \
	.C_EncryptMessage = pg_C_EncryptMessage, \
	.C_EncryptMessageBegin = pg_C_EncryptMessageBegin, \
	.C_EncryptMessageNext = pg_C_EncryptMessageNext, \
	.C_MessageEncryptFinal = pg_C_MessageEncryptFinal, \
	.C_MessageDecryptInit = pg_C_MessageDecryptInit, \
	.C_DecryptMessage = pg_C_DecryptMessage, \
	.C_DecryptMessageBegin = pg_C_DecryptMessageBegin, \
	.C_DecryptMessageNext = pg_C_DecryptMessageNext, \
	.C_MessageDecryptFinal = pg_C_MessageDecryptFinal, \
	.C_MessageSignInit = pg_C_MessageSignInit, \
	.C_SignMessage = pg_C_SignMessage, \
	.C_SignMessageBegin = pg_C_SignMessageBegin, \
	.C_SignMessageNext = pg_C_SignMessageNext, \
	.C_MessageSignFinal = pg_C_MessageSignFinal, \
	.C_MessageVerifyInit = pg_C_MessageVerifyInit, \
	.C_VerifyMessage = pg_C_VerifyMessage, \
	.C_VerifyMessageBegin = pg_C_VerifyMessageBegin, \
	.C_VerifyMessageNext = pg_C_VerifyMessageNext, \
	.C_MessageVerifyFinal = pg_C_MessageVerifyFinal,

#endif /* PG_STORE_MECH_ENTRY_H */
