/*
 * Loaded PKCS#11 modules (see modules.h).
 */
#include "config.h"

#include "modules.h"
#include "compat.h"
#include "initargs.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pg_module {
	pg_module *next;
	char *path;                    /* the resolved file name */
	void *dl;
	CK_FUNCTION_LIST_3_0 *funcs;   /* the module's list, or &v2 */
	CK_FUNCTION_LIST_3_0 v2;       /* see get_functions */
	unsigned refs;                 /* pg_module_open references */
	unsigned users;                /* initialized users */
	bool foreign;                  /* initialized by someone else */
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static pg_module *modules;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
/* What the layer above (managed.c) resets in a child; set once. */
static void (*_Atomic fork_hook)(void);

static bool
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *
pg_module_resolve(const char *path)
{
	char buf[PATH_MAX], *dirs, *dir, *save = NULL, *found = NULL;

	if (path == NULL || *path == 0)
		return NULL;
	if (path[0] == '/')
		return is_file(path) ? realpath(path, NULL) : NULL;
	dirs = strdup(P11GLUE_MODULE_PATH);
	for (dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", dir, path) < sizeof(buf) &&
		    is_file(buf))
			found = realpath(buf, NULL);
	}
	free(dirs);
	return found;
}

/*
 * Gets the function list: C_GetInterface (3.0) first, then 2.x. A list
 * from C_GetFunctionList is a CK_FUNCTION_LIST, whatever version it
 * claims: one claiming 3.x is copied into v2 and labelled 2.40, so that
 * nobody reads 3.0 entries past its end.
 */
static CK_RV
get_functions(void *dl, CK_FUNCTION_LIST_3_0 **funcs, CK_FUNCTION_LIST_3_0 *v2)
{
	CK_C_GetInterface get_interface = (CK_C_GetInterface)pg_dl_symbol(dl, "C_GetInterface");
	CK_C_GetFunctionList get_list = (CK_C_GetFunctionList)pg_dl_symbol(dl, "C_GetFunctionList");
	CK_INTERFACE_PTR iface = NULL;
	CK_FUNCTION_LIST_PTR list = NULL;
	CK_VERSION v3 = { 3, 0 };
	CK_RV rv;

	if (get_interface != NULL) {
		rv = get_interface((CK_UTF8CHAR_PTR)"PKCS 11", &v3, &iface, 0);
		if (rv != CKR_OK)
			rv = get_interface(NULL, NULL, &iface, 0);
		if (rv == CKR_OK && iface != NULL && iface->pFunctionList != NULL) {
			*funcs = iface->pFunctionList;
			return CKR_OK;
		}
	}
	if (get_list == NULL)
		return CKR_GENERAL_ERROR;
	rv = get_list(&list);
	if (rv == CKR_OK && list == NULL)
		rv = CKR_GENERAL_ERROR;
	if (rv == CKR_OK && list->version.major >= 3) {
		memset(v2, 0, sizeof(*v2));
		memcpy(v2, list, sizeof(*list));
		v2->version = (CK_VERSION){ 2, 40 };
		list = (CK_FUNCTION_LIST *)v2;
	}
	*funcs = (CK_FUNCTION_LIST_3_0 *)list;
	return rv;
}

/*
 * The first entry point every user of a module calls that the list
 * lacks, or NULL. Without these nothing can be done with the module;
 * other missing entries are answered CKR_FUNCTION_NOT_SUPPORTED by the
 * layers that forward calls.
 */
static const char *
missing_entry(const CK_FUNCTION_LIST_3_0 *f)
{
#define ENTRY(name) { offsetof(CK_FUNCTION_LIST_3_0, name), #name }
	static const struct {
		size_t offset;
		const char *name;
	} first[] = {
		ENTRY(C_Initialize), ENTRY(C_Finalize), ENTRY(C_GetInfo), ENTRY(C_GetSlotList),
		ENTRY(C_GetSlotInfo), ENTRY(C_GetTokenInfo), ENTRY(C_OpenSession),
		ENTRY(C_CloseSession),
	};
#undef ENTRY
	void (*entry)(void);

	for (size_t i = 0; i < PG_N_ELEMENTS(first); i++) {
		memcpy(&entry, (const char *)f + first[i].offset, sizeof(entry));
		if (entry == NULL)
			return first[i].name;
	}
	return NULL;
}

static void
register_fork_handler(void)
{
	pg_at_fork_child(pg_modules_after_fork);
}

