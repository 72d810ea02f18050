/*
 * p11glue-store: the PKCS#11 entry points implemented by the mech layer
 * (crypto-*.c), for the function lists of ../module.c (never installed).
 * The build reads the pg_C_ names declared here: each becomes the
 * function list member of its call, and an exported C_Xxx forwards to
 * it (gen-entry.py).
 *
 * Each pg_C_Xxx has the signature and semantics of the specification's
 * C_Xxx (PKCS#11 3.0 base specification, sections 5.8 to 5.19): the
 * argument checks come in the specification's order and every failure
 * has its exact CKR_ code. Every function is safe to call from several
 * threads; operations of one session are serialized by the session's
 * lock, and no function holds the module lock while computing.
 */
#ifndef PG_STORE_MECH_H
#define PG_STORE_MECH_H

#include <p11glue/pkcs11.h>

/* Encryption and decryption (5.9, 5.10). */
CK_RV pg_C_EncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_OBJECT_HANDLE hKey);
CK_RV pg_C_Encrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                   CK_BYTE_PTR pEncryptedData, CK_ULONG_PTR pulEncryptedDataLen);
CK_RV pg_C_EncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen,
                         CK_BYTE_PTR pEncryptedPart, CK_ULONG_PTR pulEncryptedPartLen);
CK_RV pg_C_EncryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastEncryptedPart,
                        CK_ULONG_PTR pulLastEncryptedPartLen);
CK_RV pg_C_DecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_OBJECT_HANDLE hKey);
CK_RV pg_C_Decrypt(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedData,
                   CK_ULONG ulEncryptedDataLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen);
CK_RV pg_C_DecryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                         CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart, CK_ULONG_PTR pulPartLen);
CK_RV pg_C_DecryptFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pLastPart,
                        CK_ULONG_PTR pulLastPartLen);

/* Message digesting (5.11). */
CK_RV pg_C_DigestInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism);
CK_RV pg_C_Digest(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                  CK_BYTE_PTR pDigest, CK_ULONG_PTR pulDigestLen);
CK_RV pg_C_DigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen);
CK_RV pg_C_DigestKey(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hKey);
CK_RV pg_C_DigestFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pDigest,
                       CK_ULONG_PTR pulDigestLen);

/* Signing and MACing, verifying, with and without recovery (5.12, 5.14). */
CK_RV pg_C_SignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                    CK_OBJECT_HANDLE hKey);
CK_RV pg_C_Sign(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen);
CK_RV pg_C_SignUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen);
CK_RV pg_C_SignFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                     CK_ULONG_PTR pulSignatureLen);
CK_RV pg_C_SignRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_OBJECT_HANDLE hKey);
CK_RV pg_C_SignRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                       CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen);
CK_RV pg_C_VerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                      CK_OBJECT_HANDLE hKey);
CK_RV pg_C_Verify(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                  CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen);
CK_RV pg_C_VerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart, CK_ULONG ulPartLen);
CK_RV pg_C_VerifyFinal(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                       CK_ULONG ulSignatureLen);
CK_RV pg_C_VerifyRecoverInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                             CK_OBJECT_HANDLE hKey);
CK_RV pg_C_VerifyRecover(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSignature,
                         CK_ULONG ulSignatureLen, CK_BYTE_PTR pData, CK_ULONG_PTR pulDataLen);

/* Dual-function operations (5.15). */
CK_RV pg_C_DigestEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart,
                               CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart,
                               CK_ULONG_PTR pulEncryptedPartLen);
CK_RV pg_C_DecryptDigestUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                               CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart,
                               CK_ULONG_PTR pulPartLen);
CK_RV pg_C_SignEncryptUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pPart,
                             CK_ULONG ulPartLen, CK_BYTE_PTR pEncryptedPart,
                             CK_ULONG_PTR pulEncryptedPartLen);
CK_RV pg_C_DecryptVerifyUpdate(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pEncryptedPart,
                               CK_ULONG ulEncryptedPartLen, CK_BYTE_PTR pPart,
                               CK_ULONG_PTR pulPartLen);

/* Key management (5.16) and random numbers (5.17). */
CK_RV pg_C_GenerateKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phKey);
CK_RV pg_C_GenerateKeyPair(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_ATTRIBUTE_PTR pPublicKeyTemplate,
                           CK_ULONG ulPublicKeyAttributeCount,
                           CK_ATTRIBUTE_PTR pPrivateKeyTemplate,
                           CK_ULONG ulPrivateKeyAttributeCount,
                           CK_OBJECT_HANDLE_PTR phPublicKey, CK_OBJECT_HANDLE_PTR phPrivateKey);
