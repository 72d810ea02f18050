/*
 * The consumers of `trust check`, each read from what it reads itself:
 *
 * OpenSSL: a directory as -CApath reads it, through libcrypto's own hash
 *   directory lookup (HASH.N certificates, HASH.rN CRLs), and
 *   X509_check_trust() on the copy it finds, the call its verifier makes
 *   for the trusted part of a chain. OpenSSL consults a store entry only
 *   for a certificate that issues the chain (or a self-signed one).
 * GnuTLS: the PKCS#11 objects it reads: anchors are CKA_TRUSTED
 *   certificates of trust-policy modules, restricted by a stapled
 *   extendedKeyUsage; distrust is a CKA_X_DISTRUSTED certificate with the
 *   issuer and serial number, honoured only from a module whose
 *   manufacturerID starts with "PKCS#11 Kit".
 * NSS: the CKO_NSS_TRUST object with the certificate's issuer and serial
 *   number (and SHA-1, where the object has one), and its CKA_TRUST_*
 *   value for the purpose; a not-trusted value anywhere wins.
 * Java: the trusted-certificate entries of a cacerts keystore, which
 *   holds anchors only: no distrust, no revocations.
 */
#include "config.h"

#include "consumers.h"
#include "trust-format.h"

#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/x509v3.h>

#include <stdlib.h>
#include <string.h>

void
pg_check_cert_name(X509 *x, char *out, size_t size)
{
	unsigned char *alias;
	int len = 0;
	char *line;

	alias = X509_alias_get0(x, &len);
	if (alias && len > 0) {
		snprintf(out, size, "%.*s", len, alias);
		return;
	}
	line = X509_NAME_oneline(X509_get_subject_name(x), NULL, 0);
	snprintf(out, size, "%s", line ? line : "?");
	OPENSSL_free(line);
}

void
pg_consumer_free(pg_consumer *c)
{
	if (c == NULL)
		return;
	if (c->ops->free)
		c->ops->free(c);
	free(c->note);
	free(c);
}

/* A consumer with data_size bytes of zeroed data (none for 0), which
 * ops->free frees; NULL when out of memory. */
