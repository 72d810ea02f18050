/*
 * The judgement behind `p11glue trust check` (trust-check.h): for the
 * configured trust, what OpenSSL, GnuTLS, NSS and Java would accept, for
 * every anchor, every distrusted certificate and every certificate a CRL
 * in use revokes, for one purpose. Each consumer is read from what it
 * reads (consumers.c); chains are built over the configured certificates
 * and the consumer's own.
 */
#define _GNU_SOURCE
#include "config.h"

#include "trust-check.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 8

static bool
self_issued(X509 *x)
{
	return X509_check_issued(x, x) == X509_V_OK;
}

/* Can x sign a chain (a CA, or self-signed)? Else it is an end entity. */
static bool
as_issuer(X509 *x)
{
	return X509_check_ca(x) != 0 || self_issued(x);
}

static int decide(const pg_check *ck, pg_consumer *c, X509 *x, bool issuer, int depth,
                  pg_ttrust *own, char *why, size_t size);

/* Does c accept a chain from x up through an issuer it accepts? */
static bool
chain_accepted(const pg_check *ck, pg_consumer *c, X509 *x, int depth, char *why, size_t size)
{
	STACK_OF(X509) *issuers = sk_X509_new_null();
	bool ok = false;
	char sub[320], name[200];
	pg_ttrust own;

	if (issuers == NULL)
		return false;
	for (size_t i = 0; i < ck->k.set->n_certs; i++)
		if (ck->k.x[i] && X509_check_issued(ck->k.x[i], x) == X509_V_OK &&
		    X509_up_ref(ck->k.x[i]) && !sk_X509_push(issuers, ck->k.x[i]))
			X509_free(ck->k.x[i]);
	if (c->ops->issuers)
		c->ops->issuers(c, x, issuers);
	for (int i = 0; i < sk_X509_num(issuers) && !ok; i++) {
		X509 *y = sk_X509_value(issuers, i);
		if (X509_cmp(y, x) == 0 || X509_verify(x, X509_get0_pubkey(y)) != 1)
			continue;
		if (decide(ck, c, y, true, depth + 1, &own, sub, sizeof(sub)) == PG_CHECK_ACCEPT) {
			pg_check_cert_name(y, name, sizeof(name));
			snprintf(why, size, "issued by \"%s\", which it accepts", name);
			ok = true;
		}
	}
	sk_X509_pop_free(issuers, X509_free);
	return ok;
}

/* c's decision on x: its own trust, else a chain to something it trusts. */
static int
decide(const pg_check *ck, pg_consumer *c, X509 *x, bool issuer, int depth, pg_ttrust *own,
       char *why, size_t size)
{
	*own = c->ops->trust(c, &ck->k, x, issuer, why, size);
	if (*own == PG_T_TRUSTED)
		return PG_CHECK_ACCEPT;
	if (*own == PG_T_REJECTED)
		return PG_CHECK_REJECT;
	if (*own == PG_T_NA)
		return PG_CHECK_NA;
	if (depth < MAX_DEPTH && !self_issued(x) && chain_accepted(ck, c, x, depth, why, size))
		return PG_CHECK_ACCEPT;
	return PG_CHECK_REJECT;
}

static void
judge_cert(pg_check *ck, pg_check_item *it, size_t ci)
{
	pg_consumer *c = ck->consumers[ci];
	bool issuer = as_issuer(it->x);
	pg_ttrust own;
	int d = decide(ck, c, it->x, issuer, 0, &own, it->why[ci], sizeof(it->why[ci]));

	/* Accepted only through a trusted issuer, where the consumer has no way
	 * to distrust this certificate: a limit of its format, not a fault of
	 * the configuration. */
	if (d == PG_CHECK_ACCEPT && !it->expect_accept && own == PG_T_NEUTRAL &&
	    !c->ops->can_distrust(c, it->x, issuer)) {
		char tail[320];
		snprintf(tail, sizeof(tail), "%s", it->why[ci]);
		snprintf(it->why[ci], sizeof(it->why[ci]),
		         "cannot express distrust of this certificate (%.250s)", tail);
		d = PG_CHECK_NA;
	}
	it->decision[ci] = d;
}

static void
judge_revocation(pg_check *ck, pg_check_item *it, size_t ci)
{
	pg_consumer *c = ck->consumers[ci];
	int r = -1;

	if (c->ops->revoked != NULL)
		r = c->ops->revoked(c, &ck->k, it->issuer, it->serial, it->why[ci], sizeof(it->why[ci]));
	else
		snprintf(it->why[ci], sizeof(it->why[ci]), "%s", c->ops->no_revocations);
	it->decision[ci] = r < 0 ? PG_CHECK_NA : r ? PG_CHECK_REJECT : PG_CHECK_ACCEPT;
}

