/*
 * p11glue-store: internal interfaces between the parts of the key store
 * module (never installed).
 *
 *   ../module.c the function lists and interfaces, C_GetInfo
 *   state.c     C_Initialize/Finalize, the module mutex, fork handling
 *   slot.c      slots, tokens, C_InitToken, mechanism list/info entry points
 *   session.c   sessions (login.c: login, PINs)
 *   object.c    object entry points (find.c: C_FindObjects*; entry.c: the
 *               in-memory objects, handles, index)
 *   attrs.c     attribute lists (rules.c, rules-derive.c: the per-class
 *               attribute rules; record.c: the stored form)
 *   db.c        one SQLite database per token (WAL), multi-process sync
 *   seal.c      the token key, PIN-derived wrapping keys, AES-256-GCM at rest
 *   core.h      the core's internals (map.c: hash maps)
 *   ../mech/   mechanisms through libcrypto (the "mech" layer below,
 *               crypto-*.c); the build generates the forwarders and the
 *               list members (mech-entry.[ch]) from pkcs11-calls.h
 *
 * Locking: one module mutex (pg_store_lock) guards the slot, session and
 * object tables. It is never held during a cryptographic operation: the
 * entry points look things up under the lock, take references, unlock,
 * and then compute. A session's operation state is guarded by the
 * session's own mutex (sessions may be used from several threads).
 */
#ifndef PG_STORE_H
#define PG_STORE_H

#include "common.h"

#include <p11glue/pkcs11.h>

#include <pthread.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------
 * Attribute lists (attrs.c). Values are owned; pg_attrs_clear wipes them.
 */
typedef struct {
	CK_ATTRIBUTE *items;     /* pValue owned (NULL when ulValueLen is 0) */
	CK_ULONG n;
	CK_ULONG cap;
	/*
	 * The values, packed in one block (items point into it, 8-byte
	 * aligned); managed by the functions below only. A pg_attrs that is
	 * all zeroes is an empty list.
	 */
	unsigned char *pool;
	size_t pool_used;
	size_t pool_size;
} pg_attrs;

void pg_attrs_clear(pg_attrs *attrs);
const CK_ATTRIBUTE *pg_attrs_find(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type);
/* Copies value in (replacing an existing one); false when out of memory. */
bool pg_attrs_set(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, const void *value,
                  CK_ULONG len) PG_MUST_CHECK;
bool pg_attrs_set_ulong(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, CK_ULONG value) PG_MUST_CHECK;
bool pg_attrs_set_bool(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, bool value) PG_MUST_CHECK;
/* Reads a CK_BBOOL / CK_ULONG attribute; the default when absent or malformed. */
bool pg_attrs_bool(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, bool dflt);
CK_ULONG pg_attrs_ulong(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, CK_ULONG dflt);
/*
 * Attributes whose value is an array of attributes (CKF_ARRAY_ATTRIBUTE:
 * CKA_WRAP_TEMPLATE, CKA_UNWRAP_TEMPLATE, CKA_DERIVE_TEMPLATE) are held
 * in a list in an encoded form, not as CK_ATTRIBUTE arrays; this decodes
 * one into *out (emptied first). False when absent or out of memory.
 */
bool pg_attrs_template(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, pg_attrs *out) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Objects (object.c). Reference counted: a lookup returns a reference the
 * caller drops with pg_object_unref, so an object destroyed by another
 * thread during an operation stays valid until the operation ends.
 */
typedef struct pg_object pg_object;

struct pg_object {
	unsigned refs;                   /* guarded by the module mutex */
	CK_OBJECT_HANDLE handle;
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE owner;         /* session objects: the creating session; 0: token object */
	int64_t row;                     /* database row of a token object */
	pg_attrs attrs;                  /* every attribute, secret values in clear only while usable */
	/*
	 * The parsed key for the mech layer (EVP_PKEY, or secret bytes), made
	 * on first use and kept while the object lives (and, for objects whose
	 * secrets are sealed, while the user is logged in). Owned by the mech
	 * layer: freed with pg_mech_key_free. Guarded by key_lock.
	 */
	pthread_mutex_t key_lock;
	void *key;
};

void pg_object_unref(pg_object *obj);

/*
 * Creates an object on the session's token from a caller template merged
 * with attributes the mech layer produced (generated key values, CKA_LOCAL,
 * CKA_KEY_GEN_MECHANISM, CKA_ALWAYS_SENSITIVE ...): applies the per-class
 * rules and defaults, checks that the session may create it (R/W session
 * and login for token/private objects), stores token objects in one
 * transaction. `generated` is consumed. For key pairs the mech layer calls
 * pg_object_create_pair so that both halves are stored in one transaction.
 *
 * With generated == NULL the call is C_CreateObject's (attributes the
 * specification says "must not be specified when created" are refused).
 * CKA_LOCAL = CK_TRUE in `generated` marks a generated key; otherwise a
 * derived or unwrapped one. CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE
 * are computed from the final CKA_SENSITIVE / CKA_EXTRACTABLE: for a
 * generated key as the specification says; for others as the value
 * given in `generated` (the base key's, for a derived key) AND the final
 * state, and CK_FALSE when not given.
 */
