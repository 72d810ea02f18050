/*
 * libFuzzer target for the key store's options string (the C_Initialize
 * reserved string, pg_store_parse_options in src/store/core/state.c),
 * which comes from a registry file or NSS's modutil -string. Checks, for
 * every input: no crash or leak, no read past the string's NUL; a string
 * that parses gives values inside their documented ranges.
 */
#include "config.h"

#include "core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_store_options opts = { .max_fails = 10, .kdf_log2n = 14 };
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (pg_store_parse_options(text, &opts)) {
		if (opts.max_fails < 1 || opts.max_fails > 1000 || opts.kdf_log2n < 10 ||
		    opts.kdf_log2n > 22 || (opts.dir != NULL && opts.dir[0] == 0))
			abort();
	}
	free(opts.dir);
	free(text);
	return 0;
}
