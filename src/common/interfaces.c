/*
 * The interface functions of PKCS#11 3.0 over a table (interfaces.h).
 */
#include "config.h"

#include "interfaces.h"

#include <string.h>

CK_RV
pg_interfaces_list(const CK_INTERFACE *table, CK_ULONG n, CK_INTERFACE_PTR list,
                   CK_ULONG_PTR count)
{
	CK_ULONG room;

	if (count == NULL)
		return CKR_ARGUMENTS_BAD;
	room = *count;
	*count = n;
	if (list == NULL)
		return CKR_OK;
	if (room < n)
		return CKR_BUFFER_TOO_SMALL;
	memcpy(list, table, n * sizeof(*table));
	return CKR_OK;
}

CK_RV
pg_interfaces_find(CK_INTERFACE *table, CK_ULONG n, CK_UTF8CHAR_PTR name,
                   CK_VERSION_PTR version, CK_INTERFACE_PTR_PTR found, CK_FLAGS flags)
{
	if (found == NULL)
		return CKR_ARGUMENTS_BAD;
	for (CK_ULONG i = 0; i < n; i++) {
		CK_INTERFACE *iface = &table[i];
		/* Every function list starts with its version. */
		const CK_VERSION *v = iface->pFunctionList;
		if (name != NULL && strcmp((const char *)name, (const char *)iface->pInterfaceName) != 0)
			continue;
		if (version != NULL && (version->major != v->major || version->minor != v->minor))
			continue;
		if ((iface->flags & flags) != flags)
			continue;
		*found = iface;
		return CKR_OK;
	}
	*found = NULL;
	return CKR_ARGUMENTS_BAD;
}
