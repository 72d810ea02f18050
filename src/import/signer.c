/*
 * A private key on a token as the signer of certificates and requests
 * (signer.h): found by URI with its ID, label and public key, signing
 * with C_Sign (the key never leaves the token), and the certificates
 * stored beside it.
 */
#include "config.h"

#include "signer.h"

#include <openssl/x509v3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void
pg_signer_clear(pg_signer *sg)
{
	if (sg->loaded)
		pg_keytoken_clear(&sg->kt);
	EVP_PKEY_free(sg->pub);
	free(sg->id);
	free(sg->label);
	memset(sg, 0, sizeof(*sg));
}

/* The public key of the private key: its CKA_PUBLIC_KEY_INFO or RSA
 * values, else the public key or certificate with its CKA_ID. */
static EVP_PKEY *
key_public(pg_signer *sg)
{
	static const CK_OBJECT_CLASS classes[] = { CKO_PUBLIC_KEY, CKO_CERTIFICATE };
	CK_OBJECT_CLASS cls;
	CK_ATTRIBUTE match[2] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_ID, sg->id, sg->id_len },
	};
	CK_OBJECT_HANDLE found;
	const char *why;
	EVP_PKEY *pub = pg_keytoken_public_key(&sg->kt, sg->key, &why);

	for (size_t i = 0; pub == NULL && sg->id_len > 0 && i < PG_N_ELEMENTS(classes); i++) {
		cls = classes[i];
		if (pg_keytoken_find(&sg->kt, NULL, match, 2, &found, 1) == 1)
			pub = pg_keytoken_public_key(&sg->kt, found, &why);
	}
	return pub;
}

/* Lists the keys a URI matches when it must match one. */
static void
too_many(pg_signer *sg, const CK_OBJECT_HANDLE *found, long n)
{
	char *text;

	pg_message("%ld private keys match the URI; name one (object=LABEL or id=...):", n);
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(&sg->kt, found[i]);
		fprintf(stderr, "  %s\n", text ? text : "?");
		free(text);
	}
}

/* The private key key of sg's token as the signer: its ID, label and
 * public key. */
