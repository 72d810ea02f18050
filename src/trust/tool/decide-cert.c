/*
 * One certificate's trust decision on the writable trust token
 * (decide.h): the certificate stored with CKA_TRUSTED (an anchor) or
 * CKA_X_DISTRUSTED, one decision per certificate and token, and for an
 * anchor trusted for some purposes only, the stapled extensions that say
 * so (attached to its public key, as p11-kit reads them): a critical
 * extKeyUsage listing the trusted purposes, and OpenSSL's reject list
 * (1.3.6.1.4.1.3319.6.10.1) for the purposes it is distrusted for.
 */
#include "config.h"

#include "decide.h"
#include "objects.h"
#include "names.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The extension OIDs, as CKA_OBJECT_ID holds them (DER). */
static const unsigned char oid_eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
static const unsigned char oid_reject[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
                                            0x99, 0x77, 0x06, 0x0a, 0x01 };

const char *
pg_decide_ckr_text(CK_RV rv, char *buf, size_t size)
{
	const char *name = pg_name_ckr(rv);

	if (name != NULL)
		return name;
	snprintf(buf, size, "0x%08lx", rv);
	return buf;
}

void
pg_decide_sha1_hex(const unsigned char *der, size_t len, char out[41])
{
	unsigned char md[20];
	unsigned int n = 0;

	out[0] = 0;
	if (EVP_Digest(der, len, md, &n, EVP_sha1(), NULL) != 1)
		return;
	for (unsigned int i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

char *
pg_decide_cert_name(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	X509_NAME *subject = x ? X509_get_subject_name(x) : NULL;
	int at = subject ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
	unsigned char *cn = NULL, *der_name = NULL;
	char *name = NULL;
	int n;

	if (at >= 0 && ASN1_STRING_to_UTF8(&cn, X509_NAME_ENTRY_get_data(
	                                             X509_NAME_get_entry(subject, at))) >= 0)
		name = strdup((char *)cn);
	else if (subject && (n = i2d_X509_NAME(subject, &der_name)) > 0)
		name = pg_trust_name_text(der_name, (size_t)n);
	OPENSSL_free(cn);
	OPENSSL_free(der_name);
	X509_free(x);
	return name ? name : strdup("?");
}

char *
pg_trust_name_text(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	X509_NAME *name = d2i_X509_NAME(NULL, &p, (long)len);
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (name && b && X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253) >= 0 &&
	    (n = BIO_get_mem_data(b, &data)) >= 0 && (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = 0;
	}
	X509_NAME_free(name);
	BIO_free(b);
	return out;
}

char *
pg_trust_serial_text(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	ASN1_INTEGER *serial = d2i_ASN1_INTEGER(NULL, &p, (long)len);
	BIGNUM *bn = serial ? ASN1_INTEGER_to_BN(serial, NULL) : NULL;
	char *hex = bn ? BN_bn2hex(bn) : NULL, *out = hex ? strdup(hex) : NULL;

	OPENSSL_free(hex);
	BN_free(bn);
	ASN1_INTEGER_free(serial);
	return out;
}

/* ---------------------------------------------------------------------------
 * Certificate objects
 */

enum { ANY, NOT_DISTRUSTED, DISTRUSTED };

/* The certificate objects holding der, of one kind; *n of them. */
static CK_OBJECT_HANDLE *
find_copies(const pg_decide_token *t, const unsigned char *der, size_t len, int kind, size_t *n)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                        { CKA_VALUE, (void *)der, len } };
	CK_OBJECT_HANDLE *objs = NULL;
	size_t found = 0, k = 0;

	pg_objects_find(t->f, t->s, tmpl, 2, &objs, &found);
	for (size_t i = 0; i < found; i++) {
		CK_BBOOL d = CK_FALSE;
		CK_ATTRIBUTE a = { CKA_X_DISTRUSTED, &d, 1 };
		bool distrusted = t->f->C_GetAttributeValue(t->s, objs[i], &a, 1) == CKR_OK &&
		                  d == CK_TRUE;
		if (kind == ANY || (kind == DISTRUSTED) == distrusted)
			objs[k++] = objs[i];
	}
	*n = k;
	return objs;
}

