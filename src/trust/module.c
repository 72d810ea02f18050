/*
 * p11glue-trust.so: a read-mostly PKCS#11 module with one token per
 * configured trust path, exposing certificates, their trust (NSS trust
 * objects, trust assertions, stapled extensions) and revocations from
 * CRLs. Paths come from the C_Initialize reserved string "paths=/a:/b",
 * else from this module's entry in the p11glue configuration (its
 * x-init-reserved value), else from the build-time default.
 *
 * Every entry point takes one lock; stores are read on the first search
 * of a token and re-read when their files change.
 */
#include "config.h"

#include "conf.h"
#include "pkcs11-calls.h"
#include "store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_TOKENS 64
#define SLOT_BASE 18
/* Object handles: token index in the top bits, object index below. */
#define HANDLE_SHIFT 24

typedef struct {
	CK_SESSION_HANDLE handle;
	CK_SLOT_ID slot;
	CK_FLAGS flags;
	bool finding;
	size_t *found;
	size_t n_found, next;
	unsigned generation;
} session;

static struct {
	pthread_mutex_t lock;
	bool initialized;
	pg_store *stores[MAX_TOKENS];
	unsigned generation[MAX_TOKENS];   /* bumped when a store is rebuilt */
	size_t n_stores;
	session *sessions;
	size_t n_sessions;
	CK_SESSION_HANDLE next_session;
} tm = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void
pad(CK_UTF8CHAR *field, size_t size, const char *text)
{
	size_t n = strlen(text);
	memset(field, ' ', size);
	memcpy(field, text, n < size ? n : size);
}

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
		if (*p == 0 || tm.n_stores == MAX_TOKENS)
			continue;
		if ((tm.stores[tm.n_stores] = pg_store_new(p)) == NULL) {
			free(copy);
			return false;
		}
		tm.n_stores++;
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

/* ---------------------------------------------------------------------------
 * Library
 */

static CK_RV
tm_C_Initialize(CK_VOID_PTR pInitArgs)
{
	CK_C_INITIALIZE_ARGS *args = pInitArgs;
	char *paths = NULL;
	CK_RV rv = CKR_OK;

	if (args) {
		bool some = args->CreateMutex || args->DestroyMutex || args->LockMutex ||
		            args->UnlockMutex;
		bool all = args->CreateMutex && args->DestroyMutex && args->LockMutex &&
		           args->UnlockMutex;
		if (some && !all)
			return CKR_ARGUMENTS_BAD;
		/* We lock with pthreads; callbacks without OS locking cannot be honoured. */
		if (all && !(args->flags & CKF_OS_LOCKING_OK))
			return CKR_CANT_LOCK;
	}
	pthread_mutex_lock(&tm.lock);
	if (tm.initialized) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
		goto out;
	}
	if (args && args->pReserved)
		paths = reserved_paths((const char *)args->pReserved);
	if (paths == NULL)
		paths = configured_paths();
	if (!add_paths(paths ? paths : P11GLUE_TRUST_PATHS)) {
		rv = CKR_HOST_MEMORY;
		goto out;
	}
	tm.next_session = 1;
	tm.initialized = true;
out:
	free(paths);
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static void
end_find(session *s)
{
	free(s->found);
	s->found = NULL;
	s->n_found = s->next = 0;
	s->finding = false;
}

static CK_RV
tm_C_Finalize(CK_VOID_PTR pReserved)
{
	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&tm.lock);
	if (!tm.initialized) {
		pthread_mutex_unlock(&tm.lock);
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	for (size_t i = 0; i < tm.n_sessions; i++)
		end_find(&tm.sessions[i]);
	free(tm.sessions);
	tm.sessions = NULL;
	tm.n_sessions = 0;
	for (size_t i = 0; i < tm.n_stores; i++)
		pg_store_free(tm.stores[i]);
	tm.n_stores = 0;
	pg_digest_cleanup();
	tm.initialized = false;
	pthread_mutex_unlock(&tm.lock);
	return CKR_OK;
}

static CK_RV
tm_C_GetInfo(CK_INFO_PTR pInfo)
{
	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pInfo->cryptokiVersion = (CK_VERSION){ 2, 40 };
	/*
	 * GnuTLS honours distrusted certificates (CKA_X_DISTRUSTED, hence
	 * blocklists and CRL revocations) only from a module whose
	 * manufacturerID starts with "PKCS#11 Kit", the identifier trust
	 * modules use; we report it so our distrust reaches GnuTLS users.
	 */
	pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "PKCS#11 Kit (p11glue)");
	pad(pInfo->libraryDescription, sizeof(pInfo->libraryDescription), "p11glue Trust Module");
	pInfo->libraryVersion = (CK_VERSION){ 0, 1 };
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * Slots and tokens
 */

