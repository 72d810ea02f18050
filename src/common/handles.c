/*
 * Handle maps (see handles.h).
 */
#include "config.h"

#include "handles.h"

#include <stdlib.h>
#include <string.h>

void
pg_handle_map_init(pg_handle_map *map)
{
	memset(map, 0, sizeof(*map));
}

void
pg_handle_map_clear(pg_handle_map *map)
{
	free(map->slots);
	pg_handle_map_init(map);
}

static bool
grow(pg_handle_map *map)
{
	pg_handle_map bigger;
	size_t cap = map->cap ? map->cap * 2 : 16;

	bigger.slots = calloc(cap, sizeof(*bigger.slots));
	if (bigger.slots == NULL)
		return false;
	bigger.cap = cap;
	bigger.n = 0;
	for (size_t i = 0; i < map->cap; i++) {
		if (map->slots[i].used &&
		    !pg_handle_map_put(&bigger, map->slots[i].key, map->slots[i].value)) {
			free(bigger.slots);
			return false;
		}
	}
	free(map->slots);
	*map = bigger;
	return true;
}

bool
pg_handle_map_put(pg_handle_map *map, CK_ULONG key, CK_ULONG value)
{
	size_t i;

	/* Keep the load under 3/4. */
	if ((map->n + 1) * 4 > map->cap * 3 && !grow(map))
		return false;
	for (i = pg_handle_hash(key) & (map->cap - 1);; i = (i + 1) & (map->cap - 1)) {
		pg_handle_entry *e = &map->slots[i];
		if (!e->used) {
			*e = (pg_handle_entry){ key, value, true };
			map->n++;
			return true;
		}
		if (e->key == key) {
			e->value = value;
			return true;
		}
	}
}

bool
pg_handle_map_get(const pg_handle_map *map, CK_ULONG key, CK_ULONG *value)
{
	pg_handle_entry *e = pg_handle_map_find(map, key);

	if (e == NULL)
		return false;
	if (value)
		*value = e->value;
	return true;
}

bool
pg_handle_map_remove(pg_handle_map *map, CK_ULONG key)
{
	pg_handle_entry *e = pg_handle_map_find(map, key);
	size_t hole, i, mask = map->cap - 1;

	if (e == NULL)
		return false;
	hole = (size_t)(e - map->slots);
	map->slots[hole].used = false;
	map->n--;
	/* Backward shift: move later entries of the run into the hole when
	 * their home position does not lie between the hole and them. */
	for (i = (hole + 1) & mask; map->slots[i].used; i = (i + 1) & mask) {
		size_t home = pg_handle_hash(map->slots[i].key) & mask;
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			map->slots[hole] = map->slots[i];
			map->slots[i].used = false;
			hole = i;
		}
	}
	return true;
}

bool
pg_handle_map_next(const pg_handle_map *map, size_t *pos, CK_ULONG *key, CK_ULONG *value)
{
	for (; *pos < map->cap; (*pos)++) {
		if (map->slots[*pos].used) {
			if (key)
				*key = map->slots[*pos].key;
			if (value)
				*value = map->slots[*pos].value;
			(*pos)++;
			return true;
		}
	}
	return false;
}
