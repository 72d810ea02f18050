/*
 * gen-bundle N FILE: writes a PEM bundle of N self-signed CA certificates
 * (one P-256 key, distinct subjects and serials), a synthetic system
 * bundle for the scaling benchmark.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	FILE *out = argc > 2 ? fopen(argv[2], "w") : NULL;
	EVP_PKEY *key = EVP_EC_gen("P-256");

	if (out == NULL || key == NULL || n <= 0) {
		fprintf(stderr, "usage: gen-bundle N FILE\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		X509 *x = X509_new();
		X509_NAME *name = X509_NAME_new();
		X509V3_CTX ctx;
		X509_EXTENSION *ext;
		char cn[64];

		snprintf(cn, sizeof(cn), "Synthetic Root %05d", i);
		X509_set_version(x, 2);
		ASN1_INTEGER_set(X509_get_serialNumber(x), i + 1);
		X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (unsigned char *)"p11glue bench", -1, -1, 0);
		X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (unsigned char *)cn, -1, -1, 0);
		X509_set_subject_name(x, name);
		X509_set_issuer_name(x, name);
		X509_gmtime_adj(X509_getm_notBefore(x), 0);
		X509_gmtime_adj(X509_getm_notAfter(x), 3650L * 86400);
		X509_set_pubkey(x, key);
		X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_key_identifier, "hash");
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
		X509_sign(x, key, EVP_sha256());
		PEM_write_X509(out, x);
		X509_NAME_free(name);
		X509_free(x);
	}
	EVP_PKEY_free(key);
	return fclose(out) == 0 ? 0 : 1;
}
