/*
 * The consumers of `trust check` that read PKCS#11 objects (those that
 * read files are in consumers-files.c), each as it reads them:
 *
 * GnuTLS: the PKCS#11 objects it reads: anchors are CKA_TRUSTED
 *   certificates of trust-policy modules, restricted by a stapled
 *   extendedKeyUsage; distrust is a CKA_X_DISTRUSTED certificate with the
 *   issuer and serial number, honoured only from a module whose
 *   manufacturerID starts with "PKCS#11 Kit".
 * NSS: the CKO_NSS_TRUST object with the certificate's issuer and serial
 *   number (and SHA-1, where the object has one), and its CKA_TRUST_*
 *   value for the purpose; a not-trusted value anywhere wins.
 * Chromium: NSS's trust objects for a certificate, found through the
 *   certificate itself: a distrusted issuer and serial number without a
 *   certificate on a token (a CRL's revocation) does not reach it.
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

pg_consumer *
pg_consumer_new(const char *name, const pg_consumer_ops *ops, size_t data_size)
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

bool
pg_consumer_always(pg_consumer *c, X509 *x, bool as_issuer)
{
	return true;
}

bool
pg_consumer_never(pg_consumer *c, X509 *x, bool as_issuer)
{
	return false;
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
	.can_distrust = pg_consumer_always,
};

pg_consumer *
pg_consumer_gnutls(const pg_trust_set *set, const char *name)
{
	pg_consumer *c = pg_consumer_new(name, &gnutls_ops, 0);
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
	.can_distrust = pg_consumer_always,
};

/* A consumer of the trust modules' objects (set) with these rules. */
static pg_consumer *
objects_consumer(const char *name, const pg_consumer_ops *ops, const pg_trust_set *set)
{
	pg_consumer *c = pg_consumer_new(name, ops, 0);

	if (c != NULL)
		c->data = (void *)set;
	return c;
}

pg_consumer *
pg_consumer_nss(const pg_trust_set *set)
{
	return objects_consumer("NSS", &nss_ops, set);
}

static const pg_consumer_ops chromium_ops = {
	.trust = nss_trust,
	.no_revocations = "reads NSS's trust of a certificate it holds; a revocation by issuer "
	                  "and serial number without the certificate does not reach it",
	.can_distrust = pg_consumer_always,
};

pg_consumer *
pg_consumer_chromium(const pg_trust_set *set)
{
	return objects_consumer("Chromium", &chromium_ops, set);
}
