/*
 * A test module that catches a use after C_Finalize: it forwards every
 * PKCS#11 2.40 call to the module named by PG_GUARD_UNDER (SoftHSM2 in
 * the tests), and aborts loudly when a call starts after C_Finalize
 * (until the next C_Initialize) or when C_Finalize comes while calls are
 * still running in it. Each such event appends a line to the file
 * PG_GUARD_LOG before the abort, so that a test counts them even when
 * the process that made them is gone.
 *
 * PG_GUARD_FINALIZE_MS: C_Finalize waits this long after it marked the
 * module finalized (a window in which a late call is certain to be seen).
 * PG_GUARD_SLOW_MS: C_GenerateRandom takes this long (a call that is
 * still running when its server wants to end).
 */
#define _GNU_SOURCE
#include "pkcs11-calls.h"

#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static CK_FUNCTION_LIST *under;
static atomic_bool finalized;
static atomic_int running;

static long
env_ms(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strtol(v, NULL, 10) : 0;
}

static void
sleep_ms(long ms)
{
	if (ms > 0)
		nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

/* Says what went wrong (stderr and the log file), then aborts. */
static void __attribute__((noreturn))
caught(const char *what, const char *call)
{
	const char *log = getenv("PG_GUARD_LOG");
	char line[200];
	int n = snprintf(line, sizeof(line), "guard: %s %s (pid %ld)\n", call, what, (long)getpid());
	int fd;

	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* abort() follows all the same */
	}
	if (log != NULL && (fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) >= 0) {
		if (n > 0 && write(fd, line, (size_t)n) < 0) {
			/* as above */
		}
		close(fd);
	}
	abort();
}

static void
enter(const char *call)
{
	atomic_fetch_add(&running, 1);
	if (atomic_load(&finalized) || under == NULL)
		caught("called after C_Finalize", call);
}

static void
leave(void)
{
	atomic_fetch_sub(&running, 1);
}

static CK_RV
load_under(void)
{
	CK_C_GetFunctionList get;
	const char *path = getenv("PG_GUARD_UNDER");
	void *dl;

	if (under != NULL)
		return CKR_OK;
	if (path == NULL || (dl = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return CKR_GENERAL_ERROR;
	*(void **)&get = dlsym(dl, "C_GetFunctionList");
	if (get == NULL || get(&under) != CKR_OK)
		return CKR_GENERAL_ERROR;
	return CKR_OK;
}

static CK_RV
initialize(CK_VOID_PTR args)
{
	CK_RV rv = load_under();

	if (rv != CKR_OK)
		return rv;
	rv = under->C_Initialize(args);
	if (rv == CKR_OK)
		atomic_store(&finalized, false);
	return rv;
}

static CK_RV
finalize(CK_VOID_PTR reserved)
{
	if (under == NULL)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (atomic_load(&running) > 0)
		caught("came while calls were running", "C_Finalize");
	atomic_store(&finalized, true);
	sleep_ms(env_ms("PG_GUARD_FINALIZE_MS"));
	if (atomic_load(&running) > 0)
		caught("ran while a call started", "C_Finalize");
	return under->C_Finalize(reserved);
}

/* Every call: counted while it runs, refused after C_Finalize (the
 * list then takes the three above for C_Initialize, C_Finalize and
 * C_GetFunctionList instead of theirs). */
#define GUARDED(name, params, args, kind)                                  \
	static __attribute__((unused)) CK_RV guard_##name params           \
	{                                                                  \
		CK_RV rv;                                                  \
		enter(#name);                                              \
		if (strcmp(#name, "C_GenerateRandom") == 0)                \
			sleep_ms(env_ms("PG_GUARD_SLOW_MS"));              \
		rv = under->name args;                                     \
		leave();                                                   \
		return rv;                                                 \
	}
PG_CALLS_2X(GUARDED)

#define ENTRY(name, params, args, kind) guard_##name,
static CK_FUNCTION_LIST list = { { 2, 40 }, PG_CALLS_2X(ENTRY) };

EXPORT CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR out)
{
	if (out == NULL)
		return CKR_ARGUMENTS_BAD;
	list.C_Initialize = initialize;
	list.C_Finalize = finalize;
	list.C_GetFunctionList = C_GetFunctionList;
	*out = &list;
	return CKR_OK;
}
