/*
 * PKCS#11 values on the RPC wire: attribute templates, attribute value
 * requests and results (C_GetAttributeValue), mechanisms with their
 * parameters, the CK_*_INFO structures, and message-function parameters.
 *
 * Encoders take the caller's native values; decoders build native values
 * in an arena (freed, and wiped, at once) so that a module can be called
 * with them. Decoders check every length and count against the input and
 * against each other (a pointer's data must be as long as the length
 * field next to it says).
 */
#ifndef PG_RPC_MARSHAL_H
#define PG_RPC_MARSHAL_H

#include "wire.h"

/* ---------------------------------------------------------------------------
 * Arenas: every native value a decoder builds for one call
 */
typedef struct pg_rpc_arena pg_rpc_arena;

/* n zeroed bytes that live until pg_rpc_arena_free; NULL when out of memory. */
void *pg_rpc_arena_alloc(pg_rpc_arena **arena, size_t n);
/* Wipes and frees everything (NULL is fine). */
void pg_rpc_arena_free(pg_rpc_arena *arena);

/* ---------------------------------------------------------------------------
 * Attributes
 */

/* How an attribute's value is carried (for 32/64-bit CK_ULONG sizes). */
enum { PG_RPC_ATTR_BYTES, PG_RPC_ATTR_ULONG, PG_RPC_ATTR_ULONGS, PG_RPC_ATTR_TEMPLATE };
int pg_rpc_attr_kind(CK_ATTRIBUTE_TYPE type);

/* An input template (C_CreateObject, C_FindObjectsInit, ...). */
void pg_rpc_add_template(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count);
bool pg_rpc_get_template(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl,
                         CK_ULONG *count) PG_MUST_CHECK;

/* C_GetAttributeValue: what the caller asks (types, buffers and sizes)... */
void pg_rpc_add_attr_request(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count);
bool pg_rpc_get_attr_request(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl,
                             CK_ULONG *count) PG_MUST_CHECK;
/* ... and what the module answered, per attribute. */
void pg_rpc_add_attr_result(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count);
/* Writes the answer into the caller's template (never past its buffers). */
bool pg_rpc_get_attr_result(pg_rpc_in *in, CK_ATTRIBUTE *tmpl, CK_ULONG count) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Mechanisms and parameters
 */

/* A mechanism (NULL allowed); its parameter as a known structure, flat
 * bytes, or NULL. */
void pg_rpc_add_mechanism(pg_rpc_out *out, const CK_MECHANISM *mech);
bool pg_rpc_get_mechanism(pg_rpc_in *in, pg_rpc_arena **arena, CK_MECHANISM **mech) PG_MUST_CHECK;

/*
 * After C_DeriveKey: the handles the module wrote into the parameter
 * (SP 800-108's additional derived keys), server to client, into the
 * caller's CK_OBJECT_HANDLE variables. Nothing for other parameters.
 */
void pg_rpc_add_mechanism_result(pg_rpc_out *out, const CK_MECHANISM *mech);
bool pg_rpc_get_mechanism_result(pg_rpc_in *in, const CK_MECHANISM *mech) PG_MUST_CHECK;

/*
 * The pParameter of a message function (C_EncryptMessage ...), whose
 * structure depends on the mechanism given to C_Message*Init. After the
 * call the server sends back what the module may have written into it
 * (generated IVs, tags), and the client copies that into the caller's
 * buffers.
 */
void pg_rpc_add_msg_param(pg_rpc_out *out, CK_MECHANISM_TYPE mech, const void *param,
                          CK_ULONG len);
/* *kind tells pg_rpc_add_msg_param_result what the parameter was. */
bool pg_rpc_get_msg_param(pg_rpc_in *in, pg_rpc_arena **arena, void **param, CK_ULONG *len,
                          int *kind) PG_MUST_CHECK;
void pg_rpc_add_msg_param_result(pg_rpc_out *out, int kind, const void *param, CK_ULONG len);
bool pg_rpc_get_msg_param_result(pg_rpc_in *in, CK_MECHANISM_TYPE mech, void *param,
                                 CK_ULONG len) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Information structures
 */
void pg_rpc_add_info(pg_rpc_out *out, const CK_INFO *info);
bool pg_rpc_get_info(pg_rpc_in *in, CK_INFO *info);
void pg_rpc_add_slot_info(pg_rpc_out *out, const CK_SLOT_INFO *info);
bool pg_rpc_get_slot_info(pg_rpc_in *in, CK_SLOT_INFO *info);
void pg_rpc_add_token_info(pg_rpc_out *out, const CK_TOKEN_INFO *info);
bool pg_rpc_get_token_info(pg_rpc_in *in, CK_TOKEN_INFO *info);
void pg_rpc_add_session_info(pg_rpc_out *out, const CK_SESSION_INFO *info);
bool pg_rpc_get_session_info(pg_rpc_in *in, CK_SESSION_INFO *info);
void pg_rpc_add_mechanism_info(pg_rpc_out *out, const CK_MECHANISM_INFO *info);
bool pg_rpc_get_mechanism_info(pg_rpc_in *in, CK_MECHANISM_INFO *info);

#endif /* PG_RPC_MARSHAL_H */
