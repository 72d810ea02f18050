/*
 * C_Initialize argument checks (see initargs.h).
 */
#define _GNU_SOURCE
#include "config.h"

#include "initargs.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* No object is mapped in the first page (NULL + small integers). */
#define FIRST_PAGE 4096u

CK_RV
pg_check_initialize_args(const CK_C_INITIALIZE_ARGS *args)
{
	int given;

	if (args == NULL)
		return CKR_OK;
	given = (args->CreateMutex != NULL) + (args->DestroyMutex != NULL) +
	        (args->LockMutex != NULL) + (args->UnlockMutex != NULL);
	if (given != 0 && given != 4)
		return CKR_ARGUMENTS_BAD;
	if (given == 4 && !(args->flags & CKF_OS_LOCKING_OK))
		return CKR_CANT_LOCK;
	return CKR_OK;
}

/*
 * The libraries whose module loaders put a string in pReserved and pass
 * their own mutex callbacks: NSS (modutil -string, as LibraryParameters)
 * and p11-kit (x-init-reserved; p11-kit-proxy.so is libp11-kit loaded
 * under another name).
 */
static const char *const string_passers[] = { "libnss3.", "libp11-kit.", "p11-kit-proxy." };

/*
 * The file name of the loaded object holding a function, or NULL. dladdr
 * only compares the address with the loaded objects' ranges; nothing is
 * read through it.
 */
static const char *
object_of(void (*fn)(void))
{
	Dl_info info;
	const char *base;
	void *addr;

	memcpy(&addr, &fn, sizeof(addr));
	if (addr == NULL || dladdr(addr, &info) == 0 || info.dli_fname == NULL)
		return NULL;
	base = strrchr(info.dli_fname, '/');
	return base ? base + 1 : info.dli_fname;
}

static bool
from_string_passer(const CK_C_INITIALIZE_ARGS *args)
{
	const char *create, *lock;

	if (args->CreateMutex == NULL || args->DestroyMutex == NULL ||
	    args->LockMutex == NULL || args->UnlockMutex == NULL)
		return false;
	create = object_of((void (*)(void))args->CreateMutex);
	lock = object_of((void (*)(void))args->LockMutex);
	if (create == NULL || lock == NULL || strcmp(create, lock) != 0)
		return false;
	for (size_t i = 0; i < sizeof(string_passers) / sizeof(string_passers[0]); i++) {
		if (strncmp(create, string_passers[i], strlen(string_passers[i])) == 0)
			return true;
	}
	return false;
}

CK_RV
pg_initialize_args_options(const CK_C_INITIALIZE_ARGS *args, const char **options)
{
	*options = NULL;
	if (args == NULL || args->pReserved == NULL)
		return CKR_OK;
	if (!(args->flags & PG_CKF_RESERVED_STRING) && !from_string_passer(args))
		return CKR_ARGUMENTS_BAD;
	if ((uintptr_t)args->pReserved < FIRST_PAGE)
		return CKR_ARGUMENTS_BAD;
	*options = args->pReserved;
	return CKR_OK;
}

CK_RV
pg_initialize_args_read(const CK_C_INITIALIZE_ARGS *args, const char **options)
{
	CK_RV rv = pg_check_initialize_args(args);

	*options = NULL;
	return rv == CKR_OK ? pg_initialize_args_options(args, options) : rv;
}
