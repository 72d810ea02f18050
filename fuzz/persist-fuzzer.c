/*
 * libFuzzer target for the persistence format reader: no crash, no
 * leak; every certificate read writes back (pg_persist_write_cert) to
 * text that reads again to the same certificate, trust and label; every
 * other object written back (pg_persist_write) reads again to the same
 * attributes but those the format never stores.
 */
#include "config.h"

#include "trust-format.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_cert(const pg_entry *e)
{
	pg_source back;
	pg_buf buf;
	char *text;
	size_t len;

	pg_buf_init(&buf);
	pg_persist_write_cert(&buf, e->cert.der.p, e->cert.der.len, (const char *)e->label.p,
	                      e->label.len, e->src_trust == PG_SRC_ANCHOR,
	                      e->src_trust == PG_SRC_DISTRUST);
	text = pg_buf_steal(&buf, &len);
	if (text == NULL)
		abort();
	memset(&back, 0, sizeof(back));
	back.path = (char *)"again";
	if (!pg_persist_parse(&back, (unsigned char *)text, len) || back.n_entries != 1 ||
	    back.entries[0].cert.der.len != e->cert.der.len ||
	    memcmp(back.entries[0].cert.der.p, e->cert.der.p, e->cert.der.len) != 0 ||
	    back.entries[0].src_trust != e->src_trust ||
	    back.entries[0].label.len != e->label.len ||
	    memcmp(back.entries[0].label.p, e->label.p, e->label.len) != 0)
		abort();
	back.path = NULL;
	pg_source_clear(&back);
	free(text);
}

static bool
written(CK_ATTRIBUTE_TYPE t)
{
	return t != CKA_TOKEN && t != CKA_X_GENERATED && t != CKA_X_ORIGIN;
}

/* Every written attribute of e is in f with the same value. */
static void
same_attrs(const pg_entry *e, const pg_entry *f)
{
	for (size_t i = 0; i < e->n_attrs; i++) {
		const pg_attr *a = &e->attrs[i], *b;
		if (!written(a->type))
			continue;
		b = pg_entry_attr(f, a->type);
		if (b == NULL || b->len != a->len || (a->len && memcmp(a->value, b->value, a->len) != 0))
			abort();
	}
}

static void
check_object(const pg_entry *e)
{
	CK_ATTRIBUTE *attrs = calloc(e->n_attrs + 1, sizeof(*attrs));
	pg_source back;
	pg_buf buf;
	char *text;
	size_t len;

	if (attrs == NULL)
		return;
	for (size_t i = 0; i < e->n_attrs; i++)
		attrs[i] = (CK_ATTRIBUTE){ e->attrs[i].type, (void *)e->attrs[i].value,
		                           e->attrs[i].len };
	pg_buf_init(&buf);
	pg_persist_write(&buf, attrs, e->n_attrs);
	free(attrs);
	text = pg_buf_steal(&buf, &len);
	if (text == NULL)
		abort();
	memset(&back, 0, sizeof(back));
	back.path = (char *)"again";
	if (!pg_persist_parse(&back, (unsigned char *)text, len) || back.n_entries < 1)
		abort();
	/* What reads back as the same kind keeps every attribute. */
	if (back.entries[0].kind == e->kind)
		same_attrs(e, &back.entries[0]);
	back.path = NULL;
	pg_source_clear(&back);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_source src;

	memset(&src, 0, sizeof(src));
	src.path = (char *)"fuzz";
	if (!pg_persist_parse(&src, data, size))
		abort();
	for (size_t i = 0; i < src.n_entries; i++) {
		const pg_entry *e = &src.entries[i];
		if (e->kind == PG_ENTRY_CERT)
			check_cert(e);
		else if (e->n_attrs > 0)
			check_object(e);
	}
	src.path = NULL;
	pg_source_clear(&src);
	return 0;
}
