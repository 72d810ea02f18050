/*
 * PKCS#12 (RFC 7292) for `p11glue import`: the authenticated safes are
 * walked here, rather than with PKCS12_parse, so that every
 * password-based step has its cost checked before libcrypto runs it, and
 * the key's own friendlyName is found. Keys come from keyBag and
 * pkcs8ShroudedKeyBag, certificates from certBag (X.509); other bags are
 * ignored.
 */
#include "config.h"

#include "import.h"

#include <openssl/err.h>
#include <openssl/pkcs7.h>
#include <openssl/provider.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static unsigned long
max_cost(const pg_import_options *opts)
{
	return opts->max_pbe_cost ? opts->max_pbe_cost : PG_IMPORT_DEFAULT_MAX_ITERATIONS;
}

/* PBKDF2's iterations or scrypt's N*r*p, from PBES2 parameters. */
static bool
pbes2_cost(const ASN1_STRING *seq, uint64_t *cost)
{
	PBE2PARAM *pbe2 = ASN1_item_unpack(seq, ASN1_ITEM_rptr(PBE2PARAM));
	const ASN1_OBJECT *oid;
	const void *value;
	int type, nid;
	bool ok = false;

	if (pbe2 == NULL)
		return false;
	X509_ALGOR_get0(&oid, &type, &value, pbe2->keyfunc);
	nid = OBJ_obj2nid(oid);
	if (type == V_ASN1_SEQUENCE && nid == NID_id_pbkdf2) {
		PBKDF2PARAM *kdf = ASN1_item_unpack(value, ASN1_ITEM_rptr(PBKDF2PARAM));
		ok = kdf != NULL && ASN1_INTEGER_get_uint64(cost, kdf->iter);
		PBKDF2PARAM_free(kdf);
	} else if (type == V_ASN1_SEQUENCE && nid == NID_id_scrypt) {
		SCRYPT_PARAMS *kdf = ASN1_item_unpack(value, ASN1_ITEM_rptr(SCRYPT_PARAMS));
		uint64_t n, r, p;
		ok = kdf != NULL && ASN1_INTEGER_get_uint64(&n, kdf->costParameter) &&
		     ASN1_INTEGER_get_uint64(&r, kdf->blockSize) &&
		     ASN1_INTEGER_get_uint64(&p, kdf->parallelizationParameter) &&
		     n <= UINT32_MAX && r <= UINT32_MAX && p <= UINT32_MAX;
		/* Saturating: any factor this large is over every limit anyway. */
		*cost = ok ? (n * r > UINT64_MAX / (p ? p : 1) ? UINT64_MAX : n * r * p) : 0;
		SCRYPT_PARAMS_free(kdf);
	}
	PBE2PARAM_free(pbe2);
	return ok;
}

pg_import_result
pg_import_check_pbe(pg_import *imp, const pg_import_options *opts, const X509_ALGOR *alg)
{
	const ASN1_OBJECT *oid;
	const void *value;
	int type;
	uint64_t cost = 0;
	bool known;

	if (alg == NULL)
		return PG_IMPORT_OK;
	X509_ALGOR_get0(&oid, &type, &value, alg);
	if (type != V_ASN1_SEQUENCE)
		return PG_IMPORT_OK;
	if (OBJ_obj2nid(oid) == NID_pbes2) {
		known = pbes2_cost(value, &cost);
	} else {
		/* PKCS#5 v1 and PKCS#12 PBE: salt and iteration count. */
		PBEPARAM *pbe = ASN1_item_unpack(value, ASN1_ITEM_rptr(PBEPARAM));
		known = pbe != NULL && ASN1_INTEGER_get_uint64(&cost, pbe->iter);
		PBEPARAM_free(pbe);
	}
	ERR_clear_error();
	if (known && cost > max_cost(opts))
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "the file's password-based encryption costs %llu iterations, "
		                      "more than the limit of %lu", (unsigned long long)cost,
		                      max_cost(opts));
	return PG_IMPORT_OK;
}

/* ---------------------------------------------------------------------------
 * The password
 */

static pg_import_result
check_mac_cost(pg_import *imp, const pg_import_options *opts, const PKCS12 *p12)
{
	const ASN1_INTEGER *iter = NULL;
	uint64_t n = 1;

	PKCS12_get0_mac(NULL, NULL, NULL, &iter, p12);
	if (iter != NULL && (!ASN1_INTEGER_get_uint64(&n, iter) || n > max_cost(opts))) {
		ERR_clear_error();
		return pg_import_fail(imp, PG_IMPORT_ERR_UNSUPPORTED,
		                      "the PKCS#12 MAC iteration count is out of range (limit %lu)",
		                      max_cost(opts));
	}
	return PG_IMPORT_OK;
}

