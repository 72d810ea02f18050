/*
 * The consumers of `trust check` that read files (consumers.h):
 *
 * OpenSSL: a bundle and a directory as its default verify paths (or
 *   -CAfile and -CApath) read them: the bundle's certificates first, then
 *   libcrypto's own hash directory lookup (HASH.N certificates, HASH.rN
 *   CRLs), and X509_check_trust() on the copy it finds, the call its
 *   verifier makes for the trusted part of a chain. OpenSSL consults a
 *   store entry only for a certificate that issues the chain (or a
 *   self-signed one). curl reads the same way what it is given.
 * GnuTLS's trust file: a PEM bundle whose every certificate is an anchor.
 * Java: the trusted-certificate entries of a cacerts keystore, which
 *   holds anchors only: no distrust, no revocations.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "consumers.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * OpenSSL: a bundle and a hashed directory
 */

typedef struct {
	const char *label;
	bool crl_check;
	X509_STORE *store;
	X509_STORE_CTX *ctx;
} openssl_data;

/* X509_check_trust ids of the purposes OpenSSL names; else the OID's NID. */
static int
openssl_trust_id(const char *oid)
{
	static const struct { const char *oid; int id; } ids[] = {
		{ "1.3.6.1.5.5.7.3.1", X509_TRUST_SSL_SERVER },
		{ "1.3.6.1.5.5.7.3.2", X509_TRUST_SSL_CLIENT },
		{ "1.3.6.1.5.5.7.3.3", X509_TRUST_OBJECT_SIGN },
		{ "1.3.6.1.5.5.7.3.4", X509_TRUST_EMAIL },
		{ "1.3.6.1.5.5.7.3.8", X509_TRUST_TSA },
	};
	ASN1_OBJECT *obj;
	int nid;

	for (size_t i = 0; i < PG_N_ELEMENTS(ids); i++)
		if (strcmp(ids[i].oid, oid) == 0)
			return ids[i].id;
	nid = OBJ_txt2nid(oid);
	if (nid != NID_undef)
		return nid;
	obj = OBJ_txt2obj(oid, 1);
	nid = obj ? OBJ_create(oid, NULL, NULL) : NID_undef;
	ASN1_OBJECT_free(obj);
	return nid;
}

/* The directory's certificates with x's subject (the caller frees). */
static STACK_OF(X509) *
openssl_by_name(openssl_data *d, const X509_NAME *name)
{
	return X509_STORE_CTX_get1_certs(d->ctx, (X509_NAME *)name);
}

/* The directory's copy of x: the same certificate, or the same subject
 * and key (a re-issued copy OpenSSL would take in its place). */
static X509 *
openssl_find(openssl_data *d, X509 *x)
{
	STACK_OF(X509) *certs = openssl_by_name(d, X509_get_subject_name(x));
	X509 *found = NULL;

	for (int i = 0; certs && i < sk_X509_num(certs) && found == NULL; i++)
		if (X509_cmp(sk_X509_value(certs, i), x) == 0)
			found = sk_X509_value(certs, i);
	for (int i = 0; certs && i < sk_X509_num(certs) && found == NULL; i++)
		if (EVP_PKEY_eq(X509_get0_pubkey(sk_X509_value(certs, i)), X509_get0_pubkey(x)) == 1)
			found = sk_X509_value(certs, i);
	if (found)
		X509_up_ref(found);
	sk_X509_pop_free(certs, X509_free);
	return found;
}

static pg_ttrust
openssl_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
              size_t size)
{
	openssl_data *d = c->data;
	X509 *copy;
	int r;

	if (!as_issuer) {
		snprintf(why, size, "reads no trust for an end-entity certificate");
		return PG_T_NEUTRAL;
	}
	if ((copy = openssl_find(d, x)) == NULL) {
		snprintf(why, size, "not in %s", d->label);
		return PG_T_NEUTRAL;
	}
	r = X509_check_trust(copy, openssl_trust_id(k->purpose), 0);
	X509_free(copy);
	if (r == X509_TRUST_TRUSTED) {
		snprintf(why, size, "trusted for %s in %s", k->purpose_name, d->label);
		return PG_T_TRUSTED;
	}
	if (r == X509_TRUST_REJECTED) {
		snprintf(why, size, "rejected for %s in %s", k->purpose_name, d->label);
		return PG_T_REJECTED;
	}
	snprintf(why, size, "in %s without trust for %s", d->label, k->purpose_name);
	return PG_T_NEUTRAL;
}

static void
openssl_issuers(pg_consumer *c, X509 *x, STACK_OF(X509) *out)
{
	STACK_OF(X509) *certs = openssl_by_name(c->data, X509_get_issuer_name(x));

	for (int i = 0; certs && i < sk_X509_num(certs); i++) {
		X509 *y = sk_X509_value(certs, i);
		if (X509_check_issued(y, x) == X509_V_OK && X509_up_ref(y) && !sk_X509_push(out, y))
			X509_free(y);
	}
	sk_X509_pop_free(certs, X509_free);
}

