/*
 * p11glue-proxy.so: one PKCS#11 3.0 module exposing the slots of every
 * module the registry enables for the proxy, for programs that can load
 * only one module.
 *
 * Slots get proxy IDs from slots.c: every slot of every module is mapped
 * at C_Initialize, so an ID is valid before any C_GetSlotList (Java's
 * "slot = N" calls C_GetSlotInfo first), and an ID names the same
 * module's slot for the life of the process. Sessions get proxy
 * handles mapped to (module, real handle). Object handles pass through
 * unchanged: they only mean something with their session. Modules are
 * used through their own function lists with shared, counted
 * initialization, and the proxy tracks its own sessions, so
 * C_CloseAllSessions and C_Finalize close only the proxy's sessions.
 */
#include "config.h"

#include "common.h"
#include "handles.h"
#include "initargs.h"
#include "interfaces.h"
#include "pkcs11-calls.h"
#include "slots.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PG_EXPAND(...) __VA_ARGS__
#define EXPORT __attribute__((visibility("default")))

/* How often a blocking C_WaitForSlotEvent asks the modules. */
#define WAIT_POLL_MS 100

typedef struct {
	p11glue_module *module;
	CK_FUNCTION_LIST_3_0 *funcs;
	bool v3;
	long book;                      /* its entry in slots.c */
} px_module;

typedef struct {
	CK_ULONG module;
	CK_SESSION_HANDLE real;
	CK_SLOT_ID slot;                /* proxy slot id */
} px_session;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t event;           /* signalled by C_Finalize */
	bool initialized;
	unsigned generation;            /* bumped by every C_Finalize */
	p11glue_registry *registry;
	px_module *modules;
	size_t n_modules;
	pg_handle_map sessions;         /* proxy handle -> px_session * */
	CK_SESSION_HANDLE next_session;
} px = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static CK_FUNCTION_LIST_3_0 proxy_list;
static CK_FUNCTION_LIST proxy_list_2;
static CK_INTERFACE proxy_interfaces[2];

/* ---------------------------------------------------------------------------
 * Lookups (px.lock held)
 */

static CK_RV
lookup_slot_locked(CK_SLOT_ID id, px_module **mod, CK_SLOT_ID *real)
{
	long book;

	if (!px.initialized)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (!px_slots_lookup(id, &book, real))
		return CKR_SLOT_ID_INVALID;
	/* An ID of a module this initialization did not load is no slot now. */
	for (size_t i = 0; i < px.n_modules; i++) {
		if (px.modules[i].book == book) {
			*mod = &px.modules[i];
			return CKR_OK;
		}
	}
	return CKR_SLOT_ID_INVALID;
}

static CK_RV
lookup_slot(CK_SLOT_ID id, px_module **mod, CK_SLOT_ID *real)
{
	CK_RV rv;

	pthread_mutex_lock(&px.lock);
	rv = lookup_slot_locked(id, mod, real);
	pthread_mutex_unlock(&px.lock);
	return rv;
}

/* The module, real handle and (when slot is not NULL) proxy slot of a
 * session. Inlined into every forwarder: it is the whole cost of one. */
static inline __attribute__((always_inline)) CK_RV
lookup_session_slot(CK_SESSION_HANDLE handle, px_module **mod, CK_SESSION_HANDLE *real,
                    CK_SLOT_ID *slot)
{
	pg_handle_entry *e;
	CK_RV rv = CKR_OK;

	pthread_mutex_lock(&px.lock);
	if (!px.initialized)
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	else if ((e = pg_handle_map_find(&px.sessions, handle)) == NULL)
		rv = CKR_SESSION_HANDLE_INVALID;
	else {
		px_session *s = (px_session *)(uintptr_t)e->value;
		*mod = &px.modules[s->module];
		*real = s->real;
		if (slot)
			*slot = s->slot;
	}
	pthread_mutex_unlock(&px.lock);
	return rv;
}

