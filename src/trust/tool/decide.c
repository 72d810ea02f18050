/*
 * The trust decisions `p11glue trust` makes (trust-tool.h): anchors
 * stored and removed, certificates distrusted and trusted again (in the
 * first writable trust token, through PKCS#11, as p11-kit's `trust
 * anchor` does), CRLs added and removed (files in that token's crls/),
 * and then the files other programs read brought up to date (compat.c)
 * when the token is the system's or the user's default directory.
 *
 * One decision per certificate and location: storing an anchor lifts a
 * distrust of the same certificate in that location, and distrusting it
 * removes its anchor there.
 */
#include "config.h"

#include "consumers.h"
#include "decide.h"
#include "objects.h"
#include "trust-dirs.h"
#include "trust-tool.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first certificate of a file (PEM or DER) as DER (free()). */
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

/* The first CRL of a file (PEM or DER), or NULL. */
static X509_CRL *
read_crl(const char *path)
{
	FILE *f = fopen(path, "rb");
	X509_CRL *crl;

	if (f == NULL)
		return NULL;
	crl = PEM_read_X509_CRL(f, NULL, NULL, NULL);
	if (crl == NULL) {
		rewind(f);
		crl = d2i_X509_CRL_fp(f, NULL);
	}
	fclose(f);
	return crl;
}

/* ---------------------------------------------------------------------------
 * The report
 */

static pg_decide_item *
add_item(pg_decide_report *r, const char *operand)
{
	pg_decide_item *grown = realloc(r->items, (r->n_items + 1) * sizeof(*grown));

	if (grown == NULL)
		return NULL;
	r->items = grown;
	memset(&grown[r->n_items], 0, sizeof(*grown));
	grown[r->n_items].operand = operand;
	return &grown[r->n_items++];
}

void
pg_decide_report_clear(pg_decide_report *r)
{
	for (size_t i = 0; i < r->n_items; i++) {
		free(r->items[i].certificate);
		free(r->items[i].file);
	}
	free(r->items);
	pg_compat_report_clear(&r->compat);
	memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------------------
 * Objects of the writable token
 */

/* A certificate given by URI (its object and id), on the token: DER. */
static unsigned char *
cert_by_uri(const pg_decide_token *t, const char *text, size_t *len)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_ATTRIBUTE tmpl = { CKA_CLASS, &klass, sizeof(klass) };
	p11glue_uri *uri = NULL;
	CK_OBJECT_HANDLE *objs = NULL;
	unsigned char *der = NULL;
	size_t n = 0;

	if (p11glue_uri_parse(text, P11GLUE_URI_LENIENT, &uri, NULL) != P11GLUE_OK) {
		pg_message("invalid PKCS#11 URI: %s", text);
		return NULL;
	}
	pg_objects_find(t->f, t->s, &tmpl, 1, &objs, &n);
	for (size_t j = 0; j < n && der == NULL; j++) {
		size_t ll = 0, il = 0;
		unsigned char *label = pg_objects_get(t->f, t->s, objs[j], CKA_LABEL, &ll);
		unsigned char *id = pg_objects_get(t->f, t->s, objs[j], CKA_ID, &il);
		CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_LABEL, label, label ? ll : CK_UNAVAILABLE_INFORMATION },
		                     { CKA_ID, id, id ? il : CK_UNAVAILABLE_INFORMATION } };
		if (p11glue_uri_match_attributes(uri, a, 3))
			der = pg_objects_get(t->f, t->s, objs[j], CKA_VALUE, len);
		free(label);
		free(id);
	}
	free(objs);
	p11glue_uri_free(uri);
	return der;
}

/* ---------------------------------------------------------------------------
 * CRLs: files in the location's crls/
 */

