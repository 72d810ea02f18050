/*
 * The trust module's shared state (trust-state.c), under the library,
 * slot and session calls (trust-module.c) and the object calls
 * (trust-object.c). Everything below is guarded by
 * pg_tm.lock but `initialized`, which is atomic so that entry points can
 * refuse early without the lock.
 */
#ifndef PG_TRUST_MODULE_H
#define PG_TRUST_MODULE_H

#include "lock.h"
#include "trust-store.h"

#include <limits.h>
#include <stdatomic.h>

#define PG_TM_MAX_TOKENS 64
#define PG_TM_SLOT_BASE 18

/* Session handles: the table index + 1 in the low bits, a serial above
 * it so that a closed session's handle is not taken for a new one. */
#define PG_TM_SESSION_BITS 16
#define PG_TM_SESSION_MASK ((CK_ULONG)((1UL << PG_TM_SESSION_BITS) - 1))

/* Object handles: the object index + 1 in bits 0-23, the token index + 1
 * in bits 24-31 and, where CK_ULONG has 64 bits, the token's generation
 * in bits 32-47, so that handles from before a reload are refused. */
#define PG_TM_OBJECT_BITS 24
#define PG_TM_OBJECT_MASK ((CK_ULONG)((1UL << PG_TM_OBJECT_BITS) - 1))
#if ULONG_MAX > 0xffffffffUL
#define PG_TM_GENERATION_SHIFT 32
#define PG_TM_GENERATION_MASK 0xffffUL
#else
#define PG_TM_GENERATION_SHIFT 0
#define PG_TM_GENERATION_MASK 0UL
#endif

typedef struct {
	CK_SESSION_HANDLE handle;      /* 0 when the table slot is free */
	size_t token;                  /* index of its token */
	CK_SLOT_ID slot;
	CK_FLAGS flags;
	bool finding;
	size_t *found;
	size_t n_found, next;
} pg_tm_session;

typedef struct {
	pg_lock lock;
	atomic_bool initialized;
	pg_tstore *stores[PG_TM_MAX_TOKENS];
	unsigned long generation[PG_TM_MAX_TOKENS];   /* bumped when a store is rebuilt */
	CK_ULONG handle_base[PG_TM_MAX_TOKENS];       /* object handles' bits above the index */
	size_t n_stores;
	pg_tm_session *sessions;
	size_t n_sessions;             /* table slots in use or free */
	unsigned long serial;
} pg_tm_state;

extern pg_tm_state pg_tm;

static inline bool
pg_tm_ready(void)
{
	return atomic_load_explicit(&pg_tm.initialized, memory_order_acquire);
}

/* The open session of a handle, or NULL. Lock held. */
static inline pg_tm_session *
pg_tm_session_get(CK_SESSION_HANDLE h)
{
	/* The index, wrapping to a huge number for 0. */
	size_t i = (size_t)(h & PG_TM_SESSION_MASK) - 1;
	pg_tm_session *s;

	if (i >= pg_tm.n_sessions)
		return NULL;
	s = &pg_tm.sessions[i];
	return s->handle == h ? s : NULL;
}

/* Ends a call pg_tm_enter or pg_tm_begin started; returns rv. */
static inline CK_RV
pg_tm_end(CK_RV rv)
{
	pg_lock_release(&pg_tm.lock);
	return rv;
}

/* Starts a call: CKR_OK with the lock held (until pg_tm_end), else
 * CKR_CRYPTOKI_NOT_INITIALIZED without it. */
static inline CK_RV
pg_tm_enter(void)
{
	if (!pg_tm_ready())
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pg_lock_acquire(&pg_tm.lock);
	return CKR_OK;
}

/*
 * Starts a call on session h: *s NULL and CKR_CRYPTOKI_NOT_INITIALIZED
 * or CKR_SESSION_HANDLE_INVALID, the call is over; else CKR_OK with the
 * lock held and *s the session, until pg_tm_end.
 */
static inline CK_RV
pg_tm_begin(CK_SESSION_HANDLE h, pg_tm_session **s)
{
	CK_RV rv = pg_tm_enter();

	*s = NULL;
	if (rv == CKR_OK && (*s = pg_tm_session_get(h)) == NULL)
		rv = pg_tm_end(CKR_SESSION_HANDLE_INVALID);
	return rv;
}

/* A session's search state, emptied. */
void pg_tm_end_find(pg_tm_session *s);

/* Sets a token's generation (invalidating its object handles when it
 * changes) and the handle bits that go with it. Lock held. */
static inline void
pg_tm_set_generation(size_t token, unsigned long generation)
{
	pg_tm.generation[token] = generation;
	pg_tm.handle_base[token] = (CK_ULONG)(token + 1) << PG_TM_OBJECT_BITS;
#if PG_TM_GENERATION_SHIFT
	pg_tm.handle_base[token] |= (CK_ULONG)(generation & PG_TM_GENERATION_MASK)
	                            << PG_TM_GENERATION_SHIFT;
#endif
}

/* Object entry points (trust-object.c). */
CK_RV pg_tm_C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                                CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount);
CK_RV pg_tm_C_FindObjectsInit(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate,
                              CK_ULONG ulCount);
CK_RV pg_tm_C_FindObjects(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject,
                          CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount);
CK_RV pg_tm_C_FindObjectsFinal(CK_SESSION_HANDLE hSession);
CK_RV pg_tm_C_CreateObject(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate,
                           CK_ULONG ulCount, CK_OBJECT_HANDLE_PTR phObject);
CK_RV pg_tm_C_DestroyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject);
CK_RV pg_tm_C_GetObjectSize(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                            CK_ULONG_PTR pulSize);

#endif /* PG_TRUST_MODULE_H */