static inline __attribute__((always_inline)) CK_RV
lookup_session(CK_SESSION_HANDLE handle, px_module **mod, CK_SESSION_HANDLE *real)
{
	return lookup_session_slot(handle, mod, real, NULL);
}

/* The proxy ID of a module's slot, assigned on first sight. */
static bool
map_slot_locked(CK_ULONG module, CK_SLOT_ID real, CK_SLOT_ID *id)
{
	return px_slots_map(px.modules[module].book, real, id);
}

/* ---------------------------------------------------------------------------
 * Forwarders generated from the call list
 */

/* A forwarder: lookup finds the module and the real handle in place of
 * handle; the call goes on if the module has it (a 3.0 module, for the
 * calls new in 3.0: every one of them takes a session). */
#define PG_FWD_BY(lookup, handle, name, params, args, v3only)                \
	static CK_RV px_##name params                                            \
	{                                                                        \
		px_module *mod;                                                      \
		CK_RV rv = lookup(handle, &mod, &handle);                            \
		if (rv != CKR_OK)                                                    \
			return rv;                                                       \
		if ((v3only && !mod->v3) || mod->funcs->name == NULL)                \
			return CKR_FUNCTION_NOT_SUPPORTED;                               \
		return mod->funcs->name args;                                        \
	}

#define PG_FWD_SESSION(name, params, args, v3only)                           \
	PG_FWD_BY(lookup_session, hSession, name, params, args, v3only)
#define PG_FWD_SLOT(name, params, args, v3only)                              \
	PG_FWD_BY(lookup_slot, slotID, name, params, args, v3only)
#define PG_FWD_INFO(name, params, args, v3only)
PG_FORWARD_CALLS

/* ---------------------------------------------------------------------------
 * Initialization
 */

static void
drop_state_locked(bool close_sessions)
{
	CK_ULONG key, value;
	size_t pos = 0;

	while (pg_handle_map_next(&px.sessions, &pos, &key, &value)) {
		px_session *s = (px_session *)(uintptr_t)value;
		if (close_sessions)
			px.modules[s->module].funcs->C_CloseSession(s->real);
		free(s);
	}
	pg_handle_map_clear(&px.sessions);
	free(px.modules);
	px.modules = NULL;
	px.n_modules = 0;
}

static void
after_fork_child(void)
{
	/* The child must initialize again; the parent's sessions are not its. */
	pthread_mutex_init(&px.lock, NULL);
	pthread_cond_init(&px.event, NULL);
	if (px.initialized) {
		drop_state_locked(false);
		p11glue_registry_free(px.registry);
		px.registry = NULL;
		px.initialized = false;
	}
}

/*
 * Prints the registry's messages, each line once per process: an
 * application that initializes the proxy again (or in a loop) sees a
 * broken file or a failing module reported once, not on every call.
 * The lines printed so far live as long as the process (px.lock held).
 */
static void
report_locked(const char *messages)
{
	static pg_buf reported;
	const char *line = messages;

	while (*line) {
		size_t len = strcspn(line, "\n");
		bool seen = false;
		for (const char *p = (const char *)reported.data; p && *p && !seen;) {
			size_t n = strcspn(p, "\n");
			seen = n == len && memcmp(p, line, len) == 0;
			p += n + (p[n] == '\n');
		}
		if (!seen && len > 0) {
			pg_message("proxy: %.*s", (int)len, line);
			pg_buf_add(&reported, line, len);
			pg_buf_add_byte(&reported, '\n');
		}
		line += len + (line[len] == '\n');
	}
}

