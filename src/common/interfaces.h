/*
 * C_GetInterfaceList and C_GetInterface (PKCS#11 3.0, 5.4) over a
 * module's own table of interfaces, for every module p11glue builds.
 */
#ifndef PG_INTERFACES_H
#define PG_INTERFACES_H

#include <p11glue/pkcs11.h>

/* Copies the table to list, or gives its size (list NULL) in *count. */
CK_RV pg_interfaces_list(const CK_INTERFACE *table, CK_ULONG n, CK_INTERFACE_PTR list,
                         CK_ULONG_PTR count);

/* The first interface of the table with that name (NULL: any), version
 * of its function list (NULL: any) and at least those flags. */
CK_RV pg_interfaces_find(CK_INTERFACE *table, CK_ULONG n, CK_UTF8CHAR_PTR name,
                         CK_VERSION_PTR version, CK_INTERFACE_PTR_PTR found, CK_FLAGS flags);

#endif /* PG_INTERFACES_H */
