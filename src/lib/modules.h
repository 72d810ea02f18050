/*
 * Loaded PKCS#11 modules, shared by everything in the process: one load
 * per library file, whatever names point at it, and reference-counted
 * C_Initialize/C_Finalize so several users can share a module.
 */
#ifndef PG_MODULES_H
#define PG_MODULES_H

#include "common.h"

#include <p11glue/pkcs11.h>

typedef struct pg_module pg_module;

/*
 * Resolves a module: path absolute, or relative to the module path
 * (P11GLUE_MODULE_PATH, colon-separated). Returns a new string (free it)
 * or NULL when no file is found.
 */
char *pg_module_resolve(const char *path);

/*
 * Opens the module file (loading it on first use, with C_GetInterface of
 * PKCS#11 3.0 first and C_GetFunctionList as fallback). Each open is a
 * reference: release it with pg_module_close. On failure NULL and
 * *error (free it) says why.
 */
pg_module *pg_module_open(const char *path, char **error);
/* pg_module_open, saying why it failed on stderr ("WHO: cannot load
 * PATH: why"; without WHO, no prefix). */
pg_module *pg_module_load(const char *path, const char *who);
void pg_module_close(pg_module *module);

/* The module's own function list; its version says whether the 3.0 part
 * exists (version.major >= 3). Valid while a reference is held. */
CK_FUNCTION_LIST_3_0 *pg_module_functions(const pg_module *module);
const char *pg_module_path(const pg_module *module);
bool pg_module_is_v3(const pg_module *module);

/*
 * Initializes the module for one more user: the first user's call runs
 * C_Initialize with OS locking and the reserved string (may be NULL);
 * later ones only count. A module that someone else in the process
 * already initialized counts as initialized and is never finalized here.
 */
CK_RV pg_module_initialize(pg_module *module, const char *reserved);

/* Drops one user; the last one runs C_Finalize. */
CK_RV pg_module_finalize(pg_module *module);

/* The process forked: in the child every module is uninitialized (its
 * users must initialize again, as PKCS#11 requires); then the fork hook
 * runs. */
void pg_modules_after_fork(void);

/* Sets what pg_modules_after_fork runs last: the managed lists (the
 * layer above, managed.c) drop their state there. */
void pg_modules_set_fork_hook(void (*hook)(void));

#endif /* PG_MODULES_H */