static pg_consumer *
consumer_new(const char *name, const pg_consumer_ops *ops, size_t data_size)
{
	pg_consumer *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->name = name;
	c->ops = ops;
	if (data_size > 0 && (c->data = calloc(1, data_size)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static bool
always(pg_consumer *c, X509 *x, bool as_issuer)
{
	return true;
}

/* ---------------------------------------------------------------------------
 * OpenSSL: a hashed directory
 */

typedef struct {
	const char *dir, *label;
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
	X509_OBJECT *first = X509_STORE_CTX_get_obj_by_subject(d->ctx, X509_LU_CRL,
	                                                       (X509_NAME *)issuer);
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
pg_consumer_openssl(const char *dir, const char *label)
{
	pg_consumer *c = consumer_new("OpenSSL", &openssl_ops, sizeof(openssl_data));
	openssl_data *d;
	X509_LOOKUP *lookup;

	if (c == NULL)
		return NULL;
	d = c->data;
	d->dir = dir;
	d->label = label;
	d->store = X509_STORE_new();
	d->ctx = X509_STORE_CTX_new();
	lookup = d->store ? X509_STORE_add_lookup(d->store, X509_LOOKUP_hash_dir()) : NULL;
	if (lookup == NULL || d->ctx == NULL ||
	    X509_LOOKUP_add_dir(lookup, dir, X509_FILETYPE_PEM) != 1 ||
	    X509_STORE_CTX_init(d->ctx, d->store, NULL, NULL) != 1) {
		pg_message("OpenSSL cannot read the directory %s", dir);
		pg_consumer_free(c);
		return NULL;
	}
	return c;
}

/* ---------------------------------------------------------------------------
 * PKCS#11 objects (GnuTLS and NSS)
 */

/* Calls func for each object of every token of the modules that match
 * template; stops when it returns true. */
typedef bool (*object_func)(const pg_tmodule *m, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s,
                            CK_OBJECT_HANDLE o, void *data);

static bool
each_object(const pg_trust_set *set, bool policy_only, const char *manufacturer_prefix,
            CK_ATTRIBUTE *templ, CK_ULONG n, object_func func, void *data)
{
	bool stop = false;

	for (size_t m = 0; m < set->n_modules && !stop; m++) {
		const pg_tmodule *mod = &set->modules[m];
		CK_FUNCTION_LIST *f = mod->funcs;
		if (policy_only && !mod->trust_policy)
			continue;
		if (manufacturer_prefix &&
		    strncmp(mod->manufacturer, manufacturer_prefix, strlen(manufacturer_prefix)) != 0)
			continue;
		for (size_t i = 0; i < mod->n_slots && !stop; i++) {
			CK_SESSION_HANDLE s;
			CK_OBJECT_HANDLE objs[16];
			CK_ULONG got = 0;
			if (f->C_OpenSession(mod->slots[i], CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
				continue;
			if (f->C_FindObjectsInit(s, templ, n) == CKR_OK) {
				while (!stop && f->C_FindObjects(s, objs, 16, &got) == CKR_OK && got > 0)
					for (CK_ULONG j = 0; j < got && !stop; j++)
						stop = func(mod, f, s, objs[j], data);
				f->C_FindObjectsFinal(s);
			}
			f->C_CloseSession(s);
		}
	}
	return stop;
}

/* DER of x's issuer and serial number, as CKA_ISSUER and CKA_SERIAL_NUMBER. */
typedef struct {
	unsigned char *issuer, *serial;
	int issuer_len, serial_len;
} issuer_serial;

static bool
issuer_serial_init(issuer_serial *is, const X509_NAME *issuer, const ASN1_INTEGER *serial)
{
	memset(is, 0, sizeof(*is));
	is->issuer_len = i2d_X509_NAME(issuer, &is->issuer);
	is->serial_len = i2d_ASN1_INTEGER(serial, &is->serial);
	return is->issuer_len > 0 && is->serial_len > 0;
}

static void
issuer_serial_clear(issuer_serial *is)
{
	OPENSSL_free(is->issuer);
	OPENSSL_free(is->serial);
}

static bool
found_one(const pg_tmodule *m, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s,
          CK_OBJECT_HANDLE o, void *data)
{
	*(const pg_tmodule **)data = m;
	return true;
}

/* A CKA_X_DISTRUSTED certificate with this issuer and serial: the module
 * it is in, or NULL. */
static const pg_tmodule *
distrusted_in(const pg_trust_set *set, const char *prefix, const X509_NAME *issuer,
              const ASN1_INTEGER *serial)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_BBOOL yes = CK_TRUE;
	issuer_serial is;
	const pg_tmodule *found = NULL;

	if (!issuer_serial_init(&is, issuer, serial)) {
		issuer_serial_clear(&is);
		return NULL;
	}
	{
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_X_DISTRUSTED, &yes, sizeof(yes) },
		                     { CKA_ISSUER, is.issuer, (CK_ULONG)is.issuer_len },
		                     { CKA_SERIAL_NUMBER, is.serial, (CK_ULONG)is.serial_len } };
		each_object(set, true, prefix, t, PG_N_ELEMENTS(t), found_one, &found);
	}
	issuer_serial_clear(&is);
	return found;
}

/* ---------------------------------------------------------------------------
 * GnuTLS
 */

static const char gnutls_prefix[] = "PKCS#11 Kit";

typedef struct {
	const char *purpose;
	X509 *x;
	int verdict;                   /* 0 none, 1 trusted, 2 excluded by a stapled EKU */
} stapled_job;

/* Does a stapled extendedKeyUsage (Extension DER) allow the purpose? */
static bool
eku_allows(const unsigned char *der, size_t len, const char *purpose)
{
	const unsigned char *p = der;
	X509_EXTENSION *ext = d2i_X509_EXTENSION(NULL, &p, (long)len);
	STACK_OF(ASN1_OBJECT) *oids = NULL;
	bool ok = false;
	char text[128];

	if (ext)
		oids = X509V3_EXT_d2i(ext);
	for (int i = 0; oids && i < sk_ASN1_OBJECT_num(oids) && !ok; i++) {
		OBJ_obj2txt(text, sizeof(text), sk_ASN1_OBJECT_value(oids, i), 1);
		ok = strcmp(text, purpose) == 0 || strcmp(text, "2.5.29.37.0") == 0;
	}
	sk_ASN1_OBJECT_pop_free(oids, ASN1_OBJECT_free);
	X509_EXTENSION_free(ext);
	return ok;
}

static bool
stapled_eku(const pg_tmodule *m, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s,
            CK_OBJECT_HANDLE o, void *data)
{
	stapled_job *job = data;
	CK_ATTRIBUTE a = { CKA_VALUE, NULL, 0 };
	unsigned char *v;

	if (f->C_GetAttributeValue(s, o, &a, 1) != CKR_OK || a.ulValueLen == CK_UNAVAILABLE_INFORMATION ||
	    (v = malloc(a.ulValueLen + 1)) == NULL)
		return false;
	a.pValue = v;
	if (f->C_GetAttributeValue(s, o, &a, 1) == CKR_OK && !eku_allows(v, a.ulValueLen, job->purpose))
		job->verdict = 2;
	free(v);
	return job->verdict == 2;
}

/* A trusted copy of x: then its stapled extendedKeyUsage, in that token. */
static bool
trusted_copy(const pg_tmodule *m, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s,
             CK_OBJECT_HANDLE o, void *data)
{
	stapled_job *job = data;
	static const unsigned char eku_oid[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	unsigned char *spki = NULL;
	int spki_len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(job->x), &spki);
	CK_OBJECT_HANDLE objs[8];
	CK_ULONG got = 0;

	if (job->verdict == 0)
		job->verdict = 1;
	if (spki_len > 0) {
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_PUBLIC_KEY_INFO, spki, (CK_ULONG)spki_len },
		                     { CKA_OBJECT_ID, (void *)eku_oid, sizeof(eku_oid) } };
		/* Another session on the same token for the inner search. */
		CK_SESSION_INFO info;
		CK_SESSION_HANDLE s2;
		if (f->C_GetSessionInfo(s, &info) == CKR_OK &&
		    f->C_OpenSession(info.slotID, CKF_SERIAL_SESSION, NULL, NULL, &s2) == CKR_OK) {
			if (f->C_FindObjectsInit(s2, t, PG_N_ELEMENTS(t)) == CKR_OK) {
				while (job->verdict != 2 &&
				       f->C_FindObjects(s2, objs, 8, &got) == CKR_OK && got > 0)
					for (CK_ULONG i = 0; i < got && job->verdict != 2; i++)
						stapled_eku(m, f, s2, objs[i], job);
				f->C_FindObjectsFinal(s2);
			}
			f->C_CloseSession(s2);
		}
	}
	OPENSSL_free(spki);
	return job->verdict == 2;
}

static pg_ttrust
gnutls_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
             size_t size)
{
	const pg_trust_set *set = c->data;
	const pg_tmodule *m;
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_BBOOL yes = CK_TRUE;
	unsigned char *der = NULL;
	int der_len;
	stapled_job job = { k->purpose, x, 0 };

	m = distrusted_in(set, gnutls_prefix, X509_get_issuer_name(x), X509_get0_serialNumber(x));
	if (m) {
		snprintf(why, size, "distrusted in the module of \"%s\"", m->manufacturer);
		return PG_T_REJECTED;
	}
	if ((der_len = i2d_X509(x, &der)) <= 0)
		return PG_T_NEUTRAL;
	{
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_TRUSTED, &yes, sizeof(yes) },
		                     { CKA_VALUE, der, (CK_ULONG)der_len } };
		each_object(set, true, NULL, t, PG_N_ELEMENTS(t), trusted_copy, &job);
	}
	OPENSSL_free(der);
	if (job.verdict == 2) {
		snprintf(why, size, "its stapled extendedKeyUsage excludes %s", k->purpose_name);
		return PG_T_REJECTED;
	}
	if (job.verdict == 1) {
		snprintf(why, size, "a trusted certificate of a trust-policy module");
		return PG_T_TRUSTED;
	}
	m = distrusted_in(set, NULL, X509_get_issuer_name(x), X509_get0_serialNumber(x));
	if (m)
		snprintf(why, size, "distrusted only in a module whose manufacturer, \"%s\", "
		         "does not start with \"%s\"", m->manufacturer, gnutls_prefix);
	else
		snprintf(why, size, "not a trusted certificate of a trust-policy module");
	return PG_T_NEUTRAL;
}

