/*
 * Reading a Java keystore for `trust check`: the JKS layout (the one
 * `trust extract --format=java-cacerts` writes and keytool reads), with
 * its keyed SHA-1 integrity check, or PKCS#12 (keytool's default for new
 * keystores since Java 9) through libcrypto.
 *
 * JKS: u32 magic 0xFEEDFEED, u32 version (1 or 2), u32 count, then per
 * entry u32 tag (1 private key, 2 trusted certificate), alias (u16
 * length + modified UTF-8), u64 date; a key entry has u32 length + key
 * bytes and u32 chain length; each certificate has (version 2) a type
 * string and u32 length + DER. Last, SHA-1 over the password as UTF-16BE,
 * "Mighty Aphrodite" and every byte before the digest.
 */
#include "config.h"

#include "be-reader.h"
#include "common.h"
#include "java-keystore.h"

#include <openssl/evp.h>
#include <openssl/pkcs12.h>

#include <stdlib.h>
#include <string.h>

/* A u16-prefixed string; NULL (and r->failed) when it does not fit. */
static char *
utf(pg_be_reader *r)
{
	size_t n = pg_be_u16(r);
	const unsigned char *s = pg_be_bytes(r, n);

	return s ? (char *)pg_memdup0(s, n) : NULL;
}

static bool
push_cert(const unsigned char *der, size_t len, const char *alias, STACK_OF(X509) *certs,
          char ***aliases)
{
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	char **grown;

	if (x == NULL || p != der + len)
		goto fail;
	grown = realloc(*aliases, ((size_t)sk_X509_num(certs) + 1) * sizeof(char *));
	if (grown == NULL)
		goto fail;
	*aliases = grown;
	grown[sk_X509_num(certs)] = strdup(alias);
	if (grown[sk_X509_num(certs)] == NULL || !sk_X509_push(certs, x)) {
		free(grown[sk_X509_num(certs)]);
		goto fail;
	}
	return true;
fail:
	X509_free(x);
	return false;
}

/* One certificate of an entry; added to the lists when keep. */
static bool
jks_cert(pg_be_reader *r, uint32_t version, const char *alias, bool keep, STACK_OF(X509) *certs,
         char ***aliases)
{
	char *type = version == 2 ? utf(r) : NULL;
	uint32_t n = pg_be_u32(r);
	const unsigned char *der = pg_be_bytes(r, n);
	bool ok = der != NULL && (version != 2 || (type && strcmp(type, "X.509") == 0));

	free(type);
	return ok && (!keep || push_cert(der, n, alias, certs, aliases));
}

static bool
jks_entry(pg_be_reader *r, uint32_t version, STACK_OF(X509) *certs, char ***aliases, char *err,
          size_t size)
{
	uint32_t tag = pg_be_u32(r);
	char *alias = utf(r);
	bool ok = alias != NULL && pg_be_bytes(r, 8) != NULL;

	if (ok && tag == 1) {
		/* A private key entry: its chain is not a trust anchor. */
		uint32_t klen = pg_be_u32(r), chain;
		ok = pg_be_bytes(r, klen) != NULL;
		chain = pg_be_u32(r);
		for (uint32_t i = 0; ok && i < chain; i++)
			ok = jks_cert(r, version, alias, false, certs, aliases);
	} else if (ok && tag == 2) {
		ok = jks_cert(r, version, alias, true, certs, aliases);
	} else if (ok) {
		snprintf(err, size, "entry type %u is not JKS", (unsigned)tag);
		ok = false;
	}
	if (!ok && !err[0])
		snprintf(err, size, "a damaged entry at byte %zu", r->off);
	free(alias);
	return ok;
}

