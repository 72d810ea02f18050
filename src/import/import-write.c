/*
 * What an import found, written to a token (import.h): the key pair
 * (public and private key objects) and its certificate under one label
 * and CKA_ID, then the other certificates, all or nothing: a failure
 * destroys what the import made.
 */
#include "config.h"

#include "import.h"
#include "keys.h"
#include "objects.h"

#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subject's common name (or NULL); free(). */
static char *
common_name(X509 *cert)
{
	X509_NAME *name = X509_get_subject_name(cert);
	int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
	ASN1_STRING *value = i >= 0 ? X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)) : NULL;
	unsigned char *utf8 = NULL;
	int len = value ? ASN1_STRING_to_UTF8(&utf8, value) : -1;
	char *text = len > 0 ? (char *)pg_memdup0(utf8, (size_t)len) : NULL;

	OPENSSL_free(utf8);
	return text;
}

/* The file's name without directory and extension; free(). */
static char *
file_label(const char *path)
{
	const char *base = strrchr(path, '/');
	char *label = strdup(base ? base + 1 : path), *dot;

	if (label != NULL && (dot = strrchr(label, '.')) != NULL && dot != label)
		*dot = 0;
	return label;
}

/* ---------------------------------------------------------------------------
 * Writing to the token
 */

typedef struct {
	pg_keytoken *kt;
	pg_report *report;
	CK_OBJECT_HANDLE made[64];
	size_t n_made;
	int status;
} writer;

/* Creates one object from t (consumed), reported as what. */
static bool
create(writer *w, pg_tmpl *t, const char *what)
{
	CK_OBJECT_HANDLE obj;
	CK_RV rv = t->failed ? CKR_HOST_MEMORY
	                     : w->kt->f->C_CreateObject(w->kt->session, t->items, t->n, &obj);

	pg_tmpl_clear(t);
	if (rv != CKR_OK) {
		pg_keytoken_error(what, rv);
		w->status = PG_EXIT_FAIL;
		return false;
	}
	if (w->n_made < PG_N_ELEMENTS(w->made))
		w->made[w->n_made++] = obj;
	pg_report_object(w->report, what, w->kt, obj, NULL);
	return true;
}

/* Undoes what a failed import made (and forgets the report). */
static void
roll_back(writer *w)
{
	pg_report_clear(w->report);
	for (size_t i = w->n_made; i > 0; i--)
		w->kt->f->C_DestroyObject(w->kt->session, w->made[i - 1]);
	if (w->n_made > 0)
		pg_message("nothing was imported (%zu object%s removed again)", w->n_made,
		              w->n_made == 1 ? "" : "s");
	w->n_made = 0;
}

/* True when an object of the class with these attribute values exists
 * (*found: one of them). */
static bool
exists(writer *w, CK_OBJECT_CLASS cls, const CK_ATTRIBUTE *attrs, CK_ULONG n,
       CK_OBJECT_HANDLE *found)
{
	CK_ATTRIBUTE all[3] = { { CKA_CLASS, &cls, sizeof(cls) } };

	for (CK_ULONG i = 0; i < n && i < 2; i++)
		all[i + 1] = attrs[i];
	return pg_keytoken_find(w->kt, NULL, all, n + 1, found, 1) > 0;
}

/* The CKA_ID of a key on the token whose public key is pub (a private
 * key first, then a public one); malloc'ed, NULL when none has one. */
static unsigned char *
id_on_token(writer *w, EVP_PKEY *pub, size_t *id_len)
{
	static const CK_OBJECT_CLASS classes[] = { CKO_PRIVATE_KEY, CKO_PUBLIC_KEY };
	unsigned char *id = NULL;

	for (size_t c = 0; id == NULL && c < 2; c++) {
		CK_ATTRIBUTE t = { CKA_CLASS, (void *)&classes[c], sizeof(classes[c]) };
		CK_OBJECT_HANDLE *objs = NULL;
		size_t n = 0;

		if (pg_objects_find(w->kt->f, w->kt->session, &t, 1, &objs, &n) != CKR_OK)
			continue;
		for (size_t i = 0; id == NULL && i < n; i++) {
			const char *why;
			EVP_PKEY *k = pg_keytoken_public_key(w->kt, objs[i], &why);

			if (k != NULL && EVP_PKEY_eq(k, pub) == 1) {
				id = pg_keytoken_get(w->kt, objs[i], CKA_ID, id_len);
				if (id != NULL && *id_len == 0) {
					free(id);
					id = NULL;
				}
			}
			EVP_PKEY_free(k);
		}
		free(objs);
	}
	return id;
}

