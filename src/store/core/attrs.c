/*
 * Attribute lists. The values of a list live packed in one block (the
 * pool), 8-byte aligned, so that a stored object costs one allocation
 * for its values rather than one per attribute: with 10,000 objects of
 * 20-30 attributes each that is most of the module's memory.
 *
 * The pool only grows by copying (the old block is wiped), and a growth
 * compacts it: values replaced by longer ones leave holes until then.
 */
#include "config.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN(n) (((n) + 7) & ~(size_t)7)

void
pg_attrs_clear(pg_attrs *attrs)
{
	if (attrs == NULL)
		return;
	pg_free_secret(attrs->pool, attrs->pool_size);
	free(attrs->items);
	memset(attrs, 0, sizeof(*attrs));
}

const CK_ATTRIBUTE *
pg_attrs_find(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < attrs->n; i++) {
		if (attrs->items[i].type == type)
			return &attrs->items[i];
	}
	return NULL;
}

static size_t
live_size(const pg_attrs *attrs)
{
	size_t total = 0;

	for (CK_ULONG i = 0; i < attrs->n; i++)
		total += ALIGN(attrs->items[i].ulValueLen);
	return total;
}

/* Moves the values into a new block of `size` bytes (>= the live size). */
static bool
pool_move(pg_attrs *attrs, size_t size)
{
	unsigned char *pool = NULL;
	size_t used = 0;

	if (size > 0) {
		pool = malloc(size);
		if (pool == NULL)
			return false;
	}
	for (CK_ULONG i = 0; i < attrs->n; i++) {
		CK_ATTRIBUTE *a = &attrs->items[i];
		if (a->ulValueLen == 0)
			continue;
		memcpy(pool + used, a->pValue, a->ulValueLen);
		a->pValue = pool + used;
		used += ALIGN(a->ulValueLen);
	}
	pg_free_secret(attrs->pool, attrs->pool_size);
	attrs->pool = pool;
	attrs->pool_used = used;
	attrs->pool_size = size;
	return true;
}

static bool
pool_reserve(pg_attrs *attrs, size_t len)
{
	size_t live, want, size;

	if (len > SIZE_MAX / 4)
		return false;
	if (attrs->pool_size - attrs->pool_used >= ALIGN(len))
		return true;
	live = live_size(attrs);
	want = live + ALIGN(len);
	size = attrs->pool_size * 2;
	if (size < want)
		size = want;
	if (size < 64)
		size = 64;
	return pool_move(attrs, size);
}

static bool
items_reserve(pg_attrs *attrs)
{
	CK_ULONG cap;
	CK_ATTRIBUTE *items;

	if (attrs->n < attrs->cap)
		return true;
	cap = attrs->cap ? attrs->cap * 2 : 8;
	if (cap > SIZE_MAX / sizeof(CK_ATTRIBUTE))
		return false;
	items = realloc(attrs->items, cap * sizeof(CK_ATTRIBUTE));
	if (items == NULL)
		return false;
	attrs->items = items;
	attrs->cap = cap;
	return true;
}

bool
pg_attrs_set(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, const void *value, CK_ULONG len)
{
	CK_ATTRIBUTE *a = (CK_ATTRIBUTE *)pg_attrs_find(attrs, type);
	unsigned char *copy = NULL;
	bool ok = false;

	pg_return_val_if_fail(value != NULL || len == 0, false);

	if (a != NULL && len <= a->ulValueLen) {
		/* In place (memmove: value may be this very value). */
		if (len > 0)
			memmove(a->pValue, value, len);
		if (a->ulValueLen > len)
			pg_memzero((unsigned char *)a->pValue + len, a->ulValueLen - len);
		a->ulValueLen = len;
		if (len == 0)
			a->pValue = NULL;
		return true;
	}

	/* value may point into the pool, which may move: copy it first. */
	if (len > 0 && attrs->pool != NULL && (const unsigned char *)value >= attrs->pool &&
	    (const unsigned char *)value < attrs->pool + attrs->pool_size) {
		copy = pg_memdup0(value, len);
		if (copy == NULL)
			return false;
		value = copy;
	}

	/* Room first, so that a failure leaves the list as it was. */
	if (len > 0 && !pool_reserve(attrs, len))
		goto out;
	if (a == NULL) {
		if (!items_reserve(attrs))
			goto out;
		a = &attrs->items[attrs->n++];
		a->type = type;
		a->pValue = NULL;
		a->ulValueLen = 0;
	}
	if (len > 0) {
		pg_memzero(a->pValue, a->ulValueLen);
		a->pValue = attrs->pool + attrs->pool_used;
		memcpy(a->pValue, value, len);
		attrs->pool_used += ALIGN(len);
	}
	a->ulValueLen = len;
	ok = true;
out:
	if (copy != NULL)
		pg_free_secret(copy, len);
	return ok;
}