static pg_store *
slot_store(CK_SLOT_ID slot)
{
	if (slot < SLOT_BASE || slot - SLOT_BASE >= tm.n_stores)
		return NULL;
	return tm.stores[slot - SLOT_BASE];
}

static CK_RV
tm_C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&tm.lock);
	if (pSlotList && *pulCount < tm.n_stores)
		rv = CKR_BUFFER_TOO_SMALL;
	else if (pSlotList)
		for (size_t i = 0; i < tm.n_stores; i++)
			pSlotList[i] = SLOT_BASE + i;
	*pulCount = tm.n_stores;
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_GetSlotInfo(CK_SLOT_ID slotID, CK_SLOT_INFO_PTR pInfo)
{
	pg_store *s;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if ((s = slot_store(slotID)) == NULL)
		return CKR_SLOT_ID_INVALID;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pad(pInfo->slotDescription, sizeof(pInfo->slotDescription), pg_store_path(s));
	pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "PKCS#11 Kit (p11glue)");
	pInfo->flags = CKF_TOKEN_PRESENT;
	pInfo->hardwareVersion = pInfo->firmwareVersion = (CK_VERSION){ 0, 1 };
	return CKR_OK;
}

static CK_RV
tm_C_GetTokenInfo(CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo)
{
	pg_store *s;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if ((s = slot_store(slotID)) == NULL)
		return CKR_SLOT_ID_INVALID;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pad(pInfo->label, sizeof(pInfo->label), pg_store_label(s));
	pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "PKCS#11 Kit (p11glue)");
	pad(pInfo->model, sizeof(pInfo->model), "p11glue trust");
	pad(pInfo->serialNumber, sizeof(pInfo->serialNumber), "1");
	pInfo->flags = CKF_TOKEN_INITIALIZED | (pg_store_writable(s) ? 0 : CKF_WRITE_PROTECTED);
	pInfo->ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	pInfo->ulMaxRwSessionCount = CK_EFFECTIVELY_INFINITE;
	pInfo->ulMaxPinLen = pInfo->ulMinPinLen = 0;
	pInfo->ulTotalPublicMemory = pInfo->ulFreePublicMemory = CK_UNAVAILABLE_INFORMATION;
	pInfo->ulTotalPrivateMemory = pInfo->ulFreePrivateMemory = CK_UNAVAILABLE_INFORMATION;
	pInfo->hardwareVersion = pInfo->firmwareVersion = (CK_VERSION){ 0, 1 };
	return CKR_OK;
}