/* The password that opens p12: NULL, "" or the passphrase. */
static pg_import_result
password(pg_import *imp, const pg_import_options *opts, PKCS12 *p12, const char **pass,
         int *len)
{
	pg_import_result rv;

	*len = 0;
	if (!PKCS12_mac_present(p12)) {
		/* No MAC: whatever decrypts is right; asked for when needed. */
		*pass = NULL;
		return PG_IMPORT_OK;
	}
	rv = check_mac_cost(imp, opts, p12);
	if (rv != PG_IMPORT_OK)
		return rv;
	/* Files "without a password" use an empty one or none. */
	if (PKCS12_verify_mac(p12, "", 0)) {
		*pass = "";
		return PG_IMPORT_OK;
	}
	if (PKCS12_verify_mac(p12, NULL, 0)) {
		*pass = NULL;
		return PG_IMPORT_OK;
	}
	*pass = pg_import_pass_text(imp, opts, len);
	if (*pass == NULL)
		return pg_import_fail(imp, PG_IMPORT_ERR_NO_PASSPHRASE,
		                      "the PKCS#12 file is protected and no passphrase was given");
	if (!PKCS12_verify_mac(p12, *pass, *len))
		return pg_import_fail(imp, PG_IMPORT_ERR_PASSPHRASE,
		                      "wrong passphrase for the PKCS#12 file");
	return PG_IMPORT_OK;
}

/* ---------------------------------------------------------------------------
 * Bags
 */

typedef struct {
	pg_import *imp;
	const pg_import_options *opts;
	const char *pass;
	int pass_len;
	bool has_mac;
	char *cert_name;             /* friendlyName of the first certificate */
} walk;

/*
 * Before a part encrypted with alg is decrypted: its cost checked, and
 * without a MAC the passphrase asked for (at the first encrypted part).
 */
static pg_import_result
before_decrypt(walk *w, const X509_ALGOR *alg)
{
	pg_import_result rv = pg_import_check_pbe(w->imp, w->opts, alg);

	if (rv == PG_IMPORT_OK && !w->has_mac && w->pass == NULL)
		w->pass = pg_import_pass_text(w->imp, w->opts, &w->pass_len);
	return rv;
}

static pg_import_result
decrypt_failed(walk *w, const char *what)
{
	return pg_import_fail(w->imp, w->has_mac ? PG_IMPORT_ERR_UNSUPPORTED : PG_IMPORT_ERR_PASSPHRASE,
	                      "cannot decrypt the PKCS#12 %s: %s", what,
	                      w->has_mac ? "unsupported cipher" : "wrong passphrase or unsupported cipher");
}

/*
 * libcrypto's legacy provider (RC2 and 3DES, in files of older tools),
 * loaded on first need and unloaded at exit.
 */
static OSSL_PROVIDER *legacy;
static pthread_once_t legacy_once = PTHREAD_ONCE_INIT;

static void
unload_legacy(void)
{
	OSSL_PROVIDER_unload(legacy);
	legacy = NULL;
}

static void
load_legacy(void)
{
	legacy = OSSL_PROVIDER_try_load(NULL, "legacy", 1);
	if (legacy != NULL)
		atexit(unload_legacy);
}

static bool
have_legacy(void)
{
	pthread_once(&legacy_once, load_legacy);
	return legacy != NULL;
}

/* A decryption that may need the legacy provider: retried with it. */
#define WITH_LEGACY(result, call)                                        \
	do {                                                                 \
		(result) = (call);                                               \
		if ((result) == NULL && legacy == NULL && have_legacy())         \
			(result) = (call);                                           \
		ERR_clear_error();                                               \
	} while (0)

static pg_import_result
key_bag(walk *w, PKCS12_SAFEBAG *bag, bool shrouded)
{
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	const PKCS8_PRIV_KEY_INFO *plain;
	const X509_ALGOR *alg = NULL;
	EVP_PKEY *key;
	char *name;
	pg_import_result rv;

	if (shrouded) {
		X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &alg, NULL);
		rv = before_decrypt(w, alg);
		if (rv != PG_IMPORT_OK)
			return rv;
		WITH_LEGACY(p8, PKCS12_decrypt_skey(bag, w->pass, w->pass_len));
		if (p8 == NULL)
			return decrypt_failed(w, "private key");
		key = EVP_PKCS82PKEY(p8);
		PKCS8_PRIV_KEY_INFO_free(p8);
	} else {
		plain = PKCS12_SAFEBAG_get0_p8inf(bag);
		key = plain ? EVP_PKCS82PKEY(plain) : NULL;
	}
	rv = pg_import_take_key(w->imp, key, "PKCS#12 file");
	name = rv == PG_IMPORT_OK ? PKCS12_get_friendlyname(bag) : NULL;
	if (name != NULL && *name) {
		free(w->imp->key_label);
		w->imp->key_label = strdup(name);
	}
	OPENSSL_free(name);
	return rv;
}

