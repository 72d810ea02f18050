/*
 * Managed function lists (see managed.h).
 */
#include "config.h"

#include "managed.h"
#include "handles.h"
#include "initargs.h"
#include "names.h"
#include "pkcs11-calls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG_EXPAND(...) __VA_ARGS__

typedef struct {
	CK_FUNCTION_LIST_3_0 list;       /* what the caller gets */
	CK_INTERFACE iface;
	const CK_FUNCTION_LIST_3_0 *table; /* this index's wrappers */
	pg_module *module;
	CK_FUNCTION_LIST_3_0 *funcs;      /* the module's own list */
	bool v3;
	bool in_use;
	bool initialized;
	bool log;
	bool passthrough;                 /* no session tracking (unmanaged) */
	char *reserved;
	char *name;
	pthread_mutex_t lock;             /* initialized, sessions */
	pg_handle_map sessions;           /* session handle -> slot id */
} pg_managed;

static pg_managed pool[PG_MANAGED_MAX];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void managed_after_fork(void);

/* ---------------------------------------------------------------------------
 * Checks and logging shared by the forwarders
 */

/* The forwarders' result rv, logged first when the module logs calls. */
static CK_RV
logged(pg_managed *m, const char *func, CK_ULONG first, CK_RV rv)
{
	const char *name;
	char code[32];

	if (!m->log)
		return rv;
	name = pg_name_ckr(rv);
	if (name == NULL) {
		snprintf(code, sizeof(code), "0x%08lx", rv);
		name = code;
	}
	pg_message("%s: %s(%lu) = %s", m->name, func, first, name);
	return rv;
}

static CK_RV
check_initialized(pg_managed *m)
{
	CK_RV rv;

	/* A pass-through list leaves every check to the module. */
	if (m->passthrough)
		return CKR_OK;
	pthread_mutex_lock(&m->lock);
	rv = m->initialized ? CKR_OK : CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_unlock(&m->lock);
	return rv;
}

/* The session must be one this caller opened: callers never see, let
 * alone close, each other's sessions. */
static CK_RV
check_session(pg_managed *m, CK_SESSION_HANDLE session)
{
	CK_RV rv = CKR_OK;

	if (m->passthrough)
		return CKR_OK;
	pthread_mutex_lock(&m->lock);
	if (!m->initialized)
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	else if (!pg_handle_map_get(&m->sessions, session, NULL))
		rv = CKR_SESSION_HANDLE_INVALID;
	pthread_mutex_unlock(&m->lock);
	return rv;
}

/* ---------------------------------------------------------------------------
 * Forwarders generated from the call list
 */

#define PG_FWD_SESSION(name, params, args, v3only)                           \
	static CK_RV managed_##name(pg_managed *m, PG_EXPAND params)             \
	{                                                                        \
		CK_RV rv = check_session(m, hSession);                               \
		if (rv == CKR_OK)                                                    \
			rv = ((v3only && !m->v3) || m->funcs->name == NULL)              \
			             ? CKR_FUNCTION_NOT_SUPPORTED : m->funcs->name args; \
		return logged(m, #name, hSession, rv);                               \
	}

#define PG_FWD_SLOT(name, params, args, v3only)                              \
	static CK_RV managed_##name(pg_managed *m, PG_EXPAND params)             \
	{                                                                        \
		CK_RV rv = check_initialized(m);                                     \
		if (rv == CKR_OK)                                                    \
			rv = ((v3only && !m->v3) || m->funcs->name == NULL)              \
			             ? CKR_FUNCTION_NOT_SUPPORTED : m->funcs->name args; \
		return logged(m, #name, slotID, rv);                                 \
	}

#define PG_FWD_INFO PG_FWD_SESSION
PG_FORWARD_CALLS

/* ---------------------------------------------------------------------------
 * The calls every list handles itself
 */

static CK_RV
managed_C_Initialize(pg_managed *m, CK_VOID_PTR pInitArgs)
{
	CK_RV rv = pg_check_initialize_args(pInitArgs);

	if (rv != CKR_OK)
		return rv;
	pthread_mutex_lock(&m->lock);
	if (m->initialized) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
	} else {
		rv = pg_module_initialize(m->module, m->reserved);
		m->initialized = rv == CKR_OK;
	}
	pthread_mutex_unlock(&m->lock);
	return logged(m, "C_Initialize", 0, rv);
}

/* Closes every session this caller opened (in slot, or all when all). */
static void
close_own_sessions(pg_managed *m, bool all, CK_SLOT_ID slot)
{
	CK_ULONG handle, on_slot;
	size_t pos = 0;

	while (pg_handle_map_next(&m->sessions, &pos, &handle, &on_slot)) {
		if (!all && on_slot != slot)
			continue;
		m->funcs->C_CloseSession(handle);
		pg_handle_map_remove(&m->sessions, handle);
		pos = 0;    /* removal shifts entries: start over */
	}
}

static CK_RV
managed_C_Finalize(pg_managed *m, CK_VOID_PTR pReserved)
{
	CK_RV rv;

	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&m->lock);
	if (!m->initialized) {
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	} else {
		close_own_sessions(m, true, 0);
		m->initialized = false;
		rv = pg_module_finalize(m->module);
	}
	pthread_mutex_unlock(&m->lock);
	return logged(m, "C_Finalize", 0, rv);
}

