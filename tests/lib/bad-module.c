/*
 * Shared libraries that a registry file may name but that are no usable
 * PKCS#11 module, for tests/lib/test-registry-files.c. Built twice:
 * without BAD_MODULE_EMPTY_LIST it exports no PKCS#11 entry point at all;
 * with it, C_GetFunctionList hands out a 2.40 list whose entries are all
 * NULL.
 */
#include <stddef.h>

#include <p11glue/pkcs11.h>

#define EXPORT __attribute__((visibility("default")))

#ifdef BAD_MODULE_EMPTY_LIST
static CK_FUNCTION_LIST empty_list = { { 2, 40 } };

EXPORT CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list);

EXPORT CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list)
{
	if (list == NULL)
		return CKR_ARGUMENTS_BAD;
	*list = &empty_list;
	return CKR_OK;
}
#else
EXPORT int not_pkcs11(void);

EXPORT int
not_pkcs11(void)
{
	return 11;
}
#endif
