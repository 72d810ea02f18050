/*
 * What `p11glue adopt` finds, as items of its result, and what it
 * writes to the token (adopt-core.h): the token's keys and certificates
 * read once, so that each thing is recognized by its public key or its
 * value and written once; key pairs and certificates written as `import`
 * writes them; certificates for GnuPG's keys made and signed by the
 * token with signer.c.
 */
#include "config.h"

#include "adopt-core.h"
#include "objects.h"
#include "signer.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The validity of a certificate made for a GnuPG key: gnupg-pkcs11-scd
 * looks only at its key and ID. */
#define CERT_DAYS 36500u

/* ---------------------------------------------------------------------------
 * Items
 */

pg_adopt_item *
pg_adopt_add(pg_adopt *a, const char *source, const char *from, const char *what_fmt, ...)
{
	pg_adopt_result *r = a->result;
	pg_adopt_item *it;
	va_list ap;

	if (r->failed || !pg_array_grow(&r->items, &r->cap, r->n, sizeof(*r->items), 16)) {
		r->failed = true;
		return NULL;
	}
	it = &r->items[r->n];
	memset(it, 0, sizeof(*it));
	it->source = source;
	it->from = strdup(from);
	va_start(ap, what_fmt);
	it->what = what_fmt ? pg_strdup_vprintf(what_fmt, ap) : NULL;
	va_end(ap);
	if (it->from == NULL || it->what == NULL) {
		free(it->from);
		free(it->what);
		r->failed = true;
		return NULL;
	}
	r->n++;
	return it;
}

void
pg_adopt_set(pg_adopt *a, pg_adopt_item *it, pg_adopt_state st, const char *fmt, ...)
{
	va_list ap;
	char *why;

	it->state = st;
	if (st == PG_ADOPT_FAILED)
		a->status = PG_EXIT_FAIL;
	/* What is not in the store stays needed where it is. */
	if (st == PG_ADOPT_LEFT || st == PG_ADOPT_FAILED) {
		free(it->remove);
		it->remove = NULL;
	}
	if (fmt == NULL)
		return;
	/* Formatted first: the arguments may be the old text. */
	va_start(ap, fmt);
	why = pg_strdup_vprintf(fmt, ap);
	va_end(ap);
	free(it->why);
	it->why = why;
}

void
pg_adopt_remove(pg_adopt_item *it, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = fmt ? pg_strdup_vprintf(fmt, ap) : NULL;
	va_end(ap);
	free(it->remove);
	it->remove = text;
}

char *
pg_adopt_pretty(const pg_adopt *a, const char *path)
{
	size_t n = strlen(a->home);
	pg_buf b;

	if (n == 0 || strncmp(path, a->home, n) != 0 || path[n] != '/')
		return strdup(path);
	pg_buf_init(&b);
	pg_buf_add_str(&b, "~");
	pg_buf_add_str(&b, path + n);
	return pg_buf_steal(&b, NULL);
}

p11glue_pin *
pg_adopt_ask(pg_adopt *a, const char *prompt)
{
	p11glue_pin *pin = NULL;

	if (pg_store_read_secret(a->opts->pass_source, prompt, 0, &pin) != PG_EXIT_OK)
		return NULL;
	return pin;
}

/* ---------------------------------------------------------------------------
 * What the token holds
 */

static bool
add_cert(pg_adopt *a, unsigned char *der, size_t len)
{
	size_t cap = a->cap_certs;

	if (!pg_array_grow(&a->certs, &a->cap_certs, a->n_certs, sizeof(*a->certs), 16))
		return false;
	if (a->cap_certs != cap) {
		size_t *lens = realloc(a->cert_lens, a->cap_certs * sizeof(*lens));
		if (lens == NULL) {
			a->cap_certs = cap;
			return false;
		}
		a->cert_lens = lens;
	}
	a->certs[a->n_certs] = der;
	a->cert_lens[a->n_certs++] = len;
	return true;
}