CK_RV pg_C_WrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                   CK_OBJECT_HANDLE hWrappingKey, CK_OBJECT_HANDLE hKey,
                   CK_BYTE_PTR pWrappedKey, CK_ULONG_PTR pulWrappedKeyLen);
CK_RV pg_C_UnwrapKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                     CK_OBJECT_HANDLE hUnwrappingKey, CK_BYTE_PTR pWrappedKey,
                     CK_ULONG ulWrappedKeyLen, CK_ATTRIBUTE_PTR pTemplate,
                     CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey);
CK_RV pg_C_DeriveKey(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                     CK_OBJECT_HANDLE hBaseKey, CK_ATTRIBUTE_PTR pTemplate,
                     CK_ULONG ulAttributeCount, CK_OBJECT_HANDLE_PTR phKey);
CK_RV pg_C_SeedRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR pSeed, CK_ULONG ulSeedLen);
CK_RV pg_C_GenerateRandom(CK_SESSION_HANDLE hSession, CK_BYTE_PTR RandomData,
                          CK_ULONG ulRandomLen);

/* Message-based encryption, decryption, signing, verifying (3.0: 5.19-5.22). */
CK_RV pg_C_MessageEncryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                              CK_OBJECT_HANDLE hKey);
CK_RV pg_C_EncryptMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                          CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
                          CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pPlaintext,
                          CK_ULONG ulPlaintextLen, CK_BYTE_PTR pCiphertext,
                          CK_ULONG_PTR pulCiphertextLen);
CK_RV pg_C_EncryptMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                               CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
                               CK_ULONG ulAssociatedDataLen);
CK_RV pg_C_EncryptMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                              CK_ULONG ulParameterLen, CK_BYTE_PTR pPlaintextPart,
                              CK_ULONG ulPlaintextPartLen, CK_BYTE_PTR pCiphertextPart,
                              CK_ULONG_PTR pulCiphertextPartLen, CK_FLAGS flags);
CK_RV pg_C_MessageEncryptFinal(CK_SESSION_HANDLE hSession);
CK_RV pg_C_MessageDecryptInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                              CK_OBJECT_HANDLE hKey);
CK_RV pg_C_DecryptMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                          CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
                          CK_ULONG ulAssociatedDataLen, CK_BYTE_PTR pCiphertext,
                          CK_ULONG ulCiphertextLen, CK_BYTE_PTR pPlaintext,
                          CK_ULONG_PTR pulPlaintextLen);
CK_RV pg_C_DecryptMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                               CK_ULONG ulParameterLen, CK_BYTE_PTR pAssociatedData,
                               CK_ULONG ulAssociatedDataLen);
CK_RV pg_C_DecryptMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                              CK_ULONG ulParameterLen, CK_BYTE_PTR pCiphertextPart,
                              CK_ULONG ulCiphertextPartLen, CK_BYTE_PTR pPlaintextPart,
                              CK_ULONG_PTR pulPlaintextPartLen, CK_FLAGS flags);
CK_RV pg_C_MessageDecryptFinal(CK_SESSION_HANDLE hSession);
CK_RV pg_C_MessageSignInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                           CK_OBJECT_HANDLE hKey);
CK_RV pg_C_SignMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                       CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                       CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen);
CK_RV pg_C_SignMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                            CK_ULONG ulParameterLen);
CK_RV pg_C_SignMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                           CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                           CK_BYTE_PTR pSignature, CK_ULONG_PTR pulSignatureLen);
CK_RV pg_C_MessageSignFinal(CK_SESSION_HANDLE hSession);
CK_RV pg_C_MessageVerifyInit(CK_SESSION_HANDLE hSession, CK_MECHANISM_PTR pMechanism,
                             CK_OBJECT_HANDLE hKey);
CK_RV pg_C_VerifyMessage(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                         CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                         CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen);
CK_RV pg_C_VerifyMessageBegin(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                              CK_ULONG ulParameterLen);
CK_RV pg_C_VerifyMessageNext(CK_SESSION_HANDLE hSession, CK_VOID_PTR pParameter,
                             CK_ULONG ulParameterLen, CK_BYTE_PTR pData, CK_ULONG ulDataLen,
                             CK_BYTE_PTR pSignature, CK_ULONG ulSignatureLen);
CK_RV pg_C_MessageVerifyFinal(CK_SESSION_HANDLE hSession);

#endif /* PG_STORE_MECH_H */
