/*
 * libFuzzer target for the Java keystore reader of `p11glue trust check`
 * (src/trust/tool/java-keystore.c): JKS with its integrity digest (password
 * "changeit", as the seeds) and PKCS#12. Checks, for every input: no
 * crash or leak; a keystore read gives as many aliases as certificates,
 * and a refused one says why.
 */
#include "config.h"

#include "java-keystore.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	STACK_OF(X509) *certs = NULL;
	char **aliases = NULL, err[256] = "";
	int n;

	if (!pg_java_keystore_read(data, size, "changeit", &certs, &aliases, err, sizeof(err))) {
		if (err[0] == 0 || certs != NULL || aliases != NULL)
			abort();
		return 0;
	}
	n = sk_X509_num(certs);
	for (int i = 0; i < n; i++) {
		if (aliases[i] == NULL)
			abort();
		free(aliases[i]);
	}
	free(aliases);
	sk_X509_pop_free(certs, X509_free);
	return 0;
}
