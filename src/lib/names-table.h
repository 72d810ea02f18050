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

/* pg_name_<kind> and pg_value_<kind> of names.h over <kind>_names[]. */
#define PG_NAME_FUNCS(kind, type, prefix)                                                    \
	const char *pg_name_##kind(type value)                                               \
	{                                                                                    \
		return pg_name_lookup(kind##_names, PG_N_ELEMENTS(kind##_names), value);         \
	}                                                                                    \
	bool pg_value_##kind(const char *name, type *value)                                  \
	{                                                                                    \
		CK_ULONG v;                                                                      \
		if (!pg_value_lookup(kind##_names, PG_N_ELEMENTS(kind##_names), prefix, name, &v)) \
			return false;                                                                \
		*value = v;                                                                      \
		return true;                                                                     \
	}

#endif /* PG_NAMES_TABLE_H */
