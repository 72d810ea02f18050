/*
 * What `p11glue trust` works on, without its command line: the trust
 * decisions of every trust-policy module, loaded and merged ("distrust
 * wins", load.c), selected by filter and purpose, and extracted in
 * p11-kit's formats (extract.c).
 */
#ifndef PG_TOOL_TRUST_H
#define PG_TOOL_TRUST_H

#include "trust-format.h"
#include "common.h"

#include <p11glue/p11glue.h>

#include <p11glue/pkcs11x.h>

#include <stddef.h>
#include <stdio.h>

typedef struct {
	unsigned char *der;
	size_t der_len;
	char *label;
	unsigned char *id;
	size_t id_len;
	unsigned long category;
	bool trusted, distrusted;
	bool restricted;           /* a stapled extKeyUsage limits it to `purposes` */
	pg_oid_list purposes;      /* of the stapled extKeyUsage */
	pg_oid_list rejects;       /* of a stapled reject list (OpenSSL's) */
	bool has_own_eku;
	pg_oid_list own_eku;       /* of the certificate's own extKeyUsage */
	unsigned char *keyid;      /* a stapled subjectKeyIdentifier's extnValue */
	size_t keyid_len;
	bool unreadable;           /* a stapled extension or extKeyUsage is unreadable */
	bool rejects_unreadable;   /* its stapled reject list is unreadable */
	uint64_t hash;             /* of der, to find copies */
} pg_tcert;

typedef struct {
	unsigned char *der;
	size_t len;
} pg_tcrl;

/* A module whose tokens were read, as consumers see it. */
typedef struct {
	CK_FUNCTION_LIST *funcs;       /* lent by the registry */
	CK_SLOT_ID *slots;             /* its present tokens */
	size_t n_slots;
	char manufacturer[33];         /* CK_INFO.manufacturerID, blanks removed */
	bool trust_policy;             /* registered with "trust-policy: yes" */
} pg_tmodule;

typedef struct {
	pg_tcert *certs;
	size_t n_certs;
	pg_tcrl *crls;
	size_t n_crls;
	pg_tmodule *modules;           /* valid until pg_trust_clear */
	size_t n_modules;
} pg_trust_set;

/* Filters of list and extract. */
enum { PG_F_ANCHORS = 1, PG_F_BLOCKLIST = 2, PG_F_POLICY = 3, PG_F_CERTS = 4, PG_F_URI = 5 };

/*
 * Calls fn for every token of the trust-policy modules of the registry
 * (else of p11glue-trust.so with its defaults). The modules stay loaded
 * until pg_trust_release (or pg_trust_clear). Returns an exit code.
 */
int pg_trust_each_token(void (*fn)(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, bool policy, void *data),
                        void *data);
void pg_trust_release(void);
/* The first writable token of the modules pg_trust_each_token loaded. */
bool pg_trust_writable_token(CK_FUNCTION_LIST **fp, CK_SLOT_ID *slot);

/* Loads every certificate and CRL the trust modules expose. */
int pg_trust_load(pg_trust_set *set);
/* Frees the set and releases the modules. */
void pg_trust_clear(pg_trust_set *set);
/* Does cert pass the filter (and the purpose OID, may be NULL)? Never
 * when a stapled extension of it cannot be read: what it would restrict
 * is unknown (left out, as by p11-kit). */
bool pg_trust_selected(const pg_tcert *c, int filter, const p11glue_uri *uri,
                       const char *purpose);

/* Extraction (extract.c); returns an exit code. */
int pg_trust_extract(const pg_trust_set *set, const char *format, int filter,
                     const p11glue_uri *uri, const char *purpose, const char *dest,
                     bool overwrite, bool comment);

/* The dotted OID of a purpose name (server-auth, client-auth, email,
 * code-signing) or of a dotted OID given as is; NULL if neither. */
const char *pg_trust_purpose_oid(const char *name);

/*
 * Stores (store) or removes the anchors names[0 .. n-1] name: files
 * holding a certificate (PEM or DER), or to remove also PKCS#11 URIs of
 * certificates on a trust token, in the first writable trust token
 * (anchor.c). Returns an exit code.
 */
int pg_trust_anchor(bool store, char **names, int n);

/*
 * Writes every object of the trust tokens that filter selects (NULL:
 * all) to out in the persistence format, each after a "# pkcs11:" line
 * naming it, as `trust dump` prints them (dump.c). Returns an exit code.
 */
int pg_trust_dump(const p11glue_uri *filter, FILE *out);

/* Is the file valid persistence format (at least one object)? */
bool pg_trust_check_persist(const char *path);

/* The whole file at path, NUL-terminated (free()) and its length in
 * *len; NULL when it cannot be opened or memory runs out. */
char *pg_trust_read_file(const char *path, size_t *len);

#endif /* PG_TOOL_TRUST_H */
