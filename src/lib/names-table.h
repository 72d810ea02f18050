/*
 * The tables behind names.h: constants by name, and their lookups
 * (names.c). Private to src/lib.
 */
#ifndef PG_NAMES_TABLE_H
#define PG_NAMES_TABLE_H

#include "names.h"

#include <stddef.h>

typedef struct {
	const char *name;
	CK_ULONG value;
} pg_name_entry;

/* The name of value in table, or NULL. */
const char *pg_name_lookup(const pg_name_entry *table, size_t n, CK_ULONG value);

/*
 * The value named name in table: the full name ("CKR_OK") or, without
 * the prefix ("CKR_"), the rest ("OK"). False when there is none.
 */
bool pg_value_lookup(const pg_name_entry *table, size_t n, const char *prefix, const char *name,
                     CK_ULONG *value);

#endif /* PG_NAMES_TABLE_H */
