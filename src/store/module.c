/*
 * The module's function lists and interfaces, and C_GetInfo (each list
 * reports its own version). The members come from mech-entry.h, which
 * the build generates from src/common/pkcs11-calls.h and mech.h: the
 * core's C_Xxx where the core implements a call, the mech layer's
 * pg_C_Xxx elsewhere. The state behind them is core/state.c's.
 */
#include "config.h"

#include "core.h"
#include "interfaces.h"
#include "mech-entry.h"

#include <string.h>

static CK_RV
get_info(CK_INFO_PTR pInfo, CK_BYTE major, CK_BYTE minor)
{
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	if (pInfo == NULL)
		return CKR_ARGUMENTS_BAD;
	memset(pInfo, 0, sizeof(*pInfo));
	pInfo->cryptokiVersion.major = major;
	pInfo->cryptokiVersion.minor = minor;
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "p11glue");
	pg_pad(pInfo->libraryDescription, sizeof(pInfo->libraryDescription), "p11glue key store");
	pInfo->libraryVersion.major = 0;
	pInfo->libraryVersion.minor = 1;
	return CKR_OK;
}

/* The version reported follows the function list the caller holds. */
CK_RV
C_GetInfo(CK_INFO_PTR pInfo)
{
	return get_info(pInfo, 2, 40);
}

static CK_RV
get_info_3_0(CK_INFO_PTR pInfo)
{
	return get_info(pInfo, 3, 0);
}

static CK_FUNCTION_LIST list_2_40 = {
	{ 2, 40 },
	PG_STORE_FUNCTIONS_2X(C_GetInfo)
};

static CK_FUNCTION_LIST_3_0 list_3_0 = {
	{ 3, 0 },
	PG_STORE_FUNCTIONS_2X(get_info_3_0)
	PG_STORE_FUNCTIONS_3_0
};

/* The default interface first. No CKF_INTERFACE_FORK_SAFE: see above. */
static CK_INTERFACE interfaces[] = {
	{ (CK_CHAR *)"PKCS 11", &list_3_0, 0 },
	{ (CK_CHAR *)"PKCS 11", &list_2_40, 0 },
};

CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR ppFunctionList)
{
	if (ppFunctionList == NULL)
		return CKR_ARGUMENTS_BAD;
	*ppFunctionList = &list_2_40;
	return CKR_OK;
}

CK_RV
C_GetInterfaceList(CK_INTERFACE_PTR pInterfacesList, CK_ULONG_PTR pulCount)
{
	return pg_interfaces_list(interfaces, PG_N_ELEMENTS(interfaces), pInterfacesList, pulCount);
}

CK_RV
C_GetInterface(CK_UTF8CHAR_PTR pInterfaceName, CK_VERSION_PTR pVersion,
               CK_INTERFACE_PTR_PTR ppInterface, CK_FLAGS flags)
{
	return pg_interfaces_find(interfaces, PG_N_ELEMENTS(interfaces), pInterfaceName, pVersion,
	                          ppInterface, flags);
}
