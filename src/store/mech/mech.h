/*
 * p11glue-store: the PKCS#11 entry points implemented by the mech layer
 * (crypto-*.c), for the function lists of ../module.c (never installed).
 * PG_MECH_CALLS names them; each C_Xxx named there is implemented as
 * pg_C_Xxx, which the build makes the function list member of its call,
 * with an exported C_Xxx forwarding to it (gen-entry.py reads the list).
 *
 * Each pg_C_Xxx has the signature and semantics of the specification's
 * C_Xxx (PKCS#11 3.0 base specification, sections 5.8 to 5.22): the
 * argument checks come in the specification's order and every failure
 * has its exact CKR_ code. Every function is safe to call from several
 * threads; operations of one session are serialized by the session's
 * lock, and no function holds the module lock while computing.
 */
#ifndef PG_STORE_MECH_H
#define PG_STORE_MECH_H

#include "pkcs11-calls.h"

#include <p11glue/pkcs11.h>

#define PG_MECH_CALLS(M) \
	/* Encryption and decryption (5.9, 5.10). */ \
	M(C_EncryptInit) M(C_Encrypt) M(C_EncryptUpdate) M(C_EncryptFinal) \
	M(C_DecryptInit) M(C_Decrypt) M(C_DecryptUpdate) M(C_DecryptFinal) \
	/* Message digesting (5.11). */ \
	M(C_DigestInit) M(C_Digest) M(C_DigestUpdate) M(C_DigestKey) M(C_DigestFinal) \
	/* Signing and MACing, verifying, with and without recovery (5.12, 5.14). */ \
	M(C_SignInit) M(C_Sign) M(C_SignUpdate) M(C_SignFinal) \
	M(C_SignRecoverInit) M(C_SignRecover) \
	M(C_VerifyInit) M(C_Verify) M(C_VerifyUpdate) M(C_VerifyFinal) \
	M(C_VerifyRecoverInit) M(C_VerifyRecover) \
	/* Dual-function operations (5.15). */ \
	M(C_DigestEncryptUpdate) M(C_DecryptDigestUpdate) \
	M(C_SignEncryptUpdate) M(C_DecryptVerifyUpdate) \
	/* Key management and random numbers (5.16, 5.17). */ \
	M(C_GenerateKey) M(C_GenerateKeyPair) M(C_WrapKey) M(C_UnwrapKey) M(C_DeriveKey) \
	M(C_SeedRandom) M(C_GenerateRandom) \
	/* Message-based encryption, decryption, signing, verifying (3.0: 5.19-5.22). */ \
	M(C_MessageEncryptInit) M(C_EncryptMessage) M(C_EncryptMessageBegin) \
	M(C_EncryptMessageNext) M(C_MessageEncryptFinal) \
	M(C_MessageDecryptInit) M(C_DecryptMessage) M(C_DecryptMessageBegin) \
	M(C_DecryptMessageNext) M(C_MessageDecryptFinal) \
	M(C_MessageSignInit) M(C_SignMessage) M(C_SignMessageBegin) \
	M(C_SignMessageNext) M(C_MessageSignFinal) \
	M(C_MessageVerifyInit) M(C_VerifyMessage) M(C_VerifyMessageBegin) \
	M(C_VerifyMessageNext) M(C_MessageVerifyFinal)

/* pg_C_Xxx with C_Xxx's parameters, for every entry point of
 * pkcs11-calls.h: only those PG_MECH_CALLS names exist. */
#define PG_MECH_DECLARE(name, params, args, kind) CK_RV pg_##name params;
PG_CALLS(PG_MECH_DECLARE)
#undef PG_MECH_DECLARE

#endif /* PG_STORE_MECH_H */
