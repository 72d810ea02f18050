/*
 * The descriptors of mechanism parameter structures on the RPC wire
 * (params-table.c), read by the encoder and decoder (params.c). Private
 * to src/rpc.
 */
#ifndef PG_RPC_PARAMS_TABLE_H
#define PG_RPC_PARAMS_TABLE_H

#include "marshal.h"

#include <stddef.h>
#include <stdint.h>

enum {
	F_ULONG,        /* CK_ULONG at off */
	F_BYTE,         /* CK_BYTE / CK_BBOOL at off */
	F_FIXED,        /* size bytes inline at off */
	F_PTR,          /* pointer at off, length in bytes in the CK_ULONG at len */
	F_PTR_BITS,     /* pointer at off, length in bits in the CK_ULONG at len */
	F_PTR_FIXED,    /* pointer at off to size bytes */
	F_NESTED,       /* pointer at off to structure number size */
	F_ARRAY,        /* pointer at off to structures number size, as many as
	                 * the CK_ULONG at len says */
	F_TEMPLATE,     /* CK_ATTRIBUTE_PTR at off, count in the CK_ULONG at len */
	F_OUT_HANDLE,   /* CK_OBJECT_HANDLE_PTR at off: the module writes a handle */
};

typedef struct {
	uint8_t kind;
	uint8_t writeback;   /* the module may write the bytes (message functions) */
	uint16_t off;
	uint16_t len;
	uint16_t size;
} field;

typedef struct {
	const char *name;
	size_t size;
	const field *fields;
	size_t n_fields;
} structure;

enum {
	S_NONE, S_ULONG, S_OAEP, S_PSS, S_RSA_AES_KEY_WRAP, S_ECDH1, S_ECDH2, S_ECMQV,
	S_ECDH_AES_KEY_WRAP, S_X942_DH1, S_X942_DH2, S_X942_MQV, S_KEA, S_EDDSA, S_GCM, S_CCM,
	S_GCM_MESSAGE, S_CCM_MESSAGE, S_AES_CTR, S_DES_CBC_DATA, S_AES_CBC_DATA, S_KDF_STRING,
	S_HKDF, S_PBKD2, S_CHACHA20, S_SALSA20, S_POLY1305, S_POLY1305_MSG, S_RC2_CBC,
	S_RC2_MAC_GENERAL, S_RC5, S_RC5_CBC, S_RC5_MAC_GENERAL, S_PRF_DATA_PARAM, S_DERIVED_KEY,
	S_SP800_108, S_SP800_108_FEEDBACK, S_COUNT
};

/* { mechanism, structure at C_*Init, structure in message functions },
 * sorted by mechanism. */
typedef struct {
	CK_MECHANISM_TYPE mech;
	uint8_t init;
	uint8_t message;
} mech_entry;

/* Every structure, by S_* number. */
extern const structure pg_rpc_structures[S_COUNT];

/* The entry of a mechanism that takes a structure, or NULL. */
const mech_entry *pg_rpc_find_mech(CK_MECHANISM_TYPE mech);

#endif /* PG_RPC_PARAMS_TABLE_H */
