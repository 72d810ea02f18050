/*
 * The C_Initialize argument rules every p11glue module and wrapper
 * applies (PKCS#11 v3.0 §5.4).
 */
#ifndef PG_INITARGS_H
#define PG_INITARGS_H

#include <p11glue/pkcs11.h>

/*
 * CKR_ARGUMENTS_BAD when only some of the four mutex callbacks are given;
 * CKR_CANT_LOCK when all four are given without CKF_OS_LOCKING_OK (p11glue
 * locks with the operating system's primitives and cannot use the
 * caller's); else CKR_OK. args may be NULL.
 */
CK_RV pg_check_initialize_args(const CK_C_INITIALIZE_ARGS *args);

#endif /* PG_INITARGS_H */
