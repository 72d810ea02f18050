/*
 * `p11glue trust check` without its command line: every consumer's view
 * (OpenSSL, GnuTLS, NSS, Java) of every configured anchor, distrusted
 * certificate and revoked certificate, for one purpose (check.c).
 */
#ifndef PG_TRUST_CHECK_H
#define PG_TRUST_CHECK_H

#include "consumers.h"

/* A consumer's decision on an item. */
enum { PG_CHECK_ACCEPT, PG_CHECK_REJECT, PG_CHECK_NA };
/* "accept", "reject", "n/a", by decision. */
extern const char *const pg_check_decision_names[];

#define PG_CHECK_CONSUMERS 8           /* at most */

typedef struct {
	const char *kind;              /* anchor, distrusted, revoked, ... */
	bool expect_accept;
	X509 *x;                       /* a certificate (lent), or NULL ... */
	const X509_NAME *issuer;       /* ... a revocation (views into a CRL) */
	const ASN1_INTEGER *serial;
	char name[256];
	char id[128];                  /* SHA-1 of the certificate, or the serial */
	int decision[PG_CHECK_CONSUMERS];
	char why[PG_CHECK_CONSUMERS][320];
} pg_check_item;

typedef struct {
	pg_check_ctx k;
	pg_consumer *consumers[PG_CHECK_CONSUMERS];
	size_t n_consumers;
	char *paths[8];                /* what the consumers read and their labels, kept */
	pg_check_item *items;
	size_t n_items;
	X509_CRL **crls;
	size_t n_crls;
	size_t n_anchors, n_distrusted, n_revoked, n_disagree;
} pg_check;

/* Where the consumers are read from. */
typedef struct {
	/* The files programs read by default (the environment's, curl's
	 * configuration, the system's): OpenSSL, curl, GnuTLS's trust
	 * file, GnuTLS's and NSS's PKCS#11 objects, Chromium, Java. Else
	 * fresh extractions (or the two given) for OpenSSL, GnuTLS, NSS
	 * and Java: whether the configuration can be expressed at all. */
	bool fresh;
	const char *openssl_dir;       /* with fresh: this instead of an extraction */
	const char *java_keystore;     /* with fresh: this instead of an extraction */
} pg_check_sources;

/*
 * Judges every item of set for purpose (a dotted OID; purpose_name is
 * the user's word for it) by every consumer of sources; fresh
 * extractions go to a temporary directory that is removed again. Counts
 * go to ck, which pg_trust_check_clear frees (also after a failure).
 * Returns an exit code: PG_EXIT_FAIL when an artefact cannot be read.
 */
int pg_trust_check_run(pg_check *ck, const pg_trust_set *set, const char *purpose,
                       const char *purpose_name, const pg_check_sources *sources);
/* The consumers of what programs read by default (check-defaults.c); a
 * consumer that cannot be set up is left NULL (the check fails). */
void pg_check_default_consumers(pg_check *ck);
void pg_trust_check_clear(pg_check *ck);

#endif /* PG_TRUST_CHECK_H */