/* Does a certificate of the token issue crl (subject, signature)? */
static bool
crl_issuer_known(const pg_decide_token *t, X509_CRL *crl, char *why, size_t size)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	unsigned char *name = NULL;
	int name_len = i2d_X509_NAME(X509_CRL_get_issuer(crl), &name);
	CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                        { CKA_SUBJECT, name, name_len > 0 ? (CK_ULONG)name_len : 0 } };
	CK_OBJECT_HANDLE *objs = NULL;
	size_t n = 0;
	bool found = false, ok = false;

	if (name_len > 0)
		pg_objects_find(t->f, t->s, tmpl, 2, &objs, &n);
	for (size_t i = 0; i < n && !ok; i++) {
		size_t len = 0;
		unsigned char *der = pg_objects_get(t->f, t->s, objs[i], CKA_VALUE, &len);
		const unsigned char *p = der;
		X509 *x = der ? d2i_X509(NULL, &p, (long)len) : NULL;
		found |= x != NULL;
		ok = x != NULL && X509_CRL_verify(crl, X509_get0_pubkey(x)) == 1;
		X509_free(x);
		free(der);
	}
	free(objs);
	OPENSSL_free(name);
	if (!ok)
		snprintf(why, size, found ? "its signature does not verify with its issuer's key"
		                          : "its issuer is not a certificate of this location (a CRL "
		                            "counts only beside its issuer: store the issuer there first)");
	return ok;
}

/* The file name of an issuer's CRL: a readable part and 8 hex digits of
 * the SHA-1 of the issuer's DER. */
static void
crl_file_name(X509_CRL *crl, char *out, size_t size)
{
	unsigned char *der = NULL;
	int len = i2d_X509_NAME(X509_CRL_get_issuer(crl), &der);
	char base[64] = "", hex[41] = "";
	size_t o = 0;
	X509_NAME_ENTRY *cn;
	int at = X509_NAME_get_index_by_NID(X509_CRL_get_issuer(crl), NID_commonName, -1);

	if (at >= 0 && (cn = X509_NAME_get_entry(X509_CRL_get_issuer(crl), at)) != NULL) {
		const ASN1_STRING *v = X509_NAME_ENTRY_get_data(cn);
		for (int i = 0; i < ASN1_STRING_length(v) && o + 1 < 40; i++) {
			unsigned char c = ASN1_STRING_get0_data(v)[i];
			bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			            (c >= '0' && c <= '9') || c == '-';
			base[o++] = keep ? (char)c : '_';
		}
	}
	base[o] = 0;
	if (len > 0)
		pg_decide_sha1_hex(der, (size_t)len, hex);
	OPENSSL_free(der);
	hex[8] = 0;
	snprintf(out, size, "%s%s%s.crl", base, base[0] ? "-" : "", hex);
}