bool
pg_attrs_set_ulong(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, CK_ULONG value)
{
	return pg_attrs_set(attrs, type, &value, sizeof(value));
}

bool
pg_attrs_set_bool(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, bool value)
{
	CK_BBOOL b = value ? CK_TRUE : CK_FALSE;

	return pg_attrs_set(attrs, type, &b, sizeof(b));
}

bool
pg_attrs_bool(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, bool dflt)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(attrs, type);

	if (a == NULL || a->ulValueLen != sizeof(CK_BBOOL))
		return dflt;
	return *(const CK_BBOOL *)a->pValue != CK_FALSE;
}

CK_ULONG
pg_attrs_ulong(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, CK_ULONG dflt)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(attrs, type);
	CK_ULONG value;

	if (a == NULL || a->ulValueLen != sizeof(CK_ULONG))
		return dflt;
	memcpy(&value, a->pValue, sizeof(value));
	return value;
}

void
pg_attrs_remove(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type)
{
	CK_ATTRIBUTE *a = (CK_ATTRIBUTE *)pg_attrs_find(attrs, type);
	size_t i;

	if (a == NULL)
		return;
	pg_memzero(a->pValue, a->ulValueLen);
	i = (size_t)(a - attrs->items);
	memmove(a, a + 1, (attrs->n - i - 1) * sizeof(CK_ATTRIBUTE));
	attrs->n--;
}

bool
pg_attrs_copy(pg_attrs *dst, const pg_attrs *src)
{
	pg_attrs_clear(dst);
	for (CK_ULONG i = 0; i < src->n; i++) {
		const CK_ATTRIBUTE *a = &src->items[i];
		if (!pg_attrs_set(dst, a->type, a->pValue, a->ulValueLen)) {
			pg_attrs_clear(dst);
			return false;
		}
	}
	return true;
}

void
pg_attrs_compact(pg_attrs *attrs)
{
	size_t live = live_size(attrs);
	CK_ATTRIBUTE *items;

	if (live < attrs->pool_size)
		(void)pool_move(attrs, live);
	if (attrs->n > 0 && attrs->n < attrs->cap) {
		items = realloc(attrs->items, attrs->n * sizeof(CK_ATTRIBUTE));
		if (items != NULL) {
			attrs->items = items;
			attrs->cap = attrs->n;
		}
	}
}

size_t
pg_attrs_size(const pg_attrs *attrs)
{
	size_t total = 0;

	for (CK_ULONG i = 0; i < attrs->n; i++)
		total += attrs->items[i].ulValueLen;
	return total;
}

bool
pg_ulong_listed(const CK_ULONG *list, size_t n, CK_ULONG v)
{
	for (size_t i = 0; i < n; i++) {
		if (list[i] == v)
			return true;
	}
	return false;
}

/* Adds one decoded template entry (record.c's callback). */
static bool
template_entry(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value,
               size_t len)
{
	pg_attrs *out = ctx;

	if (flags != 0 || len > (CK_ULONG)-1)
		return false;
	return pg_attrs_set(out, type, value, (CK_ULONG)len);
}

bool
pg_attrs_template(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, pg_attrs *out)
{
	const CK_ATTRIBUTE *a = pg_attrs_find(attrs, type);

	pg_attrs_clear(out);
	if (a == NULL)
		return false;
	if (a->ulValueLen == 0)
		return true;
	if (!pg_record_parse(a->pValue, a->ulValueLen, template_entry, out)) {
		pg_attrs_clear(out);
		return false;
	}
	return true;
}
