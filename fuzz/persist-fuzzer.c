/*
 * libFuzzer target for the persistence format reader: no crash, no
 * leak; every certificate read writes back (pg_persist_write_cert) to
 * text that reads again to the same certificate, trust and label.
 */
#include "config.h"

#include "store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_source src, back;

	memset(&src, 0, sizeof(src));
	src.path = (char *)"fuzz";
	if (!pg_persist_parse(&src, data, size))
		abort();
	for (size_t i = 0; i < src.n_entries; i++) {
		pg_entry *e = &src.entries[i];
		pg_buf buf;
		char *text;
		size_t len;
		if (e->kind != PG_ENTRY_CERT)
			continue;
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
	src.path = NULL;
	pg_source_clear(&src);
	return 0;
}
