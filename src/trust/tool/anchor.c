/*
 * `trust anchor --store | --remove` without its command line: the
 * anchors named by certificate files (or, to remove, by PKCS#11 URIs of
 * certificates on a trust token), stored in or removed from the first
 * writable trust token.
 */
#include "config.h"

#include "objects.h"
#include "trust-tool.h"
#include "names.h"

#include <p11glue/p11glue.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CKR_ value for messages: its name, else its number. */
static const char *
ckr_text(CK_RV rv, char *buf, size_t size)
{
	const char *name = pg_name_ckr(rv);

	if (name != NULL)
		return name;
	snprintf(buf, size, "0x%08lx", rv);
	return buf;
}

/* Reads the first certificate of a file (PEM or DER) into DER. */
static unsigned char *
read_cert(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	X509 *x = NULL;
	unsigned char *der = NULL;
	int n;

	if (f == NULL)
		return NULL;
	x = PEM_read_X509_AUX(f, NULL, NULL, NULL);
	if (x == NULL) {
		rewind(f);
		x = d2i_X509_fp(f, NULL);
	}
	fclose(f);
	if (x == NULL)
		return NULL;
	n = i2d_X509(x, &der);
	X509_free(x);
	if (n <= 0)
		return NULL;
	*len = (size_t)n;
	return der;
}

int
pg_trust_anchor(bool store, char **names, int n_names)
{
	int rv = PG_EXIT_OK;
	pg_trust_set set;
	CK_FUNCTION_LIST *f;
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	char code[32];

	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		return rv;
	if (!pg_trust_writable_token(&f, &slot)) {
		pg_message("no configured writable location to store anchors");
		pg_trust_clear(&set);
		return PG_EXIT_FAIL;
	}
	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK) {
		pg_trust_clear(&set);
		return PG_EXIT_FAIL;
	}
	for (int i = 0; i < n_names && rv == PG_EXIT_OK; i++) {
		size_t len = 0;
		unsigned char *der = NULL;
		CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
		CK_BBOOL yes = CK_TRUE;
		CK_OBJECT_HANDLE h, *objs = NULL;
		CK_RV r;
		if (!store && strncmp(names[i], "pkcs11:", 7) == 0) {
			p11glue_uri *uri = NULL;
			size_t n;
			CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
			if (p11glue_uri_parse(names[i], P11GLUE_URI_LENIENT, &uri, NULL) != P11GLUE_OK) {
				pg_message("invalid PKCS#11 URI: %s", names[i]);
				rv = PG_EXIT_FAIL;
				break;
			}
			pg_objects_find(f, s, &t, 1, &objs, &n);
			for (size_t j = 0; j < n; j++) {
				size_t ll = 0, il = 0;
				unsigned char *label = pg_objects_get(f, s, objs[j], CKA_LABEL, &ll);
				unsigned char *id = pg_objects_get(f, s, objs[j], CKA_ID, &il);
				CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
				                     { CKA_LABEL, label, label ? ll : CK_UNAVAILABLE_INFORMATION },
				                     { CKA_ID, id, id ? il : CK_UNAVAILABLE_INFORMATION } };
				if (p11glue_uri_match_attributes(uri, a, 3))
					der = pg_objects_get(f, s, objs[j], CKA_VALUE, &len);
				free(label);
				free(id);
				if (der)
					break;
			}
			free(objs);
			objs = NULL;
			p11glue_uri_free(uri);
		} else {
			der = read_cert(names[i], &len);
		}
		if (der == NULL) {
			pg_message("%s: no certificate found", names[i]);
			rv = PG_EXIT_FAIL;
			break;
		}
		if (store) {
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
			                     { CKA_VALUE, der, len },
			                     { CKA_TRUSTED, &yes, 1 } };
			r = f->C_CreateObject(s, t, 3, &h);
			if (r != CKR_OK) {
				pg_message("couldn't create object: %s", ckr_text(r, code, sizeof(code)));
				rv = PG_EXIT_FAIL;
			}
		} else {
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
			                     { CKA_VALUE, der, len } };
			size_t n;
			pg_objects_find(f, s, t, 2, &objs, &n);
			if (n == 0) {
				pg_message("%s: not stored in a writable location", names[i]);
				rv = PG_EXIT_FAIL;
			}
			for (size_t j = 0; j < n; j++)
				if ((r = f->C_DestroyObject(s, objs[j])) != CKR_OK) {
					pg_message("couldn't remove the anchor: %s", ckr_text(r, code, sizeof(code)));
					rv = PG_EXIT_FAIL;
				}
			free(objs);
		}
		free(der);
	}
	f->C_CloseSession(s);
	pg_trust_clear(&set);
	return rv;
}