static CK_RV
load_modules_locked(void)
{
	size_t n;
	int rv;

	/* A module that fails is skipped (and reported) unless critical. */
	rv = p11glue_registry_load(P11GLUE_REGISTRY_FOR_PROXY | P11GLUE_REGISTRY_UNMANAGED,
	                           &px.registry);
	if (px.registry != NULL)
		report_locked(p11glue_registry_messages(px.registry));
	if (rv != P11GLUE_OK) {
		p11glue_registry_free(px.registry);
		px.registry = NULL;
		return rv == P11GLUE_ERR_NOMEM ? CKR_HOST_MEMORY : CKR_GENERAL_ERROR;
	}
	n = p11glue_registry_count(px.registry);
	px.modules = calloc(n ? n : 1, sizeof(*px.modules));
	if (px.modules == NULL)
		return CKR_HOST_MEMORY;
	for (size_t i = 0; i < n; i++) {
		p11glue_module *m = p11glue_registry_module(px.registry, i);
		CK_FUNCTION_LIST *f = p11glue_module_functions(m);
		long book;
		if (f == NULL)
			continue;
		book = px_slots_module(p11glue_module_name(m), p11glue_module_path(m));
		if (book < 0)
			return CKR_HOST_MEMORY;
		px.modules[px.n_modules++] = (px_module){ m, (CK_FUNCTION_LIST_3_0 *)f,
		                                          f->version.major >= 3, book };
	}
	return CKR_OK;
}

static CK_RV map_all_slots_locked(void);

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void
register_fork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static CK_RV
px_C_Initialize(CK_VOID_PTR pInitArgs)
{
	/* The proxy takes no options: pReserved must be NULL, or a string
	 * from a loader known to pass one there (ignored). */
	const char *options;
	CK_RV rv = pg_initialize_args_read(pInitArgs, &options);

	if (rv != CKR_OK)
		return rv;
	pthread_once(&fork_once, register_fork);
	pthread_mutex_lock(&px.lock);
	if (px.initialized) {
		pthread_mutex_unlock(&px.lock);
		return CKR_CRYPTOKI_ALREADY_INITIALIZED;
	}
	pg_handle_map_init(&px.sessions);
	rv = load_modules_locked();
	if (rv == CKR_OK)
		rv = map_all_slots_locked();
	if (rv == CKR_OK) {
		px.initialized = true;
		px.next_session = 1;
	} else {
		drop_state_locked(false);
		p11glue_registry_free(px.registry);
		px.registry = NULL;
	}
	pthread_mutex_unlock(&px.lock);
	return rv;
}

static CK_RV
px_C_Finalize(CK_VOID_PTR pReserved)
{
	p11glue_registry *registry;

	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&px.lock);
	if (!px.initialized) {
		pthread_mutex_unlock(&px.lock);
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	px.initialized = false;
	px.generation++;
	drop_state_locked(true);
	registry = px.registry;
	px.registry = NULL;
	/* Wake blocked C_WaitForSlotEvent callers: they return NOT_INITIALIZED. */
	pthread_cond_broadcast(&px.event);
	pthread_mutex_unlock(&px.lock);
	p11glue_registry_free(registry);
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * Library, slots and sessions
 */

static CK_RV
px_C_GetInfo(CK_INFO_PTR pInfo)
{
	bool ready;

	pthread_mutex_lock(&px.lock);
	ready = px.initialized;
	pthread_mutex_unlock(&px.lock);
	if (!ready)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pInfo->cryptokiVersion = (CK_VERSION){ 3, 0 };
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "p11glue");
	pg_pad(pInfo->libraryDescription, sizeof(pInfo->libraryDescription), "p11glue proxy module");
	pInfo->libraryVersion = (CK_VERSION){ 0, 1 };
	return CKR_OK;
}

static CK_RV
px_C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	*ppFunctionList = &proxy_list_2;
	return CKR_OK;
}

/*
 * One module's slots: counted with the module's own size query when out
 * is NULL (PKCS#11 v3.0 §5.5: that call is where a module looks for new
 * slots), else mapped and appended to out (capacity cap).
 */
