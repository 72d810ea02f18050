/*
 * p11glue-trust.so: a read-mostly PKCS#11 module with one token per
 * configured trust path, exposing certificates, their trust (NSS trust
 * objects, trust assertions, stapled extensions) and revocations from
 * CRLs. Paths come from the C_Initialize reserved string "paths=/a:/b",
 * else from this module's entry in the p11glue configuration (its
 * x-init-reserved value), else from the build-time default followed by
 * the system's and the user's writable directories.
 *
 * Every entry point takes one lock (lock.h); stores are read on the first
 * search of a token and re-read when their files change. Object
 * functions are in trust-object.c.
 */
#include "config.h"

#include "conf.h"
#include "initargs.h"
#include "interfaces.h"
#include "trust-module.h"
#include "pkcs11-calls.h"
#include "trust-dirs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/*
 * GnuTLS honours distrusted certificates (CKA_X_DISTRUSTED, hence
 * blocklists and CRL revocations) only from a module whose
 * manufacturerID starts with "PKCS#11 Kit", the identifier trust
 * modules use; we report it so our distrust reaches GnuTLS users.
 */
#define MANUFACTURER "PKCS#11 Kit (p11glue)"

/* ---------------------------------------------------------------------------
 * Paths
 */

static bool
add_paths(const char *list)
{
	char *copy = strdup(list), *save = NULL;

	if (copy == NULL)
		return false;
	for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
		if (*p == 0 || pg_tm.n_stores == PG_TM_MAX_TOKENS)
			continue;
		if ((pg_tm.stores[pg_tm.n_stores] = pg_tstore_new(p)) == NULL) {
			free(copy);
			return false;
		}
		pg_tm_set_generation(pg_tm.n_stores, 0);
		pg_tm.n_stores++;
	}
	free(copy);
	return true;
}

/* "paths=/a:/b" among space-separated "key=value" words; NULL if absent. */
static char *
reserved_paths(const char *reserved)
{
	const char *p = reserved;

	while (p && *p) {
		size_t n;
		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t");
		if (n > 6 && strncmp(p, "paths=", 6) == 0)
			return strndup(p + 6, n - 6);
		p += n;
	}
	return NULL;
}

/*
 * Some consumers (GnuTLS) initialize registered modules with their own
 * arguments, so the x-init-reserved string of our configuration entry
 * never reaches us: read it ourselves.
 */
static char *
configured_paths(void)
{
	pg_conf_paths paths;
	pg_conf *conf;
	char *found = NULL;

	pg_conf_paths_init(&paths);
	conf = pg_conf_load(&paths);
	pg_conf_paths_clear(&paths);
	for (size_t i = 0; conf && i < conf->n_modules && !found; i++) {
		const char *mod = pg_conf_map_get(&conf->modules[i].values, "module");
		const char *res = pg_conf_map_get(&conf->modules[i].values, "x-init-reserved");
		const char *base = mod ? strrchr(mod, '/') : NULL;
		base = base ? base + 1 : mod;
		if (base && strcmp(base, "p11glue-trust.so") == 0 && res)
			found = reserved_paths(res);
	}
	pg_conf_free(conf);
	return found;
}

/*
 * Without configured paths, the built-in ones are followed by the
 * system's and the user's writable directories (common/trust-dirs.h),
 * made on the first write: root writes to the system's, which a user
 * cannot, and a user to their own. A set-id program reads no user's.
 */
/* One default directory, unless the built-in paths name it already. */
static bool
add_default(const char *path, const char *label, unsigned mode)
{
	for (size_t i = 0; i < pg_tm.n_stores; i++)
		if (strcmp(pg_tstore_path(pg_tm.stores[i]), path) == 0)
			return true;
	if (pg_tm.n_stores == PG_TM_MAX_TOKENS)
		return true;
	if ((pg_tm.stores[pg_tm.n_stores] = pg_tstore_new_default(path, label, mode)) == NULL)
		return false;
	pg_tm_set_generation(pg_tm.n_stores, 0);
	pg_tm.n_stores++;
	return true;
}

