/*
 * libFuzzer target for the backup file's parsers (src/backup/format.c):
 * the first 88 bytes as a header, the rest as the record stream that the
 * chunks carry once opened. Checks, for every input: no crash or leak;
 * a header that parses has fields inside their bounds and formats back
 * to the same bytes; the record parser gives the same records, names,
 * sizes and outcome whether the stream comes whole or in pieces of any
 * size, every name it passes on is one pg_backup_name_ok accepts, and
 * every record's data adds up to its size.
 */
#include "config.h"

#include "backup.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
	uint64_t hash;               /* of what the callbacks saw */
	uint64_t want, got;          /* the current record's size, data so far */
	size_t records;
} seen;

static void
mix(seen *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		s->hash = (s->hash ^ b[i]) * 0x100000001b3ULL;
}

static bool
on_begin(void *data, pg_backup_kind kind, const char *name, uint32_t mode, uint64_t size)
{
	seen *s = data;

	if (!pg_backup_name_ok(kind, name) || (mode & ~07777u) != 0)
		abort();
	mix(s, &kind, sizeof(kind));
	mix(s, name, strlen(name) + 1);
	mix(s, &size, sizeof(size));
	s->want = size;
	s->got = 0;
	s->records++;
	return true;
}

static bool
on_data(void *data, const uint8_t *bytes, size_t len)
{
	seen *s = data;

	if (len == 0 || s->got + len > s->want)
		abort();
	s->got += len;
	mix(s, bytes, len);
	return true;
}

static bool
on_end(void *data)
{
	seen *s = data;

	if (s->got != s->want)
		abort();
	mix(s, "end", 3);
	return true;
}

/* Parses the stream in pieces of step bytes (0: whole). */
static bool
parse(const uint8_t *data, size_t size, size_t step, seen *s)
{
	pg_backup_parser p = { .begin = on_begin, .data = on_data, .end = on_end, .user = s };
	bool ok = true;

	memset(s, 0, sizeof(*s));
	pg_backup_parser_init(&p);
	p.user = s;
	if (step == 0)
		step = size ? size : 1;
	for (size_t off = 0; ok && off < size; off += step)
		ok = pg_backup_parser_feed(&p, data + off, size - off < step ? size - off : step);
	return ok && pg_backup_parser_finish(&p);
}

static void
check_header(const uint8_t *data, size_t size)
{
	pg_backup_header h, again;

	if (pg_backup_header_parse(&h, data, size) != PG_BACKUP_HDR_OK)
		return;
	if (h.log2n < PG_BACKUP_LOG2N_MIN || h.log2n > PG_BACKUP_LOG2N_MAX ||
	    h.chunk_log2 < PG_BACKUP_CHUNK_LOG2_MIN || h.chunk_log2 > PG_BACKUP_CHUNK_LOG2_MAX ||
	    h.r == 0 || h.p == 0 || 128ULL * h.r * (1ULL << h.log2n) > PG_BACKUP_MEM_MAX)
		abort();
	again = h;
	pg_backup_header_format(&again, data + PG_BACKUP_CHECK_OFFSET);
	if (memcmp(again.bytes, data, PG_BACKUP_HEADER_LEN) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t head = size < PG_BACKUP_HEADER_LEN ? size : PG_BACKUP_HEADER_LEN;
	seen whole, pieces;
	bool a, b;

	check_header(data, size);
	data += head;
	size -= head;
	a = parse(data, size, 0, &whole);
	for (size_t step = 1; step <= 7; step += 3) {
		b = parse(data, size, step, &pieces);
		if (a != b || (a && (whole.hash != pieces.hash || whole.records != pieces.records)))
			abort();
	}
	return 0;
}