static CK_RV
module_slots_locked(CK_ULONG index, CK_BBOOL present, CK_SLOT_ID *out, CK_ULONG cap,
                    CK_ULONG *total)
{
	CK_SLOT_ID local[64], *real = local, id;
	CK_ULONG n = PG_N_ELEMENTS(local);
	CK_RV rv;

	if (out == NULL) {
		rv = px.modules[index].funcs->C_GetSlotList(present, NULL, &n);
		if (rv == CKR_OK)
			*total += n;
		return CKR_OK;
	}
	rv = px.modules[index].funcs->C_GetSlotList(present, real, &n);

	if (rv == CKR_BUFFER_TOO_SMALL) {
		real = calloc(n ? n : 1, sizeof(*real));
		rv = real ? px.modules[index].funcs->C_GetSlotList(present, real, &n) : CKR_HOST_MEMORY;
	}
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
		if (!map_slot_locked(index, real[i], &id))
			rv = CKR_HOST_MEMORY;
		else if (*total < cap)
			out[*total] = id;
		(*total)++;
	}
	if (real != local)
		free(real);
	/* A module that cannot list its slots right now is left out. */
	return rv == CKR_HOST_MEMORY ? rv : CKR_OK;
}

/* Maps every slot of every module (at C_Initialize: IDs are valid from
 * then on, before any C_GetSlotList). */
static CK_RV
map_all_slots_locked(void)
{
	CK_SLOT_ID none;
	CK_ULONG total = 0;
	CK_RV rv = CKR_OK;

	for (size_t i = 0; rv == CKR_OK && i < px.n_modules; i++)
		rv = module_slots_locked(i, CK_FALSE, &none, 0, &total);
	return rv;
}

static CK_RV
px_C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	CK_ULONG total = 0, cap;
	CK_RV rv = CKR_OK;

	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	cap = pSlotList ? *pulCount : 0;
	pthread_mutex_lock(&px.lock);
	if (!px.initialized)
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	for (size_t i = 0; rv == CKR_OK && i < px.n_modules; i++)
		rv = module_slots_locked(i, tokenPresent, pSlotList, cap, &total);
	pthread_mutex_unlock(&px.lock);
	if (rv != CKR_OK)
		return rv;
	*pulCount = total;
	if (pSlotList != NULL && total > cap)
		return CKR_BUFFER_TOO_SMALL;
	return CKR_OK;
}

static CK_RV
px_C_OpenSession(CK_SLOT_ID slotID, CK_FLAGS flags, CK_VOID_PTR pApplication,
                 CK_NOTIFY Notify, CK_SESSION_HANDLE_PTR phSession)
{
	px_module *mod;
	px_session *s;
	CK_SLOT_ID real;
	CK_SESSION_HANDLE handle;
	CK_RV rv = lookup_slot(slotID, &mod, &real);

	if (rv != CKR_OK)
		return rv;
	if (phSession == NULL)
		return CKR_ARGUMENTS_BAD;
	/* Notify callbacks would get the module's handles; they are not
	 * passed on (PKCS#11 v3.0 allows a library to never call them). */
	rv = mod->funcs->C_OpenSession(real, flags, pApplication, NULL, &handle);
	if (rv != CKR_OK)
		return rv;
	(void)Notify;
	s = malloc(sizeof(*s));
	pthread_mutex_lock(&px.lock);
	if (s != NULL && px.initialized) {
		*s = (px_session){ (CK_ULONG)(mod - px.modules), handle, slotID };
		*phSession = px.next_session++;
		if (!pg_handle_map_put(&px.sessions, *phSession, (CK_ULONG)(uintptr_t)s))
			rv = CKR_HOST_MEMORY;
	} else {
		rv = s ? CKR_CRYPTOKI_NOT_INITIALIZED : CKR_HOST_MEMORY;
	}
	pthread_mutex_unlock(&px.lock);
	if (rv != CKR_OK) {
		free(s);
		mod->funcs->C_CloseSession(handle);
	}
	return rv;
}

