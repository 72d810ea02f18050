/*
 * CRLs (RFC 5280 §5) and digests through libcrypto: a CRL counts only
 * when its signature verifies with the key of a certificate whose subject
 * is the CRL's issuer, and when its nextUpdate has not passed.
 */
#include "store.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <stdlib.h>
#include <string.h>

static EVP_MD *sha1_md, *md5_md;

static void
digest(EVP_MD **md, const char *name, const void *data, size_t len, unsigned char *out)
{
	unsigned int n = 0;

	if (*md == NULL)
		*md = EVP_MD_fetch(NULL, name, NULL);
	if (*md == NULL || !EVP_Digest(data, len, out, &n, *md, NULL))
		memset(out, 0, (size_t)EVP_MD_get_size(*md ? *md : EVP_sha1()));
}

void
pg_sha1(const void *data, size_t len, unsigned char out[20])
{
	digest(&sha1_md, "SHA1", data, len, out);
}

void
pg_md5(const void *data, size_t len, unsigned char out[16])
{
	/* MD5 is what NSS's trust objects carry (CKA_CERT_MD5_HASH); the
	 * default provider still has it for such non-security uses. */
	digest(&md5_md, "MD5", data, len, out);
}

void
pg_digest_cleanup(void)
{
	EVP_MD_free(sha1_md);
	EVP_MD_free(md5_md);
	sha1_md = md5_md = NULL;
}

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
	if (!read_tbs(der, info, &next, &next_tag) ||
	    (crl = d2i_X509_CRL(NULL, &p, (long)der->len)) == NULL) {
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
		key = d2i_PUBKEY(NULL, &kp, (long)c->spki.len);
		if (key != NULL && X509_CRL_verify(crl, key) == 1)
			verified = true;
		EVP_PKEY_free(key);
	}
	if (!verified) {
		*why = found ? "signature does not verify with its issuer's key"
		             : "issuer is not a known certificate";
		goto fail;
	}
	X509_CRL_free(crl);
	return true;
fail:
	X509_CRL_free(crl);
	pg_crl_info_clear(info);
	return false;
}