static int
take_key(pg_signer *sg, CK_OBJECT_HANDLE key)
{
	unsigned char *aa;
	size_t len;

	sg->key = key;
	aa = pg_keytoken_get(&sg->kt, sg->key, CKA_ALWAYS_AUTHENTICATE, &len);
	sg->always_auth = aa != NULL && len == 1 && aa[0] == CK_TRUE;
	free(aa);
	sg->id = pg_keytoken_get(&sg->kt, sg->key, CKA_ID, &sg->id_len);
	sg->label = (char *)pg_keytoken_get(&sg->kt, sg->key, CKA_LABEL, &len);
	if (sg->id == NULL || sg->id_len == 0) {
		pg_message("the private key has no CKA_ID, which its certificate would share");
		return PG_EXIT_FAIL;
	}
	sg->pub = key_public(sg);
	if (sg->pub == NULL) {
		pg_message("the public key of the private key is not on the token (no "
		              "CKA_PUBLIC_KEY_INFO, public key or certificate with its ID)");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/*
 * Loads the module, logs in to the token the URI names and finds its one
 * private key. rw: a read-write session (to store a certificate).
 */
int
pg_signer_open(pg_signer *sg, pg_store_opts *opts, const p11glue_uri *uri, bool rw)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE want = { CKA_CLASS, &cls, sizeof(cls) };
	CK_OBJECT_HANDLE found[PG_SIGNER_MAX_FOUND];
	long n;
	int status = pg_keytoken_load(&sg->kt, opts, uri);

	sg->loaded = status == PG_EXIT_OK;
	if (status != PG_EXIT_OK || (status = pg_keytoken_select(&sg->kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(&sg->kt, rw)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(&sg->kt, CKU_USER, uri)) != PG_EXIT_OK)
		return status;
	n = pg_keytoken_find(&sg->kt, uri, &want, 1, found, PG_SIGNER_MAX_FOUND);
	if (n <= 0) {
		if (n == 0)
			pg_message("no private key matches the URI on token '%s'",
			              pg_keytoken_label(&sg->kt));
		return PG_EXIT_FAIL;
	}
	if (n > 1) {
		too_many(sg, found, n);
		return PG_EXIT_FAIL;
	}
	sg->uri = uri;
	return take_key(sg, found[0]);
}

int
pg_signer_borrow(pg_signer *sg, const pg_keytoken *kt, CK_OBJECT_HANDLE key)
{
	memset(sg, 0, sizeof(*sg));
	sg->kt = *kt;
	return take_key(sg, key);
}

/* pg_sign_func: C_Sign with the key, a size query first (PKCS#11 §5.2). */
bool
pg_signer_sign(void *data, const pg_sigalg *alg, const unsigned char *in, size_t in_len,
           unsigned char **out, size_t *out_len)
{
	pg_signer *sg = data;
	CK_EDDSA_PARAMS ed448 = { CK_FALSE, 0, NULL };
	CK_MECHANISM mech = { alg->mech, NULL, 0 };
	CK_ULONG len = 0;
	unsigned char *sig = NULL;
	CK_RV rv;

	/* Ed448 signs with parameters: pure Ed448, no context (2.3.14). */
	if (alg->ed448) {
		mech.pParameter = &ed448;
		mech.ulParameterLen = sizeof(ed448);
	}
	rv = sg->kt.f->C_SignInit(sg->kt.session, &mech, sg->key);
	/* CKA_ALWAYS_AUTHENTICATE: the PIN again, for this signature. */
	if (rv == CKR_OK && sg->always_auth &&
	    pg_keytoken_login(&sg->kt, CKU_CONTEXT_SPECIFIC, sg->uri) != PG_EXIT_OK) {
		sg->failed = true;
		return false;
	}
	if (rv == CKR_OK)
		rv = sg->kt.f->C_Sign(sg->kt.session, (CK_BYTE_PTR)in, in_len, NULL, &len);
	if (rv == CKR_OK && (len == 0 || len > 4096 || (sig = malloc(len)) == NULL))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		rv = sg->kt.f->C_Sign(sg->kt.session, (CK_BYTE_PTR)in, in_len, sig, &len);
	if (rv != CKR_OK) {
		free(sig);
		pg_keytoken_error(alg->mech == CKM_RSA_PKCS ? "C_Sign (CKM_RSA_PKCS)"
		                  : alg->mech == CKM_ECDSA  ? "C_Sign (CKM_ECDSA)"
		                                            : "C_Sign (CKM_EDDSA)", rv);
		sg->failed = true;
		return false;
	}
	*out = sig;
	*out_len = len;
	return true;
}

/* The CA's certificate on its token (same CKA_ID as its key), checked. */
X509 *
pg_signer_ca_cert(pg_signer *ca)
{
	CK_OBJECT_CLASS cls = CKO_CERTIFICATE;
	CK_ATTRIBUTE match[2] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_ID, ca->id, ca->id_len },
	};
	CK_OBJECT_HANDLE found[PG_SIGNER_MAX_FOUND];
	long n = pg_keytoken_find(&ca->kt, NULL, match, 2, found, PG_SIGNER_MAX_FOUND);
	unsigned char *der;
	const unsigned char *p;
	size_t len;
	X509 *cert;

	for (long i = 0; i < n; i++) {
		der = pg_keytoken_get(&ca->kt, found[i], CKA_VALUE, &len);
		p = der;
		cert = der ? d2i_X509(NULL, &p, (long)len) : NULL;
		free(der);
		if (cert != NULL && X509_check_ca(cert) > 0 &&
		    EVP_PKEY_eq(X509_get0_pubkey(cert), ca->pub) == 1)
			return cert;
		X509_free(cert);
	}
	if (n >= 0)
		pg_message("the CA key has no CA certificate with its ID on its token (make one "
		              "with 'p11glue certify --self-signed --is-ca')");
	return NULL;
}

/* The certificates with the key's ID, to be replaced; -1 after an error
 * (or when there are some and replace is false). */
long
pg_signer_certs(pg_signer *sg, CK_OBJECT_HANDLE *found, bool replace)
{
	CK_OBJECT_CLASS cls = CKO_CERTIFICATE;
	CK_ATTRIBUTE match[2] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_ID, sg->id, sg->id_len },
	};
	long n = pg_keytoken_find(&sg->kt, NULL, match, 2, found, PG_SIGNER_MAX_FOUND);

	if (n > 0 && !replace) {
		pg_message("a certificate with the key's ID is on the token already (--replace "
		              "replaces it)");
		return -1;
	}
	return n;
}

/* Stores cert with the key's ID, then deletes the n old ones. */
int
pg_signer_store_cert(pg_signer *sg, X509 *cert, const char *label, const CK_OBJECT_HANDLE *old, long n,
                     pg_report *report)
{
	CK_OBJECT_HANDLE obj;
	char *text;
	CK_RV rv = pg_cert_create_leaf(&sg->kt, cert, label, sg->id, sg->id_len, &obj);

	if (rv != CKR_OK) {
		pg_keytoken_error("storing the certificate (C_CreateObject)", rv);
		return PG_EXIT_FAIL;
	}
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(&sg->kt, old[i]);
		rv = sg->kt.f->C_DestroyObject(sg->kt.session, old[i]);
		if (rv == CKR_OK) {
			pg_report_add(report, "replaced", text, NULL);
		} else {
			pg_keytoken_error("deleting the old certificate", rv);
			free(text);
		}
	}
	pg_report_object(report, "certificate", &sg->kt, obj, NULL);
	return PG_EXIT_OK;
}

