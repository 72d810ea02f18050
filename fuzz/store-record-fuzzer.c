/*
 * libFuzzer target for the key store's record format (src/store/core/record.c):
 * the attribute lists read back from token databases, and the encoded
 * attribute arrays (CKA_WRAP_TEMPLATE ...) read from them. Checks, for
 * every input: no crash or leak; a record that parses re-encodes to the
 * same bytes; an encoded array answers C_GetAttributeValue's three calls.
 */
#include "config.h"

#include "core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
reencode(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags, const unsigned char *value, size_t len)
{
	pg_record_add(ctx, type, flags, value, len);
	return true;
}

/* The three-step read of an attribute array, as clients do it. */
static void
read_array(const uint8_t *data, size_t size)
{
	CK_ATTRIBUTE attr = { CKA_UNWRAP_TEMPLATE, NULL, 0 };
	CK_ATTRIBUTE *items;
	CK_ULONG n;

	if (pg_template_get(data, size, &attr) != CKR_OK || attr.ulValueLen > (1 << 20))
		return;
	n = attr.ulValueLen / sizeof(CK_ATTRIBUTE);
	items = calloc(n + 1, sizeof(CK_ATTRIBUTE));
	if (items == NULL)
		return;
	attr.pValue = items;
	if (pg_template_get(data, size, &attr) == CKR_OK) {
		for (CK_ULONG i = 0; i < n; i++)
			items[i].pValue = malloc(items[i].ulValueLen + 1);
		(void)pg_template_get(data, size, &attr);
		(void)pg_template_equal(data, size, items, n);
		for (CK_ULONG i = 0; i < n; i++)
			free(items[i].pValue);
	}
	free(items);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_buf again;
	pg_attrs attrs = { 0 }, decoded = { 0 };

	pg_buf_init(&again);
	pg_record_begin(&again);
	if (pg_record_parse(data, size, reencode, &again)) {
		if (again.failed || again.len != size || memcmp(again.data, data, size) != 0)
			abort();
		if (pg_attrs_set(&attrs, CKA_WRAP_TEMPLATE, data, size) &&
		    pg_attrs_template(&attrs, CKA_WRAP_TEMPLATE, &decoded))
			pg_attrs_clear(&decoded);
		read_array(data, size);
	}
	pg_attrs_clear(&attrs);
	pg_buf_clear(&again);
	return 0;
}