/* ---------------------------------------------------------------------------
 * What is checked
 */

static pg_check_item *
add_item(pg_check *ck)
{
	pg_check_item *grown = realloc(ck->items, (ck->n_items + 1) * sizeof(*grown));

	if (grown == NULL)
		return NULL;
	ck->items = grown;
	memset(&grown[ck->n_items], 0, sizeof(*grown));
	return &grown[ck->n_items++];
}

static void
hex(const unsigned char *p, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 3 <= size; i++)
		o += (size_t)snprintf(out + o, size - o, "%02x", p[i]);
}

static bool
collect_certs(pg_check *ck)
{
	const pg_trust_set *set = ck->k.set;

	for (size_t i = 0; i < set->n_certs; i++) {
		const pg_tcert *c = &set->certs[i];
		unsigned char sha1[20];
		unsigned int len = 0;
		pg_check_item *it;
		if (ck->k.x[i] == NULL || !(c->trusted || c->distrusted))
			continue;
		if ((it = add_item(ck)) == NULL)
			return false;
		it->x = ck->k.x[i];
		it->expect_accept = pg_trust_selected(c, PG_F_ANCHORS, NULL, ck->k.purpose);
		if (c->distrusted) {
			it->kind = "distrusted";
			ck->n_distrusted++;
		} else {
			it->kind = it->expect_accept ? "anchor" : "anchor, not for this purpose";
			ck->n_anchors++;
		}
		if (c->label[0])
			snprintf(it->name, sizeof(it->name), "%s", c->label);
		else
			pg_check_cert_name(it->x, it->name, sizeof(it->name));
		X509_digest(it->x, EVP_sha1(), sha1, &len);
		hex(sha1, len, it->id, sizeof(it->id));
	}
	return true;
}

static bool
same_revocation(const pg_check_item *it, const X509_NAME *issuer, const ASN1_INTEGER *serial)
{
	return it->x == NULL && X509_NAME_cmp(it->issuer, issuer) == 0 &&
	       ASN1_INTEGER_cmp(it->serial, serial) == 0;
}

/* Every serial number of the CRLs the trust module uses. */
static bool
collect_revocations(pg_check *ck)
{
	const pg_trust_set *set = ck->k.set;

	ck->crls = calloc(set->n_crls + 1, sizeof(*ck->crls));
	if (ck->crls == NULL)
		return false;
	for (size_t i = 0; i < set->n_crls; i++) {
		const unsigned char *p = set->crls[i].der;
		X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)set->crls[i].len);
		STACK_OF(X509_REVOKED) *revoked;
		char *issuer;
		if (crl == NULL)
			continue;
		ck->crls[ck->n_crls++] = crl;
		revoked = X509_CRL_get_REVOKED(crl);
		issuer = X509_NAME_oneline(X509_CRL_get_issuer(crl), NULL, 0);
		for (int j = 0; j < sk_X509_REVOKED_num(revoked); j++) {
			const ASN1_INTEGER *serial =
				X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(revoked, j));
			BIGNUM *bn = ASN1_INTEGER_to_BN(serial, NULL);
			char *digits = bn ? BN_bn2hex(bn) : NULL;
			bool seen = false;
			pg_check_item *it;
			for (size_t k = 0; k < ck->n_items && !seen; k++)
				seen = same_revocation(&ck->items[k], X509_CRL_get_issuer(crl), serial);
			if (!seen && (it = add_item(ck)) != NULL) {
				it->kind = "revoked";
				it->issuer = X509_CRL_get_issuer(crl);
				it->serial = serial;
				snprintf(it->name, sizeof(it->name), "serial %s of %s",
				         digits ? digits : "?", issuer ? issuer : "?");
				snprintf(it->id, sizeof(it->id), "%s", digits ? digits : "");
				ck->n_revoked++;
			}
			OPENSSL_free(digits);
			BN_free(bn);
		}
		OPENSSL_free(issuer);
	}
	return true;
}

const char *const pg_check_decision_names[] = { "accept", "reject", "n/a" };

/* Extracts what OpenSSL and Java read into tmp, where not given. */
static int
extract_artefacts(const pg_trust_set *set, const char *purpose, const char **openssl_dir,
                  const char **java_keystore, char *tmp, char *ossl, char *java, size_t size)
{
	const char *base = getenv("TMPDIR");

	if (*openssl_dir && *java_keystore)
		return PG_EXIT_OK;
	snprintf(tmp, size, "%s/p11glue-check.XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		pg_message("cannot create a temporary directory in %s", base ? base : "/tmp");
		tmp[0] = 0;
		return PG_EXIT_FAIL;
	}
	if (*openssl_dir == NULL) {
		snprintf(ossl, size, "%s/openssl", tmp);
		if (pg_trust_extract(set, "openssl-directory", PG_F_POLICY, NULL, NULL, ossl,
		                     false, false) != PG_EXIT_OK)
			return PG_EXIT_FAIL;
		*openssl_dir = ossl;
	}
	if (*java_keystore == NULL) {
		snprintf(java, size, "%s/cacerts", tmp);
		if (pg_trust_extract(set, "java-cacerts", PG_F_ANCHORS, NULL, purpose, java,
		                     false, false) != PG_EXIT_OK)
			return PG_EXIT_FAIL;
		*java_keystore = java;
	}
	return PG_EXIT_OK;
}