static CK_RV
tm_C_GetMechanismList(CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList,
                      CK_ULONG_PTR pulCount)
{
	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (slot_store(slotID) == NULL)
		return CKR_SLOT_ID_INVALID;
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	*pulCount = 0;
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * Sessions
 */

static session *
find_session(CK_SESSION_HANDLE h)
{
	for (size_t i = 0; i < tm.n_sessions; i++)
		if (tm.sessions[i].handle == h)
			return &tm.sessions[i];
	return NULL;
}

static CK_RV
tm_C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication,
                 CK_NOTIFY Notify, CK_SESSION_HANDLE_PTR phSession)
{
	session *grown;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if (slot_store(slotID) == NULL)
		rv = CKR_SLOT_ID_INVALID;
	else if (phSession == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!(flags & CKF_SERIAL_SESSION))
		rv = CKR_SESSION_PARALLEL_NOT_SUPPORTED;
	else if ((grown = realloc(tm.sessions, (tm.n_sessions + 1) * sizeof(*grown))) == NULL)
		rv = CKR_HOST_MEMORY;
	else {
		tm.sessions = grown;
		tm.sessions[tm.n_sessions] = (session){ .handle = tm.next_session++,
		                                        .slot = slotID, .flags = flags };
		*phSession = tm.sessions[tm.n_sessions++].handle;
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_CloseSession(CK_SESSION_HANDLE hSession)
{
	session *s;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else {
		end_find(s);
		*s = tm.sessions[--tm.n_sessions];
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_CloseAllSessions(CK_SLOT_ID slotID)
{
	size_t kept = 0;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if (slot_store(slotID) == NULL) {
		pthread_mutex_unlock(&tm.lock);
		return CKR_SLOT_ID_INVALID;
	}
	for (size_t i = 0; i < tm.n_sessions; i++) {
		if (tm.sessions[i].slot == slotID)
			end_find(&tm.sessions[i]);
		else
			tm.sessions[kept++] = tm.sessions[i];
	}
	tm.n_sessions = kept;
	pthread_mutex_unlock(&tm.lock);
	return CKR_OK;
}

static CK_RV
tm_C_GetSessionInfo(CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo)
{
	session *s;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if (pInfo == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else {
		pInfo->slotID = s->slot;
		pInfo->flags = s->flags;
		pInfo->state = s->flags & CKF_RW_SESSION ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION;
		pInfo->ulDeviceError = 0;
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_Login(CK_SESSION_HANDLE hSession, CK_USER_TYPE userType, CK_UTF8CHAR_PTR pPin,
           CK_ULONG ulPinLen)
{
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	/* No PIN protects anything here: there is nothing to log in to. */
	rv = find_session(hSession) ? CKR_USER_TYPE_INVALID : CKR_SESSION_HANDLE_INVALID;
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_Logout(CK_SESSION_HANDLE hSession)
{
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	rv = find_session(hSession) ? CKR_USER_NOT_LOGGED_IN : CKR_SESSION_HANDLE_INVALID;
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

/* ---------------------------------------------------------------------------
 * Objects
 */

/* The store of a session, refreshed; bumps the generation on a rebuild. */
static pg_store *
session_store(session *s, size_t *index)
{
	size_t i = s->slot - SLOT_BASE;
	if (pg_store_refresh(tm.stores[i]))
		tm.generation[i]++;
	*index = i;
	return tm.stores[i];
}

static CK_RV
lookup_object(CK_SESSION_HANDLE hs, CK_OBJECT_HANDLE ho, session **sp, pg_store **store,
              size_t *index)
{
	session *s = find_session(hs);
	size_t ti;

	if (s == NULL)
		return CKR_SESSION_HANDLE_INVALID;
	ti = s->slot - SLOT_BASE;
	if ((ho >> HANDLE_SHIFT) != ti + 1)
		return CKR_OBJECT_HANDLE_INVALID;
	/* Files are checked when a search starts, not on every read. */
	*store = tm.stores[ti];
	*index = (ho & ((1UL << HANDLE_SHIFT) - 1)) - 1;
	if (*index >= pg_store_count(*store))
		return CKR_OBJECT_HANDLE_INVALID;
	*sp = s;
	return CKR_OK;
}

static CK_RV
tm_C_GetAttributeValue(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject,
                       CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	session *s;
	pg_store *store;
	size_t index;
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	rv = lookup_object(hSession, hObject, &s, &store, &index);
	if (rv == CKR_OK && pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	for (CK_ULONG i = 0; rv == CKR_OK || rv == CKR_ATTRIBUTE_TYPE_INVALID ||
	                     rv == CKR_BUFFER_TOO_SMALL; i++) {
		const void *v;
		CK_ULONG l;
		CK_ATTRIBUTE *a;
		if (i >= ulCount)
			break;
		a = &pTemplate[i];
		if (!pg_object_attr(store, pg_store_object(store, index), a->type, &v, &l)) {
			a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_ATTRIBUTE_TYPE_INVALID;
		} else if (a->pValue == NULL) {
			a->ulValueLen = l;
		} else if (a->ulValueLen < l) {
			a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
			if (rv == CKR_OK)
				rv = CKR_BUFFER_TOO_SMALL;
		} else {
			if (l)
				memcpy(a->pValue, v, l);
			a->ulValueLen = l;
		}
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_FindObjectsInit(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount)
{
	session *s;
	pg_store *store;
	size_t ti;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if (pTemplate == NULL && ulCount > 0)
		rv = CKR_ARGUMENTS_BAD;
	else if (s->finding)
		rv = CKR_OPERATION_ACTIVE;
	else {
		store = session_store(s, &ti);
		if (!pg_store_find(store, pTemplate, ulCount, &s->found, &s->n_found)) {
			end_find(s);
			rv = CKR_HOST_MEMORY;
		} else {
			s->finding = true;
			s->next = 0;
			s->generation = tm.generation[ti];
		}
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_FindObjects(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE_PTR phObject,
                 CK_ULONG ulMaxObjectCount, CK_ULONG_PTR pulObjectCount)
{
	session *s;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if (phObject == NULL || pulObjectCount == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!s->finding)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else {
		CK_ULONG n = 0;
		CK_OBJECT_HANDLE base = (CK_OBJECT_HANDLE)(s->slot - SLOT_BASE + 1) << HANDLE_SHIFT;
		while (n < ulMaxObjectCount && s->next < s->n_found)
			phObject[n++] = base | (s->found[s->next++] + 1);
		*pulObjectCount = n;
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_FindObjectsFinal(CK_SESSION_HANDLE hSession)
{
	session *s;
	CK_RV rv = CKR_OK;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if (!s->finding)
		rv = CKR_OPERATION_NOT_INITIALIZED;
	else
		end_find(s);
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_CreateObject(CK_SESSION_HANDLE hSession, CK_ATTRIBUTE_PTR pTemplate, CK_ULONG ulCount,
                  CK_OBJECT_HANDLE_PTR phObject)
{
	session *s;
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	if ((s = find_session(hSession)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else if ((pTemplate == NULL && ulCount) || phObject == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (!(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	else {
		pg_store *store = tm.stores[s->slot - SLOT_BASE];
		rv = pg_store_create(store, pTemplate, ulCount);
		if (rv == CKR_OK) {
			size_t *found = NULL, n = 0;
			tm.generation[s->slot - SLOT_BASE]++;
			pg_store_refresh(store);
			/* The new object: the certificate with that value. */
			if (pg_store_find(store, pTemplate, ulCount, &found, &n) && n > 0)
				*phObject = ((CK_OBJECT_HANDLE)(s->slot - SLOT_BASE + 1) << HANDLE_SHIFT) |
				            (found[0] + 1);
			else
				*phObject = 0;
			free(found);
		}
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_DestroyObject(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject)
{
	session *s;
	pg_store *store;
	size_t index;
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	rv = lookup_object(hSession, hObject, &s, &store, &index);
	if (rv == CKR_OK && !(s->flags & CKF_RW_SESSION))
		rv = CKR_SESSION_READ_ONLY;
	if (rv == CKR_OK) {
		rv = pg_store_destroy(store, index);
		if (rv == CKR_OK)
			tm.generation[s->slot - SLOT_BASE]++;
	}
	pthread_mutex_unlock(&tm.lock);
	return rv;
}

static CK_RV
tm_C_GetObjectSize(CK_SESSION_HANDLE hSession, CK_OBJECT_HANDLE hObject, CK_ULONG_PTR pulSize)
{
	session *s;
	pg_store *store;
	size_t index;
	CK_RV rv;

	if (!tm.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	pthread_mutex_lock(&tm.lock);
	rv = lookup_object(hSession, hObject, &s, &store, &index);
	if (rv == CKR_OK && pulSize == NULL)
		rv = CKR_ARGUMENTS_BAD;
	if (rv == CKR_OK)
		*pulSize = CK_UNAVAILABLE_INFORMATION;
	pthread_mutex_unlock(&tm.lock);
	return rv;
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
		(l).C_CreateObject = tm_C_CreateObject;                               \
		(l).C_DestroyObject = tm_C_DestroyObject;                             \
		(l).C_GetObjectSize = tm_C_GetObjectSize;                             \
		(l).C_GetAttributeValue = tm_C_GetAttributeValue;                     \
		(l).C_FindObjectsInit = tm_C_FindObjectsInit;                         \
		(l).C_FindObjects = tm_C_FindObjects;                                 \
		(l).C_FindObjectsFinal = tm_C_FindObjectsFinal;                       \
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
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_once(&lists_once, fill_lists);
	if (pInterfacesList == NULL) {
		*pulCount = PG_N_ELEMENTS(interfaces);
		return CKR_OK;
	}
	if (*pulCount < PG_N_ELEMENTS(interfaces)) {
		*pulCount = PG_N_ELEMENTS(interfaces);
		return CKR_BUFFER_TOO_SMALL;
	}
	memcpy(pInterfacesList, interfaces, sizeof(interfaces));
	*pulCount = PG_N_ELEMENTS(interfaces);
	return CKR_OK;
}

static CK_RV
tm_C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
                  CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags)
{
	if (ppInterface == NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_once(&lists_once, fill_lists);
	for (size_t i = 0; i < PG_N_ELEMENTS(interfaces); i++) {
		CK_INTERFACE *iface = &interfaces[i];
		CK_VERSION *v = &((CK_FUNCTION_LIST *)iface->pFunctionList)->version;
		if (pInterfaceName && strcmp((char *)pInterfaceName, (char *)iface->pInterfaceName))
			continue;
		if (pVersion && (pVersion->major != v->major || pVersion->minor != v->minor))
			continue;
		if ((flags & ~iface->flags) != 0)
			continue;
		*ppInterface = iface;
		return CKR_OK;
	}
	return CKR_ARGUMENTS_BAD;
}

EXPORT CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	return tm_C_GetFunctionList(ppFunctionList);
}

EXPORT CK_RV
C_GetInterfaceList(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount)
{
	return tm_C_GetInterfaceList(pInterfacesList, pulCount);
}

EXPORT CK_RV
C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
               CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags)
{
	return tm_C_GetInterface(pInterfaceName, pVersion, ppInterface, flags);
}