static CK_RV
px_C_CloseSession(CK_SESSION_HANDLE hSession)
{
	px_session *s = NULL;
	CK_ULONG value;
	CK_RV rv = CKR_OK;

	pthread_mutex_lock(&px.lock);
	if (!px.initialized)
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	else if (!pg_handle_map_get(&px.sessions, hSession, &value))
		rv = CKR_SESSION_HANDLE_INVALID;
	else {
		s = (px_session *)(uintptr_t)value;
		pg_handle_map_remove(&px.sessions, hSession);
		rv = px.modules[s->module].funcs->C_CloseSession(s->real);
	}
	pthread_mutex_unlock(&px.lock);
	free(s);
	return rv;
}

/* The session's slot, as the caller knows it: the proxy's slot ID. */
static CK_RV
px_C_GetSessionInfo(CK_SESSION_HANDLE hSession, CK_SESSION_INFO_PTR pInfo)
{
	CK_SLOT_ID slot;
	px_module *mod;
	CK_SESSION_HANDLE real;
	CK_RV rv = lookup_session_slot(hSession, &mod, &real, &slot);

	if (rv != CKR_OK)
		return rv;
	if (mod->funcs->C_GetSessionInfo == NULL)
		return CKR_FUNCTION_NOT_SUPPORTED;
	rv = mod->funcs->C_GetSessionInfo(real, pInfo);
	if (rv == CKR_OK)
		pInfo->slotID = slot;
	return rv;
}

static CK_RV
px_C_CloseAllSessions(CK_SLOT_ID slotID)
{
	CK_ULONG key, value;
	px_module *mod;
	CK_SLOT_ID real;
	size_t pos = 0;
	CK_RV rv;

	pthread_mutex_lock(&px.lock);
	rv = lookup_slot_locked(slotID, &mod, &real);
	while (rv == CKR_OK && pg_handle_map_next(&px.sessions, &pos, &key, &value)) {
		px_session *s = (px_session *)(uintptr_t)value;
		if (s->slot != slotID)
			continue;
		mod->funcs->C_CloseSession(s->real);
		pg_handle_map_remove(&px.sessions, key);
		free(s);
		pos = 0;
	}
	pthread_mutex_unlock(&px.lock);
	return rv;
}

/* ---------------------------------------------------------------------------
 * Slot events
 */

/* Asks every module, without blocking, for an event. */
static CK_RV
poll_events_locked(CK_SLOT_ID *slot)
{
	CK_SLOT_ID real, id;
	CK_RV rv;

	for (size_t i = 0; i < px.n_modules; i++) {
		if (px.modules[i].funcs->C_WaitForSlotEvent == NULL)
			continue;
		rv = px.modules[i].funcs->C_WaitForSlotEvent(CKF_DONT_BLOCK, &real, NULL);
		if (rv == CKR_OK) {
			if (!map_slot_locked(i, real, &id))
				return CKR_HOST_MEMORY;
			*slot = id;
			return CKR_OK;
		}
	}
	return CKR_NO_EVENT;
}

static CK_RV
px_C_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved)
{
	struct timespec until;
	unsigned generation;
	CK_RV rv;

	if (pSlot == NULL || pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pthread_mutex_lock(&px.lock);
	generation = px.generation;
	for (;;) {
		if (!px.initialized || px.generation != generation) {
			rv = CKR_CRYPTOKI_NOT_INITIALIZED;
			break;
		}
		rv = poll_events_locked(pSlot);
		if (rv != CKR_NO_EVENT || (flags & CKF_DONT_BLOCK))
			break;
		/* Modules differ in whether they block; polling serves them all,
		 * and C_Finalize wakes the wait at once. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += WAIT_POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&px.event, &px.lock, &until);
	}
	pthread_mutex_unlock(&px.lock);
	return rv;
}

/* ---------------------------------------------------------------------------
 * Interfaces and the function lists
 */

#define PX_ENTRY(name, params, args, kind) px_##name,
PG_MODULE_LISTS(px_, PX_ENTRY, proxy_list, proxy_list_2, proxy_interfaces);
#undef PX_ENTRY

/* No work beyond handing out the list: loading the proxy stays cheap. */
PG_MODULE_EXPORTS(px_, EXPORT)
