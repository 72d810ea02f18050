/*
 * A map from CK_ULONG handles to CK_ULONG values (open addressing, linear
 * probing, backward-shift deletion). Used for session and slot tables.
 * Not locked: callers guard it. 0 is a valid key.
 */
#ifndef PG_HANDLES_H
#define PG_HANDLES_H

#include "common.h"

#include <p11glue/pkcs11.h>

typedef struct {
	CK_ULONG key;
	CK_ULONG value;
	bool used;
} pg_handle_entry;

typedef struct {
	pg_handle_entry *slots;
	size_t cap;       /* a power of two, or 0 */
	size_t n;
} pg_handle_map;

void pg_handle_map_init(pg_handle_map *map);
void pg_handle_map_clear(pg_handle_map *map);
/* Sets key to value (replacing); false when out of memory. */
bool pg_handle_map_put(pg_handle_map *map, CK_ULONG key, CK_ULONG value) PG_MUST_CHECK;
/* Fibonacci hashing spreads sequential handles. */
static inline size_t
pg_handle_hash(CK_ULONG key)
{
	return (size_t)((unsigned long long)key * 0x9E3779B97F4A7C15ULL >> 17);
}

/* The entry of key, or NULL (inline: lookups sit on hot paths). */
static inline pg_handle_entry *
pg_handle_map_find(const pg_handle_map *map, CK_ULONG key)
{
	if (map->cap == 0)
		return NULL;
	for (size_t i = pg_handle_hash(key) & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		pg_handle_entry *e = &map->slots[i];
		if (!e->used)
			return NULL;
		if (e->key == key)
			return e;
	}
}

/* Looks key up; false when absent. value may be NULL. */
bool pg_handle_map_get(const pg_handle_map *map, CK_ULONG key, CK_ULONG *value);
/* Removes key; false when it was absent. */
bool pg_handle_map_remove(pg_handle_map *map, CK_ULONG key);
/* Iteration: *pos starts at 0; false at the end. */
bool pg_handle_map_next(const pg_handle_map *map, size_t *pos, CK_ULONG *key, CK_ULONG *value);

#endif /* PG_HANDLES_H */
