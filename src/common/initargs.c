/*
 * C_Initialize argument checks (see initargs.h).
 */
#include "config.h"

#include "initargs.h"

#include <stddef.h>

CK_RV
pg_check_initialize_args(const CK_C_INITIALIZE_ARGS *args)
{
	int given;

	if (args == NULL)
		return CKR_OK;
	given = (args->CreateMutex != NULL) + (args->DestroyMutex != NULL) +
	        (args->LockMutex != NULL) + (args->UnlockMutex != NULL);
	if (given != 0 && given != 4)
		return CKR_ARGUMENTS_BAD;
	if (given == 4 && !(args->flags & CKF_OS_LOCKING_OK))
		return CKR_CANT_LOCK;
	return CKR_OK;
}