static bool
add_defaults(void)
{
	char *user = pg_trust_user_dir();
	bool ok = add_default(pg_trust_system_dir(), "System Trust", 0755) &&
	          (user == NULL || add_default(user, "User Trust", 0700));

	free(user);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Library
 */

static CK_RV
tm_C_Initialize(CK_VOID_PTR pInitArgs)
{
	CK_C_INITIALIZE_ARGS *args = pInitArgs;
	const char *reserved = NULL;
	char *paths = NULL;
	/* pReserved is read only from a caller known to pass a string there. */
	CK_RV rv = pg_initialize_args_read(args, &reserved);

	if (rv != CKR_OK)
		return rv;
	pg_lock_acquire(&pg_tm.lock);
	if (pg_tm_ready()) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
		goto out;
	}
	if (reserved != NULL)
		paths = reserved_paths(reserved);
	if (paths == NULL)
		paths = configured_paths();
	if (!add_paths(paths ? paths : P11GLUE_TRUST_PATHS) || (paths == NULL && !add_defaults())) {
		for (size_t i = 0; i < pg_tm.n_stores; i++)
			pg_tstore_free(pg_tm.stores[i]);
		pg_tm.n_stores = 0;
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	atomic_store_explicit(&pg_tm.initialized, true, memory_order_release);
out:
	free(paths);
	pg_lock_release(&pg_tm.lock);
	return rv;
}

static CK_RV
tm_C_Finalize(CK_VOID_PTR pReserved)
{
	CK_RV rv = CKR_OK;

	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pg_lock_acquire(&pg_tm.lock);
	if (!pg_tm_ready()) {
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
		goto out;
	}
	atomic_store_explicit(&pg_tm.initialized, false, memory_order_release);
	for (size_t i = 0; i < pg_tm.n_sessions; i++)
		pg_tm_end_find(&pg_tm.sessions[i]);
	free(pg_tm.sessions);
	pg_tm.sessions = NULL;
	pg_tm.n_sessions = 0;
	for (size_t i = 0; i < pg_tm.n_stores; i++)
		pg_tstore_free(pg_tm.stores[i]);
	pg_tm.n_stores = 0;
out:
	pg_lock_release(&pg_tm.lock);
	return rv;
}

static CK_RV
tm_C_GetInfo(CK_INFO_PTR pInfo)
{
	if (!pg_tm_ready())
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pInfo->cryptokiVersion = (CK_VERSION){ 2, 40 };
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), MANUFACTURER);
	pg_pad(pInfo->libraryDescription, sizeof(pInfo->libraryDescription), "p11glue Trust Module");
	pInfo->libraryVersion = (CK_VERSION){ 0, 1 };
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * Slots and tokens
 */

/* The store of a slot, or NULL. Lock held. */
static pg_tstore *
slot_store(CK_SLOT_ID slot)
{
	if (slot < PG_TM_SLOT_BASE || slot - PG_TM_SLOT_BASE >= pg_tm.n_stores)
		return NULL;
	return pg_tm.stores[slot - PG_TM_SLOT_BASE];
}

static CK_RV
tm_C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	CK_RV rv = CKR_OK;

	if (!pg_tm_ready())
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	pg_lock_acquire(&pg_tm.lock);
	if (pSlotList && *pulCount < pg_tm.n_stores)
		rv = CKR_BUFFER_TOO_SMALL;
	else if (pSlotList)
		for (size_t i = 0; i < pg_tm.n_stores; i++)
			pSlotList[i] = PG_TM_SLOT_BASE + i;
	*pulCount = pg_tm.n_stores;
	return pg_tm_end(rv);
}

/* Starts a call on slotID that writes to out: CKR_OK with the lock held
 * and *s its store (until pg_tm_end); else not initialized, no such
 * slot or out NULL, in that order, unlocked. */
static CK_RV
begin_slot(CK_SLOT_ID slotID, const void *out, pg_tstore **s)
{
	CK_RV rv = pg_tm_enter();

	if (rv != CKR_OK)
		return rv;
	if ((*s = slot_store(slotID)) == NULL)
		return pg_tm_end(CKR_SLOT_ID_INVALID);
	if (out == NULL)
		return pg_tm_end(CKR_ARGUMENTS_BAD);
	return CKR_OK;
}

static CK_RV
tm_C_GetSlotInfo(CK_SLOT_ID slotID, CK_SLOT_INFO_PTR pInfo)
{
	pg_tstore *s;
	CK_RV rv = begin_slot(slotID, pInfo, &s);

	if (rv != CKR_OK)
		return rv;
	memset(pInfo, 0, sizeof(*pInfo));
	pg_pad(pInfo->slotDescription, sizeof(pInfo->slotDescription), pg_tstore_path(s));
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), MANUFACTURER);
	pInfo->flags = CKF_TOKEN_PRESENT;
	pInfo->hardwareVersion = pInfo->firmwareVersion = (CK_VERSION){ 0, 1 };
	return pg_tm_end(CKR_OK);
}