static int
gnutls_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
               const ASN1_INTEGER *serial, char *why, size_t size)
{
	const pg_tmodule *m = distrusted_in(c->data, gnutls_prefix, issuer, serial);

	if (m) {
		snprintf(why, size, "distrusted by issuer and serial in the module of \"%s\"",
		         m->manufacturer);
		return 1;
	}
	snprintf(why, size, "no distrusted object with its issuer and serial number "
	         "in a \"%s\" module", gnutls_prefix);
	return 0;
}

static const pg_consumer_ops gnutls_ops = {
	.trust = gnutls_trust,
	.revoked = gnutls_revoked,
	.can_distrust = always,
};

pg_consumer *
pg_consumer_gnutls(const pg_trust_set *set)
{
	pg_consumer *c = consumer_new("GnuTLS", &gnutls_ops, 0);
	bool policy = false;

	if (c == NULL)
		return NULL;
	c->data = (void *)set;
	for (size_t i = 0; i < set->n_modules; i++)
		policy |= set->modules[i].trust_policy;
	if (!policy)
		c->note = strdup("no module is registered with \"trust-policy: yes\", so GnuTLS "
		                 "reads no trust from PKCS#11");
	return c;
}

/* ---------------------------------------------------------------------------
 * NSS
 */

typedef struct {
	CK_ATTRIBUTE_TYPE attr;
	unsigned char sha1[20];
	bool trusted, rejected, found;
} nss_job;

