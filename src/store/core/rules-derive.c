/*
 * Attribute values the token computes (rules.c uses them): modulus
 * sizes, check values (PKCS#11 3.0 mechanisms specification: AES and
 * generic secret keys; base specification: certificates), and the
 * fields of an X.509 certificate a client may leave out.
 */
#include "config.h"

#include "core.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <limits.h>
#include <string.h>

CK_ULONG
pg_rules_bits(const CK_ATTRIBUTE *a)
{
	const unsigned char *p = a->pValue;
	CK_ULONG len = a->ulValueLen;

	while (len > 0 && *p == 0) {
		p++;
		len--;
	}
	if (len == 0)
		return 0;
	CK_ULONG bits = (len - 1) * 8;
	for (unsigned v = *p; v != 0; v >>= 1)
		bits++;
	return bits;
}

/* The check value (first 3 bytes): AES: of a zero block encrypted;
 * others: of SHA-1 over the value. False when there is none. */
bool
pg_rules_check_value(CK_OBJECT_CLASS cls, CK_ULONG subtype, const CK_ATTRIBUTE *value,
            unsigned char out[3])
{
	unsigned char block[32] = { 0 };
	unsigned int mdlen = 0;
	const EVP_CIPHER *cipher = NULL;
	EVP_CIPHER_CTX *ctx;
	int outl = 0;
	bool ok;

	if (value == NULL || value->ulValueLen == 0)
		return false;
	if (cls == CKO_SECRET_KEY && subtype == CKK_AES) {
		switch (value->ulValueLen) {
		case 16: cipher = EVP_aes_128_ecb(); break;
		case 24: cipher = EVP_aes_192_ecb(); break;
		case 32: cipher = EVP_aes_256_ecb(); break;
		default: return false;
		}
		ctx = EVP_CIPHER_CTX_new();
		ok = ctx != NULL && EVP_EncryptInit_ex(ctx, cipher, NULL, value->pValue, NULL) == 1 &&
		     EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
		     EVP_EncryptUpdate(ctx, block + 16, &outl, block, 16) == 1;
		EVP_CIPHER_CTX_free(ctx);
		if (ok)
			memcpy(out, block + 16, 3);
		pg_memzero(block, sizeof(block));
		return ok;
	}
	if (cls == CKO_SECRET_KEY && (subtype == CKK_CHACHA20 || subtype == CKK_HKDF))
		return false;
	ok = EVP_Digest(value->pValue, value->ulValueLen, block, &mdlen, EVP_sha1(), NULL) == 1;
	if (ok)
		memcpy(out, block, 3);
	pg_memzero(block, sizeof(block));
	return ok;
}

/*
 * Stores *der (len bytes, from an i2d_ call) and frees it. The buffer is
 * passed by address: C leaves the order of argument evaluation open, so
 * reading it by value beside the i2d_ call that sets it is not safe.
 */
static bool
set_der(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type, int len, unsigned char **der)
{
	bool ok = len > 0 && pg_attrs_set(attrs, type, *der, (CK_ULONG)len);

	OPENSSL_free(*der);
	*der = NULL;
	return ok;
}

/*
 * Fills CKA_SUBJECT, CKA_ISSUER, CKA_SERIAL_NUMBER and CKA_PUBLIC_KEY_INFO
 * of an X.509 certificate template from its CKA_VALUE where the caller
 * left them out (clients often give only the DER).
 */
CK_RV
pg_rules_x509_complete(pg_attrs *given)
{
	const CK_ATTRIBUTE *value = pg_attrs_find(given, CKA_VALUE);
	const unsigned char *p;
	unsigned char *der;
	X509 *cert;
	CK_RV rv = CKR_HOST_MEMORY;

	if (value == NULL || value->ulValueLen == 0 || value->ulValueLen > LONG_MAX)
		return CKR_OK;
	p = value->pValue;
	cert = d2i_X509(NULL, &p, (long)value->ulValueLen);
	if (cert == NULL)
		return CKR_OK;
	if (pg_attrs_find(given, CKA_SUBJECT) == NULL) {
		der = NULL;
		if (!set_der(given, CKA_SUBJECT, i2d_X509_NAME(X509_get_subject_name(cert), &der), &der))
			goto out;
	}
	if (pg_attrs_find(given, CKA_ISSUER) == NULL) {
		der = NULL;
		if (!set_der(given, CKA_ISSUER, i2d_X509_NAME(X509_get_issuer_name(cert), &der), &der))
			goto out;
	}
	if (pg_attrs_find(given, CKA_SERIAL_NUMBER) == NULL) {
		der = NULL;
		if (!set_der(given, CKA_SERIAL_NUMBER,
		             i2d_ASN1_INTEGER(X509_get0_serialNumber(cert), &der), &der))
			goto out;
	}
	if (pg_attrs_find(given, CKA_PUBLIC_KEY_INFO) == NULL && X509_get0_pubkey(cert) != NULL) {
		der = NULL;
		if (!set_der(given, CKA_PUBLIC_KEY_INFO, i2d_PUBKEY(X509_get0_pubkey(cert), &der), &der))
			goto out;
	}
	rv = CKR_OK;
out:
	X509_free(cert);
	return rv;
}