static CK_RV
tm_C_GetTokenInfo(CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo)
{
	pg_tstore *s;
	CK_RV rv = begin_slot(slotID, pInfo, &s);

	if (rv != CKR_OK)
		return rv;
	memset(pInfo, 0, sizeof(*pInfo));
	pg_pad(pInfo->label, sizeof(pInfo->label), pg_tstore_label(s));
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), MANUFACTURER);
	pg_pad(pInfo->model, sizeof(pInfo->model), "p11glue trust");
	pg_pad(pInfo->serialNumber, sizeof(pInfo->serialNumber), "1");
	pInfo->flags = CKF_TOKEN_INITIALIZED | (pg_tstore_writable(s) ? 0 : CKF_WRITE_PROTECTED);
	pInfo->ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	pInfo->ulMaxRwSessionCount = CK_EFFECTIVELY_INFINITE;
	pInfo->ulMaxPinLen = pInfo->ulMinPinLen = 0;
	pInfo->ulTotalPublicMemory = pInfo->ulFreePublicMemory = CK_UNAVAILABLE_INFORMATION;
	pInfo->ulTotalPrivateMemory = pInfo->ulFreePrivateMemory = CK_UNAVAILABLE_INFORMATION;
	pInfo->hardwareVersion = pInfo->firmwareVersion = (CK_VERSION){ 0, 1 };
	return pg_tm_end(CKR_OK);
}

static CK_RV
tm_C_GetMechanismList(CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList,
                      CK_ULONG_PTR pulCount)
{
	pg_tstore *s;
	CK_RV rv = begin_slot(slotID, pulCount, &s);

	if (rv != CKR_OK)
		return rv;
	*pulCount = 0;
	return pg_tm_end(CKR_OK);
}

/* ---------------------------------------------------------------------------
 * Sessions
 */

/* A free table slot (growing the table); its index, or -1 when full. */
static long
free_session_slot(void)
{
	pg_tm_session *grown;
	size_t cap, old = pg_tm.n_sessions;

	for (size_t i = 0; i < pg_tm.n_sessions; i++)
		if (pg_tm.sessions[i].handle == 0)
			return (long)i;
	if (pg_tm.n_sessions == PG_TM_SESSION_MASK)
		return -1;
	cap = pg_tm.n_sessions ? pg_tm.n_sessions * 2 : 8;
	if (cap > PG_TM_SESSION_MASK)
		cap = PG_TM_SESSION_MASK;
	if ((grown = realloc(pg_tm.sessions, cap * sizeof(*grown))) == NULL)
		return -1;
	memset(grown + old, 0, (cap - old) * sizeof(*grown));
	pg_tm.sessions = grown;
	pg_tm.n_sessions = cap;
	return (long)old;
}

static CK_RV
tm_C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication,
                 CK_NOTIFY Notify, CK_SESSION_HANDLE_PTR phSession)
{
	pg_tstore *store;
	long i;
	CK_RV rv = begin_slot(slotID, phSession, &store);

	if (rv != CKR_OK)
		return rv;
	if (!(flags & CKF_SERIAL_SESSION))
		rv = CKR_SESSION_PARALLEL_NOT_SUPPORTED;
	else if ((i = free_session_slot()) < 0)
		rv = CKR_SESSION_COUNT;
	else {
		pg_tm_session *s = &pg_tm.sessions[i];
		/* The serial keeps a closed session's handle from matching a new one. */
		pg_tm.serial++;
		*s = (pg_tm_session){ .slot = slotID, .token = slotID - PG_TM_SLOT_BASE, .flags = flags };
		s->handle = (CK_SESSION_HANDLE)(pg_tm.serial << PG_TM_SESSION_BITS) | (CK_ULONG)(i + 1);
		*phSession = s->handle;
	}
	return pg_tm_end(rv);
}

static void
close_session(pg_tm_session *s)
{
	pg_tm_end_find(s);
	s->handle = 0;
}

static CK_RV
tm_C_CloseSession(CK_SESSION_HANDLE hSession)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	close_session(s);
	return pg_tm_end(CKR_OK);
}

static CK_RV
tm_C_CloseAllSessions(CK_SLOT_ID slotID)
{
	CK_RV rv = pg_tm_enter();

	if (rv != CKR_OK)
		return rv;
	if (slot_store(slotID) == NULL)
		return pg_tm_end(CKR_SLOT_ID_INVALID);
	for (size_t i = 0; i < pg_tm.n_sessions; i++)
		if (pg_tm.sessions[i].handle != 0 && pg_tm.sessions[i].slot == slotID)
			close_session(&pg_tm.sessions[i]);
	return pg_tm_end(CKR_OK);
}

static CK_RV
tm_C_GetSessionInfo(CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	if (s == NULL)
		return rv;
	if (pInfo == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else {
		pInfo->slotID = s->slot;
		pInfo->flags = s->flags;
		pInfo->state = s->flags & CKF_RW_SESSION ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION;
		pInfo->ulDeviceError = 0;
	}
	return pg_tm_end(rv);
}

/* No PIN protects anything here: there is nothing to log in to, or out of. */
static CK_RV
tm_C_Login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
           CK_ULONG ulPinLen)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	return s == NULL ? rv : pg_tm_end(CKR_USER_TYPE_INVALID);
}