static bool
nss_object(const pg_tmodule *m, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s,
           CK_OBJECT_HANDLE o, void *data)
{
	nss_job *job = data;
	unsigned char hash[64];
	CK_ULONG value = CKT_NSS_TRUST_UNKNOWN;
	CK_ATTRIBUTE h = { CKA_CERT_SHA1_HASH, hash, sizeof(hash) };
	CK_ATTRIBUTE t = { job->attr, &value, sizeof(value) };

	/* A SHA-1 that is not the certificate's: the object is another's. */
	if (f->C_GetAttributeValue(s, o, &h, 1) == CKR_OK && h.ulValueLen == 20 &&
	    memcmp(hash, job->sha1, 20) != 0)
		return false;
	job->found = true;
	if (f->C_GetAttributeValue(s, o, &t, 1) != CKR_OK)
		return false;
	if (value == CKT_NSS_NOT_TRUSTED)
		job->rejected = true;
	else if (value == CKT_NSS_TRUSTED_DELEGATOR || value == CKT_NSS_TRUSTED)
		job->trusted = true;
	return job->rejected;
}

static int
nss_purpose(const char *oid)
{
	for (int i = 0; i < PG_N_PURPOSES; i++)
		if (strcmp(pg_std_purposes[i], oid) == 0)
			return i;
	return -1;
}

static bool
nss_lookup(const pg_trust_set *set, const char *purpose, const X509_NAME *issuer,
           const ASN1_INTEGER *serial, const unsigned char *sha1, nss_job *job)
{
	CK_OBJECT_CLASS klass = CKO_NSS_TRUST;
	issuer_serial is;
	int p = nss_purpose(purpose);

	memset(job, 0, sizeof(*job));
	if (p < 0)
		return false;
	/* CKA_TRUST_SERVER_AUTH .. TIME_STAMPING follow the purposes' order. */
	job->attr = CKA_TRUST_SERVER_AUTH + (CK_ATTRIBUTE_TYPE)p;
	if (sha1)
		memcpy(job->sha1, sha1, 20);
	if (issuer_serial_init(&is, issuer, serial)) {
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_ISSUER, is.issuer, (CK_ULONG)is.issuer_len },
		                     { CKA_SERIAL_NUMBER, is.serial, (CK_ULONG)is.serial_len } };
		each_object(set, false, NULL, t, PG_N_ELEMENTS(t), nss_object, job);
	}
	issuer_serial_clear(&is);
	return true;
}

