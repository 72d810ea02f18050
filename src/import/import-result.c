/*
 * The result of an import (import.h): the key and certificates found,
 * the format, the passphrase asked once, and the error. The readers
 * (import-file.c, import-openssh.c, import-pkcs12.c) fill it.
 */
#include "config.h"

#include "import.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
pg_import_init(pg_import *imp)
{
	memset(imp, 0, sizeof(*imp));
}

void
pg_import_clear(pg_import *imp)
{
	if (imp == NULL)
		return;
	EVP_PKEY_free(imp->key);
	free(imp->key_label);
	sk_X509_pop_free(imp->certs, X509_free);
	p11glue_pin_free(imp->pass);
	pg_import_init(imp);
}

pg_import_result
pg_import_fail(pg_import *imp, pg_import_result result, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(imp->error, sizeof(imp->error), fmt, ap);
	va_end(ap);
	return result;
}

X509 *
pg_import_leaf(const pg_import *imp)
{
	for (int i = 0; imp->key && imp->certs && i < sk_X509_num(imp->certs); i++) {
		X509 *cert = sk_X509_value(imp->certs, i);
		if (EVP_PKEY_eq(X509_get0_pubkey(cert), imp->key) == 1)
			return cert;
	}
	return NULL;
}

const p11glue_pin *
pg_import_passphrase(pg_import *imp, const pg_import_options *opts)
{
	if (!imp->asked && opts->passphrase != NULL)
		imp->pass = opts->passphrase(opts->passphrase_data);
	imp->asked = true;
	return imp->pass;
}

const char *
pg_import_pass_text(pg_import *imp, const pg_import_options *opts, int *len)
{
	const p11glue_pin *pin = pg_import_passphrase(imp, opts);
	size_t n;
	const unsigned char *value;

	if (pin == NULL)
		return NULL;
	value = p11glue_pin_value(pin, &n);
	*len = n > INT32_MAX ? INT32_MAX : (int)n;
	return (const char *)value;
}

pg_import_result
pg_import_take_key(pg_import *imp, EVP_PKEY *key, const char *what)
{
	if (key == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "invalid %s", what);
	if (imp->key != NULL) {
		EVP_PKEY_free(key);
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED, PG_IMPORT_MORE_THAN_ONE);
	}
	imp->key = key;
	if (imp->format == NULL)
		imp->format = what;
	return PG_IMPORT_OK;
}

pg_import_result
pg_import_take_cert(pg_import *imp, X509 *cert)
{
	if (cert == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "invalid X.509 certificate");
	if (imp->certs == NULL)
		imp->certs = sk_X509_new_null();
	if (imp->certs == NULL || !sk_X509_push(imp->certs, cert)) {
		X509_free(cert);
		return PG_IMPORT_ERR_NOMEM;
	}
	if (imp->format == NULL)
		imp->format = "X.509 certificate";
	return PG_IMPORT_OK;
}