static bool
jks_digest_ok(const unsigned char *data, size_t len, const char *password)
{
	unsigned char digest[20];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok;

	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (const char *p = password; ok && *p; p++) {
		unsigned char u[2] = { 0, (unsigned char)*p };
		ok = EVP_DigestUpdate(ctx, u, 2);
	}
	ok = ok && EVP_DigestUpdate(ctx, "Mighty Aphrodite", 16) &&
	     EVP_DigestUpdate(ctx, data, len - 20) && EVP_DigestFinal_ex(ctx, digest, NULL) &&
	     memcmp(digest, data + len - 20, 20) == 0;
	EVP_MD_CTX_free(ctx);
	return ok;
}

static bool
read_jks(const unsigned char *data, size_t len, const char *password, STACK_OF(X509) *certs,
         char ***aliases, char *err, size_t size)
{
	/* The entries end where the 20-byte integrity digest begins. */
	pg_be_reader r = { data, len >= 20 ? len - 20 : 0, 0, false };
	uint32_t version, count;

	if (len < 12 + 20) {
		snprintf(err, size, "truncated keystore");
		return false;
	}
	pg_be_u32(&r);
	version = pg_be_u32(&r);
	count = pg_be_u32(&r);
	if (r.failed || (version != 1 && version != 2)) {
		snprintf(err, size, "unknown JKS version");
		return false;
	}
	for (uint32_t i = 0; i < count; i++)
		if (!jks_entry(&r, version, certs, aliases, err, size))
			return false;
	if (r.off != r.len) {
		snprintf(err, size, "%zu bytes after the last entry", r.len - r.off);
		return false;
	}
	if (!jks_digest_ok(data, len, password)) {
		snprintf(err, size, "the keystore's integrity check fails (password \"%s\")", password);
		return false;
	}
	return true;
}

static bool
read_pkcs12(const unsigned char *data, size_t len, const char *password,
            STACK_OF(X509) *certs, char ***aliases, char *err, size_t size)
{
	const unsigned char *p = data;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
	STACK_OF(X509) *ca = NULL;
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	bool ok = true;

	if (p12 == NULL || !PKCS12_parse(p12, password, &key, &cert, &ca)) {
		snprintf(err, size, "neither a JKS keystore nor a PKCS#12 file that opens with \"%s\"",
		         password);
		PKCS12_free(p12);
		return false;
	}
	/* Certificates without a key: keytool's trusted-certificate entries. */
	for (int i = 0; ok && ca && i < sk_X509_num(ca); i++) {
		X509 *x = sk_X509_value(ca, i);
		unsigned char *der = NULL;
		int n = i2d_X509(x, &der);
		int alen = 0;
		unsigned char *alias = X509_alias_get0(x, &alen);
		char name[256];
		snprintf(name, sizeof(name), "%.*s", alias ? alen : 0, alias ? (char *)alias : "");
		ok = n > 0 && push_cert(der, (size_t)n, name, certs, aliases);
		OPENSSL_free(der);
	}
	sk_X509_pop_free(ca, X509_free);
	X509_free(cert);
	EVP_PKEY_free(key);
	PKCS12_free(p12);
	if (!ok)
		snprintf(err, size, "a certificate of the PKCS#12 file does not parse");
	return ok;
}

bool
pg_java_keystore_read(const unsigned char *data, size_t len, const char *password,
                      STACK_OF(X509) **certs, char ***aliases, char *err, size_t size)
{
	static const unsigned char magic[4] = { 0xfe, 0xed, 0xfe, 0xed };
	bool ok;

	*certs = sk_X509_new_null();
	*aliases = NULL;
	err[0] = 0;
	if (*certs == NULL)
		return false;
	if (len >= 4 && memcmp(data, magic, 4) == 0)
		ok = read_jks(data, len, password, *certs, aliases, err, size);
	else
		ok = read_pkcs12(data, len, password, *certs, aliases, err, size);
	if (!ok) {
		for (int i = 0; i < sk_X509_num(*certs); i++)
			free((*aliases)[i]);
		free(*aliases);
		*aliases = NULL;
		sk_X509_pop_free(*certs, X509_free);
		*certs = NULL;
	}
	return ok;
}