static CK_RV
tm_C_Logout(CK_SESSION_HANDLE hSession)
{
	pg_tm_session *s;
	CK_RV rv = pg_tm_begin(hSession, &s);

	return s == NULL ? rv : pg_tm_end(CKR_USER_NOT_LOGGED_IN);
}

/* ---------------------------------------------------------------------------
 * Function lists and interfaces
 */

#define STUB(name, params, args, kind) \
	static CK_RV stub_##name params { return CKR_FUNCTION_NOT_SUPPORTED; }
PG_CALLS_2X(STUB)
PG_CALLS_3_0(STUB)
#undef STUB

static CK_FUNCTION_LIST_3_0 list_3;
static CK_FUNCTION_LIST list_2;
static CK_INTERFACE interfaces[2] = {
	{ (CK_UTF8CHAR_PTR)"PKCS 11", &list_3, 0 },
	{ (CK_UTF8CHAR_PTR)"PKCS 11", &list_2, 0 },
};

static CK_RV tm_C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList);
static CK_RV tm_C_GetInterfaceList(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount);
static CK_RV tm_C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
                               CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags);

#define FILL(l)                                                               \
	do {                                                                      \
		(l).C_Initialize = tm_C_Initialize;                                   \
		(l).C_Finalize = tm_C_Finalize;                                       \
		(l).C_GetInfo = tm_C_GetInfo;                                         \
		(l).C_GetFunctionList = tm_C_GetFunctionList;                         \
		(l).C_GetSlotList = tm_C_GetSlotList;                                 \
		(l).C_GetSlotInfo = tm_C_GetSlotInfo;                                 \
		(l).C_GetTokenInfo = tm_C_GetTokenInfo;                               \
		(l).C_GetMechanismList = tm_C_GetMechanismList;                       \
		(l).C_OpenSession = tm_C_OpenSession;                                 \
		(l).C_CloseSession = tm_C_CloseSession;                               \
		(l).C_CloseAllSessions = tm_C_CloseAllSessions;                       \
		(l).C_GetSessionInfo = tm_C_GetSessionInfo;                           \
		(l).C_Login = tm_C_Login;                                             \
		(l).C_Logout = tm_C_Logout;                                           \
		(l).C_CreateObject = pg_tm_C_CreateObject;                               \
		(l).C_DestroyObject = pg_tm_C_DestroyObject;                             \
		(l).C_GetObjectSize = pg_tm_C_GetObjectSize;                             \
		(l).C_GetAttributeValue = pg_tm_C_GetAttributeValue;                     \
		(l).C_FindObjectsInit = pg_tm_C_FindObjectsInit;                         \
		(l).C_FindObjects = pg_tm_C_FindObjects;                                 \
		(l).C_FindObjectsFinal = pg_tm_C_FindObjectsFinal;                       \
	} while (0)

static pthread_once_t lists_once = PTHREAD_ONCE_INIT;

static void
fill_lists(void)
{
#define REF(name, params, args, kind) l3.name = stub_##name;
	CK_FUNCTION_LIST_3_0 l3;
	CK_FUNCTION_LIST l2;
	memset(&l3, 0, sizeof(l3));
	PG_CALLS_2X(REF)
	PG_CALLS_3_0(REF)
#undef REF
#define REF(name, params, args, kind) l2.name = stub_##name;
	memset(&l2, 0, sizeof(l2));
	PG_CALLS_2X(REF)
#undef REF
	l3.version = (CK_VERSION){ 3, 0 };
	l2.version = (CK_VERSION){ 2, 40 };
	FILL(l3);
	FILL(l2);
	l3.C_GetInterfaceList = tm_C_GetInterfaceList;
	l3.C_GetInterface = tm_C_GetInterface;
	list_3 = l3;
	list_2 = l2;
}

static CK_RV
tm_C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_once(&lists_once, fill_lists);
	*ppFunctionList = &list_2;
	return CKR_OK;
}

static CK_RV
tm_C_GetInterfaceList(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount)
{
	pthread_once(&lists_once, fill_lists);
	return pg_interfaces_list(interfaces, PG_N_ELEMENTS(interfaces), pInterfacesList, pulCount);
}

static CK_RV
tm_C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
                  CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags)
{
	pthread_once(&lists_once, fill_lists);
	return pg_interfaces_find(interfaces, PG_N_ELEMENTS(interfaces), pInterfaceName, pVersion,
	                          ppInterface, flags);
}

PG_MODULE_EXPORTS(tm_, EXPORT)
