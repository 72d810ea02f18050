/*
 * C_GetInterfaceList and C_GetInterface (PKCS#11 3.0, 5.4) over a
 * module's own table of interfaces, for every module p11glue builds.
 */
#ifndef PG_INTERFACES_H
#define PG_INTERFACES_H

#include "common.h"
#include "pkcs11-calls.h"

#include <p11glue/pkcs11.h>

/* Copies the table to list, or gives its size (list NULL) in *count. */
CK_RV pg_interfaces_list(const CK_INTERFACE *table, CK_ULONG n, CK_INTERFACE_PTR list,
                         CK_ULONG_PTR count);

/* The first interface of the table with that name (NULL: any), version
 * of its function list (NULL: any) and at least those flags. */
CK_RV pg_interfaces_find(CK_INTERFACE *table, CK_ULONG n, CK_UTF8CHAR_PTR name,
                         CK_VERSION_PTR version, CK_INTERFACE_PTR_PTR found, CK_FLAGS flags);

/*
 * The function lists of a module whose entry points are named by entry
 * (a macro of pkcs11-calls.h's X form expanding to "prefix_C_Xxx,"):
 * list3 (3.0) and list2 (2.40), the interfaces table ifaces offering
 * both ("PKCS 11", 3.0 first), and prefix##C_GetInterfaceList and
 * prefix##C_GetInterface over it. Declare the three variables ahead
 * (static) where the module's own code uses them.
 */
#define PG_MODULE_LISTS(prefix, entry, list3, list2, ifaces)                                 \
	static CK_RV prefix##C_GetInterfaceList(CK_INTERFACE_PTR list, CK_ULONG_PTR count)   \
	{                                                                                    \
		return pg_interfaces_list(ifaces, PG_N_ELEMENTS(ifaces), list, count);           \
	}                                                                                    \
	static CK_RV prefix##C_GetInterface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR version,    \
	                                    CK_INTERFACE_PTR_PTR found, CK_FLAGS flags)      \
	{                                                                                    \
		return pg_interfaces_find(ifaces, PG_N_ELEMENTS(ifaces), name, version, found,   \
		                          flags);                                                \
	}                                                                                    \
	static CK_FUNCTION_LIST_3_0 list3 = { { 3, 0 }, PG_CALLS(entry) };                  \
	static CK_FUNCTION_LIST list2 = { { 2, 40 }, PG_CALLS_2X(entry) };                  \
	static CK_INTERFACE ifaces[2] = {                                                    \
		{ (CK_CHAR_PTR)"PKCS 11", &list3, 0 },                                           \
		{ (CK_CHAR_PTR)"PKCS 11", &list2, 0 },                                           \
	}

/*
 * The three entry points a module exports by name, C_GetFunctionList,
 * C_GetInterfaceList and C_GetInterface, handing on to the module's
 * prefix##C_Xxx; attr makes them visible (the modules build with hidden
 * visibility).
 */
#define PG_MODULE_EXPORTS(prefix, attr)                                                      \
	attr CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list)                          \
	{                                                                                    \
		return prefix##C_GetFunctionList(list);                                          \
	}                                                                                    \
	attr CK_RV C_GetInterfaceList(CK_INTERFACE_PTR list, CK_ULONG_PTR count)             \
	{                                                                                    \
		return prefix##C_GetInterfaceList(list, count);                                  \
	}                                                                                    \
	attr CK_RV C_GetInterface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR version,              \
	                          CK_INTERFACE_PTR_PTR found, CK_FLAGS flags)                \
	{                                                                                    \
		return prefix##C_GetInterface(name, version, found, flags);                      \
	}

#endif /* PG_INTERFACES_H */