/* A key of the token (pub) with its ID into the index, once. */
static bool
add_key(pg_adopt *a, EVP_PKEY *pub, unsigned char *id, size_t id_len, bool private)
{
	unsigned char *spki = NULL;
	int spki_len = i2d_PUBKEY(pub, &spki);
	pg_adopt_key *k;
	pg_buf blob;
	const char *type;

	if (spki_len <= 0) {
		free(id);
		return false;
	}
	for (size_t i = 0; i < a->n_keys; i++) {
		k = &a->keys[i];
		if (k->spki_len == (size_t)spki_len && memcmp(k->spki, spki, k->spki_len) == 0) {
			k->has_private |= private;
			OPENSSL_free(spki);
			free(id);
			return true;
		}
	}
	if (!pg_array_grow(&a->keys, &a->cap_keys, a->n_keys, sizeof(*a->keys), 16)) {
		OPENSSL_free(spki);
		free(id);
		return false;
	}
	k = &a->keys[a->n_keys++];
	memset(k, 0, sizeof(*k));
	k->spki = pg_memdup0(spki, (size_t)spki_len);
	k->spki_len = (size_t)spki_len;
	OPENSSL_free(spki);
	k->id = id;
	k->id_len = id_len;
	k->has_private = private;
	pg_buf_init(&blob);
	if (pg_ssh_public_blob(pub, &blob, &type))
		k->blob = (unsigned char *)pg_buf_steal(&blob, &k->blob_len);
	pg_buf_clear(&blob);
	return k->spki != NULL;
}

/* Objects of class cls into the index. */
static bool
index_class(pg_adopt *a, CK_OBJECT_CLASS cls)
{
	CK_ATTRIBUTE t = { CKA_CLASS, &cls, sizeof(cls) };
	CK_OBJECT_HANDLE *objs = NULL;
	size_t n = 0, len, id_len;
	bool ok = pg_objects_find(a->kt.f, a->kt.session, &t, 1, &objs, &n) == CKR_OK;

	for (size_t i = 0; ok && i < n; i++) {
		const char *why;
		unsigned char *v;
		EVP_PKEY *pub;

		if (cls == CKO_CERTIFICATE) {
			v = pg_keytoken_get(&a->kt, objs[i], CKA_VALUE, &len);
			if (v != NULL && !add_cert(a, v, len)) {
				free(v);
				ok = false;
			}
			continue;
		}
		/* Keys the CLI cannot read (other types) are not ours to match. */
		pub = pg_keytoken_public_key(&a->kt, objs[i], &why);
		v = pg_keytoken_get(&a->kt, objs[i], CKA_ID, &id_len);
		if (pub != NULL)
			ok = add_key(a, pub, v, v ? id_len : 0, cls == CKO_PRIVATE_KEY);
		else
			free(v);
		EVP_PKEY_free(pub);
	}
	free(objs);
	return ok;
}

bool
pg_adopt_index(pg_adopt *a)
{
	/* Logged in, private keys are what counts; before (a dry run),
	 * public keys stand in for them. */
	bool ok = index_class(a, CKO_PRIVATE_KEY) && index_class(a, CKO_PUBLIC_KEY) &&
	          index_class(a, CKO_CERTIFICATE);

	for (size_t i = 0; ok && i < a->n_keys; i++) {
		pg_adopt_key *k = &a->keys[i];
		CK_OBJECT_CLASS cls = CKO_CERTIFICATE;
		CK_ATTRIBUTE t[2] = { { CKA_CLASS, &cls, sizeof(cls) }, { CKA_ID, k->id, k->id_len } };
		CK_OBJECT_HANDLE found;
		k->has_cert = k->id_len > 0 && pg_keytoken_find(&a->kt, NULL, t, 2, &found, 1) > 0;
	}
	if (!ok)
		pg_message("cannot read the objects of token '%s'", pg_keytoken_label(&a->kt));
	return ok;
}

const pg_adopt_key *
pg_adopt_find_key(const pg_adopt *a, EVP_PKEY *pub)
{
	unsigned char *spki = NULL;
	int len = pub ? i2d_PUBKEY(pub, &spki) : -1;
	const pg_adopt_key *found = NULL;

	for (size_t i = 0; len > 0 && found == NULL && i < a->n_keys; i++)
		if (a->keys[i].spki_len == (size_t)len && memcmp(a->keys[i].spki, spki, (size_t)len) == 0)
			found = &a->keys[i];
	OPENSSL_free(spki);
	return found;
}

const pg_adopt_key *
pg_adopt_find_blob(const pg_adopt *a, const unsigned char *blob, size_t len)
{
	for (size_t i = 0; i < a->n_keys; i++)
		if (a->keys[i].blob != NULL && a->keys[i].blob_len == len &&
		    memcmp(a->keys[i].blob, blob, len) == 0)
			return &a->keys[i];
	return NULL;
}

bool
pg_adopt_has_cert(const pg_adopt *a, X509 *cert)
{
	unsigned char *der = NULL;
	int len = i2d_X509(cert, &der);
	bool found = false;

	for (size_t i = 0; len > 0 && !found && i < a->n_certs; i++)
		found = a->cert_lens[i] == (size_t)len && memcmp(a->certs[i], der, (size_t)len) == 0;
	OPENSSL_free(der);
	return found;
}

