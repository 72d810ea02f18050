/*
 * Records: how an attribute list is stored (the `attrs` column of a
 * token database) and how attribute-array values (CKA_WRAP_TEMPLATE ...)
 * are held in memory.
 *
 *   record := "pgr" version(1) ulong_size(1) zero(3) count(u32)
 *             entry{count}
 *   entry  := type(u64) flags(u8) length(u32) value[length]
 *
 * Integers are little-endian. flags bit 0: the value is sealed (nonce |
 * AES-256-GCM ciphertext | tag, see seal.c). ulong_size is
 * sizeof(CK_ULONG) of the writer, since CK_ULONG-valued attributes are
 * kept in their native form; a record from another ABI is refused.
 */
#include "config.h"

#include "core.h"

#include <string.h>

#define HEADER_LEN 12
#define ENTRY_LEN 13
#define VERSION 1

static void
put_le(pg_buf *buf, uint64_t v, size_t n)
{
	unsigned char b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	pg_buf_add(buf, b, n);
}

static uint64_t
get_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void
pg_record_begin(pg_buf *buf)
{
	static const unsigned char header[8] = { 'p', 'g', 'r', VERSION, sizeof(CK_ULONG), 0, 0, 0 };

	pg_buf_add(buf, header, sizeof(header));
	put_le(buf, 0, 4);
}

void
pg_record_add(pg_buf *buf, CK_ATTRIBUTE_TYPE type, unsigned flags, const void *value,
              size_t len)
{
	uint32_t count;

	if (buf->failed || buf->len < HEADER_LEN)
		return;
	if (len > UINT32_MAX) {
		buf->failed = true;
		return;
	}
	count = (uint32_t)get_le(buf->data + 8, 4);
	if (count == UINT32_MAX) {
		buf->failed = true;
		return;
	}
	put_le(buf, (uint64_t)type, 8);
	pg_buf_add_byte(buf, (unsigned char)flags);
	put_le(buf, len, 4);
	pg_buf_add(buf, value, len);
	if (buf->failed)
		return;
	count++;
	for (size_t i = 0; i < 4; i++)
		buf->data[8 + i] = (unsigned char)(count >> (8 * i));
}

bool
pg_record_parse(const unsigned char *data, size_t len, pg_record_func func, void *ctx)
{
	size_t off = HEADER_LEN;
	uint32_t count;

	if (data == NULL || len < HEADER_LEN)
		return false;
	if (memcmp(data, "pgr", 3) != 0 || data[3] != VERSION || data[4] != sizeof(CK_ULONG) ||
	    data[5] != 0 || data[6] != 0 || data[7] != 0)
		return false;
	count = (uint32_t)get_le(data + 8, 4);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t type;
		unsigned flags;
		size_t vlen;

		if (len < ENTRY_LEN || off > len - ENTRY_LEN)
			return false;
		type = get_le(data + off, 8);
		flags = data[off + 8];
		vlen = (size_t)get_le(data + off + 9, 4);
		off += ENTRY_LEN;
		if (type > (CK_ATTRIBUTE_TYPE)-1 || (flags & ~(unsigned)PG_RECORD_SEALED) != 0)
			return false;
		if (vlen > len - off)
			return false;
		if (func != NULL && !func(ctx, (CK_ATTRIBUTE_TYPE)type, flags, data + off, vlen))
			return false;
		off += vlen;
	}
	return off == len;
}

CK_RV
pg_template_encode(const CK_ATTRIBUTE *tmpl, CK_ULONG n, pg_buf *out)
{
	if (n > 0 && tmpl == NULL)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	pg_record_begin(out);
	for (CK_ULONG i = 0; i < n; i++) {
		const CK_ATTRIBUTE *a = &tmpl[i];
		/* One level only: a template inside a template makes no sense. */
		if ((a->type & CKF_ARRAY_ATTRIBUTE) && a->type != CKA_ALLOWED_MECHANISMS)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (a->ulValueLen > 0 && a->pValue == NULL)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (a->ulValueLen == CK_UNAVAILABLE_INFORMATION || a->ulValueLen > UINT32_MAX)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		pg_record_add(out, a->type, 0, a->pValue, a->ulValueLen);
	}
	return out->failed ? CKR_HOST_MEMORY : CKR_OK;
}

typedef struct {
	CK_ATTRIBUTE *array;       /* NULL: count only */
	CK_ULONG count;
	CK_RV rv;
} get_ctx;

static bool
get_entry(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
          size_t len)
{
	get_ctx *g = ctx;
	CK_ATTRIBUTE *a;

	(void)flags;
	if (g->array != NULL) {
		a = &g->array[g->count];
		a->type = type;
		if (a->pValue == NULL) {
			a->ulValueLen = len;
		} else if (a->ulValueLen >= len) {
			if (len > 0)
				memcpy(a->pValue, value, len);
			a->ulValueLen = len;
		} else {
			a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
			g->rv = CKR_BUFFER_TOO_SMALL;
		}
	}
	g->count++;
	return true;
}

CK_RV
pg_template_get(const unsigned char *enc, size_t len, CK_ATTRIBUTE *attr)
{
	get_ctx g = { NULL, 0, CKR_OK };

	if (len > 0 && !pg_record_parse(enc, len, get_entry, &g))
		return CKR_GENERAL_ERROR;
	if (attr->pValue == NULL) {
		attr->ulValueLen = g.count * sizeof(CK_ATTRIBUTE);
		return CKR_OK;
	}
	if (attr->ulValueLen < g.count * sizeof(CK_ATTRIBUTE)) {
		attr->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		return CKR_BUFFER_TOO_SMALL;
	}
	g.array = attr->pValue;
	g.count = 0;
	if (len > 0 && !pg_record_parse(enc, len, get_entry, &g))
		return CKR_GENERAL_ERROR;
	attr->ulValueLen = g.count * sizeof(CK_ATTRIBUTE);
	return g.rv;
}

typedef struct {
	const CK_ATTRIBUTE *tmpl;
	CK_ULONG n;
	CK_ULONG seen;
	bool equal;
} eq_ctx;

static bool
eq_entry(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
         size_t len)
{
	eq_ctx *e = ctx;
	bool found = false;

	(void)flags;
	for (CK_ULONG i = 0; i < e->n; i++) {
		const CK_ATTRIBUTE *a = &e->tmpl[i];
		if (a->type != type)
			continue;
		found = a->ulValueLen == len && (len == 0 || memcmp(a->pValue, value, len) == 0);
		break;
	}
	e->equal = e->equal && found;
	e->seen++;
	return true;
}

bool
pg_template_equal(const unsigned char *enc, size_t len, const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	eq_ctx e = { tmpl, n, 0, true };

	if (n > 0 && tmpl == NULL)
		return false;
	for (CK_ULONG i = 0; i < n; i++) {
		if (tmpl[i].ulValueLen > 0 && tmpl[i].pValue == NULL)
			return false;
	}
	if (len == 0)
		return n == 0;
	if (!pg_record_parse(enc, len, eq_entry, &e))
		return false;
	return e.equal && e.seen == n;
}
