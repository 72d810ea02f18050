/*
 * Tests of the handle map (src/common/handles.c) against a plain array.
 */
#include "config.h"

#include "harness.h"
#include "handles.h"

#include <stdlib.h>
#include <string.h>

#define KEYS 512

static void
test_basic(void)
{
	pg_handle_map map;
	CK_ULONG value = 0;

	pg_handle_map_init(&map);
	pg_assert(!pg_handle_map_get(&map, 0, &value));
	pg_assert(!pg_handle_map_remove(&map, 7));
	pg_assert(pg_handle_map_put(&map, 0, 10));
	pg_assert(pg_handle_map_put(&map, 0, 11));
	pg_assert(pg_handle_map_get(&map, 0, &value));
	pg_assert_int_eq(value, 11);
	pg_assert_int_eq(map.n, 1);
	pg_assert(pg_handle_map_put(&map, (CK_ULONG)-1, 5));
	pg_assert(pg_handle_map_get(&map, (CK_ULONG)-1, NULL));
	pg_assert(pg_handle_map_remove(&map, 0));
	pg_assert(!pg_handle_map_get(&map, 0, NULL));
	pg_handle_map_clear(&map);
	pg_assert_int_eq(map.n, 0);
}

/* Random puts and removes agree with a reference array. */
static void
test_random_against_array(void)
{
	static CK_ULONG ref[KEYS];
	static bool present[KEYS];
	unsigned long long state = 42;
	pg_handle_map map;
	CK_ULONG key, value;
	size_t pos, seen;

	memset(present, 0, sizeof(present));
	pg_handle_map_init(&map);
	for (int round = 0; round < 200000; round++) {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		/* Keys clustered so that probe runs collide and wrap. */
		key = (CK_ULONG)((state >> 33) % KEYS) * 16;
		if ((state >> 20) % 3 == 0) {
			pg_assert_int_eq(pg_handle_map_remove(&map, key), present[key / 16]);
			present[key / 16] = false;
		} else {
			pg_assert(pg_handle_map_put(&map, key, round));
			ref[key / 16] = (CK_ULONG)round;
			present[key / 16] = true;
		}
		if (round % 997 == 0) {
			for (size_t k = 0; k < KEYS; k++) {
				bool got = pg_handle_map_get(&map, k * 16, &value);
				pg_assert_int_eq(got, present[k]);
				if (got)
					pg_assert_int_eq(value, ref[k]);
			}
		}
	}
	pos = 0;
	seen = 0;
	while (pg_handle_map_next(&map, &pos, &key, &value)) {
		pg_assert(present[key / 16]);
		pg_assert_int_eq(value, ref[key / 16]);
		seen++;
	}
	pg_assert_int_eq(seen, map.n);
	pg_handle_map_clear(&map);
}

int
main(int argc, char **argv)
{
	pg_test("handles/basic", test_basic);
	pg_test("handles/random-against-array", test_random_against_array);
	return pg_test_run(argc, argv);
}
