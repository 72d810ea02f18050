/*
 * C_Initialize and C_Finalize: the store's options, its directory, and
 * the state (state.c) set up and torn down. The function lists are
 * ../module.c's.
 *
 * C_Initialize's pReserved may carry options, as a NUL-terminated string
 * of space-separated key=value pairs (the form of NSS's "library
 * parameters" and of a registry file's x-init-reserved). PKCS#11 v3.0 §5.4
 * says pReserved should be NULL_PTR, and a caller may put anything
 * there, so the string is read only from a caller recognised as passing
 * one (pg_initialize_args_options, initargs.h): p11glue's registry, which
 * sets PG_CKF_RESERVED_STRING in flags, and NSS and p11-kit, whose mutex
 * callbacks lie in libnss3 and libp11-kit. Any other non-NULL pReserved
 * is CKR_ARGUMENTS_BAD and is never dereferenced. The options:
 *   store=DIR              the token directory (else $P11GLUE_STORE_DIR,
 *                          else $XDG_DATA_HOME/p11glue/store, else
 *                          ~/.local/share/p11glue/store)
 *   max-pin-attempts=N     wrong PINs before a PIN locks, for tokens
 *                          initialised from now on (default 10)
 *   scrypt-log2n=N         scrypt cost N = 2^n for PINs set from now on
 *                          (default 14; 10-22)
 *   wrap-decrypt=allow     a secret key may both wrap and decrypt (or
 *                          unwrap and encrypt), and a key pair made by
 *                          C_GenerateKeyPair may wrap with its public key
 *                          and decrypt with its private key, when a
 *                          template asks for both (rules.c); default
 *                          wrap-decrypt=refuse
 * Unknown keys are ignored, so a string meant for another module harms
 * nothing; a known key with a bad value is CKR_ARGUMENTS_BAD.

 */
#define _GNU_SOURCE
#include "config.h"

#include "core.h"
#include "initargs.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
parse_uint(const char *text, size_t len, unsigned min, unsigned max, unsigned *out)
{
	unsigned long v = 0;

	if (len == 0 || len > 6)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(text[i] - '0');
	}
	if (v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

bool
pg_store_parse_options(const char *text, pg_store_options *opts)
{
	const char *p = text;

	while (p != NULL && *p != 0) {
		const char *end, *eq;
		size_t klen, vlen;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == 0)
			break;
		for (end = p; *end && *end != ' ' && *end != '\t' && *end != '\n'; end++)
			;
		eq = memchr(p, '=', (size_t)(end - p));
		klen = eq ? (size_t)(eq - p) : (size_t)(end - p);
		vlen = eq ? (size_t)(end - eq - 1) : 0;
		if (klen == 5 && memcmp(p, "store", 5) == 0) {
			if (eq == NULL || vlen == 0)
				return false;
			free(opts->dir);
			opts->dir = (char *)pg_memdup0(eq + 1, vlen);
			if (opts->dir == NULL)
				return false;
		} else if (klen == 16 && memcmp(p, "max-pin-attempts", 16) == 0) {
			if (eq == NULL || !parse_uint(eq + 1, vlen, 1, 1000, &opts->max_fails))
				return false;
		} else if (klen == 12 && memcmp(p, "scrypt-log2n", 12) == 0) {
			if (eq == NULL || !parse_uint(eq + 1, vlen, 10, 22, &opts->kdf_log2n))
				return false;
		} else if (klen == 12 && memcmp(p, "wrap-decrypt", 12) == 0) {
			if (eq != NULL && vlen == 5 && memcmp(eq + 1, "allow", 5) == 0)
				opts->wrap_decrypt = true;
			else if (eq != NULL && vlen == 6 && memcmp(eq + 1, "refuse", 6) == 0)
				opts->wrap_decrypt = false;
			else
				return false;
		}
		p = end;
	}
	return true;
}

