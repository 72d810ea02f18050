/*
 * CRLs (RFC 5280 §5): a CRL counts only when its signature verifies with
 * the key of a certificate whose subject is the CRL's issuer, and when
 * its nextUpdate has not passed.
 *
 * Signatures are checked by libcrypto, the one thing the module needs it
 * for. It is loaded with dlopen when the first CRL is checked, so that a
 * process reading certificates only never maps it (its relocations and
 * provider set-up would cost more than all the certificates together).
 * Once loaded it stays: libcrypto pins itself and runs its own clean-up
 * at exit.
 */
#include "trust-store.h"
#include "trust-config.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct {
	__typeof__(&d2i_X509_CRL) d2i_crl;
	__typeof__(&X509_CRL_free) crl_free;
	__typeof__(&X509_CRL_verify) crl_verify;
	__typeof__(&d2i_PUBKEY) d2i_pubkey;
	__typeof__(&EVP_PKEY_free) pkey_free;
	bool ok;
} crypto;

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

#define LOAD(field, name) \
	(crypto.field = (__typeof__(crypto.field))dlsym(lib, name)) != NULL

static void
load_crypto(void)
{
	void *lib = dlopen(P11GLUE_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL) {
		pg_message("cannot load %s: %s", P11GLUE_LIBCRYPTO, dlerror());
		return;
	}
	crypto.ok = LOAD(d2i_crl, "d2i_X509_CRL") && LOAD(crl_free, "X509_CRL_free") &&
	            LOAD(crl_verify, "X509_CRL_verify") && LOAD(d2i_pubkey, "d2i_PUBKEY") &&
	            LOAD(pkey_free, "EVP_PKEY_free");
	if (!crypto.ok)
		pg_message("%s: missing functions", P11GLUE_LIBCRYPTO);
}

#undef LOAD

void
pg_crl_info_clear(pg_crl_info *info)
{
	free(info->serials);
	info->serials = NULL;
	info->n_serials = 0;
}

/* TBSCertList: version? signature issuer thisUpdate nextUpdate? revoked? */
static bool
read_tbs(const pg_span *der, pg_crl_info *info, pg_span *next, int *next_tag)
{
	pg_der d, crl, tbs, revoked;

	pg_der_init(&d, der->p, der->len);
	pg_der_enter(&d, 0x30, &crl);
	pg_der_enter(&crl, 0x30, &tbs);
	pg_der_read_optional(&tbs, 0x02, NULL, NULL);
	pg_der_read(&tbs, 0x30, NULL, NULL);
	pg_der_read(&tbs, 0x30, &info->issuer, NULL);
	if (pg_der_peek(&tbs) == 0x17 || pg_der_peek(&tbs) == 0x18)
		pg_der_read(&tbs, pg_der_peek(&tbs), NULL, NULL);
	else
		return false;
	*next_tag = pg_der_peek(&tbs);
	if (*next_tag == 0x17 || *next_tag == 0x18)
		pg_der_read(&tbs, *next_tag, NULL, next);
	else
		*next_tag = 0;
	if (pg_der_peek(&tbs) == 0x30 && pg_der_enter(&tbs, 0x30, &revoked)) {
		while (pg_der_peek(&revoked) == 0x30) {
			pg_der entry;
			pg_span serial;
			pg_span *grown;
			pg_der_enter(&revoked, 0x30, &entry);
			if (!pg_der_read(&entry, 0x02, &serial, NULL))
				return false;
			grown = realloc(info->serials, (info->n_serials + 1) * sizeof(*grown));
			if (grown == NULL)
				return false;
			info->serials = grown;
			info->serials[info->n_serials++] = serial;
		}
		if (!pg_der_at_end(&revoked))
			return false;
	}
	return !tbs.failed && !crl.failed;
}

bool
pg_crl_check(const pg_span *der, const pg_cert *const *certs, size_t n_certs,
             long long now, pg_crl_info *info, const char **why)
{
	pg_span next = { NULL, 0 };
	int next_tag = 0;
	const unsigned char *p = der->p;
	X509_CRL *crl = NULL;
	bool verified = false, found = false;
	long long next_time;

	memset(info, 0, sizeof(*info));
	pthread_once(&crypto_once, load_crypto);
	if (!crypto.ok) {
		*why = "libcrypto is not available to check its signature";
		goto fail;
	}
	if (!read_tbs(der, info, &next, &next_tag) ||
	    (crl = crypto.d2i_crl(NULL, &p, (long)der->len)) == NULL) {
		*why = "not a valid CRL";
		goto fail;
	}
	if (next_tag && pg_der_time_epoch(&next, next_tag, &next_time) && next_time < now) {
		*why = "expired (nextUpdate has passed)";
		goto fail;
	}
	for (size_t i = 0; i < n_certs && !verified; i++) {
		const pg_cert *c = certs[i];
		const unsigned char *kp = c->spki.p;
		EVP_PKEY *key;
		if (c->subject.len != info->issuer.len ||
		    memcmp(c->subject.p, info->issuer.p, c->subject.len) != 0)
			continue;
		found = true;
		key = crypto.d2i_pubkey(NULL, &kp, (long)c->spki.len);
		if (key != NULL && crypto.crl_verify(crl, key) == 1)
			verified = true;
		crypto.pkey_free(key);
	}
	if (!verified) {
		*why = found ? "signature does not verify with its issuer's key"
		             : "issuer is not a known certificate";
		goto fail;
	}
	crypto.crl_free(crl);
	return true;
fail:
	if (crl != NULL)
		crypto.crl_free(crl);
	pg_crl_info_clear(info);
	return false;
}