static bool
openssl_can_distrust(pg_consumer *c, X509 *x, bool as_issuer)
{
	return as_issuer;
}

/* A CRL counts when a key of its issuer (from the directory or from the
 * configured certificates) verifies its signature, as -crl_check needs. */
static bool
crl_verifies(openssl_data *d, const pg_check_ctx *k, X509_CRL *crl)
{
	const X509_NAME *issuer = X509_CRL_get_issuer(crl);
	STACK_OF(X509) *certs = openssl_by_name(d, issuer);
	bool ok = false;

	for (int i = 0; certs && i < sk_X509_num(certs) && !ok; i++)
		ok = X509_CRL_verify(crl, X509_get0_pubkey(sk_X509_value(certs, i))) == 1;
	sk_X509_pop_free(certs, X509_free);
	for (size_t i = 0; i < k->set->n_certs && !ok; i++)
		ok = k->x[i] && X509_NAME_cmp(X509_get_subject_name(k->x[i]), issuer) == 0 &&
		     X509_CRL_verify(crl, X509_get0_pubkey(k->x[i])) == 1;
	return ok;
}

static int
openssl_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
                const ASN1_INTEGER *serial, char *why, size_t size)
{
	openssl_data *d = c->data;
	X509_OBJECT *first;

	if (!d->crl_check) {
		snprintf(why, size, "checks no CRL unless the program asks for it (-crl_check, "
		         "--crlfile)");
		return -1;
	}
	first = X509_STORE_CTX_get_obj_by_subject(d->ctx, X509_LU_CRL, (X509_NAME *)issuer);
	STACK_OF(X509_OBJECT) *objs;
	bool listed = false;

	if (first == NULL) {
		snprintf(why, size, "no CRL of the issuer in %s", d->label);
		return 0;
	}
	X509_OBJECT_free(first);
	/* The lookup cached every CRL of that issuer in the store. */
	objs = X509_STORE_get0_objects(d->store);
	for (int i = 0; i < sk_X509_OBJECT_num(objs); i++) {
		X509_CRL *crl = X509_OBJECT_get0_X509_CRL(sk_X509_OBJECT_value(objs, i));
		X509_REVOKED *rev;
		if (crl == NULL || X509_NAME_cmp(X509_CRL_get_issuer(crl), issuer) != 0 ||
		    X509_CRL_get0_by_serial(crl, &rev, (ASN1_INTEGER *)serial) != 1)
			continue;
		listed = true;
		if (crl_verifies(d, k, crl)) {
			snprintf(why, size, "revoked by a CRL in %s (with -crl_check)", d->label);
			return 1;
		}
	}
	if (listed)
		snprintf(why, size, "listed only in a CRL whose signature does not verify");
	else
		snprintf(why, size, "not listed in the issuer's CRLs in %s", d->label);
	return 0;
}

static void
openssl_free(pg_consumer *c)
{
	openssl_data *d = c->data;

	X509_STORE_CTX_free(d->ctx);
	X509_STORE_free(d->store);
	free(d);
}

static const pg_consumer_ops openssl_ops = {
	.trust = openssl_trust,
	.revoked = openssl_revoked,
	.can_distrust = openssl_can_distrust,
	.issuers = openssl_issuers,
	.free = openssl_free,
};

pg_consumer *
pg_consumer_openssl(const char *name, const char *file, const char *dir, const char *label,
                    bool crl_check)
{
	pg_consumer *c = pg_consumer_new(name, &openssl_ops, sizeof(openssl_data));
	openssl_data *d;
	X509_LOOKUP *lookup = NULL, *bundle = NULL;

	if (c == NULL)
		return NULL;
	d = c->data;
	d->label = label;
	d->crl_check = crl_check;
	d->store = X509_STORE_new();
	d->ctx = X509_STORE_CTX_new();
	if (d->store && file)
		bundle = X509_STORE_add_lookup(d->store, X509_LOOKUP_file());
	if (d->store && dir)
		lookup = X509_STORE_add_lookup(d->store, X509_LOOKUP_hash_dir());
	if (d->ctx == NULL || (file && bundle == NULL) || (dir && lookup == NULL) ||
	    (dir && X509_LOOKUP_add_dir(lookup, dir, X509_FILETYPE_PEM) != 1) ||
	    X509_STORE_CTX_init(d->ctx, d->store, NULL, NULL) != 1) {
		pg_message("OpenSSL cannot read the directory %s", dir ? dir : "?");
		pg_consumer_free(c);
		return NULL;
	}
	/* As OpenSSL's default paths: a bundle that cannot be read adds
	 * nothing, and is said. */
	if (file && X509_load_cert_crl_file(bundle, file, X509_FILETYPE_PEM) <= 0 &&
	    asprintf(&c->note, "cannot read %s: it trusts nothing from it", file) < 0)
		c->note = NULL;
	ERR_clear_error();
	return c;
}

