/*
 * The backup file's header and record stream (backup.h): parsers of
 * untrusted bytes and their encoders. Nothing here decrypts; seal.c
 * does, and feeds the parser what it opened.
 */
#include "config.h"

#include "backup.h"

#include <openssl/sha.h>

#include <string.h>

#define HEAD_FIXED 15                /* kind, name length, mode, size */
#define SMALL_FILE_MAX (1u << 20)    /* a trust or registry file */
#define SETUP_MAX 256
#define TOKEN_MAX (1ULL << 40)

static uint64_t
be_get(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void
be_put(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = n; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

void
pg_backup_header_format(pg_backup_header *h, const uint8_t check[32])
{
	uint8_t *b = h->bytes;
	uint8_t sum[SHA256_DIGEST_LENGTH];

	memset(b, 0, sizeof(h->bytes));
	memcpy(b, PG_BACKUP_MAGIC, 8);
	b[8] = h->version;
	b[9] = h->kdf;
	b[10] = h->aead;
	b[11] = h->chunk_log2;
	b[12] = h->log2n;
	b[13] = h->r;
	b[14] = h->p;
	memcpy(b + 16, h->salt, PG_BACKUP_SALT_LEN);
	memcpy(b + PG_BACKUP_CHECK_OFFSET, check, 32);
	SHA256(b, PG_BACKUP_SUM_OFFSET, sum);
	memcpy(b + PG_BACKUP_SUM_OFFSET, sum, PG_BACKUP_HEADER_LEN - PG_BACKUP_SUM_OFFSET);
}

pg_backup_hdr_status
pg_backup_header_parse(pg_backup_header *h, const uint8_t *data, size_t len)
{
	uint8_t sum[SHA256_DIGEST_LENGTH];
	uint64_t mem;

	memset(h, 0, sizeof(*h));
	if (len < PG_BACKUP_HEADER_LEN)
		return len >= 8 && memcmp(data, PG_BACKUP_MAGIC, 8) != 0 ? PG_BACKUP_HDR_MAGIC
		                                                         : PG_BACKUP_HDR_SHORT;
	if (memcmp(data, PG_BACKUP_MAGIC, 8) != 0)
		return PG_BACKUP_HDR_MAGIC;
	SHA256(data, PG_BACKUP_SUM_OFFSET, sum);
	if (!pg_ct_equal(sum, data + PG_BACKUP_SUM_OFFSET, PG_BACKUP_HEADER_LEN - PG_BACKUP_SUM_OFFSET))
		return PG_BACKUP_HDR_DAMAGED;
	memcpy(h->bytes, data, PG_BACKUP_HEADER_LEN);
	h->version = data[8];
	h->kdf = data[9];
	h->aead = data[10];
	h->chunk_log2 = data[11];
	h->log2n = data[12];
	h->r = data[13];
	h->p = data[14];
	memcpy(h->salt, data + 16, PG_BACKUP_SALT_LEN);
	if (h->version != PG_BACKUP_VERSION || h->kdf != 1 || h->aead != 1 || data[15] != 0)
		return PG_BACKUP_HDR_VERSION;
	if (h->chunk_log2 < PG_BACKUP_CHUNK_LOG2_MIN || h->chunk_log2 > PG_BACKUP_CHUNK_LOG2_MAX ||
	    h->log2n < PG_BACKUP_LOG2N_MIN || h->log2n > PG_BACKUP_LOG2N_MAX ||
	    h->r < 1 || h->r > 32 || h->p < 1 || h->p > 16)
		return PG_BACKUP_HDR_PARAMS;
	mem = 128ULL * h->r * ((1ULL << h->log2n) + h->p);
	if (mem > PG_BACKUP_MEM_MAX)
		return PG_BACKUP_HDR_PARAMS;
	return PG_BACKUP_HDR_OK;
}

size_t
pg_backup_record_head(uint8_t *out, pg_backup_kind kind, const char *name, uint32_t mode,
                      uint64_t size)
{
	size_t n = strlen(name);

	pg_return_val_if_fail(n <= PG_BACKUP_NAME_MAX, 0);
	out[0] = (uint8_t)kind;
	be_put(out + 1, n, 2);
	memcpy(out + 3, name, n);
	be_put(out + 3 + n, mode, 4);
	be_put(out + 7 + n, size, 8);
	return HEAD_FIXED + n;
}

static bool
token_name_ok(const char *name)
{
	const char *p = name + 6;
	size_t digits = 0;

	if (strncmp(name, "token-", 6) != 0)
		return false;
	while (p[digits] >= '0' && p[digits] <= '9')
		digits++;
	if (digits == 0 || digits > 9 || (digits > 1 && p[0] == '0'))
		return false;
	return strcmp(p + digits, ".sqlite") == 0;
}

static bool
path_ok(const char *name)
{
	size_t parts = 0, len;

	for (const char *p = name;; p += len + 1) {
		len = strcspn(p, "/");
		if (len == 0 || len > 255 || p[0] == '.' || ++parts > 4)
			return false;
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)p[i];
			if (c < 0x20 || c == 0x7f || c == '\\')
				return false;
		}
		if (p[len] == 0)
			return true;
	}
}