static bool
write_cert(writer *w, X509 *cert, const char *label, const unsigned char *id, size_t id_len,
           bool leaf)
{
	unsigned char *der = NULL;
	int len = i2d_X509(cert, &der);
	char *cn = NULL, *name;
	CK_OBJECT_HANDLE old;
	pg_tmpl t;
	bool dup;
	CK_ATTRIBUTE same[2] = {
		{ CKA_VALUE, der, (CK_ULONG)len },
		{ CKA_ID, (void *)id, id_len },
	};

	if (len <= 0)
		return false;
	/* A chain certificate once is enough; the key's certificate must
	 * carry the key's ID. */
	dup = exists(w, CKO_CERTIFICATE, same, leaf ? 2 : 1, &old);
	OPENSSL_free(der);
	if (dup) {
		name = common_name(cert);
		pg_report_object(w->report, "skipped certificate", w->kt, old, name ? name : "?");
		free(name);
		return true;
	}
	if (label == NULL)
		label = cn = common_name(cert);
	/* The key's certificate shares the key's label and ID, warned of
	 * with the key. */
	if (!leaf)
		pg_keytoken_warn_taken(w->kt, label, id, id_len, CKO_CERTIFICATE);
	pg_tmpl_init(&t);
	pg_cert_template(&t, cert, label, id, id_len, leaf);
	free(cn);
	return create(w, &t, "certificate");
}

static bool
write_key(writer *w, EVP_PKEY *key, const char *label, const unsigned char *id, size_t id_len,
          X509 *leaf)
{
	pg_tmpl pub, priv;
	CK_OBJECT_HANDLE old;
	CK_ATTRIBUTE same_id = { CKA_ID, (void *)id, id_len };

	if (exists(w, CKO_PRIVATE_KEY, &same_id, 1, &old)) {
		pg_message("a private key with this ID is on the token already (imported before? "
		              "delete it first, or give another --id)");
		w->status = PG_EXIT_FAIL;
		return false;
	}
	pg_keytoken_warn_taken(w->kt, label, id, id_len, CKO_PUBLIC_KEY);
	pg_tmpl_init(&pub);
	pg_tmpl_init(&priv);
	pg_key_templates(&pub, &priv, key, label, id, id_len, leaf);
	if (!create(w, &pub, "public key")) {
		pg_tmpl_clear(&priv);
		return false;
	}
	/* Last, so that a key on the token always has its public half. */
	if (!create(w, &priv, "private key"))
		return false;
	pg_key_warn_kind(pg_key_kind_of(key));
	return true;
}

int
pg_import_write(pg_keytoken *kt, struct pg_import *imp, const char *file, const char *given_label,
                const unsigned char *given_id, size_t given_id_len, pg_report *report)
{
	writer w = { .kt = kt, .report = report, .status = PG_EXIT_OK };
	X509 *leaf = pg_import_leaf(imp);
	unsigned char key_id[20], cert_id[20];
	char *label = NULL;
	const unsigned char *id = given_id;
	size_t id_len = given_id_len;
	int n_certs = imp->certs ? sk_X509_num(imp->certs) : 0;
	bool ok = true;

	if (imp->key != NULL) {
		if (id == NULL) {
			if (!pg_key_id(imp->key, key_id))
				return PG_EXIT_FAIL;
			id = key_id;
			id_len = sizeof(key_id);
		}
		label = given_label ? strdup(given_label)
		        : imp->key_label ? strdup(imp->key_label)
		        : leaf ? common_name(leaf) : NULL;
		if (label == NULL)
			label = file_label(file);
		if (label == NULL)
			return PG_EXIT_FAIL;
		ok = write_key(&w, imp->key, label, id, id_len, leaf) &&
		     (leaf == NULL || write_cert(&w, leaf, label, id, id_len, true));
		if (ok && leaf == NULL && n_certs > 0)
			pg_message("warning: no certificate in the file belongs to the key");
	}
	for (int i = 0; ok && i < n_certs; i++) {
		X509 *cert = sk_X509_value(imp->certs, i);
		EVP_PKEY *pub = X509_get0_pubkey(cert);
		const char *cert_label = imp->key == NULL && n_certs == 1 ? given_label : NULL;
		unsigned char *key_id_found = NULL;
		size_t found_len = 0;

		if (cert == leaf)
			continue;
		/* Certificates alone take --id when there is one, else the ID
		 * of their key on the token, so that programs pair them. */
		if (imp->key == NULL && n_certs == 1 && given_id != NULL)
			ok = write_cert(&w, cert, cert_label, given_id, given_id_len, false);
		else if (pub != NULL && (key_id_found = id_on_token(&w, pub, &found_len)) != NULL)
			ok = write_cert(&w, cert, cert_label, key_id_found, found_len, false);
		else if (pub == NULL || !pg_key_id(pub, cert_id))
			ok = write_cert(&w, cert, cert_label, (const unsigned char *)"", 0, false);
		else
			ok = write_cert(&w, cert, cert_label, cert_id, sizeof(cert_id), false);
		free(key_id_found);
	}
	free(label);
	if (!ok) {
		roll_back(&w);
		return PG_EXIT_FAIL;
	}
	return w.status;
}
