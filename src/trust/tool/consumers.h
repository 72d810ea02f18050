/*
 * `p11glue trust check`: how each consumer of the trust decides, read
 * from the artefacts that consumer reads (consumers.c), and the
 * comparison with the configured trust (check.c).
 *
 * Every consumer answers two questions for one purpose (a dotted OID):
 * what trust it gives a certificate itself (trust), and whether it knows
 * an issuer and serial number to be revoked (revoked). The check adds
 * chain building over known issuers, which is the same for all.
 */
#ifndef PG_TOOL_TRUST_CONSUMERS_H
#define PG_TOOL_TRUST_CONSUMERS_H

#include "java-keystore.h"
#include "trust-tool.h"

#include <openssl/x509.h>

/* A consumer's own trust in one certificate. */
typedef enum { PG_T_NEUTRAL = 0, PG_T_TRUSTED, PG_T_REJECTED, PG_T_NA } pg_ttrust;

typedef struct pg_consumer pg_consumer;

/* What every consumer's functions may use (owned by the check). */
typedef struct {
	const pg_trust_set *set;
	X509 **x;                      /* set->certs parsed; NULL where not X.509 */
	const char *purpose;           /* dotted OID */
	const char *purpose_name;      /* as the user wrote it */
} pg_check_ctx;

/* What a consumer does; one table per kind of consumer. */
typedef struct {
	/* The consumer's trust in x, and why (one line) in why[size].
	 * as_issuer: x signs the chain (a CA or self-signed), else x is the
	 * end-entity certificate. PG_T_NA: the consumer cannot express it. */
	pg_ttrust (*trust)(pg_consumer *c, const pg_check_ctx *k, X509 *x, bool as_issuer,
	                   char *why, size_t size);
	/* 1 revoked, 0 not, -1 cannot express it; why as above. NULL: it
	 * never can, for the reason no_revocations gives. */
	int (*revoked)(pg_consumer *c, const pg_check_ctx *k, const X509_NAME *issuer,
	               const ASN1_INTEGER *serial, char *why, size_t size);
	const char *no_revocations;
	/* Can it distrust x while trusting x's issuer? */
	bool (*can_distrust)(pg_consumer *c, X509 *x, bool as_issuer);
	/* Adds to out certificates the consumer holds that could issue x (may be NULL). */
	void (*issuers)(pg_consumer *c, X509 *x, STACK_OF(X509) *out);
	/* Frees data (may be NULL). */
	void (*free)(pg_consumer *c);
} pg_consumer_ops;

struct pg_consumer {
	const char *name;
	const pg_consumer_ops *ops;
	void *data;
	char *note;                    /* said once in the report (owned), may be NULL */
};

/* Consumers; each returns NULL after printing why it could not be set
 * up. label names the artefact in messages. The strings passed must
 * outlive the consumer. */
/* OpenSSL's store (or curl's) with a bundle and a directory (each may be
 * NULL); CRLs count only with crl_check (-crl_check). */
pg_consumer *pg_consumer_openssl(const char *name, const char *file, const char *dir,
                                 const char *label, bool crl_check);
/* A PEM bundle of anchors, as GnuTLS reads its trust file. */
pg_consumer *pg_consumer_bundle(const char *name, const char *file);
pg_consumer *pg_consumer_gnutls(const pg_trust_set *set, const char *name);
pg_consumer *pg_consumer_nss(const pg_trust_set *set);
pg_consumer *pg_consumer_chromium(const pg_trust_set *set);
pg_consumer *pg_consumer_java(const char *keystore, const char *label);
/* A consumer that is not there (why, which must outlive it): n/a. */
pg_consumer *pg_consumer_absent(const char *name, const char *why);
void pg_consumer_free(pg_consumer *c);
/* A consumer with data_size bytes of zeroed data (none for 0), which
 * ops->free frees; NULL when out of memory. */
pg_consumer *pg_consumer_new(const char *name, const pg_consumer_ops *ops, size_t data_size);
/* can_distrust of a consumer that can distrust anything. */
bool pg_consumer_always(pg_consumer *c, X509 *x, bool as_issuer);
/* A can_distrust for consumers that cannot distrust a certificate. */
bool pg_consumer_never(pg_consumer *c, X509 *x, bool as_issuer);


/* A one-line name of a certificate: its label, else its subject. */
void pg_check_cert_name(X509 *x, char *out, size_t size);

#endif /* PG_TOOL_TRUST_CONSUMERS_H */
