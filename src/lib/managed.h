/*
 * Managed function lists: every caller of a module (each library instance
 * or registry in the process) gets its own CK_FUNCTION_LIST_3_0, so one
 * caller's C_Finalize or C_CloseAllSessions never touches another
 * caller's sessions, and the module is initialized once and finalized
 * when its last caller finalizes.
 *
 * PKCS#11 functions get no "self" argument, so each list needs functions
 * of its own. They are made at compile time, without run-time code
 * generation: a fixed pool of PG_MANAGED_MAX lists, each with its own
 * set of small wrappers that know their pool index.
 */
#ifndef PG_MANAGED_H
#define PG_MANAGED_H

#include "modules.h"

#define PG_MANAGED_MAX 64

/*
 * A new uninitialized managed list for module (holding a reference of
 * its own). reserved is the C_Initialize reserved string to use; name
 * labels call logs (log_calls: every call, its first argument (slot,
 * session, flags) and its result go to stderr; never a PIN or any
 * other value). passthrough makes a list for callers that asked for
 * the module unmanaged but whose calls are to be logged: no session
 * tracking, no checks of its own (the module answers), C_Initialize
 * and C_Finalize still counted. NULL when the pool is exhausted or
 * memory runs out.
 */
CK_FUNCTION_LIST_3_0 *pg_managed_new(pg_module *module, const char *reserved,
                                     const char *name, bool log_calls, bool passthrough);

/* Finalizes the list if its caller did not, and returns it to the pool. */
void pg_managed_free(CK_FUNCTION_LIST_3_0 *list);

/* True when list is one of the managed lists. */
bool pg_managed_is(const CK_FUNCTION_LIST_3_0 *list);

#endif /* PG_MANAGED_H */
