/*
 * libFuzzer target for the configuration file parser: no crash, no leak,
 * and every parsed setting is a valid name with a value free of NUL and
 * surrounding white space.
 */
#include "config.h"

#include "conf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_conf_map map = { 0 };
	pg_buf errors;

	pg_buf_init(&errors);
	pg_conf_parse((const char *)data, size, "fuzz", &map, &errors);
	for (size_t i = 0; i < map.n; i++) {
		const char *k = map.items[i].key, *v = map.items[i].value;
		size_t vl = strlen(v);
		if (*k == 0 || strcspn(k, ":# \t\n") != strlen(k))
			abort();
		if (strchr(v, '\n') || (vl && (blank(v[0]) || blank(v[vl - 1]))))
			abort();
		/* A lookup finds the stored value. */
		if (pg_conf_map_get(&map, k) != v)
			abort();
	}
	pg_conf_map_clear(&map);
	pg_buf_clear(&errors);
	return 0;
}