/* Destroys every object of handles; false after a message. */
static bool
destroy_all(const pg_decide_token *t, const CK_OBJECT_HANDLE *objs, size_t n, const char *what)
{
	char code[32];
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		CK_RV r = t->f->C_DestroyObject(t->s, objs[i]);
		if (r == CKR_OK)
			continue;
		pg_message("couldn't remove the %s: %s%s", what,
		           pg_decide_ckr_text(r, code, sizeof(code)),
		           r == CKR_ACTION_PROHIBITED ? " (its file holds other objects too: edit it)"
		                                      : "");
		ok = false;
	}
	return ok;
}

/* Creates an object; false after a message. */
static bool
create(const pg_decide_token *t, CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	CK_OBJECT_HANDLE h;
	char code[32];
	CK_RV r = t->f->C_CreateObject(t->s, tmpl, n, &h);

	if (r != CKR_OK)
		pg_message("couldn't create object: %s", pg_decide_ckr_text(r, code, sizeof(code)));
	return r == CKR_OK;
}

/* Stores der with trust (CKA_TRUSTED) or distrust (CKA_X_DISTRUSTED). */
static bool
create_cert(const pg_decide_token *t, const unsigned char *der, size_t len, bool distrust,
            const char *label)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                        { CKA_VALUE, (void *)der, len },
	                        { distrust ? CKA_X_DISTRUSTED : CKA_TRUSTED, &yes, 1 },
	                        { CKA_LABEL, (void *)label, label ? strlen(label) : 0 } };

	return create(t, tmpl, label ? 4 : 3);
}

/* ---------------------------------------------------------------------------
 * Stapled purposes
 */

/* An Extension (RFC 5280 4.1) of nid or of the reject list's OID whose
 * value is a SEQUENCE OF the dotted OIDs; DER into *der (OPENSSL_free).
 * No OIDs: no extension (true, *der NULL). */
static bool
purpose_extension(bool reject, const char *const *oids, size_t n, unsigned char **der, int *len)
{
	EXTENDED_KEY_USAGE *seq = sk_ASN1_OBJECT_new_null();
	ASN1_OCTET_STRING *value = ASN1_OCTET_STRING_new();
	ASN1_OBJECT *id = reject ? OBJ_txt2obj("1.3.6.1.4.1.3319.6.10.1", 1) : OBJ_nid2obj(NID_ext_key_usage);
	X509_EXTENSION *ext = NULL;
	unsigned char *inner = NULL;
	int inner_len = -1;
	bool ok = seq != NULL && value != NULL && id != NULL;

	*der = NULL;
	*len = 0;
	for (size_t i = 0; ok && i < n; i++) {
		ASN1_OBJECT *o = OBJ_txt2obj(oids[i], 1);
		ok = o != NULL && sk_ASN1_OBJECT_push(seq, o) > 0;
		if (!ok)
			ASN1_OBJECT_free(o);
	}
	if (ok && n > 0) {
		inner_len = i2d_EXTENDED_KEY_USAGE(seq, &inner);
		ok = inner_len > 0 && ASN1_OCTET_STRING_set(value, inner, inner_len) &&
		     (ext = X509_EXTENSION_create_by_OBJ(NULL, id, !reject, value)) != NULL &&
		     (*len = i2d_X509_EXTENSION(ext, der)) > 0;
	}
	OPENSSL_free(inner);
	X509_EXTENSION_free(ext);
	ASN1_OCTET_STRING_free(value);
	ASN1_OBJECT_free(id);
	sk_ASN1_OBJECT_pop_free(seq, ASN1_OBJECT_free);
	return ok;
}

/* The certificate's SubjectPublicKeyInfo, DER (OPENSSL_free). */
static unsigned char *
spki_of(const unsigned char *der, size_t len, int *spki_len)
{
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	unsigned char *spki = NULL;

	*spki_len = x ? i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &spki) : -1;
	X509_free(x);
	return *spki_len > 0 ? spki : NULL;
}

/*
 * Makes the token's stapled extension of oid for spki hold want (NULL:
 * none): a differing one is replaced. *changed says whether it did (or,
 * dry, would). False after a message.
 */