static pg_module *
load(const char *path, char **error)
{
	char buf[PATH_MAX + 100], *why = NULL;
	const char *missing = NULL;
	pg_module *mod;
	CK_RV rv;
	void *dl = pg_dl_open(path, &why);

	if (dl == NULL) {
		*error = why;
		return NULL;
	}
	mod = calloc(1, sizeof(*mod));
	if (mod == NULL || (mod->path = strdup(path)) == NULL) {
		free(mod);
		pg_dl_close(dl);
		*error = strdup("out of memory");
		return NULL;
	}
	mod->dl = dl;
	rv = get_functions(dl, &mod->funcs, &mod->v2);
	if (rv != CKR_OK || (missing = missing_entry(mod->funcs)) != NULL) {
		if (rv != CKR_OK)
			snprintf(buf, sizeof(buf), "%s: no usable C_GetInterface or C_GetFunctionList "
			         "(0x%lx)", path, rv);
		else
			snprintf(buf, sizeof(buf), "%s: its function list has no %s", path, missing);
		*error = strdup(buf);
		pg_dl_close(dl);
		free(mod->path);
		free(mod);
		return NULL;
	}
	return mod;
}

pg_module *
pg_module_open(const char *path, char **error)
{
	char *resolved = pg_module_resolve(path), buf[512];
	pg_module *mod;

	*error = NULL;
	pthread_once(&fork_once, register_fork_handler);
	if (resolved == NULL) {
		snprintf(buf, sizeof(buf), "%s: no such module file", path ? path : "(none)");
		*error = strdup(buf);
		return NULL;
	}
	pthread_mutex_lock(&modules_lock);
	for (mod = modules; mod; mod = mod->next) {
		if (strcmp(mod->path, resolved) == 0)
			break;
	}
	if (mod == NULL) {
		mod = load(resolved, error);
		if (mod != NULL) {
			mod->next = modules;
			modules = mod;
		}
	}
	if (mod != NULL)
		mod->refs++;
	pthread_mutex_unlock(&modules_lock);
	free(resolved);
	return mod;
}

void
pg_module_close(pg_module *mod)
{
	pg_module **p;

	if (mod == NULL)
		return;
	pthread_mutex_lock(&modules_lock);
	if (--mod->refs > 0 || mod->users > 0) {
		pthread_mutex_unlock(&modules_lock);
		return;
	}
	for (p = &modules; *p; p = &(*p)->next) {
		if (*p == mod) {
			*p = mod->next;
			break;
		}
	}
	pthread_mutex_unlock(&modules_lock);
	pg_dl_close(mod->dl);
	free(mod->path);
	free(mod);
}

CK_FUNCTION_LIST_3_0 *
pg_module_functions(const pg_module *mod)
{
	return mod->funcs;
}

const char *
pg_module_path(const pg_module *mod)
{
	return mod->path;
}

bool
pg_module_is_v3(const pg_module *mod)
{
	return mod->funcs->version.major >= 3;
}

CK_RV
pg_module_initialize(pg_module *mod, const char *reserved)
{
	CK_C_INITIALIZE_ARGS args;
	CK_RV rv = CKR_OK;

	pthread_mutex_lock(&modules_lock);
	if (mod->users == 0) {
		memset(&args, 0, sizeof(args));
		args.flags = CKF_OS_LOCKING_OK;
		/* The reserved string convention: modules read it from pReserved;
		 * the flag tells p11glue's modules that it is a string. */
		if (reserved != NULL && *reserved) {
			args.flags |= PG_CKF_RESERVED_STRING;
			args.pReserved = (CK_VOID_PTR)reserved;
		}
		rv = mod->funcs->C_Initialize(&args);
		mod->foreign = rv == CKR_CRYPTOKI_ALREADY_INITIALIZED;
		if (mod->foreign)
			rv = CKR_OK;
	}
	if (rv == CKR_OK)
		mod->users++;
	pthread_mutex_unlock(&modules_lock);
	return rv;
}

CK_RV
pg_module_finalize(pg_module *mod)
{
	CK_RV rv = CKR_OK;

	pthread_mutex_lock(&modules_lock);
	if (mod->users == 0) {
		pthread_mutex_unlock(&modules_lock);
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	if (--mod->users == 0 && !mod->foreign)
		rv = mod->funcs->C_Finalize(NULL);
	pthread_mutex_unlock(&modules_lock);
	return rv;
}

void
pg_modules_after_fork(void)
{
	/* Only this thread exists in the child; the lock may be held by a
	 * thread that is gone, so start it afresh. */
	pthread_mutex_init(&modules_lock, NULL);
	for (pg_module *mod = modules; mod; mod = mod->next) {
		mod->users = 0;
		mod->foreign = false;
	}
	if (fork_hook != NULL)
		fork_hook();
}

void
pg_modules_set_fork_hook(void (*hook)(void))
{
	fork_hook = hook;
}

pg_module *
pg_module_load(const char *path, const char *who)
{
	char *why = NULL;
	pg_module *m = pg_module_open(path, &why);

	if (m == NULL)
		pg_message("%s%scannot load %s: %s", who ? who : "", who ? ": " : "", path,
		           why ? why : "?");
	free(why);
	return m;
}
