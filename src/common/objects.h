/*
 * Reading objects through any module's function list: a search that
 * collects handles, and attribute values in buffers of their own. For
 * the code that looks at tokens from outside (the command line, token
 * access, the trust tools), not for modules' own objects.
 */
#ifndef PG_OBJECTS_H
#define PG_OBJECTS_H

#include "common.h"

#include <p11glue/pkcs11.h>

/*
 * Searches session s for objects matching tmpl (n attributes; NULL, 0 for
 * every object): *found gets every handle (free(); NULL when there are
 * none) and *count how many. The search is finished in every case.
 * Returns the first failing call's code (CKR_HOST_MEMORY when out of
 * memory), else CKR_OK.
 */
CK_RV pg_objects_find(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_ATTRIBUTE *tmpl, CK_ULONG n,
                      CK_OBJECT_HANDLE **found, size_t *count);

/*
 * The value of one attribute of obj in a new buffer, NUL-terminated (the
 * NUL not counted in *len); NULL when the object has none, it cannot be
 * read, it is over 16 MiB or memory is short. free().
 */
unsigned char *pg_objects_get(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
                              CK_ATTRIBUTE_TYPE type, size_t *len);

/* A CK_ULONG attribute (class, key type ...); false when absent. */
bool pg_objects_get_ulong(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
                          CK_ATTRIBUTE_TYPE type, CK_ULONG *value);

/* The URI type name of an object class ("cert", "private" ...), or NULL. */
const char *pg_objects_type_name(CK_OBJECT_CLASS klass);

#endif /* PG_OBJECTS_H */