static bool
staple(const pg_decide_token *t, const unsigned char *oid, size_t oid_len,
       const unsigned char *spki, int spki_len, const unsigned char *want, int want_len,
       const pg_decide_how *how, bool *changed)
{
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	CK_BBOOL critical = oid == oid_eku;
	CK_ATTRIBUTE find[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                        { CKA_PUBLIC_KEY_INFO, (void *)spki, (CK_ULONG)spki_len },
	                        { CKA_OBJECT_ID, (void *)oid, oid_len } };
	CK_ATTRIBUTE make[] = { find[0], find[1], find[2],
	                        { CKA_VALUE, (void *)want, want ? (CK_ULONG)want_len : 0 },
	                        { CKA_X_CRITICAL, &critical, 1 },
	                        { CKA_LABEL, (void *)how->label, how->label ? strlen(how->label) : 0 } };
	CK_OBJECT_HANDLE *objs = NULL;
	size_t n = 0, len = 0;
	unsigned char *value;
	bool ok = true, same;

	pg_objects_find(t->f, t->s, find, 3, &objs, &n);
	value = n == 1 ? pg_objects_get(t->f, t->s, objs[0], CKA_VALUE, &len) : NULL;
	same = want == NULL ? n == 0
	                    : value != NULL && len == (size_t)want_len && memcmp(value, want, len) == 0;
	free(value);
	*changed = !same;
	if (!same && !how->dry_run) {
		ok = destroy_all(t, objs, n, "stapled purposes");
		if (ok && want != NULL)
			ok = create(t, make, how->label ? 6 : 5);
	}
	free(objs);
	return ok;
}

/* The purposes of an anchor as how says them; *changed as above. */
static bool
set_purposes(const pg_decide_token *t, const unsigned char *der, size_t len,
             const pg_decide_how *how, bool *changed)
{
	unsigned char *spki, *eku = NULL, *reject = NULL;
	int spki_len, eku_len, reject_len;
	bool ok, c1 = false, c2 = false;

	spki = spki_of(der, len, &spki_len);
	ok = spki != NULL && purpose_extension(false, how->purposes, how->n_purposes, &eku, &eku_len) &&
	     purpose_extension(true, how->rejects, how->n_rejects, &reject, &reject_len);
	if (!ok)
		pg_message("cannot encode the purposes of the certificate");
	ok = ok && staple(t, oid_eku, sizeof(oid_eku), spki, spki_len, eku, eku_len, how, &c1) &&
	     staple(t, oid_reject, sizeof(oid_reject), spki, spki_len, reject, reject_len, how, &c2);
	*changed = c1 || c2;
	OPENSSL_free(spki);
	OPENSSL_free(eku);
	OPENSSL_free(reject);
	return ok;
}

/* ---------------------------------------------------------------------------
 * The decision
 */

bool
pg_decide_one_cert(const pg_decide_token *t, pg_decide_item *it, const unsigned char *der,
               size_t len, bool add, bool distrust, const pg_decide_how *how)
{
	int same = distrust ? DISTRUSTED : NOT_DISTRUSTED, other = distrust ? NOT_DISTRUSTED : DISTRUSTED;
	size_t n_same = 0, n_other = 0;
	CK_OBJECT_HANDLE *mine = find_copies(t, der, len, same, &n_same);
	CK_OBJECT_HANDLE *theirs = NULL;
	bool dry = how != NULL && how->dry_run, ok = true, changed = false;

	if (!add) {
		if (n_same == 0) {
			pg_message("%s: not %s in a writable location", it->operand,
			           distrust ? "distrusted" : "stored");
			ok = false;
		} else if ((ok = destroy_all(t, mine, n_same, distrust ? "distrust" : "anchor"))) {
			it->result = distrust ? "trusted again" : "removed";
		}
		free(mine);
		return ok;
	}
	if (n_same > 0) {
		if (!distrust && how != NULL)
			ok = set_purposes(t, der, len, how, &changed);
		it->result = !changed ? (distrust ? "already distrusted" : "already stored")
		             : dry ? "would change its purposes" : "purposes changed";
		free(mine);
		return ok;
	}
	theirs = find_copies(t, der, len, other, &n_other);
	if (n_other > 0) {
		ok = dry || destroy_all(t, theirs, n_other, distrust ? "anchor" : "distrust");
		it->replaced = distrust ? "anchor" : "distrust";
	}
	if (ok && !dry)
		ok = create_cert(t, der, len, distrust, how ? how->label : NULL);
	if (ok && !distrust && how != NULL)
		ok = set_purposes(t, der, len, how, &changed);
	if (ok)
		it->result = distrust ? (dry ? "would distrust" : "distrusted")
		                      : (dry ? "would store" : "stored");
	free(mine);
	free(theirs);
	return ok;
}