CK_RV pg_object_create(CK_SESSION_HANDLE session, const CK_ATTRIBUTE *tmpl,
                       CK_ULONG n_tmpl, pg_attrs *generated, CK_OBJECT_HANDLE *handle);
CK_RV pg_object_create_pair(CK_SESSION_HANDLE session,
                            const CK_ATTRIBUTE *pub_tmpl, CK_ULONG n_pub, pg_attrs *pub_generated,
                            const CK_ATTRIBUTE *priv_tmpl, CK_ULONG n_priv, pg_attrs *priv_generated,
                            CK_OBJECT_HANDLE *pub, CK_OBJECT_HANDLE *priv);

/* ---------------------------------------------------------------------------
 * Sessions (session.c).
 */
typedef enum {
	PG_OP_FIND = 0,
	PG_OP_ENCRYPT,
	PG_OP_DECRYPT,
	PG_OP_DIGEST,
	PG_OP_SIGN,
	PG_OP_VERIFY,
	PG_OP_SIGN_RECOVER,
	PG_OP_VERIFY_RECOVER,
	PG_OP_MESSAGE_ENCRYPT,
	PG_OP_MESSAGE_DECRYPT,
	PG_OP_MESSAGE_SIGN,
	PG_OP_MESSAGE_VERIFY,
	PG_OP_COUNT
} pg_op_kind;

/* An active operation; the layer that made it owns and frees it. */
typedef struct {
	void *state;
	void (*free)(void *state);
	/* The key has CKA_ALWAYS_AUTHENTICATE: no output until the user
	 * logs in with CKU_CONTEXT_SPECIFIC (cleared then, or at the end). */
	bool need_auth;
} pg_op;

typedef struct pg_session pg_session;

/*
 * Looks up a session and locks its operation state (session->lock);
 * release with pg_session_release. CKR_CRYPTOKI_NOT_INITIALIZED,
 * CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED as the specification
 * says. The module mutex is not held on return.
 */
CK_RV pg_session_acquire(CK_SESSION_HANDLE handle, pg_session **session) PG_MUST_CHECK;
void pg_session_release(pg_session *session);

/* The operation slot of a kind (valid while the session is acquired). */
pg_op *pg_session_op(pg_session *session, pg_op_kind kind);
/* Ends an operation: frees its state and empties the slot. */
void pg_session_op_end(pg_session *session, pg_op_kind kind);

CK_SLOT_ID pg_session_slot(const pg_session *session);
bool pg_session_is_rw(const pg_session *session);
/* CKU_USER logged in on the session's token (by this application). */
bool pg_session_user_logged_in(const pg_session *session);

/*
 * Looks up a key object usable from the session: visible to it (private
 * objects need a login), its secrets unsealed. Returns a reference.
 * CKR_KEY_HANDLE_INVALID when there is no such object.
 */
CK_RV pg_session_key(pg_session *session, CK_OBJECT_HANDLE handle, pg_object **key) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * The mech layer (crypto-*.c), through libcrypto.
 */

/* The mechanisms the store offers, in list order; *count in/out as in
 * C_GetMechanismList (CKR_BUFFER_TOO_SMALL rules included). */
CK_RV pg_mech_list(CK_MECHANISM_TYPE *list, CK_ULONG *count);
CK_RV pg_mech_info(CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info);

/* Frees what the mech layer stored in pg_object.key. */
void pg_mech_key_free(void *key);

/*
 * Entry points implemented by the mech layer (crypto-*.c) with the
 * specification's argument and state checks: C_EncryptInit ...
 * C_DecryptFinal, C_Digest*, C_Sign*, C_Verify*, C_SignRecover*,
 * C_VerifyRecover*, the dual-function calls, C_GenerateKey,
 * C_GenerateKeyPair, C_WrapKey, C_UnwrapKey, C_DeriveKey, C_SeedRandom,
 * C_GenerateRandom and the 3.0 message-based functions. They are defined
 * with their PKCS#11 names prefixed by pg_ (pg_C_Sign, ...) and module.c
 * puts them in the function lists.
 */

/* ---------------------------------------------------------------------------
 * Module state (state.c).
 */
void pg_store_lock(void);
void pg_store_unlock(void);
/* CKR_OK once C_Initialize succeeded, else CKR_CRYPTOKI_NOT_INITIALIZED. */
CK_RV pg_store_check_initialized(void);

#endif /* PG_STORE_H */
