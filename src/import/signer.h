/*
 * A private key on a token that signs certificates and requests
 * (signer.c), for the x509-build.h builders.
 */
#ifndef PG_SIGNER_H
#define PG_SIGNER_H

#include "keys.h"
#include "x509-build.h"

/* The most objects a lookup of the signer takes. */
#define PG_SIGNER_MAX_FOUND 64

typedef struct {
	pg_keytoken kt;
	bool loaded;                 /* kt is the signer's own (pg_signer_open) */
	CK_OBJECT_HANDLE key;
	EVP_PKEY *pub;
	unsigned char *id;
	size_t id_len;
	char *label;
	bool always_auth;            /* the key wants the PIN again for each signature */
	const p11glue_uri *uri;      /* where that PIN comes from (the caller's) */
	bool failed;                 /* a C_Sign call failed (already reported) */
} pg_signer;

/* Closes the token and frees the signer (zeroed). */
void pg_signer_clear(pg_signer *sg);

/*
 * Loads the module, logs in to the token the URI names and finds its one
 * private key, with its CKA_ID and public key. rw: a read-write session
 * (to store a certificate). Returns an exit code.
 */
int pg_signer_open(pg_signer *sg, pg_store_opts *opts, const p11glue_uri *uri, bool rw);

/*
 * The private key key of kt's token (a session, logged in) as the
 * signer, kt lent: pg_signer_clear leaves it open. Returns an exit code.
 */
int pg_signer_borrow(pg_signer *sg, const pg_keytoken *kt, CK_OBJECT_HANDLE key);

/* pg_sign_func for the x509-build.h builders: C_Sign with the key (the
 * PIN again for CKA_ALWAYS_AUTHENTICATE), data a pg_signer. */
bool pg_signer_sign(void *data, const pg_sigalg *alg, const unsigned char *in, size_t in_len,
                    unsigned char **out, size_t *out_len);

/* The CA's certificate on its token (same CKA_ID as its key, a CA, the
 * same public key), or NULL after saying why. */
X509 *pg_signer_ca_cert(pg_signer *ca);

/* The certificates with the key's ID (into found, PG_SIGNER_MAX_FOUND),
 * to be replaced; -1 after an error, or when there are some and replace
 * is false. */
long pg_signer_certs(pg_signer *sg, CK_OBJECT_HANDLE *found, bool replace);

/* Stores cert beside the key (its ID; label), then deletes the n old
 * ones; adds the URIs to report (may be NULL) as "replaced" and
 * "certificate". Returns an exit code. */
int pg_signer_store_cert(pg_signer *sg, X509 *cert, const char *label,
                         const CK_OBJECT_HANDLE *old, long n, pg_report *report);

/* What a certificate or request says besides the key (the caller's choices). */
typedef struct {
	const X509_NAME *subject;    /* NULL: CN=<the key's label> */
	const char *hash;            /* sha256, sha384, sha512; NULL: the key's default */
	const char *san;             /* subjectAltNames, one a line; NULL: none */
	unsigned days;               /* certificates: days of validity */
	bool is_ca;                  /* certificates: a CA certificate */
} pg_signer_choice;

/*
 * Makes a certificate for key, signed by ca (NULL: by key itself; then
 * issuer and subject are the same), into *cert (X509_free). Not stored.
 * Returns an exit code: PG_EXIT_USAGE when the key has no label to make
 * a subject of and none is given.
 */
int pg_signer_certify(pg_signer *key, pg_signer *ca, const pg_signer_choice *choice, X509 **cert);

/* A PKCS#10 request for key, signed by it, into *req. Exit codes as above. */
int pg_signer_request(pg_signer *key, const pg_signer_choice *choice, X509_REQ **req);

#endif /* PG_SIGNER_H */