/* The subject: a copy of the given one, else CN=<the key's label>. */
static X509_NAME *
subject_of(const X509_NAME *given, const pg_signer *sg)
{
	X509_NAME *name;

	if (given != NULL)
		return X509_NAME_dup(given);
	name = X509_NAME_new();
	if (sg->label == NULL || sg->label[0] == 0 || name == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)sg->label,
	                                -1, -1, 0)) {
		X509_NAME_free(name);
		pg_message("the key has no label: give --subject");
		return NULL;
	}
	return name;
}

/* The issuer side of spec, from the CA signer (or none: self-signed). */
static int
set_issuer(pg_cert_spec *spec, pg_signer *ca, X509 **ca_cert, unsigned char key_id[20])
{
	const ASN1_OCTET_STRING *skid;

	if (ca == NULL) {
		spec->issuer = spec->subject;
		return PG_EXIT_OK;
	}
	*ca_cert = pg_signer_ca_cert(ca);
	if (*ca_cert == NULL)
		return PG_EXIT_FAIL;
	spec->issuer = X509_get_subject_name(*ca_cert);
	spec->issuer_pub = ca->pub;
	/* RFC 5280 4.2.1.1: the issuer's subjectKeyIdentifier, when it has one. */
	skid = X509_get0_subject_key_id(*ca_cert);
	if (skid != NULL) {
		spec->issuer_key_id = ASN1_STRING_get0_data(skid);
		spec->issuer_key_id_len = (size_t)ASN1_STRING_length(skid);
	} else if (pg_x509_key_id(ca->pub, key_id)) {
		spec->issuer_key_id = key_id;
		spec->issuer_key_id_len = 20;
	} else {
		/* Never the subject's own identifier in its place. */
		pg_message("cannot compute the CA key's identifier");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_signer_certify(pg_signer *key, pg_signer *ca, const pg_signer_choice *choice, X509 **cert)
{
	pg_cert_spec spec = { 0 };
	pg_signer *by = ca ? ca : key;
	X509 *ca_cert = NULL;
	unsigned char ca_key_id[20];
	pg_sigalg alg;
	const char *why;
	char reason[200];
	int status = PG_EXIT_FAIL;

	*cert = NULL;
	if (!pg_sigalg_choose(by->pub, choice->hash, &alg, &why)) {
		pg_message("%s: %s", ca ? "the CA key" : "the key", why);
		return PG_EXIT_FAIL;
	}
	spec.pub = key->pub;
	spec.subject = subject_of(choice->subject, key);
	spec.not_before = time(NULL);
	spec.days = choice->days;
	spec.is_ca = choice->is_ca;
	spec.san = choice->san;
	if (spec.subject == NULL)
		return PG_EXIT_USAGE;
	if (set_issuer(&spec, ca, &ca_cert, ca_key_id) == PG_EXIT_OK) {
		*cert = pg_x509_make_cert(&spec, &alg, pg_signer_sign, by, reason, sizeof(reason));
		if (*cert != NULL)
			status = PG_EXIT_OK;
		else if (!key->failed && (ca == NULL || !ca->failed))
			pg_message("cannot make the certificate: %s", reason);
	}
	X509_NAME_free(spec.subject);
	X509_free(ca_cert);
	return status;
}

int
pg_signer_request(pg_signer *key, const pg_signer_choice *choice, X509_REQ **req)
{
	X509_NAME *subject;
	pg_sigalg alg;
	const char *why;
	char reason[200];

	*req = NULL;
	if (!pg_sigalg_choose(key->pub, choice->hash, &alg, &why)) {
		pg_message("the key: %s", why);
		return PG_EXIT_FAIL;
	}
	subject = subject_of(choice->subject, key);
	if (subject == NULL)
		return PG_EXIT_USAGE;
	*req = pg_x509_make_req(subject, key->pub, choice->san, &alg, pg_signer_sign, key, reason,
	                        sizeof(reason));
	X509_NAME_free(subject);
	if (*req == NULL && !key->failed)
		pg_message("cannot make the request: %s", reason);
	return *req != NULL ? PG_EXIT_OK : PG_EXIT_FAIL;
}
