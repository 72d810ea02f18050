/*
 * Lookups in attribute arrays as PKCS#11 passes them (trust-format.h):
 * the templates given to C_CreateObject, the objects the persistence
 * format writes, and the attributes of a section while it is read.
 */
#include "trust-format.h"

#include <string.h>

const CK_ATTRIBUTE *
pg_template_find(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (attrs[i].type == type)
			return &attrs[i];
	return NULL;
}

bool
pg_template_ulong(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type, CK_ULONG *out)
{
	const CK_ATTRIBUTE *a = pg_template_find(attrs, n, type);

	if (a == NULL || a->pValue == NULL || a->ulValueLen != sizeof(CK_ULONG))
		return false;
	memcpy(out, a->pValue, sizeof(CK_ULONG));
	return true;
}

int
pg_template_bool(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	const CK_ATTRIBUTE *a = pg_template_find(attrs, n, type);

	if (a == NULL || a->pValue == NULL || a->ulValueLen != 1)
		return -1;
	return *(const CK_BBOOL *)a->pValue != CK_FALSE;
}