void
pg_trust_check_clear(pg_check *ck)
{
	for (size_t n = 0; n < ck->n_consumers; n++)
		pg_consumer_free(ck->consumers[n]);
	for (size_t n = 0; n < PG_N_ELEMENTS(ck->paths); n++)
		free(ck->paths[n]);
	for (size_t i = 0; ck->k.x && i < ck->k.set->n_certs; i++)
		X509_free(ck->k.x[i]);
	free(ck->k.x);
	for (size_t i = 0; i < ck->n_crls; i++)
		X509_CRL_free(ck->crls[i]);
	free(ck->crls);
	free(ck->items);
}

/* The consumers of fresh extractions (or of the artefacts given). */
static bool
fresh_consumers(pg_check *ck, const char *openssl_dir, const char *ossl_label,
                const char *java_keystore, const char *java_label)
{
	ck->consumers[ck->n_consumers++] = pg_consumer_openssl("OpenSSL", NULL, openssl_dir,
	                                                       ossl_label, true);
	ck->consumers[ck->n_consumers++] = pg_consumer_gnutls(ck->k.set, "GnuTLS");
	ck->consumers[ck->n_consumers++] = pg_consumer_nss(ck->k.set);
	ck->consumers[ck->n_consumers++] = pg_consumer_java(java_keystore, java_label);
	return true;
}

static int
judge_all(pg_check *ck)
{
	const pg_trust_set *set = ck->k.set;

	for (size_t n = 0; n < ck->n_consumers; n++)
		if (ck->consumers[n] == NULL)
			return PG_EXIT_FAIL;
	if (!collect_certs(ck) || !collect_revocations(ck))
		return PG_EXIT_FAIL;
	for (size_t i = 0; i < ck->n_items; i++) {
		pg_check_item *it = &ck->items[i];
		for (size_t n = 0; n < ck->n_consumers; n++) {
			if (it->x)
				judge_cert(ck, it, n);
			else
				judge_revocation(ck, it, n);
			if (it->decision[n] != PG_CHECK_NA &&
			    (it->decision[n] == PG_CHECK_ACCEPT) != it->expect_accept)
				ck->n_disagree++;
		}
	}
	(void)set;
	return PG_EXIT_OK;
}

/* The configured certificates, parsed once for every consumer. */
static bool
parse_certs(pg_check *ck)
{
	const pg_trust_set *set = ck->k.set;

	ck->k.x = calloc(set->n_certs + 1, sizeof(X509 *));
	if (ck->k.x == NULL)
		return false;
	for (size_t i = 0; i < set->n_certs; i++) {
		const unsigned char *p = set->certs[i].der;
		ck->k.x[i] = d2i_X509(NULL, &p, (long)set->certs[i].der_len);
		if (ck->k.x[i] && set->certs[i].label[0])
			X509_alias_set1(ck->k.x[i], (const unsigned char *)set->certs[i].label, -1);
	}
	return true;
}

int
pg_trust_check_run(pg_check *ck, const pg_trust_set *set, const char *purpose,
                   const char *purpose_name, const pg_check_sources *src)
{
	char tmp[4096] = "", ossl[4200], java[4200];
	const char *openssl_dir = src->openssl_dir, *java_keystore = src->java_keystore;
	int rv = PG_EXIT_OK;

	memset(ck, 0, sizeof(*ck));
	ck->k.set = set;
	ck->k.purpose = purpose;
	ck->k.purpose_name = purpose_name;
	if (!parse_certs(ck))
		return PG_EXIT_FAIL;
	if (!src->fresh)
		pg_check_default_consumers(ck);
	else if ((rv = extract_artefacts(set, purpose, &openssl_dir, &java_keystore, tmp, ossl, java,
	                                 sizeof(tmp))) == PG_EXIT_OK)
		fresh_consumers(ck, openssl_dir,
		                src->openssl_dir ? openssl_dir : "the extracted openssl-directory",
		                java_keystore,
		                src->java_keystore ? java_keystore : "the extracted java-cacerts");
	if (rv == PG_EXIT_OK)
		rv = judge_all(ck);
	if (tmp[0])
		pg_remove_tree(tmp);
	return rv;
}
