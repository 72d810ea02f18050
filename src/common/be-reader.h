/*
 * Bounds-checked reading of big-endian binary formats (OpenSSH keys,
 * Java keystores): every read past the end fails, and once a read has
 * failed every later one does too, so a parser checks once at the end.
 */
#ifndef PG_TOOL_BE_READER_H
#define PG_TOOL_BE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const uint8_t *data;
	size_t len;
	size_t off;                  /* never above len */
	bool failed;
} pg_be_reader;

/* The next n bytes (a view into the input); NULL on failure. */
static inline const uint8_t *
pg_be_bytes(pg_be_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->failed || r->off > r->len || r->len - r->off < n) {
		r->failed = true;
		return NULL;
	}
	p = r->data + r->off;
	r->off += n;
	return p;
}

static inline uint16_t
pg_be_u16(pg_be_reader *r)
{
	const uint8_t *p = pg_be_bytes(r, 2);

	return p != NULL ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

static inline uint32_t
pg_be_u32(pg_be_reader *r)
{
	const uint8_t *p = pg_be_bytes(r, 4);

	return p != NULL ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
	                 : 0;
}

#endif /* PG_TOOL_BE_READER_H */