/* ---------------------------------------------------------------------------
 * Writing
 */

/* Why the token would not take key, in why[size]; false when it would.
 * An RSA key outside the sizes the token signs and decrypts with is of
 * no use there. */
static bool
refused(pg_adopt *a, EVP_PKEY *key, char *why, size_t size)
{
	CK_MECHANISM_INFO info;
	int bits = EVP_PKEY_get_bits(key);

	if (pg_key_kind_of(key) == NULL) {
		snprintf(why, size, "the store cannot hold this type of key (%s)",
		         EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key) : "?");
		return true;
	}
	if (!EVP_PKEY_is_a(key, "RSA") ||
	    a->kt.f->C_GetMechanismInfo(a->kt.slot, CKM_RSA_PKCS, &info) != CKR_OK ||
	    (bits >= 0 && (CK_ULONG)bits >= info.ulMinKeySize &&
	     (info.ulMaxKeySize == 0 || (CK_ULONG)bits <= info.ulMaxKeySize)))
		return false;
	snprintf(why, size, "an RSA key of %d bits: the token uses RSA keys of %lu to %lu bits",
	         bits, info.ulMinKeySize, info.ulMaxKeySize);
	return true;
}

/* What the token now holds, after writing key (and cert). */
static void
remember(pg_adopt *a, EVP_PKEY *key, X509 *cert)
{
	unsigned char id[20], *der = NULL;
	const pg_adopt_key *k;
	int len;

	if (key != NULL && pg_key_id(key, id) && pg_adopt_find_key(a, key) == NULL)
		add_key(a, key, pg_memdup0(id, sizeof(id)), sizeof(id), true);
	if (cert != NULL && (len = i2d_X509(cert, &der)) > 0) {
		unsigned char *copy = pg_memdup0(der, (size_t)len);
		if (copy != NULL && !add_cert(a, copy, (size_t)len))
			free(copy);
	}
	OPENSSL_free(der);
	/* A key's own certificate: the token has one for it now. */
	k = cert != NULL ? pg_adopt_find_key(a, X509_get0_pubkey(cert)) : NULL;
	if (k != NULL)
		a->keys[k - a->keys].has_cert = true;
}

/* A label no object of the token has: want, else "want (alt)". */
static char *
free_label(pg_adopt *a, const char *want, const char *alt)
{
	CK_ATTRIBUTE t = { CKA_LABEL, (void *)want, strlen(want) };
	CK_OBJECT_HANDLE found;
	pg_buf b;

	if (alt == NULL || pg_keytoken_find(&a->kt, NULL, &t, 1, &found, 1) <= 0)
		return strdup(want);
	pg_buf_init(&b);
	pg_buf_printf(&b, "%s (%s)", want, alt);
	return pg_buf_steal(&b, NULL);
}

/* The certificate of a key already on the token, under its ID. */
static void
write_leaf(pg_adopt *a, pg_adopt_item *it, const pg_adopt_key *k, X509 *leaf, const char *label)
{
	CK_OBJECT_HANDLE obj;
	CK_RV rv = pg_cert_create_leaf(&a->kt, leaf, label, k->id, k->id_len, &obj);

	if (rv != CKR_OK) {
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "storing its certificate: %s", pg_token_ckr(rv));
		return;
	}
	pg_report_object(&it->objects, "certificate", &a->kt, obj, NULL);
	remember(a, NULL, leaf);
	pg_adopt_set(a, it, PG_ADOPT_TAKEN, "its key was on the token already; its certificate "
	             "is added");
}

