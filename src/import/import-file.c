/*
 * What `p11glue import` reads (import.h): PEM files of any number of
 * blocks (OpenSSH private keys, PKCS#8, encrypted PKCS#8, traditional
 * RSA and EC keys with or without RFC 1421 encryption headers, X.509
 * certificates), and DER files (a certificate, PKCS#12, PKCS#8 plain or
 * encrypted, a traditional RSA or EC key). Everything but the OpenSSH
 * format goes through libcrypto. Each DER structure must fill its block
 * or file exactly.
 */
#define _GNU_SOURCE /* memmem */
#include "config.h"

#include "import.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * DER structures, each of which must use all of its bytes
 */

static X509 *
der_cert(const uint8_t *der, size_t len, bool aux)
{
	const unsigned char *p = der;
	X509 *cert = aux ? d2i_X509_AUX(NULL, &p, (long)len) : d2i_X509(NULL, &p, (long)len);

	if (cert != NULL && p != der + len) {
		X509_free(cert);
		cert = NULL;
	}
	return cert;
}

static EVP_PKEY *
der_pkcs8(const uint8_t *der, size_t len)
{
	const unsigned char *p = der;
	PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
	EVP_PKEY *key = NULL;

	if (p8 != NULL && p == der + len)
		key = EVP_PKCS82PKEY(p8);
	PKCS8_PRIV_KEY_INFO_free(p8);
	return key;
}

static X509_SIG *
der_encrypted_pkcs8(const uint8_t *der, size_t len)
{
	const unsigned char *p = der;
	X509_SIG *sig = d2i_X509_SIG(NULL, &p, (long)len);

	if (sig != NULL && p != der + len) {
		X509_SIG_free(sig);
		sig = NULL;
	}
	return sig;
}

/* A traditional (PKCS#1 RSA, RFC 5915 EC) private key. */
static EVP_PKEY *
der_traditional(int type, const uint8_t *der, size_t len)
{
	const unsigned char *p = der;
	EVP_PKEY *key = d2i_PrivateKey(type, NULL, &p, (long)len);

	if (key != NULL && p != der + len) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	return key;
}

static pg_import_result
encrypted_pkcs8(pg_import *imp, const pg_import_options *opts, X509_SIG *sig)
{
	PKCS8_PRIV_KEY_INFO *p8;
	const char *pass;
	int pass_len = 0;
	EVP_PKEY *key;

	const X509_ALGOR *alg = NULL;
	pg_import_result rv;

	imp->format = "encrypted PKCS#8 private key";
	X509_SIG_get0(sig, &alg, NULL);
	rv = pg_import_check_pbe(imp, opts, alg);
	if (rv != PG_IMPORT_OK)
		return rv;
	pass = pg_import_pass_text(imp, opts, &pass_len);
	if (pass == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_NO_PASSPHRASE,
		                      "the PKCS#8 key is encrypted and no passphrase was given");
	p8 = PKCS8_decrypt(sig, pass, pass_len);
	if (p8 == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE,
		                      "cannot decrypt the PKCS#8 key: wrong passphrase or an "
		                      "unsupported cipher");
	key = EVP_PKCS82PKEY(p8);
	PKCS8_PRIV_KEY_INFO_free(p8);
	return pg_import_take_key(imp, key, "encrypted PKCS#8 private key");
}

/* ---------------------------------------------------------------------------
 * PEM
 */

typedef struct {
	pg_import *imp;
	const pg_import_options *opts;
} pem_pass;

static int
pem_password(char *buf, int size, int rwflag, void *data)
{
	pem_pass *pp = data;
	int len = 0;
	const char *pass = pg_import_pass_text(pp->imp, pp->opts, &len);

	if (pass == NULL || len > size)
		return -1;
	memcpy(buf, pass, (size_t)len);
	return len;
}

/* A traditional key block, decrypted first when its headers say so. */
static pg_import_result
pem_traditional(pg_import *imp, const pg_import_options *opts, int type, const char *header,
                unsigned char *der, long der_len)
{
	EVP_CIPHER_INFO info;
	pem_pass pp = { imp, opts };
	bool encrypted = strstr(header, "ENCRYPTED") != NULL;
	EVP_PKEY *key;

	imp->format = type == EVP_PKEY_RSA ? "PKCS#1 RSA private key" : "EC private key";
	if (encrypted) {
		if (!PEM_get_EVP_CIPHER_INFO((char *)header, &info))
			return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
			                      "unsupported PEM encryption header");
		if (pg_import_passphrase(imp, opts) == NULL)
			return pg_import_fail(imp, PG_IMPORT_ERR_NO_PASSPHRASE,
			                      "the key is encrypted and no passphrase was given");
		if (!PEM_do_header(&info, der, &der_len, pem_password, &pp))
			return pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE,
			                      "wrong passphrase for the encrypted PEM key");
	}
	key = der_traditional(type, der, (size_t)der_len);
	if (key == NULL && encrypted)
		return pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE,
		                      "wrong passphrase for the encrypted PEM key");
	return pg_import_take_key(imp, key, imp->format);
}

