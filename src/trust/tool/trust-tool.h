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
	uint32_t trusted_in;       /* bit i: a copy in locations[i] is trusted ... */
	uint32_t distrusted_in;    /* ... distrusted (the first 32 locations) */
} pg_tcert;

/* A distrusted issuer and serial number without a certificate: a
 * revocation by a CRL in use, or a blocklist entry that names no
 * certificate. DER of the Name and of the INTEGER. */
typedef struct {
	unsigned char *issuer, *serial;
	size_t issuer_len, serial_len;
	char *label;
} pg_trevoked;

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
	char **locations;              /* each token's path (slot description), in order */
	size_t n_locations;
	pg_trevoked *revoked;
	size_t n_revoked;
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
/* The same, the first whose location is path (NULL: any). */
bool pg_trust_writable_token_at(const char *path, CK_FUNCTION_LIST **fp, CK_SLOT_ID *slot);

/* Loads every certificate and CRL the trust modules expose. */
int pg_trust_load(pg_trust_set *set);
/* The same, of the tokens whose location keep accepts. */
int pg_trust_load_where(pg_trust_set *set, bool (*keep)(const char *location, void *data),
                        void *data);
/* The path of a trust token (its slot description, blanks removed) into
 * out[65]; empty when unknown. A path longer than 64 bytes is cut. */
void pg_trust_token_location(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, char out[65]);
/* Does a location (a slot description) name path? */
bool pg_trust_location_is(const char *location, const char *path);
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

/* ---------------------------------------------------------------------------
 * Trust decisions (decide.c) and the files they reach (compat.c)
 */

/* What the files other programs read became: one line per file in
 * changed ("+PATH" written, "-PATH" removed, "~PATH" edited), and what
 * the user should know, one line each, in notes. */
typedef struct {
	const char *level;          /* "system" or "user" */
	bool updated;               /* the files are up to date */
	pg_buf changed;
	pg_buf notes;
} pg_compat_report;

void pg_compat_report_init(pg_compat_report *r);
void pg_compat_report_clear(pg_compat_report *r);

enum {
	PG_COMPAT_MAKE = 1 << 0,     /* user: make the files when missing (setup) */
	PG_COMPAT_HOOK = 1 << 1,     /* system: run by update-ca-certificates' hook */
	PG_COMPAT_UNDO = 1 << 2      /* take p11glue's part out of the files (setup --undo) */
};

/*
 * Brings the files programs read by default up to date with the trust
 * decisions: with system, Debian's (update-ca-certificates' inputs, then
 * it runs), else the user's extracted files (when they exist, or with
 * PG_COMPAT_MAKE). Returns an exit code; r says what changed.
 */
int pg_trust_compat(bool system, unsigned flags, pg_compat_report *r);

typedef enum {
	PG_DECIDE_ANCHOR,            /* store an anchor */
	PG_DECIDE_UNANCHOR,          /* remove one */
	PG_DECIDE_DISTRUST,          /* distrust a certificate */
	PG_DECIDE_UNDISTRUST,        /* lift the distrust */
	PG_DECIDE_CRL_ADD,
	PG_DECIDE_CRL_REMOVE
} pg_decide_op;

/* One operand's outcome. */
typedef struct {
	const char *operand;        /* as given (lent) */
	char *certificate;          /* its name (a CRL: its issuer's), or NULL */
	char sha1[41];              /* of the certificate or CRL, hex */
	const char *result;         /* "stored", "removed", "distrusted", "trusted again",
	                             * "already stored", "already distrusted", or NULL */
	const char *replaced;       /* the decision it replaced there, or NULL */
	char *file;                 /* a CRL's file, or NULL */
} pg_decide_item;

typedef struct {
	const char *level;          /* "system", "user", or NULL: a configured location */
	char location[4200];        /* the writable token's path ("" when unknown) */
	pg_decide_item *items;
	size_t n_items;
	pg_compat_report compat;
} pg_decide_report;

/*
 * Makes one decision about each of names[0 .. n-1]: files holding a
 * certificate (PEM or DER), or, to remove an anchor or a distrust, also
 * PKCS#11 URIs of certificates on the token; for CRLs, CRL files (PEM or
 * DER), or to remove, also the certificate of the issuer. It goes to
 * the first writable trust token; when that is the system's or the
 * user's default directory, the files other programs read follow.
 * Stops at the first operand that fails. Returns an exit code; r says
 * what was done (pg_decide_report_clear).
 */
int pg_trust_decide(pg_decide_op op, char **names, int n, pg_decide_report *r);
void pg_decide_report_clear(pg_decide_report *r);

/* A decision about a certificate given as DER (`p11glue adopt`): an
 * anchor trusted for purposes (dotted OIDs) and distrusted for rejects
 * (neither: every purpose), or a distrusted certificate. Lent. */
typedef struct {
	bool distrust;
	const unsigned char *der;
	size_t len;
	const char *label;           /* the objects' label, or NULL */
	const char *const *purposes;
	size_t n_purposes;
	const char *const *rejects;
	size_t n_rejects;
} pg_decide_cert;

/*
 * Makes each decision as pg_trust_decide does (an item each, its
 * operand the label), in the user's own directory (pg_trust_user_dir,
 * whoever runs it: root's decisions about its own browsers are not the
 * system's), and for an anchor stores its purposes as stapled
 * extensions of its key (an extKeyUsage of the purposes, OpenSSL's reject
 * list of the rejects), replacing other ones there. An anchor already
 * stored with the same purposes is "already stored"; with others,
 * "purposes changed". With dry_run nothing is written and results are
 * "would store", "would distrust" and "would change its purposes".
 * Returns an exit code.
 */
int pg_trust_decide_certs(const pg_decide_cert *certs, size_t n, bool dry_run,
                          pg_decide_report *r);

/* An X.509 Name (DER) as RFC 2253 text, a serial number (INTEGER DER)
 * as hex; free(). NULL when they cannot be read. */
char *pg_trust_name_text(const unsigned char *der, size_t len);
char *pg_trust_serial_text(const unsigned char *der, size_t len);

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