/* ---------------------------------------------------------------------------
 * The certificates of a file, every one trusted: GnuTLS's trust file
 * (an anchor each) and Java's cacerts keystore (with an alias each)
 */

typedef struct {
	const char *label;             /* the file, as messages name it */
	STACK_OF(X509) *certs;
	char **aliases;                /* the keystore's, one a certificate; NULL for a bundle */
	const char *no_revocations;    /* why it holds none */
} certs_data;

static pg_ttrust
certs_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
            size_t size)
{
	certs_data *d = c->data;

	for (int i = 0; i < sk_X509_num(d->certs); i++) {
		if (X509_cmp(sk_X509_value(d->certs, i), x) != 0)
			continue;
		if (d->aliases != NULL)
			snprintf(why, size, "a trusted entry of %s (alias %s)", d->label, d->aliases[i]);
		else
			snprintf(why, size, "an anchor of its trust file %s", d->label);
		return PG_T_TRUSTED;
	}
	snprintf(why, size, "not in %s", d->label);
	return PG_T_NEUTRAL;
}

/* The certificates that issued x, pushed on out (referenced). */
static void
certs_issuers(pg_consumer *c, X509 *x, STACK_OF(X509) *out)
{
	STACK_OF(X509) *certs = ((certs_data *)c->data)->certs;

	for (int i = 0; i < sk_X509_num(certs); i++) {
		X509 *y = sk_X509_value(certs, i);
		if (X509_check_issued(y, x) == X509_V_OK && X509_up_ref(y) && !sk_X509_push(out, y))
			X509_free(y);
	}
}

static void
certs_free(pg_consumer *c)
{
	certs_data *d = c->data;

	for (int i = 0; d->aliases != NULL && i < sk_X509_num(d->certs); i++)
		free(d->aliases[i]);
	free(d->aliases);
	sk_X509_pop_free(d->certs, X509_free);
	free(d);
}

static int
certs_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
              const ASN1_INTEGER *serial, char *why, size_t size)
{
	snprintf(why, size, "%s", ((certs_data *)c->data)->no_revocations);
	return -1;
}

static const pg_consumer_ops certs_ops = {
	.trust = certs_trust,
	.revoked = certs_revoked,
	.can_distrust = pg_consumer_never,
	.issuers = certs_issuers,
	.free = certs_free,
};

pg_consumer *
pg_consumer_bundle(const char *name, const char *file)
{
	pg_consumer *c = pg_consumer_new(name, &certs_ops, sizeof(certs_data));
	certs_data *d;
	BIO *b;
	X509 *x;

	if (c == NULL)
		return NULL;
	d = c->data;
	d->label = file;
	d->no_revocations = "checks no CRL unless the program gives it one (--x509crlfile)";
	if ((d->certs = sk_X509_new_null()) == NULL) {
		pg_consumer_free(c);
		return NULL;
	}
	if ((b = BIO_new_file(file, "r")) == NULL) {
		if (asprintf(&c->note, "cannot read %s: it trusts nothing", file) < 0)
			c->note = NULL;
	}
	while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		if (!sk_X509_push(d->certs, x))
			X509_free(x);
	BIO_free(b);
	ERR_clear_error();
	return c;
}

pg_consumer *
pg_consumer_java(const char *keystore, const char *label)
{
	pg_consumer *c = pg_consumer_new("Java", &certs_ops, sizeof(certs_data));
	size_t len = 0;
	unsigned char *bytes = (unsigned char *)pg_trust_read_file(keystore, &len);
	char err[256] = "";
	certs_data *d;
	bool ok;

	if (c == NULL || bytes == NULL) {
		pg_message("cannot read the keystore %s", keystore);
		free(bytes);
		pg_consumer_free(c);
		return NULL;
	}
	d = c->data;
	d->label = label;
	d->no_revocations = "a cacerts keystore holds no revocations";
	ok = pg_java_keystore_read(bytes, len, "changeit", &d->certs, &d->aliases, err, sizeof(err));
	free(bytes);
	if (!ok) {
		pg_message("%s: %s", keystore, err);
		pg_consumer_free(c);
		return NULL;
	}
	return c;
}

/* ---------------------------------------------------------------------------
 * A consumer that is not there: every decision n/a, with why
 */

static pg_ttrust
absent_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
             size_t size)
{
	snprintf(why, size, "%s", (const char *)c->data);
	return PG_T_NA;
}

static int
absent_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
               const ASN1_INTEGER *serial, char *why, size_t size)
{
	snprintf(why, size, "%s", (const char *)c->data);
	return -1;
}

static const pg_consumer_ops absent_ops = {
	.trust = absent_trust,
	.revoked = absent_revoked,
	.can_distrust = pg_consumer_never,
};

pg_consumer *
pg_consumer_absent(const char *name, const char *why)
{
	pg_consumer *c = pg_consumer_new(name, &absent_ops, 0);

	if (c != NULL) {
		c->data = (void *)why;
		if ((c->note = strdup(why)) == NULL) {
			pg_consumer_free(c);
			return NULL;
		}
	}
	return c;
}