static pg_import_result
pem_block(pg_import *imp, const pg_import_options *opts, const char *name, const char *header,
          unsigned char *der, long der_len)
{
	size_t len = (size_t)der_len;
	X509_SIG *sig;
	pg_import_result rv;

	if (strcmp(name, "OPENSSH PRIVATE KEY") == 0) {
		if (imp->key != NULL)
			return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED, PG_IMPORT_MORE_THAN_ONE);
		return pg_import_openssh(der, len, opts, imp);
	}
	if (strcmp(name, "PRIVATE KEY") == 0)
		return pg_import_take_key(imp, der_pkcs8(der, len), "PKCS#8 private key");
	if (strcmp(name, "ENCRYPTED PRIVATE KEY") == 0) {
		sig = der_encrypted_pkcs8(der, len);
		if (sig == NULL)
			return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "invalid encrypted PKCS#8 key");
		rv = encrypted_pkcs8(imp, opts, sig);
		X509_SIG_free(sig);
		return rv;
	}
	if (strcmp(name, "RSA PRIVATE KEY") == 0)
		return pem_traditional(imp, opts, EVP_PKEY_RSA, header, der, der_len);
	if (strcmp(name, "EC PRIVATE KEY") == 0)
		return pem_traditional(imp, opts, EVP_PKEY_EC, header, der, der_len);
	if (strcmp(name, "CERTIFICATE") == 0 || strcmp(name, "X509 CERTIFICATE") == 0)
		return pg_import_take_cert(imp, der_cert(der, len, false));
	if (strcmp(name, "TRUSTED CERTIFICATE") == 0)
		return pg_import_take_cert(imp, der_cert(der, len, true));
	/* What `openssl ecparam -genkey` writes before the key. */
	if (strcmp(name, "EC PARAMETERS") == 0)
		return PG_IMPORT_OK;
	if (strstr(name, "PUBLIC KEY") != NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "a public key alone is not imported; import the private key");
	return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED, "unsupported PEM block '%.40s'", name);
}

static pg_import_result
parse_pem(const uint8_t *data, size_t len, const pg_import_options *opts, pg_import *imp)
{
	BIO *bio = BIO_new_mem_buf(data, len > INT32_MAX ? INT32_MAX : (int)len);
	pg_import_result rv = PG_IMPORT_OK;
	int blocks = 0;

	if (bio == NULL)
		return PG_IMPORT_ERR_NOMEM;
	while (rv == PG_IMPORT_OK) {
		char *name = NULL, *header = NULL;
		unsigned char *der = NULL;
		long der_len = 0;
		unsigned long err;

		ERR_clear_error();
		if (!PEM_read_bio(bio, &name, &header, &der, &der_len)) {
			err = ERR_peek_last_error();
			/* No further BEGIN line: the end, after one block at least. */
			if (blocks == 0 || ERR_GET_LIB(err) != ERR_LIB_PEM ||
			    ERR_GET_REASON(err) != PEM_R_NO_START_LINE)
				rv = pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "malformed PEM data");
			break;
		}
		blocks++;
		rv = pem_block(imp, opts, name, header, der, der_len);
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_clear_free(der, (size_t)(der_len > 0 ? der_len : 0));
	}
	BIO_free(bio);
	ERR_clear_error();
	return rv;
}

/* ---------------------------------------------------------------------------
 * DER files: one structure, recognised by trying each
 */

static pg_import_result
parse_der(const uint8_t *data, size_t len, const pg_import_options *opts, pg_import *imp)
{
	const unsigned char *p = data;
	X509 *cert;
	PKCS12 *p12;
	X509_SIG *sig;
	EVP_PKEY *key;
	pg_import_result rv;

	if ((cert = der_cert(data, len, false)) != NULL)
		return pg_import_take_cert(imp, cert);
	p12 = d2i_PKCS12(NULL, &p, (long)len);
	if (p12 != NULL && p == data + len) {
		rv = pg_import_pkcs12(p12, opts, imp);
		PKCS12_free(p12);
		return rv;
	}
	PKCS12_free(p12);
	if ((key = der_pkcs8(data, len)) != NULL)
		return pg_import_take_key(imp, key, "PKCS#8 private key");
	if ((sig = der_encrypted_pkcs8(data, len)) != NULL) {
		rv = encrypted_pkcs8(imp, opts, sig);
		X509_SIG_free(sig);
		return rv;
	}
	if ((key = der_traditional(EVP_PKEY_RSA, data, len)) != NULL)
		return pg_import_take_key(imp, key, "PKCS#1 RSA private key");
	if ((key = der_traditional(EVP_PKEY_EC, data, len)) != NULL)
		return pg_import_take_key(imp, key, "EC private key");
	return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT,
	                      "not a private key or certificate in a known format (OpenSSH, "
	                      "PEM, PKCS#8, PKCS#12, X.509)");
}

static bool
starts_with(const uint8_t *data, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(data, prefix, n) == 0;
}

pg_import_result
pg_import_parse(const uint8_t *data, size_t len, const pg_import_options *opts, pg_import *imp)
{
	static const pg_import_options none = { 0 };
	pg_import_result rv;

	if (opts == NULL)
		opts = &none;
	if (len == 0)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "the file is empty");
	if (len > 16 * 1024 * 1024)
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "the file is larger than 16 MiB");
	if (starts_with(data, len, "ssh-") || starts_with(data, len, "ecdsa-sha2-"))
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "this is an OpenSSH public key (.pub); import the private key "
		                      "file");
	if (memmem(data, len, "-----BEGIN ", 11) != NULL)
		rv = parse_pem(data, len, opts, imp);
	else
		rv = parse_der(data, len, opts, imp);
	ERR_clear_error();
	if (rv == PG_IMPORT_OK && imp->key == NULL && imp->certs == NULL)
		rv = pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "no private key or certificate found");
	if (rv != PG_IMPORT_OK) {
		EVP_PKEY_free(imp->key);
		imp->key = NULL;
		sk_X509_pop_free(imp->certs, X509_free);
		imp->certs = NULL;
	}
	return rv;
}
