/*
 * The C_Initialize argument rules every p11glue module and wrapper
 * applies (PKCS#11 v3.0 §5.4).
 */
#ifndef PG_INITARGS_H
#define PG_INITARGS_H

#include <p11glue/pkcs11.h>

/*
 * A vendor bit of CK_C_INITIALIZE_ARGS.flags (the specification defines
 * only the two lowest bits): pReserved points to a NUL-terminated
 * options string. p11glue's registry sets it when it passes a module's
 * x-init-reserved value.
 */
#define PG_CKF_RESERVED_STRING 0x80000000UL

/*
 * CKR_ARGUMENTS_BAD when only some of the four mutex callbacks are given;
 * CKR_CANT_LOCK when all four are given without CKF_OS_LOCKING_OK (p11glue
 * locks with the operating system's primitives and cannot use the
 * caller's); else CKR_OK. args may be NULL.
 */
CK_RV pg_check_initialize_args(const CK_C_INITIALIZE_ARGS *args);

/*
 * The options string in pReserved, read only from a caller that can be
 * recognised as passing one, since PKCS#11 v3.0 §5.4 says pReserved
 * "should be NULL_PTR" and a caller may pass anything there:
 *  - flags carries PG_CKF_RESERVED_STRING (p11glue's registry), or
 *  - the mutex callbacks lie in NSS's libnss3 or in libp11-kit (also
 *    loaded as p11-kit-proxy.so), whose module loaders pass their own
 *    callbacks and a string there: NSS its module parameters (modutil
 *    -string; the LibraryParameters member of NSS's CK_C_INITIALIZE_ARGS
 *    in pkcs11t.h sits where the specification's pReserved is, and NSS's
 *    own pReserved member after it is NULL), p11-kit a module's
 *    x-init-reserved.
 * Nothing is read through pReserved to decide; a value in the first page
 * of memory is refused even from a recognised caller.
 *
 * *options is set to the string (borrowed from args) or to NULL when
 * args or pReserved is NULL. Returns CKR_OK, or CKR_ARGUMENTS_BAD when
 * pReserved is not NULL and not recognised as a string.
 */
CK_RV pg_initialize_args_options(const CK_C_INITIALIZE_ARGS *args, const char **options);

/* Both: pg_check_initialize_args, then pg_initialize_args_options. */
CK_RV pg_initialize_args_read(const CK_C_INITIALIZE_ARGS *args, const char **options);

#endif /* PG_INITARGS_H */
