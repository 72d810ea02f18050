/*
 * A hash multimap from 64-bit keys to pointers: open addressing with
 * linear probing and backward-shift deletion, so there are no
 * tombstones and lookups stay short however many removals happen.
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

static size_t
slot_of(const pg_map *map, uint64_t key)
{
	/* A 64-bit mix (the finaliser of splitmix64), so that sequential
	 * handles and FNV hashes both spread over the table. */
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ULL;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebULL;
	key ^= key >> 31;
	return (size_t)key & map->mask;
}

void
pg_map_init(pg_map *map)
{
	memset(map, 0, sizeof(*map));
}

void
pg_map_clear(pg_map *map)
{
	if (map == NULL)
		return;
	free(map->slots);
	pg_map_init(map);
}

static void
put(pg_map *map, uint64_t key, void *value)
{
	size_t i = slot_of(map, key);

	while (map->slots[i].value != NULL)
		i = (i + 1) & map->mask;
	map->slots[i].key = key;
	map->slots[i].value = value;
	map->n++;
}

static bool
grow(pg_map *map)
{
	pg_map bigger;
	size_t cap = map->slots ? (map->mask + 1) * 2 : 16;

	if (cap == 0 || cap > SIZE_MAX / sizeof(pg_map_slot))
		return false;
	pg_map_init(&bigger);
	bigger.slots = calloc(cap, sizeof(pg_map_slot));
	if (bigger.slots == NULL)
		return false;
	bigger.mask = cap - 1;
	for (size_t i = 0; map->slots && i <= map->mask; i++) {
		if (map->slots[i].value != NULL)
			put(&bigger, map->slots[i].key, map->slots[i].value);
	}
	free(map->slots);
	*map = bigger;
	return true;
}

bool
pg_map_add(pg_map *map, uint64_t key, void *value)
{
	pg_return_val_if_fail(value != NULL, false);

	/* Keep the load at most 1/2 so probe runs stay short. */
	if (map->slots == NULL || (map->n + 1) * 2 > map->mask + 1) {
		if (!grow(map))
			return false;
	}
	put(map, key, value);
	return true;
}

bool
pg_map_remove(pg_map *map, uint64_t key, const void *value)
{
	size_t i, j;

	if (map->slots == NULL)
		return false;
	for (i = slot_of(map, key); map->slots[i].value != NULL; i = (i + 1) & map->mask) {
		if (map->slots[i].key == key && map->slots[i].value == value)
			break;
	}
	if (map->slots[i].value == NULL)
		return false;

	/*
	 * Backward shift: move later members of the probe run into the hole
	 * when their home slot does not lie cyclically in (hole, j].
	 */
	map->slots[i].value = NULL;
	map->n--;
	for (j = (i + 1) & map->mask; map->slots[j].value != NULL; j = (j + 1) & map->mask) {
		size_t home = slot_of(map, map->slots[j].key);
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		map->slots[i] = map->slots[j];
		map->slots[j].value = NULL;
		i = j;
	}
	return true;
}

void *
pg_map_next(const pg_map *map, uint64_t key, size_t *pos)
{
	size_t i;

	if (map->slots == NULL)
		return NULL;
	/* *pos counts probes from the home slot. */
	for (i = (slot_of(map, key) + *pos) & map->mask; map->slots[i].value != NULL;
	     i = (i + 1) & map->mask) {
		(*pos)++;
		if (*pos > map->mask + 1)
			return NULL;
		if (map->slots[i].key == key)
			return map->slots[i].value;
	}
	return NULL;
}

void *
pg_map_get(const pg_map *map, uint64_t key)
{
	size_t pos = 0;

	return pg_map_next(map, key, &pos);
}

void *
pg_map_get_handle(const pg_map *map, CK_ULONG handle)
{
	if (handle == CK_INVALID_HANDLE)
		return NULL;
	return pg_map_get(map, handle);
}

void *
pg_map_each(const pg_map *map, size_t *pos)
{
	if (map->slots == NULL)
		return NULL;
	while (*pos <= map->mask) {
		void *value = map->slots[*pos].value;
		(*pos)++;
		if (value != NULL)
			return value;
	}
	return NULL;
}

uint64_t
pg_hash_bytes(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