static char *
crl_pem(X509_CRL *crl, size_t *len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (b != NULL && PEM_write_bio_X509_CRL(b, crl) == 1 && (n = BIO_get_mem_data(b, &data)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = 0;
		*len = (size_t)n;
	}
	BIO_free(b);
	return out;
}

static bool
crl_add(const pg_decide_token *t, pg_decide_item *it, X509_CRL *crl, const char *location, mode_t mode)
{
	char dir[4200], path[4400], name[128], why[200];
	X509_CRL *old;
	size_t len = 0;
	char *pem;
	bool ok;

	if (!crl_issuer_known(t, crl, why, sizeof(why))) {
		pg_message("%s: not added: %s", it->operand, why);
		return false;
	}
	if (X509_CRL_get0_nextUpdate(crl) && X509_cmp_current_time(X509_CRL_get0_nextUpdate(crl)) < 0) {
		pg_message("%s: not added: its next update has passed", it->operand);
		return false;
	}
	snprintf(dir, sizeof(dir), "%s/crls", location);
	crl_file_name(crl, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((old = read_crl(path)) != NULL) {
		int cmp = ASN1_TIME_compare(X509_CRL_get0_lastUpdate(old), X509_CRL_get0_lastUpdate(crl));
		bool same = X509_CRL_cmp(old, crl) == 0 && X509_CRL_match(old, crl) == 0;
		X509_CRL_free(old);
		if (same) {
			it->result = "already stored";
			it->file = strdup(path);
			return true;
		}
		if (cmp > 0) {
			pg_message("%s: not added: older than the CRL of the same issuer in %s",
			           it->operand, path);
			return false;
		}
		it->replaced = "an older CRL of the same issuer";
	}
	if ((pem = crl_pem(crl, &len)) == NULL)
		return false;
	ok = pg_trust_make_dirs(dir, mode, true) && pg_replace_file(path, pem, len, 0644);
	free(pem);
	if (ok) {
		it->result = "stored";
		it->file = strdup(path);
	}
	return ok;
}

/* Removes every CRL of crls/ in location whose issuer is name. */
static bool
crl_remove(pg_decide_item *it, const X509_NAME *issuer, const char *location)
{
	char dir[4200], path[4400];
	DIR *d;
	struct dirent *e;
	size_t removed = 0;

	snprintf(dir, sizeof(dir), "%s/crls", location);
	if ((d = opendir(dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			struct stat st;
			X509_CRL *crl;
			if (e->d_name[0] == '.')
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
			    lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || (crl = read_crl(path)) == NULL)
				continue;
			if (X509_NAME_cmp(X509_CRL_get_issuer(crl), issuer) == 0 && unlink(path) == 0) {
				removed++;
				free(it->file);
				it->file = strdup(path);
			}
			X509_CRL_free(crl);
		}
		closedir(d);
	}
	if (removed == 0) {
		pg_message("%s: no CRL of its issuer in %s", it->operand, dir);
		return false;
	}
	it->result = "removed";
	return true;
}

/* A CRL operand: a CRL, or to remove also the certificate of its issuer. */
static bool
decide_crl(const pg_decide_token *t, pg_decide_item *it, bool add, const char *location, mode_t mode)
{
	X509_CRL *crl = read_crl(it->operand);
	unsigned char *der = NULL;
	size_t len = 0;
	bool ok = false;
	int n;

	if (location[0] == 0) {
		pg_message("the writable location's path is not known (longer than 64 bytes)");
		X509_CRL_free(crl);
		return false;
	}
	if (crl != NULL) {
		char *name = X509_NAME_oneline(X509_CRL_get_issuer(crl), NULL, 0);
		it->certificate = name ? strdup(name) : NULL;
		OPENSSL_free(name);
		if ((n = i2d_X509_CRL(crl, &der)) > 0)
			pg_decide_sha1_hex(der, (size_t)n, it->sha1);
		OPENSSL_free(der);
		ok = add ? crl_add(t, it, crl, location, mode)
		         : crl_remove(it, X509_CRL_get_issuer(crl), location);
		X509_CRL_free(crl);
		return ok;
	}
	if (!add && (der = read_cert(it->operand, &len)) != NULL) {
		const unsigned char *p = der;
		X509 *x = d2i_X509(NULL, &p, (long)len);
		if (x != NULL) {
			it->certificate = pg_decide_cert_name(der, len);
			ok = crl_remove(it, X509_get_subject_name(x), location);
		}
		X509_free(x);
		free(der);
		return ok;
	}
	pg_message("%s: no CRL found", it->operand);
	return false;
}

/* ---------------------------------------------------------------------------
 * The decision
 */

/* Which default directory the token is: level and full path. */
static const char *
level_of(const char *location, char *path, size_t size)
{
	char *user = pg_trust_user_dir();
	const char *level = NULL;

	if (pg_trust_location_is(location, pg_trust_system_dir())) {
		level = "system";
		snprintf(path, size, "%s", pg_trust_system_dir());
	} else if (user != NULL && pg_trust_location_is(location, user)) {
		level = "user";
		snprintf(path, size, "%s", user);
	} else {
		snprintf(path, size, "%s", strlen(location) < 64 ? location : "");
	}
	free(user);
	return level;
}

static bool
decide_one(const pg_decide_token *t, pg_decide_op op, pg_decide_item *it, const pg_decide_report *r)
{
	bool add = op == PG_DECIDE_ANCHOR || op == PG_DECIDE_DISTRUST;
	bool distrust = op == PG_DECIDE_DISTRUST || op == PG_DECIDE_UNDISTRUST;
	unsigned char *der = NULL;
	size_t len = 0;
	bool ok;

	if (op == PG_DECIDE_CRL_ADD || op == PG_DECIDE_CRL_REMOVE)
		return decide_crl(t, it, op == PG_DECIDE_CRL_ADD, r->location,
		                  r->level && strcmp(r->level, "user") == 0 ? 0700 : 0755);
	if (!add && strncmp(it->operand, "pkcs11:", 7) == 0)
		der = cert_by_uri(t, it->operand, &len);
	else
		der = read_cert(it->operand, &len);
	if (der == NULL) {
		pg_message("%s: no certificate found", it->operand);
		return false;
	}
	it->certificate = pg_decide_cert_name(der, len);
	pg_decide_sha1_hex(der, len, it->sha1);
	ok = pg_decide_one_cert(t, it, der, len, add, distrust, NULL);
	free(der);
	return ok;
}

/* Loads the trust, finds the writable token (the first, or the one at
 * path) and opens a session on it (read-write unless dry), saying where
 * in r. */
static int
open_writable(pg_trust_set *set, pg_decide_token *t, const char *path, bool dry,
              pg_decide_report *r)
{
	CK_SLOT_ID slot;
	char location[65];
	CK_FLAGS flags = CKF_SERIAL_SESSION | (dry ? 0 : CKF_RW_SESSION);
	int rv;

	memset(r, 0, sizeof(*r));
	pg_compat_report_init(&r->compat);
	if ((rv = pg_trust_load(set)) != PG_EXIT_OK)
		return rv;
	if (!pg_trust_writable_token_at(path, &t->f, &slot)) {
		if (path != NULL)
			pg_message("p11glue's trust does not read %s, where your decisions go (p11glue "
			           "setup --modules registers its trust module)", path);
		else
			pg_message("no configured writable location to store anchors");
		pg_trust_clear(set);
		return PG_EXIT_FAIL;
	}
	pg_trust_token_location(t->f, slot, location);
	r->level = level_of(location, r->location, sizeof(r->location));
	if (t->f->C_OpenSession(slot, flags, NULL, NULL, &t->s) != CKR_OK) {
		pg_trust_clear(set);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* Closes what open_writable opened, then brings the files other
 * programs read up to date when a decision changed something: what was
 * done is propagated even when a later decision failed. */
static int
close_writable(pg_trust_set *set, pg_decide_token *t, pg_decide_report *r, int rv)
{
	bool changed = false;

	t->f->C_CloseSession(t->s);
	pg_trust_clear(set);
	if (r->level == NULL)
		return rv;
	for (size_t i = 0; i < r->n_items; i++)
		changed |= r->items[i].result != NULL && strncmp(r->items[i].result, "already", 7) != 0 &&
		           strncmp(r->items[i].result, "would", 5) != 0;
	if (changed && pg_trust_compat(strcmp(r->level, "system") == 0, 0, &r->compat) != PG_EXIT_OK)
		rv = PG_EXIT_FAIL;
	return rv;
}

int
pg_trust_decide(pg_decide_op op, char **names, int n_names, pg_decide_report *r)
{
	pg_trust_set set;
	pg_decide_token t;
	int rv = open_writable(&set, &t, NULL, false, r);

	if (rv != PG_EXIT_OK)
		return rv;
	for (int i = 0; i < n_names && rv == PG_EXIT_OK; i++) {
		pg_decide_item *it = add_item(r, names[i]);
		if (it == NULL || !decide_one(&t, op, it, r))
			rv = PG_EXIT_FAIL;
	}
	return close_writable(&set, &t, r, rv);
}

int
pg_trust_decide_certs(const pg_decide_cert *certs, size_t n, bool dry_run, pg_decide_report *r)
{
	pg_trust_set set;
	pg_decide_token t;
	char *user = pg_trust_user_dir();
	int rv = user ? open_writable(&set, &t, user, dry_run, r) : PG_EXIT_FAIL;

	if (user == NULL)
		pg_message("no home directory for your trust decisions: set HOME");
	free(user);
	if (rv != PG_EXIT_OK)
		return rv;
	for (size_t i = 0; i < n && rv == PG_EXIT_OK; i++) {
		const pg_decide_cert *c = &certs[i];
		pg_decide_how how = { c->label, c->purposes, c->n_purposes, c->rejects, c->n_rejects,
		                      dry_run };
		pg_decide_item *it = add_item(r, c->label ? c->label : "");
		if (it == NULL) {
			rv = PG_EXIT_FAIL;
			break;
		}
		it->certificate = pg_decide_cert_name(c->der, c->len);
		pg_decide_sha1_hex(c->der, c->len, it->sha1);
		if (!pg_decide_one_cert(&t, it, c->der, c->len, true, c->distrust, &how))
			rv = PG_EXIT_FAIL;
	}
	return close_writable(&set, &t, r, rv);
}
