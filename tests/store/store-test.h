/*
 * Helpers for the key store tests: the module through its 3.0 function
 * list, a store directory per test case, a ready token.
 */
#ifndef PG_STORE_TEST_H
#define PG_STORE_TEST_H

#include "harness.h"

#include <p11glue/pkcs11.h>

#include <string.h>

/* The 3.0 function list of the store (linked in). */
extern CK_FUNCTION_LIST_3_0 *p11;

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

#define SO_PIN "so-secret"
#define USER_PIN "1234"

/* Asserts a CK_RV, printing both codes on failure. */
#define ck_assert_rv(got, want) pg_assert_ulong_eq((CK_RV)(got), (CK_RV)(want))

/* Loads the function list (once). */
void st_load(void);
/* The store directory of the current case (under pg_test_tmpdir()). */
const char *st_dir(void);
/* "store=DIR scrypt-log2n=10 " followed by extra (may be NULL). */
const char *st_options(const char *extra);
/* C_Initialize with st_options(extra); returns its result. */
CK_RV st_initialize(const char *extra);
/* C_Initialize that must succeed. */
void st_init(void);
void st_fini(void);
/* A teardown for pg_test_fixture: finalizes if a failed case did not. */
void st_teardown(void);
/* The free slot (exactly one must exist). */
CK_SLOT_ID st_free_slot(void);
/* Makes a token with SO_PIN and USER_PIN; returns its slot. */
CK_SLOT_ID st_token(const char *label);
CK_SESSION_HANDLE st_open(CK_SLOT_ID slot, bool rw);
void st_login(CK_SESSION_HANDLE session);
/* Creates a data object; returns its handle. */
CK_OBJECT_HANDLE st_data(CK_SESSION_HANDLE session, const char *label, bool token, bool priv);
/* Number of objects matching a template. */
CK_ULONG st_count(CK_SESSION_HANDLE session, CK_ATTRIBUTE *tmpl, CK_ULONG n);
/* Number of objects with this label. */
CK_ULONG st_count_label(CK_SESSION_HANDLE session, const char *label);
/* The token database file of a slot. */
const char *st_token_path(CK_SLOT_ID slot);

#endif /* PG_STORE_TEST_H */