static pg_import_result
cert_bag(walk *w, PKCS12_SAFEBAG *bag)
{
	char *name;

	if (PKCS12_SAFEBAG_get_bag_nid(bag) != NID_x509Certificate)
		return PG_IMPORT_OK;
	if (w->cert_name == NULL && (name = PKCS12_get_friendlyname(bag)) != NULL) {
		w->cert_name = strdup(name);
		OPENSSL_free(name);
	}
	return pg_import_take_cert(w->imp, PKCS12_SAFEBAG_get1_cert(bag));
}

static pg_import_result
bags(walk *w, STACK_OF(PKCS12_SAFEBAG) *list)
{
	pg_import_result rv = PG_IMPORT_OK;

	for (int i = 0; rv == PG_IMPORT_OK && i < sk_PKCS12_SAFEBAG_num(list); i++) {
		PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(list, i);
		switch (PKCS12_SAFEBAG_get_nid(bag)) {
		case NID_keyBag:
			rv = key_bag(w, bag, false);
			break;
		case NID_pkcs8ShroudedKeyBag:
			rv = key_bag(w, bag, true);
			break;
		case NID_certBag:
			rv = cert_bag(w, bag);
			break;
		default:
			break;
		}
	}
	return rv;
}

static pg_import_result
safe(walk *w, PKCS7 *p7)
{
	STACK_OF(PKCS12_SAFEBAG) *list = NULL;
	pg_import_result rv;

	switch (OBJ_obj2nid(p7->type)) {
	case NID_pkcs7_data:
		list = PKCS12_unpack_p7data(p7);
		if (list == NULL)
			return pg_import_fail(w->imp, PG_IMPORT_ERR_FORMAT, "damaged PKCS#12 safe");
		break;
	case NID_pkcs7_encrypted:
		if (p7->d.encrypted == NULL || p7->d.encrypted->enc_data == NULL)
			return pg_import_fail(w->imp, PG_IMPORT_ERR_FORMAT, "damaged PKCS#12 safe");
		rv = before_decrypt(w, p7->d.encrypted->enc_data->algorithm);
		if (rv != PG_IMPORT_OK)
			return rv;
		WITH_LEGACY(list, PKCS12_unpack_p7encdata(p7, w->pass, w->pass_len));
		if (list == NULL)
			return decrypt_failed(w, "certificates");
		break;
	default:
		return PG_IMPORT_OK;
	}
	rv = bags(w, list);
	sk_PKCS12_SAFEBAG_pop_free(list, PKCS12_SAFEBAG_free);
	return rv;
}

pg_import_result
pg_import_pkcs12(PKCS12 *p12, const pg_import_options *opts, pg_import *imp)
{
	walk w = { .imp = imp, .opts = opts, .has_mac = PKCS12_mac_present(p12) == 1 };
	STACK_OF(PKCS7) *safes;
	pg_import_result rv;

	imp->format = "PKCS#12 file";
	rv = password(imp, opts, p12, &w.pass, &w.pass_len);
	if (rv != PG_IMPORT_OK)
		return rv;
	safes = PKCS12_unpack_authsafes(p12);
	if (safes == NULL) {
		ERR_clear_error();
		return pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "damaged PKCS#12 file");
	}
	for (int i = 0; rv == PG_IMPORT_OK && i < sk_PKCS7_num(safes); i++)
		rv = safe(&w, sk_PKCS7_value(safes, i));
	sk_PKCS7_pop_free(safes, PKCS7_free);
	ERR_clear_error();
	if (rv == PG_IMPORT_OK && imp->key == NULL && imp->certs == NULL)
		rv = pg_import_fail(imp, PG_IMPORT_ERR_FORMAT, "the PKCS#12 file holds no key or certificate");
	/* The key's own name, else its certificate's. */
	if (rv == PG_IMPORT_OK && imp->key != NULL && imp->key_label == NULL && w.cert_name != NULL) {
		imp->key_label = w.cert_name;
		w.cert_name = NULL;
	}
	free(w.cert_name);
	imp->format = "PKCS#12 file";
	return rv;
}