bool
pg_backup_name_ok(pg_backup_kind kind, const char *name)
{
	size_t n = strlen(name);

	switch (kind) {
	case PG_BACKUP_END:
		return n == 0;
	case PG_BACKUP_TOKEN:
		return token_name_ok(name);
	case PG_BACKUP_SETUP:
		if (n == 0 || n > 32)
			return false;
		return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
	case PG_BACKUP_TRUST:
	case PG_BACKUP_REGISTRY:
		return n <= PG_BACKUP_NAME_MAX && path_ok(name);
	}
	return false;
}

/* ---------------------------------------------------------------------------
 * The record stream
 */

void
pg_backup_parser_init(pg_backup_parser *p)
{
	bool (*begin)(void *, pg_backup_kind, const char *, uint32_t, uint64_t) = p->begin;
	bool (*data)(void *, const uint8_t *, size_t) = p->data;
	bool (*end)(void *) = p->end;
	void *user = p->user;

	memset(p, 0, sizeof(*p));
	p->begin = begin;
	p->data = data;
	p->end = end;
	p->user = user;
	p->need = 3;
}

static bool
fail(pg_backup_parser *p, const char *why)
{
	if (p->error == NULL)
		p->error = why;
	return false;
}

static uint64_t
size_max(pg_backup_kind kind)
{
	switch (kind) {
	case PG_BACKUP_TOKEN:
		return TOKEN_MAX;
	case PG_BACKUP_TRUST:
	case PG_BACKUP_REGISTRY:
		return SMALL_FILE_MAX;
	case PG_BACKUP_SETUP:
		return SETUP_MAX;
	default:
		return 0;
	}
}

/* A record's end: the callback, then ready for the next head. */
static bool
record_end(pg_backup_parser *p)
{
	p->need = 3;
	p->have = 0;
	if (p->end != NULL && !p->end(p->user))
		return fail(p, "stopped");
	return true;
}

/* The head is complete: check it and start the record. */
static bool
head_done(pg_backup_parser *p)
{
	size_t n = (size_t)be_get(p->head + 1, 2);
	pg_backup_kind kind = (pg_backup_kind)p->head[0];
	uint32_t mode = (uint32_t)be_get(p->head + 3 + n, 4);
	uint64_t size = be_get(p->head + 7 + n, 8);
	char name[PG_BACKUP_NAME_MAX + 1];

	memcpy(name, p->head + 3, n);
	name[n] = 0;
	if (memchr(name, 0, n) != NULL || !pg_backup_name_ok(kind, name))
		return fail(p, "a record with a bad name");
	if (kind == PG_BACKUP_END && (mode != 0 || size != 0))
		return fail(p, "a bad end record");
	if (size > size_max(kind) || (mode & ~07777u) != 0)
		return fail(p, "a record of a bad size or mode");
	if (p->begin != NULL && !p->begin(p->user, kind, name, mode, size))
		return fail(p, "stopped");
	p->need = 0;
	p->left = size;
	if (kind == PG_BACKUP_END)
		p->ended = true;
	return size > 0 || record_end(p);
}

bool
pg_backup_parser_feed(pg_backup_parser *p, const uint8_t *bytes, size_t len)
{
	size_t take;

	while (len > 0) {
		if (p->error != NULL)
			return false;
		if (p->ended && p->need != 0)
			return fail(p, "data after the end");
		if (p->need == 0) {
			take = p->left < len ? (size_t)p->left : len;
			if (p->data != NULL && !p->data(p->user, bytes, take))
				return fail(p, "stopped");
			p->left -= take;
			bytes += take;
			len -= take;
			if (p->left == 0 && !record_end(p))
				return false;
			continue;
		}
		take = p->need - p->have < len ? p->need - p->have : len;
		memcpy(p->head + p->have, bytes, take);
		p->have += take;
		bytes += take;
		len -= take;
		if (p->have < p->need)
			break;
		if (p->need == 3) {
			size_t n = (size_t)be_get(p->head + 1, 2);
			if (p->head[0] > PG_BACKUP_KIND_MAX || n > PG_BACKUP_NAME_MAX)
				return fail(p, "a record of an unknown kind");
			p->need = HEAD_FIXED + n;
			continue;
		}
		if (!head_done(p))
			return false;
	}
	return p->error == NULL;
}

bool
pg_backup_parser_finish(pg_backup_parser *p)
{
	if (p->error != NULL)
		return false;
	if (!p->ended || p->need != 3 || p->have != 0)
		return fail(p, "the records end early");
	return true;
}