void
pg_adopt_write(pg_adopt *a, pg_adopt_item *it, pg_import *imp, const char *file,
               const char *label)
{
	X509 *leaf = pg_import_leaf(imp);
	const pg_adopt_key *k = imp->key ? pg_adopt_find_key(a, imp->key) : NULL;
	char *base = strrchr(file, '/') ? strdup(strrchr(file, '/') + 1) : strdup(file);
	char *name = NULL, why[200];

	/* A key there with this certificate (or none to add) is there. */
	if (k != NULL && (leaf == NULL || pg_adopt_has_cert(a, leaf))) {
		pg_adopt_set(a, it, PG_ADOPT_THERE, NULL);
	} else if (imp->key == NULL && imp->certs != NULL && sk_X509_num(imp->certs) == 1 &&
	           pg_adopt_has_cert(a, sk_X509_value(imp->certs, 0))) {
		pg_adopt_set(a, it, PG_ADOPT_THERE, NULL);
	} else if (imp->key != NULL && refused(a, imp->key, why, sizeof(why))) {
		pg_adopt_set(a, it, PG_ADOPT_LEFT, "%s", why);
	} else if (a->opts->dry_run) {
		pg_adopt_set(a, it, PG_ADOPT_TAKEN, k ? "its key is on the token; its certificate "
		             "would be added" : NULL);
	} else if (k != NULL) {
		write_leaf(a, it, k, leaf, label ? label : imp->key_label);
	} else {
		const char *want = label ? label : imp->key_label;
		name = want ? free_label(a, want, base) : NULL;
		if (pg_import_write(&a->kt, imp, file, name, NULL, 0, &it->objects) != PG_EXIT_OK) {
			pg_adopt_set(a, it, PG_ADOPT_FAILED, "writing it to the token failed (said above)");
		} else {
			pg_adopt_set(a, it, PG_ADOPT_TAKEN, NULL);
			remember(a, imp->key, leaf);
			for (int i = 0; imp->certs && i < sk_X509_num(imp->certs); i++)
				remember(a, NULL, sk_X509_value(imp->certs, i));
		}
	}
	free(name);
	free(base);
}

/* The token's private key with the ID of key, or 0. */
static CK_OBJECT_HANDLE
private_of(pg_adopt *a, const unsigned char *id, size_t id_len)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[2] = { { CKA_CLASS, &cls, sizeof(cls) }, { CKA_ID, (void *)id, id_len } };
	CK_OBJECT_HANDLE found = CK_INVALID_HANDLE;

	return pg_keytoken_find(&a->kt, NULL, t, 2, &found, 1) == 1 ? found : CK_INVALID_HANDLE;
}

/* A self-signed certificate for the token's private key obj, stored with
 * its ID. False after setting the item's why. */
static bool
certify(pg_adopt *a, pg_adopt_item *it, CK_OBJECT_HANDLE obj)
{
	pg_signer sg;
	pg_signer_choice choice = { .days = CERT_DAYS };
	X509 *cert = NULL;
	bool ok = pg_signer_borrow(&sg, &a->kt, obj) == PG_EXIT_OK &&
	          pg_signer_certify(&sg, NULL, &choice, &cert) == PG_EXIT_OK &&
	          pg_signer_store_cert(&sg, cert, sg.label, NULL, 0, &it->objects) == PG_EXIT_OK;

	if (ok)
		remember(a, NULL, cert);
	else
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "making its certificate failed (said above)");
	X509_free(cert);
	pg_signer_clear(&sg);
	return ok;
}

void
pg_adopt_write_certified(pg_adopt *a, pg_adopt_item *it, EVP_PKEY *priv, const char *label,
                         bool cert)
{
	const pg_adopt_key *k = pg_adopt_find_key(a, priv);
	unsigned char id[20];
	char why[200];
	CK_OBJECT_HANDLE obj;
	pg_import imp;

	if (k != NULL && (k->has_cert || !cert)) {
		pg_adopt_set(a, it, PG_ADOPT_THERE, NULL);
		return;
	}
	if (refused(a, priv, why, sizeof(why))) {
		pg_adopt_set(a, it, PG_ADOPT_LEFT, "%s", why);
		return;
	}
	if (a->opts->dry_run) {
		pg_adopt_set(a, it, PG_ADOPT_TAKEN, k ? "its key is on the token; its certificate "
		             "would be made" : NULL);
		return;
	}
	if (k == NULL) {
		pg_import_init(&imp);
		imp.key = priv;
		imp.format = "OpenPGP secret key";
		if (pg_import_write(&a->kt, &imp, label, label, NULL, 0, &it->objects) != PG_EXIT_OK) {
			imp.key = NULL;
			pg_import_clear(&imp);
			pg_adopt_set(a, it, PG_ADOPT_FAILED, "writing it to the token failed (said above)");
			return;
		}
		imp.key = NULL;
		pg_import_clear(&imp);
		remember(a, priv, NULL);
	}
	pg_adopt_set(a, it, PG_ADOPT_TAKEN, k ? "its key was on the token already; a certificate "
	             "is added" : NULL);
	if (!cert || !pg_key_id(priv, id))
		return;
	k = pg_adopt_find_key(a, priv);
	obj = private_of(a, k ? k->id : id, k ? k->id_len : sizeof(id));
	if (obj == CK_INVALID_HANDLE) {
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "its private key is not found on the token");
		return;
	}
	certify(a, it, obj);
}
