/*
 * Reading objects through a function list (objects.h).
 */
#include "config.h"

#include "objects.h"

#include <stdlib.h>

CK_RV
pg_objects_find(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_ATTRIBUTE *tmpl, CK_ULONG n,
                CK_OBJECT_HANDLE **found, size_t *count)
{
	CK_OBJECT_HANDLE *all = NULL, *more;
	size_t cap = 0;
	CK_ULONG got;
	CK_RV rv = f->C_FindObjectsInit(s, tmpl, n);
	bool started = rv == CKR_OK;

	*count = 0;
	while (rv == CKR_OK) {
		if (cap - *count < 64) {
			more = realloc(all, (cap + 256) * sizeof(*all));
			if (more == NULL) {
				rv = CKR_HOST_MEMORY;
				break;
			}
			all = more;
			cap += 256;
		}
		rv = f->C_FindObjects(s, all + *count, (CK_ULONG)(cap - *count), &got);
		if (rv != CKR_OK || got == 0)
			break;
		*count += got;
	}
	if (started)
		f->C_FindObjectsFinal(s);
	if (rv != CKR_OK || *count == 0) {
		free(all);
		all = NULL;
		*count = 0;
	}
	*found = all;
	return rv;
}

unsigned char *
pg_objects_get(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
               CK_ATTRIBUTE_TYPE type, size_t *len)
{
	CK_ATTRIBUTE attr = { type, NULL, 0 };
	unsigned char *value;

	*len = 0;
	if (f->C_GetAttributeValue(s, obj, &attr, 1) != CKR_OK ||
	    attr.ulValueLen == CK_UNAVAILABLE_INFORMATION || attr.ulValueLen > (1u << 24))
		return NULL;
	value = malloc(attr.ulValueLen + 1);
	attr.pValue = value;
	if (value == NULL || f->C_GetAttributeValue(s, obj, &attr, 1) != CKR_OK) {
		free(value);
		return NULL;
	}
	value[attr.ulValueLen] = 0;
	*len = attr.ulValueLen;
	return value;
}

bool
pg_objects_get_ulong(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
                     CK_ATTRIBUTE_TYPE type, CK_ULONG *value)
{
	CK_ATTRIBUTE attr = { type, value, sizeof(*value) };

	return f->C_GetAttributeValue(s, obj, &attr, 1) == CKR_OK &&
	       attr.ulValueLen == sizeof(*value);
}

const char *
pg_objects_type_name(CK_OBJECT_CLASS klass)
{
	switch (klass) {
	case CKO_DATA: return "data";
	case CKO_CERTIFICATE: return "cert";
	case CKO_PUBLIC_KEY: return "public";
	case CKO_PRIVATE_KEY: return "private";
	case CKO_SECRET_KEY: return "secret-key";
	default: return NULL;
	}
}