static CK_RV
managed_C_GetInfo(pg_managed *m, CK_INFO_PTR pInfo)
{
	CK_RV rv = check_initialized(m);

	if (rv == CKR_OK)
		rv = m->funcs->C_GetInfo(pInfo);
	return logged(m, "C_GetInfo", 0, rv);
}

static CK_RV
managed_C_GetFunctionList(pg_managed *m, CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	*ppFunctionList = (CK_FUNCTION_LIST_PTR)&m->list;
	return CKR_OK;
}

static CK_RV
managed_C_GetSlotList(pg_managed *m, CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList,
                      CK_ULONG_PTR pulCount)
{
	CK_RV rv = check_initialized(m);

	if (rv == CKR_OK)
		rv = m->funcs->C_GetSlotList(tokenPresent, pSlotList, pulCount);
	return logged(m, "C_GetSlotList", tokenPresent, rv);
}

static CK_RV
managed_C_WaitForSlotEvent(pg_managed *m, CK_FLAGS flags, CK_SLOT_ID_PTR pSlot,
                           CK_VOID_PTR pReserved)
{
	CK_RV rv = check_initialized(m);

	if (rv == CKR_OK)
		rv = m->funcs->C_WaitForSlotEvent == NULL
		             ? CKR_FUNCTION_NOT_SUPPORTED
		             : m->funcs->C_WaitForSlotEvent(flags, pSlot, pReserved);
	return logged(m, "C_WaitForSlotEvent", flags, rv);
}

static CK_RV
managed_C_OpenSession(pg_managed *m, CK_SLOT_ID slotID, CK_FLAGS flags,
                      CK_VOID_PTR pApplication, CK_NOTIFY Notify,
                      CK_SESSION_HANDLE_PTR phSession)
{
	CK_RV rv = check_initialized(m);
	bool stored;

	if (rv == CKR_OK)
		rv = m->funcs->C_OpenSession(slotID, flags, pApplication, Notify, phSession);
	if (rv == CKR_OK && !m->passthrough) {
		pthread_mutex_lock(&m->lock);
		stored = m->initialized && pg_handle_map_put(&m->sessions, *phSession, slotID);
		pthread_mutex_unlock(&m->lock);
		if (!stored) {
			m->funcs->C_CloseSession(*phSession);
			rv = CKR_HOST_MEMORY;
		}
	}
	return logged(m, "C_OpenSession", slotID, rv);
}

static CK_RV
managed_C_CloseSession(pg_managed *m, CK_SESSION_HANDLE hSession)
{
	CK_RV rv = check_session(m, hSession);

	if (rv == CKR_OK) {
		rv = m->funcs->C_CloseSession(hSession);
		if (rv == CKR_OK || rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED) {
			pthread_mutex_lock(&m->lock);
			pg_handle_map_remove(&m->sessions, hSession);
			pthread_mutex_unlock(&m->lock);
		}
	}
	return logged(m, "C_CloseSession", hSession, rv);
}

/* Closes this caller's sessions on the slot only, never another caller's. */
static CK_RV
managed_C_CloseAllSessions(pg_managed *m, CK_SLOT_ID slotID)
{
	CK_SLOT_INFO info;
	CK_RV rv = check_initialized(m);

	if (rv == CKR_OK && m->passthrough)
		rv = m->funcs->C_CloseAllSessions(slotID);
	else if (rv == CKR_OK)
		rv = m->funcs->C_GetSlotInfo(slotID, &info);
	if (rv == CKR_OK && !m->passthrough) {
		pthread_mutex_lock(&m->lock);
		close_own_sessions(m, false, slotID);
		pthread_mutex_unlock(&m->lock);
	}
	return logged(m, "C_CloseAllSessions", slotID, rv);
}

static CK_RV
managed_C_GetInterfaceList(pg_managed *m, CK_INTERFACE_PTR pInterfacesList,
                           CK_ULONG_PTR pulCount)
{
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	if (pInterfacesList == NULL) {
		*pulCount = 1;
		return CKR_OK;
	}
	if (*pulCount < 1) {
		*pulCount = 1;
		return CKR_BUFFER_TOO_SMALL;
	}
	pInterfacesList[0] = m->iface;
	*pulCount = 1;
	return CKR_OK;
}