static pg_ttrust
nss_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
          size_t size)
{
	unsigned char sha1[20];
	unsigned int len = 0;
	nss_job job;

	X509_digest(x, EVP_sha1(), sha1, &len);
	if (!nss_lookup(c->data, k->purpose, X509_get_issuer_name(x), X509_get0_serialNumber(x),
	                sha1, &job)) {
		snprintf(why, size, "NSS trust objects have no value for %s", k->purpose_name);
		return PG_T_NA;
	}
	if (job.rejected) {
		snprintf(why, size, "its NSS trust object says not trusted for %s", k->purpose_name);
		return PG_T_REJECTED;
	}
	if (job.trusted) {
		snprintf(why, size, "its NSS trust object says trusted for %s", k->purpose_name);
		return PG_T_TRUSTED;
	}
	if (job.found)
		snprintf(why, size, "its NSS trust object gives no trust for %s", k->purpose_name);
	else
		snprintf(why, size, "no NSS trust object");
	return PG_T_NEUTRAL;
}

static int
nss_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
            const ASN1_INTEGER *serial, char *why, size_t size)
{
	nss_job job;

	if (!nss_lookup(c->data, k->purpose, issuer, serial, NULL, &job)) {
		snprintf(why, size, "NSS trust objects have no value for %s", k->purpose_name);
		return -1;
	}
	if (job.rejected) {
		snprintf(why, size, "an NSS trust object by issuer and serial says not trusted");
		return 1;
	}
	snprintf(why, size, "no NSS trust object by issuer and serial says not trusted");
	return 0;
}

static const pg_consumer_ops nss_ops = {
	.trust = nss_trust,
	.revoked = nss_revoked,
	.can_distrust = always,
};

pg_consumer *
pg_consumer_nss(const pg_trust_set *set)
{
	pg_consumer *c = consumer_new("NSS", &nss_ops, 0);

	if (c == NULL)
		return NULL;
	c->data = (void *)set;
	return c;
}

/* ---------------------------------------------------------------------------
 * Java: a cacerts keystore
 */

typedef struct {
	const char *label;
	STACK_OF(X509) *certs;
	char **aliases;
} java_data;

static pg_ttrust
java_trust(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer, char *why,
           size_t size)
{
	java_data *d = c->data;

	for (int i = 0; i < sk_X509_num(d->certs); i++)
		if (X509_cmp(sk_X509_value(d->certs, i), x) == 0) {
			snprintf(why, size, "a trusted entry of %s (alias %s)", d->label, d->aliases[i]);
			return PG_T_TRUSTED;
		}
	snprintf(why, size, "not in %s", d->label);
	return PG_T_NEUTRAL;
}

static int
java_revoked(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
             const ASN1_INTEGER *serial, char *why, size_t size)
{
	snprintf(why, size, "a cacerts keystore holds no revocations");
	return -1;
}

static bool
java_can_distrust(pg_consumer *c, X509 *x, bool as_issuer)
{
	return false;
}

static void
java_issuers(pg_consumer *c, X509 *x, STACK_OF(X509) *out)
{
	java_data *d = c->data;

	for (int i = 0; i < sk_X509_num(d->certs); i++) {
		X509 *y = sk_X509_value(d->certs, i);
		if (X509_check_issued(y, x) == X509_V_OK && X509_up_ref(y) && !sk_X509_push(out, y))
			X509_free(y);
	}
}

static void
java_free(pg_consumer *c)
{
	java_data *d = c->data;

	for (int i = 0; i < sk_X509_num(d->certs); i++)
		free(d->aliases[i]);
	free(d->aliases);
	sk_X509_pop_free(d->certs, X509_free);
	free(d);
}

static const pg_consumer_ops java_ops = {
	.trust = java_trust,
	.revoked = java_revoked,
	.can_distrust = java_can_distrust,
	.issuers = java_issuers,
	.free = java_free,
};

pg_consumer *
pg_consumer_java(const char *keystore, const char *label)
{
	pg_consumer *c = consumer_new("Java", &java_ops, sizeof(java_data));
	size_t len = 0;
	unsigned char *bytes = (unsigned char *)pg_trust_read_file(keystore, &len);
	char err[256] = "";
	java_data *d;
	bool ok;

	if (c == NULL || bytes == NULL) {
		pg_message("cannot read the keystore %s", keystore);
		free(bytes);
		pg_consumer_free(c);
		return NULL;
	}
	d = c->data;
	d->label = label;
	ok = pg_java_keystore_read(bytes, len, "changeit", &d->certs, &d->aliases, err, sizeof(err));
	free(bytes);
	if (!ok) {
		pg_message("%s: %s", keystore, err);
		pg_consumer_free(c);
		return NULL;
	}
	return c;
}
