/*
 * Names of PKCS#11 constants, for messages, call logs and the CLI
 * (generated once from include/p11glue/pkcs11.h; where several names share
 * a value, the first one the header gives wins).
 */
#ifndef PG_NAMES_H
#define PG_NAMES_H

#include <p11glue/pkcs11.h>

#include <stdbool.h>

/* "CKR_..." name of a value, or NULL when unknown. */
const char *pg_name_ckr(CK_RV value);
/* The value of a name (with or without the "CKR_" prefix); false when unknown. */
bool pg_value_ckr(const char *name, CK_RV *value);

/* "CKM_..." name of a value, or NULL when unknown. */
const char *pg_name_ckm(CK_MECHANISM_TYPE value);
/* The value of a name (with or without the "CKM_" prefix); false when unknown. */
bool pg_value_ckm(const char *name, CK_MECHANISM_TYPE *value);

/* "CKA_..." name of a value, or NULL when unknown. */
const char *pg_name_cka(CK_ATTRIBUTE_TYPE value);
/* The value of a name (with or without the "CKA_" prefix); false when unknown. */
bool pg_value_cka(const char *name, CK_ATTRIBUTE_TYPE *value);

/* "CKO_..." name of a value, or NULL when unknown. */
const char *pg_name_cko(CK_OBJECT_CLASS value);
/* The value of a name (with or without the "CKO_" prefix); false when unknown. */
bool pg_value_cko(const char *name, CK_OBJECT_CLASS *value);

/* "CKK_..." name of a value, or NULL when unknown. */
const char *pg_name_ckk(CK_KEY_TYPE value);
/* The value of a name (with or without the "CKK_" prefix); false when unknown. */
bool pg_value_ckk(const char *name, CK_KEY_TYPE *value);

#endif /* PG_NAMES_H */
