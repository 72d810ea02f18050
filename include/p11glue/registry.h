/*
 * The module registry: every PKCS#11 module configured on the machine
 * (pkcs11.conf(5) format and locations, as p11-kit reads them), loaded
 * once per process and shared safely.
 *
 * Each registry is one caller. By default modules are managed: the caller
 * gets function lists of its own, already initialized, so its
 * C_Finalize or C_CloseAllSessions never touches another caller's
 * sessions (another library in the same process, say), and each module
 * is initialized once and finalized when its last caller is done.
 *
 * Configuration: P11GLUE_CONFIG=DIR replaces every location by
 * DIR/pkcs11.conf and DIR/modules/NAME.module. See p11glue.conf(5).
 *
 * Thread safety: a registry may be read from several threads; loading
 * and freeing are not to race with its other uses.
 */
#ifndef P11GLUE_REGISTRY_H
#define P11GLUE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <p11glue/defs.h>
#include <p11glue/pkcs11.h>

#ifdef __cplusplus
extern "C" {
#endif


typedef struct p11glue_registry p11glue_registry;
typedef struct p11glue_module p11glue_module;

/* Flags for p11glue_registry_load(). */
enum {
	/* Only read the configuration: modules are listed, not loaded. */
	P11GLUE_REGISTRY_NO_LOAD = 1 << 0,
	/* Load but do not call C_Initialize (the caller will). */
	P11GLUE_REGISTRY_NO_INIT = 1 << 1,
	/* Select modules as the proxy module does (program name
	 * "p11glue-proxy", also matching "p11-kit-proxy" in enable-in and
	 * disable-in, so distribution files keep their meaning). */
	P11GLUE_REGISTRY_FOR_PROXY = 1 << 2,
	/* Hand out each module's own function list, unmanaged, even when
	 * the configuration says managed (initialization is still shared
	 * and counted; a module with log-calls gets a list that only logs
	 * and forwards). For code that tracks its own sessions. */
	P11GLUE_REGISTRY_UNMANAGED = 1 << 3
};

/*
 * Reads the configuration and loads every module enabled for this
 * program (enable-in / disable-in against the program's name), sorted by
 * priority (higher first), then name. A module that fails to load or
 * initialize is kept in the list with an error (p11glue_module_error)
 * and no function list, unless it is critical: then loading fails with
 * P11GLUE_ERR_MODULE. Messages (p11glue_registry_messages) name each
 * module that cannot be loaded, but not one that loads and fails to
 * initialize (unless critical): that one may simply not be set up for
 * this user, and says so through its error only.
 * Two names for the same library file share one load; the second is
 * listed with the error "same module as NAME".
 * On success *registry is new; free it with p11glue_registry_free.
 */
P11GLUE_PUBLIC int p11glue_registry_load(unsigned flags, p11glue_registry **registry)
	__attribute__((warn_unused_result));

/*
 * Like p11glue_registry_load for one module file only, named name (NULL:
 * the file's base name), with reserved as its C_Initialize reserved
 * string (may be NULL). A failure to load is an error (P11GLUE_ERR_MODULE).
 */
P11GLUE_PUBLIC int p11glue_registry_load_file(const char *path, const char *name,
                                              const char *reserved, unsigned flags,
                                              p11glue_registry **registry)
	__attribute__((warn_unused_result));

/* Finalizes this caller's modules and frees the registry (NULL is fine). */
P11GLUE_PUBLIC void p11glue_registry_free(p11glue_registry *registry);

/* Number of modules, and the index'th (NULL past the end). */
P11GLUE_PUBLIC size_t p11glue_registry_count(const p11glue_registry *registry);
P11GLUE_PUBLIC p11glue_module *p11glue_registry_module(const p11glue_registry *registry,
                                                       size_t index);
/* The module of that registry name, or NULL. */
P11GLUE_PUBLIC p11glue_module *p11glue_registry_find(const p11glue_registry *registry,
                                                     const char *name);

/*
 * Problems met while reading the configuration and loading modules, one
 * per line ("file:line: ..." for syntax errors), or "" when none. Lent
 * until the registry is freed.
 */
P11GLUE_PUBLIC const char *p11glue_registry_messages(const p11glue_registry *registry);

/* The module's registry name (its file name without ".module"). */
P11GLUE_PUBLIC const char *p11glue_module_name(const p11glue_module *module);

/* The library file as configured ("module:"; "" when a broken file gave
 * none) and as resolved (absolute; NULL when no file was found). */
P11GLUE_PUBLIC const char *p11glue_module_filename(const p11glue_module *module);
P11GLUE_PUBLIC const char *p11glue_module_path(const p11glue_module *module);

/* A configuration value of the module ("priority", "x-init-reserved",
 * any x-* key ...), or NULL when unset. */
P11GLUE_PUBLIC const char *p11glue_module_config(const p11glue_module *module,
                                                 const char *key);

/* Why the module is not usable, or NULL when it is. */
P11GLUE_PUBLIC const char *p11glue_module_error(const p11glue_module *module);

/*
 * The function list this caller uses for the module: a managed list
 * unless the module is unmanaged (then the module's own list, or, when
 * its calls are to be logged (log-calls), a list that logs each call and
 * forwards it unchanged); already initialized unless
 * P11GLUE_REGISTRY_NO_INIT. NULL when the module is not usable. Its
 * version says whether it is a CK_FUNCTION_LIST_3_0 (major >= 3).
 * Valid until the registry is freed.
 */
P11GLUE_PUBLIC CK_FUNCTION_LIST *p11glue_module_functions(const p11glue_module *module);

/* The module's priority and trust-policy settings, interpreted. */
P11GLUE_PUBLIC int p11glue_module_priority(const p11glue_module *module);
P11GLUE_PUBLIC bool p11glue_module_is_trust_policy(const p11glue_module *module);

#ifdef __cplusplus
}
#endif

#endif /* P11GLUE_REGISTRY_H */