/* The default store directory (caller frees), or NULL. */
static char *
default_dir(void)
{
	const char *env = secure_getenv("P11GLUE_STORE_DIR");
	const char *base;
	char *dir;
	size_t len;

	if (env != NULL && *env != 0)
		return strdup(env);
	env = secure_getenv("XDG_DATA_HOME");
	if (env != NULL && env[0] == '/') {
		base = env;
		len = strlen(base) + 32;
		dir = malloc(len);
		if (dir != NULL)
			snprintf(dir, len, "%s/p11glue/store", base);
		return dir;
	}
	base = secure_getenv("HOME");
	if (base == NULL || base[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		base = pw ? pw->pw_dir : NULL;
	}
	if (base == NULL)
		return NULL;
	len = strlen(base) + 40;
	dir = malloc(len);
	if (dir != NULL)
		snprintf(dir, len, "%s/.local/share/p11glue/store", base);
	return dir;
}

/* mkdir -p, mode 0700 for what it creates; failures surface later. */
static void
make_dirs(const char *path)
{
	char *copy = strdup(path);

	if (copy == NULL)
		return;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(copy, 0700) != 0 && errno != EEXIST)
			break;
		*p = '/';
	}
	if (mkdir(copy, 0700) != 0 && errno != EEXIST)
		pg_message("store: cannot create %s: %s", copy, strerror(errno));
	free(copy);
}

static CK_RV
check_args(const CK_C_INITIALIZE_ARGS *args, pg_store_options *opts)
{
	const char *options = NULL;
	CK_RV rv = pg_check_initialize_args(args);

	if (rv != CKR_OK)
		return rv;
	rv = pg_initialize_args_options(args, &options);
	if (rv != CKR_OK) {
		pg_message("store: C_Initialize: pReserved is neither NULL nor an options string "
		           "from a caller that marks it as one; see p11glue-store(8)");
		return rv;
	}
	if (options != NULL && !pg_store_parse_options(options, opts))
		return CKR_ARGUMENTS_BAD;
	return CKR_OK;
}

/*
 * Frees the sessions, then the tokens, objects and directory: C_Finalize's,
 * or (forked) the state inherited from a parent process
 * (pg_store_life_begin), which leaves the store uninitialised too.
 */
static void
free_state(bool forked)
{
	pg_sessions_finalize(forked);
	pg_store_lock();
	pg_tokens_free_locked(forked);
	pg_map_clear(&pg_store.objects);
	free(pg_store.dir);
	pg_store.dir = NULL;
	if (forked) {
		pg_store.initialized = false;
		pg_store.stale = false;
	}
	pg_store_unlock();
}

CK_RV
C_Initialize(CK_VOID_PTR pInitArgs)
{
	pg_store_options opts = {
		.max_fails = PG_DEFAULT_MAX_FAILS,
		.kdf_log2n = PG_DEFAULT_KDF_LOG2N,
	};
	char *dir;
	CK_RV rv;

	rv = check_args(pInitArgs, &opts);
	dir = opts.dir;
	if (rv != CKR_OK) {
		free(dir);
		return rv;
	}
	pg_store_life_begin();
	if (pg_store.stale)
		free_state(true);
	pg_store_lock();
	if (pg_store.initialized) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
		goto out;
	}
	if (dir == NULL)
		dir = default_dir();
	if (dir == NULL) {
		pg_message("store: no store directory (set P11GLUE_STORE_DIR or HOME)");
		rv = CKR_GENERAL_ERROR;
		goto out;
	}
	make_dirs(dir);
	pg_store.dir = dir;
	dir = NULL;
	pg_store.max_fails = opts.max_fails;
	pg_store.kdf_log2n = opts.kdf_log2n;
	pg_store.wrap_decrypt = opts.wrap_decrypt;
	pg_map_init(&pg_store.sessions);
	pg_map_init(&pg_store.objects);
	pg_store.initialized = true;
	pg_store.generation++;
	pg_tokens_scan_locked(true);
out:
	pg_store_unlock();
	pg_store_life_end();
	free(dir);
	return rv;
}

CK_RV
C_Finalize(CK_VOID_PTR pReserved)
{
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	if (pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pg_store_life_begin();
	pg_store_lock();
	if (!pg_store.initialized || pg_store.stale) {
		pg_store_unlock();
		pg_store_life_end();
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	pg_store.initialized = false;
	/* Wake C_WaitForSlotEvent callers; they return NOT_INITIALIZED. */
	pthread_cond_broadcast(&pg_store.event);
	while (pg_store.waiters > 0)
		pthread_cond_wait(&pg_store.event, pg_store_mutex());
	pg_store_unlock();
	free_state(false);
	pg_store_life_end();
	return CKR_OK;
}