static CK_RV
managed_C_GetInterface(pg_managed *m, CK_UTF8CHAR_PTR pInterfaceName,
                       CK_VERSION_PTR pVersion, CK_INTERFACE_PTR_PTR ppInterface,
                       CK_FLAGS flags)
{
	if (ppInterface == NULL)
		return CKR_ARGUMENTS_BAD;
	if (pInterfaceName != NULL && strcmp((const char *)pInterfaceName, "PKCS 11") != 0)
		return CKR_ARGUMENTS_BAD;
	if (pVersion != NULL && (pVersion->major != m->list.version.major ||
	                         pVersion->minor != m->list.version.minor))
		return CKR_ARGUMENTS_BAD;
	if ((flags & ~m->iface.flags) != 0)
		return CKR_ARGUMENTS_BAD;
	*ppInterface = &m->iface;
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * The pool: one wrapper set per index
 */

#include "managed-pool.inc"

static const CK_FUNCTION_LIST_3_0 *const tables[PG_MANAGED_MAX] = {
#define PG_TABLE_REF(i) &pg_w_table_##i,
	PG_MANAGED_INDEXES(PG_TABLE_REF)
#undef PG_TABLE_REF
};

_Static_assert(sizeof(tables) / sizeof(tables[0]) == PG_MANAGED_MAX, "one table per index");

CK_FUNCTION_LIST_3_0 *
pg_managed_new(pg_module *module, const char *reserved, const char *name, bool log_calls,
               bool passthrough)
{
	pg_managed *m = NULL;
	char *error = NULL;

	pg_modules_set_fork_hook(managed_after_fork);
	pthread_mutex_lock(&pool_lock);
	for (size_t i = 0; i < PG_MANAGED_MAX; i++) {
		if (!pool[i].in_use) {
			m = &pool[i];
			m->table = tables[i];
			m->in_use = true;
			break;
		}
	}
	pthread_mutex_unlock(&pool_lock);
	if (m == NULL)
		return NULL;
	/* A reference of our own, released in pg_managed_free. */
	m->module = pg_module_open(pg_module_path(module), &error);
	free(error);
	m->reserved = reserved ? strdup(reserved) : NULL;
	m->name = strdup(name ? name : pg_module_path(module));
	if (m->module == NULL || (reserved && !m->reserved) || m->name == NULL) {
		pg_module_close(m->module);
		free(m->reserved);
		free(m->name);
		pthread_mutex_lock(&pool_lock);
		m->in_use = false;
		pthread_mutex_unlock(&pool_lock);
		return NULL;
	}
	m->funcs = pg_module_functions(m->module);
	m->v3 = pg_module_is_v3(m->module);
	m->log = log_calls;
	m->passthrough = passthrough;
	m->initialized = false;
	pthread_mutex_init(&m->lock, NULL);
	pg_handle_map_init(&m->sessions);
	m->list = *m->table;
	/* A 2.x module's callers see a 2.x list (whose 3.0 tail answers
	 * CKR_FUNCTION_NOT_SUPPORTED, for those that look anyway). */
	m->list.version = m->v3 ? m->funcs->version : (CK_VERSION){ 2, 40 };
	m->iface = (CK_INTERFACE){ (CK_CHAR_PTR)"PKCS 11", &m->list, 0 };
	return &m->list;
}

static pg_managed *
from_list(const CK_FUNCTION_LIST_3_0 *list)
{
	for (size_t i = 0; i < PG_MANAGED_MAX; i++) {
		if (&pool[i].list == list)
			return &pool[i];
	}
	return NULL;
}

bool
pg_managed_is(const CK_FUNCTION_LIST_3_0 *list)
{
	return from_list(list) != NULL;
}

void
pg_managed_free(CK_FUNCTION_LIST_3_0 *list)
{
	pg_managed *m = list ? from_list(list) : NULL;

	if (m == NULL || !m->in_use)
		return;
	if (m->initialized)
		managed_C_Finalize(m, NULL);
	pg_handle_map_clear(&m->sessions);
	pthread_mutex_destroy(&m->lock);
	pg_module_close(m->module);
	free(m->reserved);
	free(m->name);
	pthread_mutex_lock(&pool_lock);
	memset(m, 0, sizeof(*m));
	pthread_mutex_unlock(&pool_lock);
}

static void
managed_after_fork(void)
{
	/* The child has none of the parent's sessions and must initialize
	 * again before using a list (PKCS#11 v3.0 §5.2 on fork). */
	pthread_mutex_init(&pool_lock, NULL);
	for (size_t i = 0; i < PG_MANAGED_MAX; i++) {
		if (!pool[i].in_use)
			continue;
		pthread_mutex_init(&pool[i].lock, NULL);
		pool[i].initialized = false;
		pg_handle_map_clear(&pool[i].sessions);
	}
}
